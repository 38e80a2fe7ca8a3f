/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to agent/bpf's user-space side (twl_bpf.h is the interface):
 *
 *   twl_bpf_probes.c  the probes: programs, kernel functions, what each
 *                     one covers, and the kmsg/BPF cross-check
 *   twl_bpf_load.c    open the skeleton, pin or reuse maps and links, load,
 *                     fill the files map; the handle's life
 *   twl_bpf_import.c  carry the counts pinned by an agent of the previous
 *                     map layout over, then unpin them
 *   twl_bpf_attach.c  attach each probe that is not attached yet, one step
 *                     per probe, and pin its link
 *   twl_bpf_read.c    drain the maps and convert them into wire usage[]
 *                     entries and health
 */
#ifndef TWILIGHT_AGENT_BPF_INTERNAL_H
#define TWILIGHT_AGENT_BPF_INTERNAL_H

#include <limits.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "twl_bpf.h"
#include "twl_bpf_decide.h"
#include "twl_bpf_types.h"

struct bpf_link;
struct twl_usage_bpf; /* the skeleton, usage.skel.h */

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

/* One probe of usage.bpf.c. */
struct probe_def {
	/* program name in usage.bpf.c, also the link pin name */
	const char *prog;
	const char *func; /* kernel function */
	const char *label; /* health name */
	/* the file a registration probe counts, or NULL */
	const char *event_file;
	/* the function is memory v1 code (absent without CONFIG_MEMCG_V1) */
	bool memory_v1;
};

/* Every probe, indexed by enum probe_kind (twl_bpf_probes.c). */
extern const struct probe_def twl_bpf_probe_def[P_NR];

struct probe {
	bool attached;
	/* function absent because its controller's v1 code is not built */
	bool not_built;
	struct bpf_link *link;
	char reason[160];
};

/* What the kernel's BTF says of a controller's v1 interface. */
struct ctl_state {
	bool decided; /* false: BPF off or no BTF, reason says which */
	bool built;
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
	bool verifier_stats;
	int usage_fd, paths_fd, files_fd, overflow_fd, meta_fd;
	struct probe probes[P_NR];
	struct ctl_state ctl[TWL_CTL_NR];
	struct twl_bpf_privacy privacy;
	int (*image_of)(void *ctx, const char *container, char *out,
			size_t cap); /* twl_bpf_cfg's; NULL: no images */
	void *image_ctx;
	char *privacy_key;
	struct snap *last; /* sorted snapshot of the previous collect */
	size_t n_last;
	bool collected;
};

/*
 * twl_bpf_pin_path - @name's pin path in b->pin_dir into @out (@cap bytes).
 * 0 or -ENAMETOOLONG.
 */
int twl_bpf_pin_path(const struct twl_bpf *b, const char *name, char *out,
		     size_t cap);

struct btf;

/*
 * twl_bpf_plan - before loading: decide from @vmlinux (the kernel's BTF)
 * which controllers' v1 interfaces are built, and set @want[P_NR] to the
 * probes whose programs are to be loaded (not reused, function present);
 * each probe left out gets its reason (not_built when its function is
 * memory v1 code and that is not built).
 */
void twl_bpf_plan(struct twl_bpf *b, const struct btf *vmlinux, bool *want);

/*
 * twl_bpf_attach_all - unpin links of retired programs, then attach (and,
 * when pinning, pin) every loaded probe that is not attached yet, each on
 * its own: one that fails says why in its reason and the others go on.
 * Notes the first attach time in the meta map.
 */
void twl_bpf_attach_all(struct twl_bpf *b);

/*
 * twl_bpf_import_old - after loading, before attaching: when the previous
 * layout's pin directory ("v1", beside b->pin_dir) exists, unpin its links,
 * write its counts (usage with file ids translated by name, paths, first
 * attach time, overflows) into this handle's maps, and unpin and remove it.
 * Not imported (only removed) when this run reused pinned links: those
 * counted all along. An unreadable old usage map is left in place (its
 * links keep counting) with a warning. Safe to run again after a crash at
 * any point: counts are set, not added, and nothing is attached before the
 * old directory is gone.
 */
void twl_bpf_import_old(struct twl_bpf *b);

#endif /* TWILIGHT_AGENT_BPF_INTERNAL_H */
