// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching the loaded probes, each one on its own: a probe that cannot
 * be attached or pinned says why in its health reason, and the others
 * are attached regardless.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <twilight/util.h>

#include "twl_bpf_internal.h"
#include "usage.skel.h"

/* The first attach time (for twl_bpf_probe_missing()), kept across runs. */
static void note_attach_time(struct twl_bpf *b)
{
	__u32 idx = TWL_BPF_META_ATTACH_NS;
	__u64 t = 0;

	if (b->meta_fd < 0 || bpf_map_lookup_elem(b->meta_fd, &idx, &t) || t)
		return;
	t = twl_mono_ns();
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

static void unpin_retired(struct twl_bpf *b)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0;
	     b->pinning && i < sizeof(retired_links) / sizeof(retired_links[0]);
	     i++)
		if (!twl_bpf_pin_path(b, retired_links[i], path,
				      sizeof(path)) &&
		    unlink(path) && errno != ENOENT)
			twl_log(LOG_WARNING,
				"bpf: cannot unpin the retired link %s: %s; remove it by hand or writes are counted twice",
				path, strerror(errno));
}

/* Attach probe @i (loaded, not attached yet) and pin its link. */
static void attach_probe(struct twl_bpf *b, enum probe_kind i)
{
	struct probe *p = &b->probes[i];
	struct bpf_program *prog;
	char path[PATH_MAX];
	int err;

	prog = bpf_object__find_program_by_name(b->skel->obj,
						twl_bpf_probe_def[i].prog);
	if (!prog || !bpf_program__autoload(prog))
		return;
	p->link = bpf_program__attach(prog);
	if (!p->link) {
		err = -errno;
		snprintf(p->reason, sizeof(p->reason),
			 "attach to %s failed: %s", twl_bpf_probe_def[i].func,
			 strerror(-err));
		twl_log(LOG_WARNING, "bpf: %s", p->reason);
		return;
	}
	p->attached = true;
	if (!b->pinning) {
		snprintf(
			p->reason, sizeof(p->reason),
			"attached, not pinned (uses while the agent is down are lost)");
		return;
	}
	if (twl_bpf_pin_path(b, twl_bpf_probe_def[i].prog, path,
			     sizeof(path)) ||
	    bpf_link__pin(p->link, path)) {
		snprintf(p->reason, sizeof(p->reason),
			 "attached, pinning %.80s failed: %s", path,
			 strerror(errno));
		twl_log(LOG_WARNING, "bpf: %s", p->reason);
		return;
	}
	snprintf(p->reason, sizeof(p->reason), "attached and pinned");
}

/* Contract: see twl_bpf_internal.h. */
void twl_bpf_attach_all(struct twl_bpf *b)
{
	size_t i;

	unpin_retired(b);
	for (i = 0; i < P_NR; i++)
		if (!b->probes[i].attached)
			attach_probe(b, (enum probe_kind)i);
	note_attach_time(b);
}
