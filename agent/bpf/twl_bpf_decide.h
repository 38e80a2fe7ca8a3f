/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure decisions of the BPF loader, apart from any kernel so they can be
 * unit-tested: which cgroup v1 controller interfaces this kernel has built
 * (decided from the functions in its BTF, never from the release string),
 * and which programs to load when one of them cannot be loaded.
 */
#ifndef TWILIGHT_AGENT_BPF_DECIDE_H
#define TWILIGHT_AGENT_BPF_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

/* The controllers of wire health.controllers, in the wire's order. */
enum twl_ctl {
	TWL_CTL_MEMORY,
	TWL_CTL_CPUSET,
	TWL_CTL_FREEZER,
	TWL_CTL_BLKIO,
	TWL_CTL_CGROUP, /* the v1 core files (release_agent, notify_on_release) */
	TWL_CTL_NR
};

/* twl_ctl_name - @c's wire name ("memory", ...), or NULL out of range. */
const char *twl_ctl_name(enum twl_ctl c);

/*
 * twl_ctl_v1_func - the kernel function whose presence in BTF proves that
 * @c's v1 interface is built (a handler of a v1-only control file, kept out
 * of line because a cftype holds its address), or NULL out of range.
 */
const char *twl_ctl_v1_func(enum twl_ctl c);

/* Whether @name is a function (BTF FUNC) of the kernel @ctx describes. */
typedef bool (*twl_func_lookup)(const void *ctx, const char *name);

/*
 * twl_ctl_v1_built - whether controller @c's v1 interface is built into the
 * kernel whose functions @has answers for (with @ctx). Writes into @reason
 * (@cap bytes) what decided it: when not built, the missing function and
 * the config symbol that removes it, e.g. "mem_cgroup_write absent from the
 * kernel's BTF: CONFIG_MEMCG_V1 is not set" (CONFIG_MEMCG when the
 * controller's core is absent too). False also for @c out of range.
 */
bool twl_ctl_v1_built(enum twl_ctl c, twl_func_lookup has, const void *ctx,
		      char *reason, size_t cap);

/* twl_btf_has_func - a twl_func_lookup over a libbpf `const struct btf *`. */
bool twl_btf_has_func(const void *btf, const char *name);

/* At most this many programs for twl_bpf_load_degrading(). */
#define TWL_BPF_MAX_PROGS 32

/*
 * Load the programs whose @on[i] is true (the others with autoload off);
 * 0 or a negative errno. Each call starts from a fresh object.
 */
typedef int (*twl_load_fn)(void *ctx, const bool *on, size_t n);

/*
 * twl_bpf_load_degrading - load the @n programs @want selects with @load.
 * When that fails for a reason other than -EPERM (no privilege: every
 * program would fail alike), each wanted program is loaded alone; those
 * that fail alone get their error in @errs[i] (0 for the others) and the
 * rest are loaded together again, so one program the verifier refuses does
 * not drop the others. Returns the last load's result: 0 when the object
 * is loaded (possibly without some programs), or a negative errno (-E2BIG
 * for @n over TWL_BPF_MAX_PROGS, nothing loaded).
 */
int twl_bpf_load_degrading(size_t n, const bool *want, twl_load_fn load,
			   void *ctx, int *errs);

#endif /* TWILIGHT_AGENT_BPF_DECIDE_H */
