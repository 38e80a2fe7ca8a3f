// SPDX-License-Identifier: GPL-2.0
/*
 * usage.bpf.c - count every use of deprecated cgroup v1 memory control
 * files, in the kernel, keyed by who did what to which cgroup.
 *
 * Attach points (see docs/kernel-facts.md section 4 and README.md; no
 * tracepoint fires on cgroup control-file access):
 *  - fexit on the memory controller's own v1 write handlers
 *    (mem_cgroup_write, mem_cgroup_reset, mem_cgroup_force_empty_write and
 *    the write_u64 handlers mem_cgroup_{hierarchy,swappiness,move_charge,
 *    oom_control}_write): cgroup_file_write() calls exactly one of them per
 *    write() to a memory v1 file and none for any other file, so writes to
 *    v2 files, v1 core files and other controllers' files run no program.
 *    One program at exit counts the attempt and, in the same step, whether
 *    it failed (every call returns; the handler's result is what the write
 *    returns). write_u64 handlers get the value already parsed; a value
 *    kstrtoull() refuses never reaches them and is not counted.
 *    Each write's value goes into a per-key summary (last, min, max,
 *    unlimited seen), never a key per value: the write_u64 argument; for
 *    mem_cgroup_write, after success, the limit the kernel stored (CO-RE
 *    read of mem_cgroup), else (failed, or kmem.limit_in_bytes, which
 *    stores nothing) the buffer parsed as the kernel parses it
 *    (twl_memparse_pages()), in a global function the verifier checks
 *    once on its own (twl_limit_value()).
 *  - fexit cgroup_file_open: reads, counted once per open for reading.
 *    Chosen over cgroup_seqfile_show because seq_read calls show again
 *    when its buffer overflows and once per record, so counting there
 *    would need per-open state and its cleanup; an open with FMODE_READ
 *    is exactly one "use for reading" and needs no state.
 *  - fexit on the four *_register_event functions: eventfd registrations
 *    through cgroup.event_control, keyed by the file registered for
 *    (memory.oom_control, memory.pressure_level, memory.usage_in_bytes,
 *    memory.memsw.usage_in_bytes).
 *
 * Reads exit early: an open of a v2 file costs one check of the superblock
 * magic (three plain loads, no helper call); a v1 core file one more read,
 * of cftype::flags (only v1 controller files carry __CFTYPE_NOT_ON_DFL).
 * Only files of the memory controller (cft->ss->id == memory_cgrp_id) on a
 * v1 hierarchy (hierarchy_id != 0) that user space put into twl_files (from
 * the catalog) are counted; the answer per cftype is cached in twl_cft.
 * Nothing is sent per event: user space reads the maps.
 *
 * Pointers reached from the programs' BTF-typed arguments are read directly
 * (the verifier turns those loads into fault-safe loads, no helper call);
 * void * fields (kernfs_node::priv) lose their type and are read with
 * bpf_core_read().
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "twl_bpf_types.h"
#include "twl_bpf_drift.h"
#include "twl_bpf_parse.h"

char LICENSE[] SEC("license") = "GPL";

#define FMODE_READ 0x1
#define EEXIST_ 17
/*
 * Set on every cftype of a v1 (legacy) controller file by
 * cgroup_add_legacy_cftypes(); 1 << 17 in an anonymous enum (so not
 * CO-RE-relocatable) from v4.6 to at least v6.18 (checked in both BTFs).
 */
#define TWL_CFTYPE_NOT_ON_DFL (1u << 17)
/* include/uapi/linux/magic.h: the cgroup2 filesystem's s_magic. */
#define TWL_CGROUP2_SUPER_MAGIC 0x63677270

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TWL_BPF_USAGE_ENTRIES);
	__type(key, struct twl_bpf_usage_key);
	__type(value, struct twl_bpf_usage_val);
} twl_usage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TWL_BPF_PATH_ENTRIES);
	__type(key, struct twl_bpf_path_key);
	__type(value, struct twl_bpf_path_val);
} twl_paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TWL_BPF_FILE_ENTRIES);
	__type(key, struct twl_bpf_file_key);
	__type(value, struct twl_bpf_file_val);
} twl_files SEC(".maps");

/*
 * Cache: cftype address -> its twl_files entry, or flags 0 for a v1
 * controller file that is not counted (other controller, or not in the
 * catalog). Spares the name read and 64-byte hash on every write. User
 * space empties it whenever it changes twl_files.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TWL_BPF_CFT_ENTRIES);
	__type(key, __u64);
	__type(value, struct twl_bpf_file_val);
} twl_cft SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TWL_BPF_OVF_NR);
	__type(key, __u32);
	__type(value, __u64);
} twl_overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TWL_BPF_META_NR);
	__type(key, __u32);
	__type(value, __u64);
} twl_meta SEC(".maps");

/* Per-CPU scratch for building a path before it is copied into twl_paths. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct twl_bpf_path_val);
} twl_scratch SEC(".maps");

/* The value a write set, for the usage value summary. */
struct twl_obs {
	__u64 val; /* bytes or number; TWL_BPF_VAL_INF: unlimited */
	__u32 src; /* TWL_BPF_VAL_STORED or TWL_BPF_VAL_PARSED; 0: none */
};

/*
 * Per-CPU scratch of twl_limit_value(): the buffer, the scanner's state and
 * the value found, in map memory, so the verifier knows none of it. That is
 * on purpose: the bpf_loop() callback is verified once, not per byte, and
 * from unknown state every branch of twl_memparse_step() is checked (from
 * known initial constants, 6.1 verifies the callback once and would take
 * the other branches for dead code); and count_use() is verified once for
 * every kind of value (none, stored, parsed, unlimited). Only twl_mem_write
 * uses it, and a tracing program does not run nested on one CPU.
 */
struct twl_vscratch_val {
	char buf[TWL_BPF_MEMPARSE_LEN];
	struct twl_memparse p;
	__s32 r; /* twl_memparse_step()'s last return */
	__u32 pad;
	struct twl_obs obs; /* the value, for count_use() */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct twl_vscratch_val);
} twl_vscratch SEC(".maps");

static __always_inline void count_overflow(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&twl_overflow, &idx);

	if (c)
		*c += 1; /* per-CPU slot: no atomics needed */
}

/*
 * The cftype of open control file @of when it is a v1 controller file,
 * else 0: the early exit for v2 files (superblock magic, plain loads through
 * BTF-typed pointers) and v1 core files (cftype::flags, one helper read:
 * kernfs_node::priv is void *, so the verifier has lost its type).
 */
static __always_inline __u64 legacy_cft(struct kernfs_open_file *of)
{
	struct cftype *cft;
	unsigned int flags = 0;

	if (of->file->f_inode->i_sb->s_magic == TWL_CGROUP2_SUPER_MAGIC)
		return 0;
	cft = of->kn->priv;
	if (!cft)
		return 0;
	bpf_core_read(&flags, sizeof(flags), &cft->flags);
	return flags & TWL_CFTYPE_NOT_ON_DFL ? (__u64)cft : 0;
}

/* The hierarchy id of cgroup @cgrp (0 = the v2 hierarchy). */
static __always_inline __u32 cgroup_hier(struct cgroup *cgrp)
{
	return (__u32)BPF_CORE_READ(cgrp, root, hierarchy_id);
}

/* The writer's (@t's) cgroup in the memory controller's hierarchy, or NULL. */
static __always_inline struct cgroup *writer_memcg(struct task_struct *t,
						   int mem_id)
{
	struct cgroup_subsys_state *css;

	if (mem_id < 0 || mem_id >= bpf_core_enum_value(enum cgroup_subsys_id,
							CGROUP_SUBSYS_COUNT))
		return NULL;
	css = t->cgroups->subsys[mem_id];
	return css ? css->cgroup : NULL;
}

/*
 * Record where cgroup directory @kn lives, once, so its name outlives it.
 * The path is stored leaf first ("leaf/parent/.../"), the root's own name
 * excluded; user space reverses it.
 */
static __always_inline void capture_path(struct kernfs_node *kn, __u64 cgid,
					 __u32 hier)
{
	struct twl_bpf_path_key pk = { .cgid = cgid, .hier = hier };
	struct twl_bpf_path_val *pv;
	struct kernfs_node *parent;
	__u32 zero = 0, off = 0;
	long n, err;
	int i;

	if (bpf_map_lookup_elem(&twl_paths, &pk))
		return;
	pv = bpf_map_lookup_elem(&twl_scratch, &zero);
	if (!pv)
		return;
	pv->len = 0;
	pv->truncated = 0;
	for (i = 0; i < TWL_BPF_PATH_DEPTH; i++) {
		if (!kn)
			break;
		parent = twl_kn_parent(kn);
		if (!parent)
			break;
		if (off > TWL_BPF_PATH_OFF_MAX) {
			pv->truncated = 1;
			break;
		}
		n = bpf_probe_read_kernel_str(
			&pv->path[off & TWL_BPF_PATH_OFF_MAX], TWL_BPF_COMP_LEN,
			kn->name);
		if (n <= 0) {
			pv->truncated = 1;
			break;
		}
		if (n == TWL_BPF_COMP_LEN)
			pv->truncated = 1;
		off += n; /* n counts the NUL, which becomes the separator */
		pv->path[(off - 1) & (TWL_BPF_PATH_LEN - 1)] = '/';
		kn = parent;
	}
	if (i == TWL_BPF_PATH_DEPTH && kn && twl_kn_parent(kn))
		pv->truncated = 1;
	pv->len = off;
	err = bpf_map_update_elem(&twl_paths, &pk, pv, BPF_NOEXIST);
	if (err && err != -EEXIST_)
		count_overflow(TWL_BPF_OVF_PATH);
}

/*
 * twl_buf_not_1 - the non_hierarchical condition for the buffer at address
 * @buf being written (see twl_bpf_parse.h): 1 when the kernel parses it as
 * a number other than 1, else 0.
 *
 * Global, not inlined: its fully unrolled scanner, inlined, multiplied the
 * paths of the kernfs-style write programs (about 650000 instructions
 * processed on 6.1 for twl_mem_reset, close to the verifier's limit);
 * checked once on its own, with an unknown buffer, it costs what it costs
 * once. Its argument is an address: global functions take numbers.
 */
__noinline int twl_buf_not_1(__u64 buf)
{
	char s[TWL_BPF_VALUE_LEN] = {};

	if (!buf ||
	    bpf_probe_read_kernel_str(s, sizeof(s), (const void *)buf) <= 1)
		return 0;
	return twl_value_not_1(s);
}

/*
 * @dir is the target cgroup's directory; root when it has no parent. @buf
 * (an address, or 0 where the value comes parsed) is the written buffer.
 */
static __always_inline bool cond_met(__u16 cond, struct kernfs_node *dir,
				     __u64 buf)
{
	switch (cond) {
	case TWL_BPF_COND_ALWAYS:
		return true;
	case TWL_BPF_COND_NON_ROOT:
		return twl_kn_parent(dir) != NULL;
	case TWL_BPF_COND_VALUE_NOT_1:
		return buf && twl_buf_not_1(buf);
	default:
		return false;
	}
}

/*
 * Fill the parts of a usage key that describe the caller @t (current).
 * Returns the writer's memory cgroup (NULL if none) for capture_path().
 *
 * Plain loads through the BTF-typed task instead of three helper calls
 * (bpf_get_current_uid_gid, _comm, _pid_tgid in count_use), same values:
 * the uid is current_cred()->uid, which bpf_get_current_uid_gid() maps into
 * init_user_ns, where kuids are the values themselves; task::comm is
 * NUL-padded (__set_task_comm() uses strscpy_pad(), fork copies it whole),
 * so its 16 bytes equal what bpf_get_current_comm() copies.
 */
static __always_inline struct cgroup *
key_set_writer(struct twl_bpf_usage_key *k, struct task_struct *t, int mem_id)
{
	struct cgroup *w = writer_memcg(t, mem_id);

	k->uid = t->cred->uid.val;
	__builtin_memcpy(k->comm, t->comm, sizeof(k->comm));
	if (w) {
		k->writer_cgid = w->kn->id;
		k->writer_hier = w->root->hierarchy_id;
	}
	return w;
}

/*
 * Add @o to @v's value summary. Plain stores (see twl_bpf_types.h); the
 * flags last, or-ed atomically, so a reader that sees TWL_BPF_VAL_FINITE
 * finds val_min and val_max written.
 */
static __always_inline void record_value(struct twl_bpf_usage_val *v,
					 const struct twl_obs *o)
{
	__u32 f = TWL_BPF_VAL_SEEN | o->src;
	bool first = !(v->val_flags & TWL_BPF_VAL_FINITE);

	if (o->val == TWL_BPF_VAL_INF) {
		f |= TWL_BPF_VAL_UNLIMITED;
	} else {
		if (first || o->val < v->val_min)
			v->val_min = o->val;
		if (first || o->val > v->val_max)
			v->val_max = o->val;
		f |= TWL_BPF_VAL_FINITE;
	}
	v->val_last = o->val;
	__sync_fetch_and_or(&v->val_flags, f);
}

/*
 * Count one use under @k: look up or insert (BPF_NOEXIST), then add, and
 * the value @o set when it is known (NULL or src 0: not). A full map is
 * counted in the per-CPU overflow counter, never silent. On first insert
 * the target (@dir) and writer (@w) paths are captured.
 */
static __always_inline void count_use(struct twl_bpf_usage_key *k,
				      struct task_struct *t,
				      struct kernfs_node *dir, struct cgroup *w,
				      bool met, bool failed,
				      const struct twl_obs *o)
{
	struct twl_bpf_usage_val *v, init = {};
	/*
	 * Not bpf_ktime_get_coarse_ns(): 6.1 refuses it in tracing programs
	 * (it takes the timekeeping seqlock).
	 */
	__u64 now = bpf_ktime_get_ns();
	long err;

	v = bpf_map_lookup_elem(&twl_usage, k);
	if (!v) {
		init.first_ns = now;
		err = bpf_map_update_elem(&twl_usage, k, &init, BPF_NOEXIST);
		if (err && err != -EEXIST_) {
			count_overflow(TWL_BPF_OVF_USAGE);
			return;
		}
		if (!err) {
			/* First insert: capture the names while the cgroups exist. */
			if (dir)
				capture_path(dir, k->target_cgid,
					     k->target_hier);
			if (w)
				capture_path(w->kn, k->writer_cgid,
					     k->writer_hier);
		}
		v = bpf_map_lookup_elem(&twl_usage, k);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->count, 1);
	if (met)
		__sync_fetch_and_add(&v->condition_met, 1);
	if (failed)
		__sync_fetch_and_add(&v->failed, 1);
	if (o && o->src)
		record_value(v, o);
	v->last_pid = t->tgid;
	v->last_ns = now;
}

/*
 * The files-map entry of v1 controller file @kn (cftype @cft) when it has
 * @flag, else NULL; answers are cached per cftype in twl_cft.
 */
static __always_inline struct twl_bpf_file_val *
file_lookup(struct kernfs_node *kn, __u64 cft, int mem_id, __u16 flag)
{
	struct twl_bpf_file_val *fv, none = {};
	struct twl_bpf_file_key fk = {};
	struct cgroup_subsys *ss = NULL;
	int id = -1;

	fv = bpf_map_lookup_elem(&twl_cft, &cft);
	if (fv)
		return fv->flags & flag ? fv : NULL;
	/* First sight of this cftype: the memory controller's, and counted? */
	bpf_core_read(&ss, sizeof(ss), &((struct cftype *)cft)->ss);
	if (ss)
		bpf_core_read(&id, sizeof(id), &ss->id);
	if (mem_id < 0 || id != mem_id) {
		fv = &none;
	} else {
		if (bpf_probe_read_kernel_str(fk.name, sizeof(fk.name),
					      kn->name) <= 0)
			return NULL;
		fv = bpf_map_lookup_elem(&twl_files, &fk);
		if (!fv)
			fv = &none;
	}
	bpf_map_update_elem(&twl_cft, &cft, fv,
			    BPF_ANY); /* full: just no cache */
	return fv->flags & flag ? fv : NULL;
}

/*
 * Build the usage key of an access to open control file @of by the current
 * task. Returns the target directory, or NULL when the access is not counted.
 *
 * The target's hierarchy is the writer's: a memory-controller v1 file exists
 * only in the one hierarchy the memory controller is bound to, and the
 * writer's memory css lives in that same hierarchy, so its hierarchy id is
 * read through BTF-typed pointers instead of two helper reads via the void
 * kernfs_node::priv (kept as the fallback when the writer has no memory css).
 */
static __always_inline struct kernfs_node *
access_key(struct kernfs_open_file *of, __u16 flag, __u32 op,
	   struct twl_bpf_usage_key *k, __u16 *cond, struct cgroup **w,
	   struct task_struct *t)
{
	struct kernfs_node *kn = of->kn;
	struct twl_bpf_file_val *fv;
	struct kernfs_node *dir;
	__u64 cft;
	int mem_id;
	__u32 hier;

	cft = legacy_cft(of);
	if (!cft)
		return NULL; /* v2 or v1 core file: the early exit */
	mem_id = twl_memory_cgrp_id();
	fv = file_lookup(kn, cft, mem_id, flag);
	if (!fv)
		return NULL;
	dir = twl_kn_parent(kn);
	if (!dir)
		return NULL;
	__builtin_memset(k, 0, sizeof(*k));
	*w = key_set_writer(k, t, mem_id);
	hier = *w ? k->writer_hier : cgroup_hier((struct cgroup *)dir->priv);
	if (!hier)
		return NULL;
	k->file_id = fv->id;
	k->op = op;
	k->target_hier = hier;
	/* Reads are keyed without target: pollers must not fill the map. */
	if (op != TWL_BPF_OP_READ)
		k->target_cgid = dir->id; /* the cgroup's kernfs node id */
	*cond = fv->cond;
	return dir;
}

/*
 * The memory cgroup whose control file lives in directory @dir (an address:
 * global functions take scalars): what mem_cgroup_from_css(of_css(of))
 * gives the handler, read with helpers.
 */
static __always_inline void *dir_memcg(__u64 dir, int mem_id)
{
	void *cgrp = NULL, *css = NULL;

	if (!dir || mem_id < 0 ||
	    mem_id >= bpf_core_enum_value(enum cgroup_subsys_id,
					  CGROUP_SUBSYS_COUNT))
		return NULL;
	if (bpf_core_read(&cgrp, sizeof(cgrp),
			  &((struct kernfs_node *)dir)->priv) ||
	    !cgrp)
		return NULL;
	if (bpf_core_read(&css, sizeof(css),
			  cgrp + bpf_core_field_offset(struct cgroup, subsys) +
				  mem_id * sizeof(void *)) ||
	    !css)
		return NULL;
	return css - bpf_core_field_offset(struct mem_cgroup, css);
}

/*
 * The limit in pages the kernel stored for file @flags of memory cgroup @m,
 * read back after a successful write (0), or -1 when the file's value is
 * stored nowhere (kmem.limit_in_bytes) or unreadable.
 */
static __always_inline int stored_pages(struct mem_cgroup *m, __u32 flags,
					__u64 *pages)
{
	unsigned long p = 0;
	long err = -1;

	if (!m)
		return -1;
	if ((flags & TWL_BPF_FILE_SOFT) && bpf_core_field_exists(m->soft_limit))
		err = bpf_core_read(&p, sizeof(p), &m->soft_limit);
	else if ((flags & TWL_BPF_FILE_TCP) && bpf_core_field_exists(m->tcpmem))
		err = bpf_core_read(&p, sizeof(p), &m->tcpmem.max);
	else if ((flags & TWL_BPF_FILE_MEM) && bpf_core_field_exists(m->memory))
		err = bpf_core_read(&p, sizeof(p), &m->memory.max);
	else if ((flags & TWL_BPF_FILE_MEMSW) &&
		 bpf_core_field_exists(m->memsw))
		err = bpf_core_read(&p, sizeof(p), &m->memsw.max);
	if (err)
		return -1;
	*pages = p;
	return 0;
}

/* bpf_loop() callback: byte @i of the value in twl_vscratch; 1 stops. */
static long memparse_cb(__u32 i, void *ctx)
{
	struct twl_vscratch_val *sc;
	__u32 zero = 0;

	/* the caller's slot: a tracing program does not migrate */
	sc = bpf_map_lookup_elem(&twl_vscratch, &zero);
	if (!sc || i >= TWL_BPF_MEMPARSE_LEN - 1)
		return 1;
	sc->r = twl_memparse_step(&sc->p, (unsigned char)sc->buf[i]);
	return sc->r ? 1 : 0;
}

/*
 * Kernel buffer @buf parsed as mem_cgroup_write() parses it, in pages, into
 * *@out: twl_memparse_pages() with its loop run by bpf_loop() over @sc.
 * 0, or -1 when the kernel refuses it or it is too long to judge.
 */
static __always_inline int parse_pages(struct twl_vscratch_val *sc, __u64 buf,
				       __u64 *out)
{
	unsigned long long pages = 0;

	twl_memparse_init(&sc->p);
	sc->r = 0;
	/* mem_cgroup_write() strstrip()ed @buf in place: same value */
	if (!buf || bpf_probe_read_kernel_str(sc->buf, sizeof(sc->buf),
					      (const void *)buf) <= 0)
		return -1;
	bpf_loop(TWL_BPF_MEMPARSE_LEN - 1, memparse_cb, NULL, 0);
	if (twl_memparse_finish(&sc->p, sc->r, &pages))
		return -1;
	*out = pages;
	return 0;
}

/*
 * twl_limit_value - the value a write of buffer @buf to a limit file
 * (files-map @flags; its kernfs node at address @kn) set, into this CPU's
 * twl_vscratch obs (src 0: none): after success (@ret >= 0) the limit the
 * kernel stored, else (the write failed, or the file stores nothing) @buf
 * parsed as the kernel parses it; none when the kernel refuses the buffer
 * or it is too long to judge. Returns 0.
 *
 * Global, not inlined: the verifier checks it once, on its own, with every
 * argument unknown, instead of once per path of the caller (inlined, the
 * parser and the four stored fields took twl_mem_write past the 6.1
 * verifier's million instructions). Its arguments are addresses and
 * numbers, as global functions take no kernel pointers, so it reads
 * through helpers.
 */
__noinline int twl_limit_value(__u64 kn, __u64 buf, __u32 flags, int mem_id,
			       long ret)
{
	struct twl_vscratch_val *sc;
	__u64 pages = 0;
	__u32 zero = 0, src;

	sc = bpf_map_lookup_elem(&twl_vscratch, &zero);
	if (!sc)
		return 0;
	sc->obs.src = 0;
	if (!(flags & TWL_BPF_FILE_PAGES))
		return 0;
	if (ret >= 0 && !stored_pages(dir_memcg(twl_kn_parent_addr(kn), mem_id),
				      flags, &pages)) {
		src = TWL_BPF_VAL_STORED;
	} else {
		if (parse_pages(sc, buf, &pages))
			return 0;
		src = TWL_BPF_VAL_PARSED;
	}
	sc->obs.val = pages >= TWL_BPF_PAGE_COUNTER_MAX ?
			      TWL_BPF_VAL_INF :
			      pages << TWL_BPF_PAGE_SHIFT;
	sc->obs.src = src;
	return 0;
}

/*
 * Count one write to v1 memory control file @of (its cftype is @cft) that a
 * kernfs-style handler (cftype::write) returned @ret for. Only memory v1
 * files reach these handlers, so no v2/core early exit is needed; the
 * catalog check stays (mem_cgroup_write and mem_cgroup_reset also serve
 * files that are not deprecated, such as memory.limit_in_bytes).
 * @with_value: the handler sets a limit (mem_cgroup_write) to record.
 */
static __always_inline int count_of_write(struct kernfs_open_file *of,
					  const char *buf, long ret,
					  bool with_value)
{
	struct twl_bpf_usage_key k;
	struct twl_bpf_file_val *fv;
	struct kernfs_node *kn = of->kn, *dir;
	struct twl_vscratch_val *sc = NULL;
	struct task_struct *t;
	__u64 kn_addr = 0;
	struct cgroup *w;
	__u32 hier, zero = 0;
	int mem_id;
	bool met;

	mem_id = twl_memory_cgrp_id();
	fv = file_lookup(kn, (__u64)kn->priv, mem_id, TWL_BPF_FILE_DIRECT);
	if (!fv)
		return 0;
	dir = twl_kn_parent(kn);
	if (!dir)
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	t = bpf_get_current_task_btf();
	w = key_set_writer(&k, t, mem_id);
	hier = w ? k.writer_hier : cgroup_hier((struct cgroup *)dir->priv);
	if (!hier)
		return 0;
	k.file_id = fv->id;
	k.op = TWL_BPF_OP_WRITE;
	k.target_hier = hier;
	k.target_cgid = dir->id;
	met = cond_met(fv->cond, dir, (__u64)buf);
	if (with_value) { /* a constant: reset and force_empty have none */
		/* an address, read into the stack: a scalar, not a pointer */
		bpf_core_read(&kn_addr, sizeof(kn_addr), &of->kn);
		twl_limit_value(kn_addr, (__u64)buf, fv->flags, mem_id, ret);
		sc = bpf_map_lookup_elem(&twl_vscratch, &zero);
	}
	count_use(&k, t, dir, w, met, ret < 0, sc ? &sc->obs : NULL);
	return 0;
}

/*
 * The files-map entry of write_u64 file @cft when it is counted, else NULL;
 * cached per cftype in twl_cft like file_lookup(). Here the cftype pointer
 * is BTF-typed, so its name is read without the kernfs node: the kernfs
 * name of a memory file is "memory." + cftype::name (only
 * cgroup.event_control has CFTYPE_NO_PREFIX, and it is no write_u64 file).
 */
static __always_inline struct twl_bpf_file_val *
u64_file_lookup(struct cftype *cft)
{
	struct twl_bpf_file_val *fv, none = {};
	struct twl_bpf_file_key fk = {};
	__u64 key = (__u64)cft;

	fv = bpf_map_lookup_elem(&twl_cft, &key);
	if (fv)
		return fv->flags & TWL_BPF_FILE_DIRECT ? fv : NULL;
	__builtin_memcpy(fk.name, "memory.", 7);
	if (bpf_probe_read_kernel_str(&fk.name[7], sizeof(fk.name) - 7,
				      cft->name) <= 0)
		return NULL;
	fv = bpf_map_lookup_elem(&twl_files, &fk);
	if (!fv)
		fv = &none;
	bpf_map_update_elem(&twl_cft, &key, fv,
			    BPF_ANY); /* full: just no cache */
	return fv->flags & TWL_BPF_FILE_DIRECT ? fv : NULL;
}

/*
 * Count one write of the parsed value @val to write_u64 file @cft of @css
 * that the handler returned @ret for. cgroup_file_write() calls the handler
 * only when kstrtoull() accepted the buffer: a value that does not parse
 * ("abc") fails before any handler and is not counted (the kernel prints no
 * warning for it either; see README.md).
 */
static __always_inline int count_u64_write(struct cgroup_subsys_state *css,
					   struct cftype *cft, __u64 val,
					   int ret)
{
	struct twl_bpf_usage_key k;
	struct twl_bpf_file_val *fv;
	struct cgroup *cgrp = css->cgroup, *w;
	struct task_struct *t;
	struct kernfs_node *dir;
	struct twl_obs o;
	bool met;
	__u32 hier;

	fv = u64_file_lookup(cft);
	if (!fv)
		return 0;
	hier = cgrp->root->hierarchy_id;
	if (!hier)
		return 0;
	dir = cgrp->kn;
	__builtin_memset(&k, 0, sizeof(k));
	t = bpf_get_current_task_btf();
	w = key_set_writer(&k, t, twl_memory_cgrp_id());
	k.file_id = fv->id;
	k.op = TWL_BPF_OP_WRITE;
	k.target_hier = hier;
	k.target_cgid = dir->id;
	/* The value comes parsed: no string parser on this path. */
	if (fv->cond == TWL_BPF_COND_VALUE_NOT_1)
		met = val != 1;
	else
		met = cond_met(fv->cond, dir, 0);
	o.val = val;
	o.src = fv->flags & TWL_BPF_FILE_U64 ? TWL_BPF_VAL_PARSED : 0;
	count_use(&k, t, dir, w, met, ret < 0, &o);
	return 0;
}

/*
 * Writes, on the memory controller's own v1 write handlers (mm/memcontrol.c
 * in 6.1, mm/memcontrol-v1.c from v6.11): cgroup_file_write() calls exactly
 * one of them per write() to a memory v1 file, and none for any other
 * file, so v2 files, v1 core files and other controllers' files run no
 * program at all. fexit: the attempt and, in the same step, its failure
 * (every call returns; the handler's result is what cgroup_file_write()
 * returns for the write).
 */
SEC("fexit/mem_cgroup_write")
int BPF_PROG(twl_mem_write, struct kernfs_open_file *of, char *buf,
	     size_t nbytes, loff_t off, ssize_t ret)
{
	return count_of_write(of, buf, ret, true);
}

SEC("fexit/mem_cgroup_reset")
int BPF_PROG(twl_mem_reset, struct kernfs_open_file *of, char *buf,
	     size_t nbytes, loff_t off, ssize_t ret)
{
	return count_of_write(of, buf, ret, false);
}

SEC("fexit/mem_cgroup_force_empty_write")
int BPF_PROG(twl_force_empty, struct kernfs_open_file *of, char *buf,
	     size_t nbytes, loff_t off, ssize_t ret)
{
	return count_of_write(of, buf, ret, false);
}

SEC("fexit/mem_cgroup_hierarchy_write")
int BPF_PROG(twl_hier_write, struct cgroup_subsys_state *css,
	     struct cftype *cft, u64 val, int ret)
{
	return count_u64_write(css, cft, val, ret);
}

SEC("fexit/mem_cgroup_swappiness_write")
int BPF_PROG(twl_swap_write, struct cgroup_subsys_state *css,
	     struct cftype *cft, u64 val, int ret)
{
	return count_u64_write(css, cft, val, ret);
}

SEC("fexit/mem_cgroup_move_charge_write")
int BPF_PROG(twl_move_write, struct cgroup_subsys_state *css,
	     struct cftype *cft, u64 val, int ret)
{
	return count_u64_write(css, cft, val, ret);
}

SEC("fexit/mem_cgroup_oom_control_write")
int BPF_PROG(twl_oomc_write, struct cgroup_subsys_state *css,
	     struct cftype *cft, u64 val, int ret)
{
	return count_u64_write(css, cft, val, ret);
}

SEC("fexit/cgroup_file_open")
int BPF_PROG(twl_open_exit, struct kernfs_open_file *of, int ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct twl_bpf_usage_key k;
	struct kernfs_node *dir;
	struct cgroup *w;
	__u16 cond;

	if (!(of->file->f_mode & FMODE_READ))
		return 0;
	dir = access_key(of, TWL_BPF_FILE_DIRECT, TWL_BPF_OP_READ, &k, &cond,
			 &w, t);
	if (!dir)
		return 0;
	count_use(&k, t, NULL, w, false, ret != 0,
		  NULL); /* the kernel warns on no read */
	return 0;
}

/* Count one eventfd registration on @fk (a constant file name) for @memcg. */
static __always_inline int count_register(struct mem_cgroup *memcg,
					  struct twl_bpf_file_key *fk, int ret)
{
	struct twl_bpf_usage_key k;
	struct twl_bpf_file_val *fv;
	struct kernfs_node *dir;
	struct cgroup *cgrp, *w;
	struct task_struct *t;
	__u32 hier;

	cgrp = memcg->css.cgroup;
	hier = cgrp->root->hierarchy_id;
	if (!hier)
		return 0; /* cgroup.event_control does not exist on v2 anyway */
	fv = bpf_map_lookup_elem(&twl_files, fk);
	if (!fv || !(fv->flags & TWL_BPF_FILE_EVENT))
		return 0;
	dir = cgrp->kn;
	__builtin_memset(&k, 0, sizeof(k));
	k.file_id = fv->id;
	k.op = TWL_BPF_OP_REGISTER;
	k.target_hier = hier;
	k.target_cgid = dir->id;
	t = bpf_get_current_task_btf();
	w = key_set_writer(&k, t, twl_memory_cgrp_id());
	count_use(&k, t, dir, w, cond_met(fv->cond, dir, 0), ret != 0, NULL);
	return 0;
}

#define TWL_FILE_KEY(var, str)            \
	struct twl_bpf_file_key var = {}; \
	__builtin_memcpy(var.name, str, sizeof(str))

SEC("fexit/mem_cgroup_oom_register_event")
int BPF_PROG(twl_oom_register, struct mem_cgroup *memcg,
	     struct eventfd_ctx *eventfd, const char *args, int ret)
{
	TWL_FILE_KEY(fk, "memory.oom_control");

	return count_register(memcg, &fk, ret);
}

SEC("fexit/vmpressure_register_event")
int BPF_PROG(twl_pressure_register, struct mem_cgroup *memcg,
	     struct eventfd_ctx *eventfd, const char *args, int ret)
{
	TWL_FILE_KEY(fk, "memory.pressure_level");

	return count_register(memcg, &fk, ret);
}

SEC("fexit/mem_cgroup_usage_register_event")
int BPF_PROG(twl_usage_register, struct mem_cgroup *memcg,
	     struct eventfd_ctx *eventfd, const char *args, int ret)
{
	TWL_FILE_KEY(fk, "memory.usage_in_bytes");

	return count_register(memcg, &fk, ret);
}

SEC("fexit/memsw_cgroup_usage_register_event")
int BPF_PROG(twl_memsw_register, struct mem_cgroup *memcg,
	     struct eventfd_ctx *eventfd, const char *args, int ret)
{
	TWL_FILE_KEY(fk, "memory.memsw.usage_in_bytes");

	return count_register(memcg, &fk, ret);
}
