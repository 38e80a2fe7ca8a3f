// SPDX-License-Identifier: GPL-2.0
/*
 * Pure decisions of the BPF loader (see twl_bpf_decide.h): controllers'
 * v1 interfaces from the kernel's BTF, and loading around a refused
 * program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "twl_bpf_decide.h"

/*
 * Per controller: a function only its v1 interface has and the config
 * symbol that removes that interface, then (when v1 has a config of its
 * own) a function of the controller's core and the core's config. Names
 * checked in 6.1 and 6.12 sources: mem_cgroup_write is in mm/memcontrol.c
 * in 6.1 and mm/memcontrol-v1.c (CONFIG_MEMCG_V1) since 6.11;
 * cpuset_write_s64 (cpuset.sched_relax_domain_level, a v1-only file) moved
 * to kernel/cgroup/cpuset-v1.c (CONFIG_CPUSETS_V1); freezer_write is the
 * v1 freezer (kernel/cgroup/legacy_freezer.c); blkcg_reset_stats serves
 * blkio.reset_stats, in blkcg_legacy_files only; cgroup_release_agent_write
 * is kernel/cgroup/cgroup-v1.c, built with every cgroup kernel.
 */
static const struct {
	const char *name, *v1_func, *v1_config, *core_func, *core_config;
} ctl[TWL_CTL_NR] = {
	[TWL_CTL_MEMORY] = { "memory", "mem_cgroup_write", "CONFIG_MEMCG_V1",
			     "mem_cgroup_css_alloc", "CONFIG_MEMCG" },
	[TWL_CTL_CPUSET] = { "cpuset", "cpuset_write_s64", "CONFIG_CPUSETS_V1",
			     "cpuset_css_alloc", "CONFIG_CPUSETS" },
	[TWL_CTL_FREEZER] = { "freezer", "freezer_write",
			      "CONFIG_CGROUP_FREEZER", NULL, NULL },
	[TWL_CTL_BLKIO] = { "blkio", "blkcg_reset_stats", "CONFIG_BLK_CGROUP",
			    NULL, NULL },
	[TWL_CTL_CGROUP] = { "cgroup", "cgroup_release_agent_write",
			     "CONFIG_CGROUPS", NULL, NULL },
};

/* Contract: see twl_bpf_decide.h. */
const char *twl_ctl_name(enum twl_ctl c)
{
	return (unsigned)c < TWL_CTL_NR ? ctl[c].name : NULL;
}

/* Contract: see twl_bpf_decide.h. */
const char *twl_ctl_v1_func(enum twl_ctl c)
{
	return (unsigned)c < TWL_CTL_NR ? ctl[c].v1_func : NULL;
}

/* Contract: see twl_bpf_decide.h. */
bool twl_ctl_v1_built(enum twl_ctl c, twl_func_lookup has, const void *ctx,
		      char *reason, size_t cap)
{
	const char *config;

	if ((unsigned)c >= TWL_CTL_NR || !has) {
		snprintf(reason, cap, "no such controller");
		return false;
	}
	if (has(ctx, ctl[c].v1_func)) {
		snprintf(reason, cap, "%s is in the kernel's BTF",
			 ctl[c].v1_func);
		return true;
	}
	config = ctl[c].v1_config;
	if (ctl[c].core_func && !has(ctx, ctl[c].core_func))
		config = ctl[c].core_config;
	snprintf(reason, cap, "%s absent from the kernel's BTF: %s is not set",
		 ctl[c].v1_func, config);
	return false;
}

/* Contract: see twl_bpf_decide.h. */
bool twl_btf_has_func(const void *btf, const char *name)
{
	return btf && name &&
	       btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;
}

/* Contract: see twl_bpf_decide.h. */
int twl_bpf_load_degrading(size_t n, const bool *want, twl_load_fn load,
			   void *ctx, int *errs)
{
	bool on[TWL_BPF_MAX_PROGS];
	size_t i;
	int err;

	if (n > TWL_BPF_MAX_PROGS)
		return -E2BIG;
	for (i = 0; i < n; i++)
		errs[i] = 0;
	err = load(ctx, want, n);
	if (!err || err == -EPERM)
		return err;
	/* Find the programs that fail on their own. */
	for (i = 0; i < n; i++) {
		if (!want[i])
			continue;
		memset(on, 0, sizeof(on));
		on[i] = true;
		errs[i] = load(ctx, on, n);
	}
	for (i = 0; i < n; i++)
		on[i] = want[i] && !errs[i];
	return load(ctx, on, n);
}
