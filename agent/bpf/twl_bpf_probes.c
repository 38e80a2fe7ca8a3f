// SPDX-License-Identifier: GPL-2.0
/*
 * The probes of usage.bpf.c: which kernel function each one hooks, which
 * catalog features an attached probe covers, and the kmsg/BPF
 * cross-check built on that.
 */
#include <string.h>

#include <bpf/bpf.h>

#include <twilight/catalog.h>

#include "twl_bpf_internal.h"

/* Contract: see twl_bpf_internal.h. */
const struct probe_def twl_bpf_probe_def[P_NR] = {
	[P_W_MEM] = { "twl_mem_write", "mem_cgroup_write",
		      "fexit/mem_cgroup_write", NULL, true },
	[P_W_RESET] = { "twl_mem_reset", "mem_cgroup_reset",
			"fexit/mem_cgroup_reset", NULL, true },
	[P_W_FORCE] = { "twl_force_empty", "mem_cgroup_force_empty_write",
			"fexit/mem_cgroup_force_empty_write", NULL, true },
	[P_W_HIER] = { "twl_hier_write", "mem_cgroup_hierarchy_write",
		       "fexit/mem_cgroup_hierarchy_write", NULL, true },
	[P_W_SWAP] = { "twl_swap_write", "mem_cgroup_swappiness_write",
		       "fexit/mem_cgroup_swappiness_write", NULL, true },
	[P_W_MOVE] = { "twl_move_write", "mem_cgroup_move_charge_write",
		       "fexit/mem_cgroup_move_charge_write", NULL, true },
	[P_W_OOMC] = { "twl_oomc_write", "mem_cgroup_oom_control_write",
		       "fexit/mem_cgroup_oom_control_write", NULL, true },
	[P_OPEN] = { "twl_open_exit", "cgroup_file_open",
		     "fexit/cgroup_file_open", NULL, false },
	[P_OOM] = { "twl_oom_register", "mem_cgroup_oom_register_event",
		    "fexit/mem_cgroup_oom_register_event", "memory.oom_control",
		    true },
	[P_PRESSURE] = { "twl_pressure_register", "vmpressure_register_event",
			 "fexit/vmpressure_register_event",
			 "memory.pressure_level", false },
	[P_USAGE] = { "twl_usage_register", "mem_cgroup_usage_register_event",
		      "fexit/mem_cgroup_usage_register_event",
		      "memory.usage_in_bytes", true },
	[P_MEMSW] = { "twl_memsw_register", "memsw_cgroup_usage_register_event",
		      "fexit/memsw_cgroup_usage_register_event",
		      "memory.memsw.usage_in_bytes", true },
};

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

/* Contract: see twl_bpf.h. */
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
			if (twl_bpf_probe_def[p].event_file &&
			    !strcmp(twl_bpf_probe_def[p].event_file,
				    f->event_files[i]) &&
			    b->probes[p].attached)
				return true;
	return false;
}

/* Contract: see twl_bpf.h. */
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
