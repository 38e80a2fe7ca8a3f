/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel drift for the usage counters, in one place (BPF side only).
 *
 * Every field that moved or was renamed upstream is read through a
 * ___flavour struct; libbpf strips the suffix and relocates against the
 * running kernel's BTF, and bpf_core_field_exists() picks the branch at
 * load time (the other branch is dead code and never verified).
 */
#ifndef TWILIGHT_BPF_DRIFT_H
#define TWILIGHT_BPF_DRIFT_H

#include <bpf/bpf_core_read.h>

/*
 * kernfs_node::parent was renamed __parent in v6.15 by commit 633488947ef6
 * ("kernfs: Use RCU to access kernfs_node::parent."). Checked offline with
 * `bpftool gen min_core_btf` against 6.1 (parent) and 6.18 (__parent) BTF:
 * see agent/bpf/README.md.
 */
struct kernfs_node___pre615 {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

struct kernfs_node___615 {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

/* @kn must be a BTF-typed pointer (read directly, no helper call). */
static __always_inline struct kernfs_node *twl_kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(struct kernfs_node___615, __parent))
		return ((struct kernfs_node___615 *)kn)->__parent;
	return ((struct kernfs_node___pre615 *)kn)->parent;
}

/*
 * The parent of the kernfs node at address @kn, read with helpers (for
 * global functions, which take addresses, not BTF-typed pointers); 0 when
 * unreadable.
 */
static __always_inline __u64 twl_kn_parent_addr(__u64 kn)
{
	__u64 p = 0;

	if (bpf_core_field_exists(struct kernfs_node___615, __parent))
		bpf_core_read(&p, sizeof(p),
			      &((struct kernfs_node___615 *)kn)->__parent);
	else
		bpf_core_read(&p, sizeof(p),
			      &((struct kernfs_node___pre615 *)kn)->parent);
	return p;
}

/*
 * memory_cgrp_id depends on which controllers the kernel was built with;
 * read it from the kernel's enum cgroup_subsys_id. Returns -1 when the
 * kernel has no memory controller.
 */
static __always_inline int twl_memory_cgrp_id(void)
{
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return -1;
	return bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
}

#endif /* TWILIGHT_BPF_DRIFT_H */
