// SPDX-License-Identifier: GPL-2.0
/*
 * twl_bpf.c - load, pin, reuse and read the BPF usage counters.
 *
 * Order (as libbpf-tools do): open the skeleton -> point every map at its
 * pin path (libbpf reuses a pinned map or pins the new one) -> reuse pinned
 * links and switch off autoload for them and for functions this kernel's
 * BTF lacks -> load -> fill the files map from the catalog -> attach and pin
 * the remaining links.
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "twl_bpf.h"
#include "twl_bpf_types.h"
#include "usage.skel.h"

/*
 * Writes are counted on the memory controller's own v1 write handlers (one
 * probe each, P_W_*), reads on cgroup_file_open, eventfd
 * registrations on the four *_register_event functions.
 */
enum probe_kind {
	P_W_MEM, /* mem_cgroup_write: limits, soft limit, kmem, tcp, memsw */
	P_W_RESET, /* mem_cgroup_reset: *failcnt, *max_usage_in_bytes */
	P_W_FORCE, /* memory.force_empty */
	P_W_HIER, /* memory.use_hierarchy */
	P_W_SWAP, /* memory.swappiness */
	P_W_MOVE, /* memory.move_charge_at_immigrate */
	P_W_OOMC, /* memory.oom_control */
	P_OPEN,
	P_OOM,
	P_PRESSURE,
	P_USAGE,
	P_MEMSW,
	P_NR
};

static const struct {
	const char
		*prog; /* program name in usage.bpf.c, also the link pin name */
	const char *func; /* kernel function */
	const char *label; /* health name */
	const char
		*event_file; /* the file a registration probe counts, or NULL */
} probe_def[P_NR] = {
	[P_W_MEM] = { "twl_mem_write", "mem_cgroup_write",
		      "fexit/mem_cgroup_write", NULL },
	[P_W_RESET] = { "twl_mem_reset", "mem_cgroup_reset",
			"fexit/mem_cgroup_reset", NULL },
	[P_W_FORCE] = { "twl_force_empty", "mem_cgroup_force_empty_write",
			"fexit/mem_cgroup_force_empty_write", NULL },
	[P_W_HIER] = { "twl_hier_write", "mem_cgroup_hierarchy_write",
		       "fexit/mem_cgroup_hierarchy_write", NULL },
	[P_W_SWAP] = { "twl_swap_write", "mem_cgroup_swappiness_write",
		       "fexit/mem_cgroup_swappiness_write", NULL },
	[P_W_MOVE] = { "twl_move_write", "mem_cgroup_move_charge_write",
		       "fexit/mem_cgroup_move_charge_write", NULL },
	[P_W_OOMC] = { "twl_oomc_write", "mem_cgroup_oom_control_write",
		       "fexit/mem_cgroup_oom_control_write", NULL },
	[P_OPEN] = { "twl_open_exit", "cgroup_file_open",
		     "fexit/cgroup_file_open", NULL },
	[P_OOM] = { "twl_oom_register", "mem_cgroup_oom_register_event",
		    "fexit/mem_cgroup_oom_register_event",
		    "memory.oom_control" },
	[P_PRESSURE] = { "twl_pressure_register", "vmpressure_register_event",
			 "fexit/vmpressure_register_event",
			 "memory.pressure_level" },
	[P_USAGE] = { "twl_usage_register", "mem_cgroup_usage_register_event",
		      "fexit/mem_cgroup_usage_register_event",
		      "memory.usage_in_bytes" },
	[P_MEMSW] = { "twl_memsw_register", "memsw_cgroup_usage_register_event",
		      "fexit/memsw_cgroup_usage_register_event",
		      "memory.memsw.usage_in_bytes" },
};

/* Maps shared between programs and agent runs: all pinned. */
static const char *const pinned_maps[] = {
	"twl_usage",	"twl_paths", "twl_files",   "twl_cft",
	"twl_overflow", "twl_meta",  "twl_scratch",
};

struct probe {
	bool attached;
	struct bpf_link *link;
	char reason[160];
};

struct snap {
	struct twl_bpf_usage_key key;
	struct twl_bpf_usage_val val;
};

struct file_name {
	__u32 id;
	char name[TWL_BPF_FILE_NAME_LEN];
};

struct twl_bpf {
	struct twl_usage_bpf *skel;
	char pin_dir[PATH_MAX];
	bool pinning;
	int usage_fd, paths_fd, files_fd, overflow_fd, meta_fd;
	struct probe probes[P_NR];
	struct twl_bpf_privacy privacy;
	char *privacy_key;
	struct snap *last; /* sorted snapshot of the previous collect */
	size_t n_last;
	bool collected;
};

__attribute__((format(printf, 2, 0))) static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL, *line, *save = NULL;

	/*
	 * libbpf's own chatter (verifier logs included) only at debug level,
	 * one log line per line of it.
	 */
	if (vasprintf(&text, fmt, ap) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		twl_log(LOG_DEBUG, "libbpf: %s", line);
	free(text);
	return 0;
}

/* Give every probe not attached the same @reason. */
static void set_reason_all(struct twl_bpf *b, const char *reason)
{
	size_t i;

	for (i = 0; i < P_NR; i++)
		if (!b->probes[i].attached)
			snprintf(b->probes[i].reason,
				 sizeof(b->probes[i].reason), "%s", reason);
}

static int pin_path(const struct twl_bpf *b, const char *name, char *out,
		    size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", b->pin_dir, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Decide whether maps and links can be pinned; say why not when not. */
static void setup_pinning(struct twl_bpf *b, const struct twl_bpf_cfg *cfg)
{
	struct statfs st;
	int err;

	snprintf(b->pin_dir, sizeof(b->pin_dir), "%s",
		 cfg && cfg->pin_dir ? cfg->pin_dir : TWL_BPF_PIN_DIR);
	if (cfg && cfg->no_pin)
		return;
	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		twl_log(LOG_WARNING,
			"bpf: /sys/fs/bpf is not a BPF filesystem: counts will not survive an agent restart; mount bpffs there");
		return;
	}
	err = twl_mkdir_p(b->pin_dir, 0700);
	if (err) {
		twl_log(LOG_WARNING,
			"bpf: cannot create pin directory %s: %s; counts will not survive an agent restart",
			b->pin_dir, strerror(-err));
		return;
	}
	b->pinning = true;
}

/*
 * Links pinned by an earlier run count into the pinned maps; without the
 * usage map they count into a map nobody can read, so drop them.
 */
static void drop_orphan_links(struct twl_bpf *b)
{
	char path[PATH_MAX];
	size_t i;

	if (pin_path(b, "twl_usage", path, sizeof(path)) || !access(path, F_OK))
		return;
	for (i = 0; i < P_NR; i++)
		if (!pin_path(b, probe_def[i].prog, path, sizeof(path)) &&
		    !access(path, F_OK)) {
			twl_log(LOG_WARNING,
				"bpf: removing link %s pinned without its maps",
				path);
			unlink(path);
		}
}

static int open_pinned_map(struct twl_bpf *b, const char *name)
{
	char path[PATH_MAX];

	if (pin_path(b, name, path, sizeof(path)))
		return -1;
	return bpf_obj_get(path);
}

/* Put every catalog control file into the files map (existing ids stay). */
static int fill_files(struct twl_bpf *b)
{
	struct twl_bpf_file_key fk, *prev = NULL;
	struct twl_bpf_file_val fv;
	__u32 next_id = 1;
	size_t i, j;
	int ret = 0;

	while (!bpf_map_get_next_key(b->files_fd, prev, &fk)) {
		if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv) &&
		    fv.id >= next_id)
			next_id = fv.id + 1;
		prev = &fk;
	}
	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		for (j = 0; f->files && f->files[j]; j++) {
			const char *name = f->files[j];

			if (strncmp(name, "memory.", 7) ||
			    strlen(name) >= TWL_BPF_FILE_NAME_LEN)
				continue; /* the probes count the memory controller only */
			memset(&fk, 0, sizeof(fk));
			strcpy(fk.name, name);
			if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv)) {
				if (fv.flags & TWL_BPF_FILE_DIRECT)
					continue;
				fv.flags |= TWL_BPF_FILE_DIRECT;
				fv.cond = twl_file_cond(name, f->warns);
			} else {
				fv = (struct twl_bpf_file_val){
					.id = next_id++,
					.cond = twl_file_cond(name, f->warns),
					.flags = TWL_BPF_FILE_DIRECT
				};
			}
			if (bpf_map_update_elem(b->files_fd, &fk, &fv, BPF_ANY))
				ret = -errno;
		}
		for (j = 0; f->event_files && f->event_files[j]; j++) {
			const char *name = f->event_files[j];

			if (strlen(name) >= TWL_BPF_FILE_NAME_LEN)
				continue;
			memset(&fk, 0, sizeof(fk));
			strcpy(fk.name, name);
			if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv)) {
				if (fv.flags & TWL_BPF_FILE_EVENT)
					continue;
				fv.flags |= TWL_BPF_FILE_EVENT;
			} else {
				fv = (struct twl_bpf_file_val){
					.id = next_id++,
					.cond = twl_file_cond(name, f->warns),
					.flags = TWL_BPF_FILE_EVENT
				};
			}
			if (bpf_map_update_elem(b->files_fd, &fk, &fv, BPF_ANY))
				ret = -errno;
		}
	}
	return ret;
}

/* Delete every entry of hash map @fd (a cache: nothing counted lives there). */
static void clear_map(int fd)
{
	__u64 key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			break;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void note_attach_time(struct twl_bpf *b)
{
	__u32 idx = TWL_BPF_META_ATTACH_NS;
	__u64 t = 0;

	if (b->meta_fd < 0 || bpf_map_lookup_elem(b->meta_fd, &idx, &t) || t)
		return;
	t = mono_ns();
	bpf_map_update_elem(b->meta_fd, &idx, &t, BPF_ANY);
}

/*
 * Link pins of programs that earlier builds attached and this one replaced:
 * the fentry + fexit pair on cgroup_file_write (twl_write_entry,
 * twl_write_exit), then the one fexit program there (twl_write), now the
 * programs on the memory controller's write handlers. Left pinned they
 * would keep running next to their successors and count every write twice.
 */
static const char *const retired_links[] = { "twl_write_entry",
					     "twl_write_exit", "twl_write" };

static void attach_all(struct twl_bpf *b)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0;
	     b->pinning && i < sizeof(retired_links) / sizeof(retired_links[0]);
	     i++)
		if (!pin_path(b, retired_links[i], path, sizeof(path)) &&
		    unlink(path) && errno != ENOENT)
			twl_log(LOG_WARNING,
				"bpf: cannot unpin the retired link %s: %s; remove it by hand or writes are counted twice",
				path, strerror(errno));
	for (i = 0; i < P_NR; i++) {
		struct probe *p = &b->probes[i];
		struct bpf_program *prog;
		int err;

		if (p->attached)
			continue;
		prog = bpf_object__find_program_by_name(b->skel->obj,
							probe_def[i].prog);
		if (!prog || !bpf_program__autoload(prog))
			continue;
		p->link = bpf_program__attach(prog);
		if (!p->link) {
			err = -errno;
			snprintf(p->reason, sizeof(p->reason),
				 "attach to %s failed: %s", probe_def[i].func,
				 strerror(-err));
			twl_log(LOG_WARNING, "bpf: %s", p->reason);
			continue;
		}
		p->attached = true;
		if (!b->pinning) {
			snprintf(
				p->reason, sizeof(p->reason),
				"attached, not pinned (uses while the agent is down are lost)");
			continue;
		}
		if (pin_path(b, probe_def[i].prog, path, sizeof(path)) ||
		    bpf_link__pin(p->link, path)) {
			snprintf(p->reason, sizeof(p->reason),
				 "attached, pinning %.80s failed: %s", path,
				 strerror(errno));
			twl_log(LOG_WARNING, "bpf: %s", p->reason);
			continue;
		}
		snprintf(p->reason, sizeof(p->reason), "attached and pinned");
	}
	note_attach_time(b);
}

struct twl_bpf *twl_bpf_open(const struct twl_bpf_cfg *cfg)
{
	char path[PATH_MAX], msg[160];
	struct twl_bpf *b;
	struct btf *vmlinux = NULL;
	struct bpf_map *map;
	size_t i;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->usage_fd = b->paths_fd = b->files_fd = b->overflow_fd = b->meta_fd =
		-1;
	if (cfg) {
		b->privacy = cfg->privacy;
		if (cfg->privacy.key) {
			b->privacy_key = strdup(cfg->privacy.key);
			if (!b->privacy_key) {
				free(b);
				errno = ENOMEM;
				return NULL;
			}
		}
		b->privacy.key = b->privacy_key;
	}
	set_reason_all(b, "not loaded");
	if (!cfg || !cfg->enable) {
		set_reason_all(b, "disabled by configuration");
		return b;
	}
	libbpf_set_print(libbpf_print);

	setup_pinning(b, cfg);
	if (b->pinning)
		drop_orphan_links(b);

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		set_reason_all(
			b,
			"kernel has no BTF (/sys/kernel/btf/vmlinux): needs CONFIG_DEBUG_INFO_BTF=y");
		twl_log(LOG_WARNING,
			"bpf: kernel has no BTF; usage counters off, kmsg and census continue");
		goto out;
	}
	b->skel = twl_usage_bpf__open();
	if (!b->skel) {
		err = -errno;
		snprintf(msg, sizeof(msg), "opening the BPF object failed: %s",
			 strerror(-err));
		set_reason_all(b, msg);
		twl_log(LOG_WARNING,
			"bpf: opening the BPF object failed: %s; usage counters off",
			strerror(-err));
		goto out;
	}
	for (i = 0;
	     b->pinning && i < sizeof(pinned_maps) / sizeof(pinned_maps[0]);
	     i++) {
		map = bpf_object__find_map_by_name(b->skel->obj,
						   pinned_maps[i]);
		if (map && !pin_path(b, pinned_maps[i], path, sizeof(path)))
			bpf_map__set_pin_path(map, path);
	}
	for (i = 0; i < P_NR; i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(
			b->skel->obj, probe_def[i].prog);
		struct probe *p = &b->probes[i];

		if (!prog)
			continue;
		if (b->pinning &&
		    !pin_path(b, probe_def[i].prog, path, sizeof(path)) &&
		    !access(path, F_OK)) {
			p->link = bpf_link__open(path);
			if (p->link) {
				p->attached = true;
				snprintf(
					p->reason, sizeof(p->reason),
					"reused link pinned by an earlier run");
				bpf_program__set_autoload(prog, false);
				continue;
			}
			twl_log(LOG_WARNING,
				"bpf: cannot reuse pinned link %s (%s); replacing it",
				path, strerror(errno));
			unlink(path);
		}
		if (btf__find_by_name_kind(vmlinux, probe_def[i].func,
					   BTF_KIND_FUNC) < 0) {
			snprintf(p->reason, sizeof(p->reason),
				 "function %s not in this kernel's BTF",
				 probe_def[i].func);
			bpf_program__set_autoload(prog, false);
		}
	}
	err = twl_usage_bpf__load(b->skel);
	if (err) {
		/* EACCES is the verifier refusing a program; EPERM is privilege. */
		if (err == -EPERM)
			set_reason_all(
				b,
				"no privilege to load BPF: needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
		else {
			snprintf(
				msg, sizeof(msg),
				"loading BPF failed: %s (log level debug shows the verifier log)",
				strerror(-err));
			set_reason_all(b, msg);
		}
		twl_log(LOG_WARNING,
			"bpf: loading the usage counters failed: %s; kmsg and census continue",
			strerror(-err));
		/* Reused links still count into the pinned maps: read those. */
		if (b->pinning) {
			b->usage_fd = open_pinned_map(b, "twl_usage");
			b->paths_fd = open_pinned_map(b, "twl_paths");
			b->files_fd = open_pinned_map(b, "twl_files");
			b->overflow_fd = open_pinned_map(b, "twl_overflow");
			b->meta_fd = open_pinned_map(b, "twl_meta");
		}
		goto out;
	}
	b->usage_fd = bpf_map__fd(b->skel->maps.twl_usage);
	b->paths_fd = bpf_map__fd(b->skel->maps.twl_paths);
	b->files_fd = bpf_map__fd(b->skel->maps.twl_files);
	b->overflow_fd = bpf_map__fd(b->skel->maps.twl_overflow);
	b->meta_fd = bpf_map__fd(b->skel->maps.twl_meta);
	err = fill_files(b);
	clear_map(bpf_map__fd(
		b->skel->maps.twl_cft)); /* cached answers may be stale */
	if (err)
		twl_log(LOG_WARNING,
			"bpf: filling the control-file table failed: %s; some files are not counted",
			strerror(-err));
	attach_all(b);
out:
	btf__free(vmlinux);
	return b;
}

void twl_bpf_free(struct twl_bpf *b)
{
	size_t i;

	if (!b)
		return;
	/* Destroying a pinned link object detaches nothing: the pin holds it. */
	for (i = 0; i < P_NR; i++)
		bpf_link__destroy(b->probes[i].link);
	if (b->skel)
		twl_usage_bpf__destroy(b->skel);
	else {
		int *fds[] = { &b->usage_fd, &b->paths_fd, &b->files_fd,
			       &b->overflow_fd, &b->meta_fd };

		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	free(b->last);
	free(b->privacy_key);
	free(b);
}

bool twl_bpf_active(const struct twl_bpf *b)
{
	size_t i;

	for (i = 0; b && i < P_NR; i++)
		if (b->probes[i].attached)
			return true;
	return false;
}

/* Read the files map into @names (id -> name); returns the count. */
static size_t read_files(struct twl_bpf *b, struct file_name *names, size_t cap)
{
	struct twl_bpf_file_key fk, *prev = NULL;
	struct twl_bpf_file_val fv;
	size_t n = 0;

	while (n < cap && !bpf_map_get_next_key(b->files_fd, prev, &fk)) {
		if (!bpf_map_lookup_elem(b->files_fd, &fk, &fv)) {
			names[n].id = fv.id;
			memcpy(names[n].name, fk.name, sizeof(fk.name));
			names[n].name[sizeof(names[n].name) - 1] = '\0';
			n++;
		}
		prev = &fk;
	}
	return n;
}

static const char *file_name_of(const struct file_name *names, size_t n,
				__u32 id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i].id == id)
			return names[i].name;
	return NULL;
}

static const struct twl_feature *feature_of(const char *file, unsigned op)
{
	if (!file)
		return NULL;
	return op == TWL_BPF_OP_REGISTER ? twl_catalog_find_event_file(file) :
					   twl_catalog_find_file(file);
}

static int cmp_snap(const void *a, const void *b)
{
	return memcmp(&((const struct snap *)a)->key,
		      &((const struct snap *)b)->key,
		      sizeof(struct twl_bpf_usage_key));
}

/*
 * Snapshot the usage map: keys sorted and unique (a hash map walked while
 * the kernel inserts may, in theory, yield a key twice). *@out is malloc'd.
 */
static int read_usage(struct twl_bpf *b, struct snap **out, size_t *n_out)
{
	struct twl_bpf_usage_key k, *prev = NULL;
	struct snap *s;
	size_t n = 0, i, w;

	s = calloc(TWL_BPF_USAGE_ENTRIES, sizeof(*s));
	if (!s)
		return -ENOMEM;
	while (n < TWL_BPF_USAGE_ENTRIES &&
	       !bpf_map_get_next_key(b->usage_fd, prev, &k)) {
		s[n].key = k;
		prev = &s[n].key;
		n++;
	}
	qsort(s, n, sizeof(*s), cmp_snap);
	for (i = 0, w = 0; i < n; i++) {
		if (w && !cmp_snap(&s[w - 1], &s[i]))
			continue;
		if (bpf_map_lookup_elem(b->usage_fd, &s[i].key, &s[w].val))
			continue;
		if (w != i)
			s[w].key = s[i].key;
		w++;
	}
	*out = s;
	*n_out = w;
	return 0;
}

static void path_of(struct twl_bpf *b, __u64 cgid, __u32 hier, char *out,
		    size_t cap)
{
	struct twl_bpf_path_key pk = { .cgid = cgid, .hier = hier };
	struct twl_bpf_path_val pv;

	if (!cgid) {
		snprintf(out, cap, "%s", "");
		return;
	}
	if (!bpf_map_lookup_elem(b->paths_fd, &pk, &pv) &&
	    !twl_cgroup_path_from_raw(
		    pv.path,
		    pv.len < sizeof(pv.path) ? pv.len : sizeof(pv.path),
		    pv.truncated, out, cap))
		return;
	/* Path map full when first seen: say so rather than guess a name. */
	snprintf(out, cap, "(unknown cgroup %u:%llu)", hier,
		 (unsigned long long)cgid);
}

static bool changed_since(const struct twl_bpf *b, const struct snap *s)
{
	const struct snap *old;

	if (!b->collected)
		return true;
	old = bsearch(s, b->last, b->n_last, sizeof(*s), cmp_snap);
	return !old || old->val.count != s->val.count ||
	       old->val.failed != s->val.failed ||
	       old->val.condition_met != s->val.condition_met;
}

/*
 * is_own_read - true for a read counter that the agent itself made: its
 * census reads v1 memory knobs, and those reads are the agent's, not the
 * fleet's usage (they would otherwise reach the linux-mm export as a
 * "twilight-agent" workload). Matched on the process name and uid, which
 * survive an agent restart (the pinned programs outlive the pid); a
 * different program that names itself like the agent and runs as its uid
 * would be skipped too, which the README states.
 */
static bool is_own_read(const struct twl_bpf_usage_key *k)
{
	char self[17] = "";

	if (k->op != TWL_BPF_OP_READ || k->uid != (__u32)getuid())
		return false;
	if (prctl(PR_GET_NAME, self, 0, 0, 0))
		return false;
	return !strncmp(self, (const char *)k->comm, sizeof(k->comm));
}

int twl_bpf_collect(struct twl_bpf *b, json_t *usage_array, const char *boot_id,
		    unsigned flags)
{
	struct file_name names[TWL_BPF_FILE_ENTRIES];
	char cg[1024], wcg[1024], comm[17];
	struct timespec rt, mt;
	int64_t boot_rt;
	struct snap *s = NULL;
	size_t n_names, n = 0, i;
	int appended = 0, err;

	if (!b || b->usage_fd < 0 || b->files_fd < 0)
		return -ENODEV;
	if (!usage_array || !boot_id)
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	boot_rt = ((int64_t)rt.tv_sec - mt.tv_sec) * 1000000000LL +
		  (rt.tv_nsec - mt.tv_nsec);
	n_names = read_files(b, names, TWL_BPF_FILE_ENTRIES);
	err = read_usage(b, &s, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const struct twl_bpf_usage_key *k = &s[i].key;
		const struct twl_bpf_usage_val *v = &s[i].val;
		const char *file = file_name_of(names, n_names, k->file_id);
		const struct twl_feature *f = feature_of(file, k->op);
		struct twl_usage_entry e;
		json_t *o;

		if (!f || !v->count || is_own_read(k))
			continue;
		if ((flags & TWL_BPF_COLLECT_CHANGED) &&
		    !changed_since(b, &s[i]))
			continue;
		path_of(b, k->target_cgid, k->target_hier, cg, sizeof(cg));
		path_of(b, k->writer_cgid, k->writer_hier, wcg, sizeof(wcg));
		twl_comm_sanitize(k->comm, sizeof(k->comm), comm);
		e = (struct twl_usage_entry){
			.boot_id = boot_id,
			.feature = f->id,
			.file = file,
			.op = k->op,
			.cgroup = cg,
			.comm = comm,
			.uid = k->uid,
			.writer_cgroup = wcg,
			.last_pid = v->last_pid,
			.count = v->count,
			.failed = v->failed,
			.condition_met = v->condition_met,
			.first_ns = v->first_ns,
			.last_ns = v->last_ns,
		};
		o = twl_usage_entry_to_json(&e, boot_rt, &b->privacy);
		if (!o || json_array_append_new(usage_array, o)) {
			err = -ENOMEM;
			goto out;
		}
		appended++;
	}
	free(b->last);
	b->last = s;
	b->n_last = n;
	b->collected = true;
	s = NULL;
	err = appended;
out:
	free(s);
	return err;
}

static uint64_t overflows(struct twl_bpf *b)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;
	__u64 *vals;
	__u32 idx;
	int c;

	if (b->overflow_fd < 0 || ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	for (idx = 0; idx < TWL_BPF_OVF_NR; idx++)
		if (!bpf_map_lookup_elem(b->overflow_fd, &idx, vals))
			for (c = 0; c < ncpu; c++)
				sum += vals[c];
	free(vals);
	return sum;
}

int twl_bpf_health(struct twl_bpf *b, json_t *health)
{
	json_t *probes;
	size_t i;

	if (!b || !health)
		return -EINVAL;
	probes = json_array();
	if (!probes)
		return -ENOMEM;
	for (i = 0; i < P_NR; i++) {
		json_t *p = json_pack(
			"{s:s, s:s, s:s}", "name", probe_def[i].label, "state",
			b->probes[i].attached ? "attached" : "unavailable",
			"reason", b->probes[i].reason);

		if (!p || json_array_append_new(probes, p)) {
			json_decref(probes);
			return -ENOMEM;
		}
	}
	if (json_object_set_new(health, "probes", probes) ||
	    json_object_set_new(health, "map_overflows",
				json_integer((json_int_t)overflows(b))))
		return -ENOMEM;
	return 0;
}

bool twl_bpf_counted(struct twl_bpf *b, const char *feature_id)
{
	struct file_name names[TWL_BPF_FILE_ENTRIES];
	struct snap *s = NULL;
	size_t n_names, n = 0, i;
	bool found = false;

	if (!b || !feature_id || b->usage_fd < 0 || b->files_fd < 0)
		return false;
	n_names = read_files(b, names, TWL_BPF_FILE_ENTRIES);
	if (read_usage(b, &s, &n))
		return false;
	for (i = 0; i < n && !found; i++) {
		const struct twl_feature *f = feature_of(
			file_name_of(names, n_names, s[i].key.file_id),
			s[i].key.op);

		found = f && s[i].val.count && !strcmp(f->id, feature_id);
	}
	free(s);
	return found;
}

/*
 * The probe on the write handler of memory v1 control file @name (6.1's
 * mem_cgroup_legacy_files[] and memsw_files[]): the write_u64 files and
 * force_empty have their own handler, the *failcnt and *max_usage_in_bytes
 * files share mem_cgroup_reset, every other writable one mem_cgroup_write.
 */
static enum probe_kind write_probe_of(const char *name)
{
	static const struct {
		const char *name;
		enum probe_kind probe;
	} own[] = {
		{ "memory.force_empty", P_W_FORCE },
		{ "memory.use_hierarchy", P_W_HIER },
		{ "memory.swappiness", P_W_SWAP },
		{ "memory.move_charge_at_immigrate", P_W_MOVE },
		{ "memory.oom_control", P_W_OOMC },
	};
	size_t i, n = strlen(name);

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i].name))
			return own[i].probe;
	if ((n >= 7 && !strcmp(name + n - 7, "failcnt")) ||
	    (n >= 18 && !strcmp(name + n - 18, "max_usage_in_bytes")))
		return P_W_RESET;
	return P_W_MEM;
}

bool twl_bpf_covers(struct twl_bpf *b, const char *feature_id)
{
	const struct twl_feature *f = twl_catalog_find(feature_id);
	size_t i, p;

	if (!b || !f)
		return false;
	for (i = 0; f->files && f->files[i]; i++)
		if (!strncmp(f->files[i], "memory.", 7) &&
		    b->probes[write_probe_of(f->files[i])].attached)
			return true;
	for (i = 0; f->event_files && f->event_files[i]; i++)
		for (p = 0; p < P_NR; p++)
			if (probe_def[p].event_file &&
			    !strcmp(probe_def[p].event_file,
				    f->event_files[i]) &&
			    b->probes[p].attached)
				return true;
	return false;
}

bool twl_bpf_probe_missing(struct twl_bpf *b, const char *feature_id,
			   uint64_t warn_mono_us)
{
	__u32 idx = TWL_BPF_META_ATTACH_NS;
	__u64 attach_ns = 0;

	if (!b || b->meta_fd < 0 || !twl_bpf_covers(b, feature_id))
		return false;
	if (bpf_map_lookup_elem(b->meta_fd, &idx, &attach_ns) || !attach_ns)
		return false;
	if (warn_mono_us * 1000ull < attach_ns)
		return false; /* warned before the probes could see it */
	return !twl_bpf_counted(b, feature_id);
}
