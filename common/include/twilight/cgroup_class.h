/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one cgroup classifier (schema/wire-format.md, "target_kind"): what
 * kind of cgroup a path names (the root, a Kubernetes pod or container, a
 * Docker container, another runtime's container, a systemd unit or slice,
 * anything else), the name that goes with the kind, and the writer's
 * place as wire v1 spelt it in usage[].container ("docker:<id>",
 * "systemd:<unit>", ""). The agent classifies the cgroups it reports
 * (target_kind, container); the server classifies v1 documents and groups
 * workloads (workload.h) with the same code. Pure: no I/O.
 */
#ifndef TWILIGHT_CGROUP_CLASS_H
#define TWILIGHT_CGROUP_CLASS_H

#include <stddef.h>

/* Kinds, in the order of twl_cgroup_kind_names[]. */
enum twl_cgroup_kind {
	TWL_CGROUP_ROOT, /* "/" or "" */
	TWL_CGROUP_KUBERNETES, /* below a kubepods cgroup: pod or container */
	TWL_CGROUP_DOCKER, /* /docker/<id>, docker-<id>.scope */
	TWL_CGROUP_CONTAINER, /* podman, CRI-O, containerd, LXC, machines */
	TWL_CGROUP_SYSTEMD_UNIT, /* a .service or .scope, not a container */
	TWL_CGROUP_SYSTEMD_SLICE, /* a .slice */
	TWL_CGROUP_OTHER,
	TWL_CGROUP_N_KINDS
};

/*
 * The kinds' wire spellings ("root", "kubernetes", "docker", "container",
 * "systemd_unit", "systemd_slice", "other"), indexed by enum
 * twl_cgroup_kind and NULL-terminated: the validator's enumeration of
 * target_kind is this array.
 */
extern const char *const twl_cgroup_kind_names[];

/* Bytes of a cgroup name (a kernfs name is at most NAME_MAX, 255). */
#define TWL_CGROUP_NAME_MAX 255
/* Components looked at, from the top: deeper ones are ignored. */
#define TWL_CGROUP_MAX_DEPTH 64

struct twl_cgroup_class {
	enum twl_cgroup_kind kind;
	/*
	 * The name that goes with the kind: the container id (docker,
	 * container, kubernetes container), the pod's uid as the path
	 * spells it (kubernetes pod), the LXC container's or machine's
	 * name, the unit or slice; "" for root and other.
	 */
	char name[TWL_CGROUP_NAME_MAX + 1];
	/*
	 * The writer's place as usage[].container spells it (wire v1):
	 * "docker:<id>", "cri-containerd:<id>", "crio:<id>",
	 * "podman:<id>", "lxc:<name>", "systemd:<unit or slice>" or "".
	 * <id> is a 64 hex digit container id.
	 */
	char place[TWL_CGROUP_NAME_MAX + 17];
};

/*
 * twl_cgroup_classify - classify cgroup @path (a path within its
 * hierarchy, "/a/b"; repeated and trailing '/' are ignored; NULL is "")
 * into *@out. Returns 0, or -ENAMETOOLONG when the name or place would
 * not fit (a component over TWL_CGROUP_NAME_MAX bytes): out->kind is set
 * all the same, name and place are "".
 */
int twl_cgroup_classify(const char *path, struct twl_cgroup_class *out);

/*
 * twl_cgroup_kind_of - the kind twl_cgroup_classify() gives @path, without
 * its name and place (the server classifies every usage entry sent
 * without a target_kind, and keeps only the kind).
 */
enum twl_cgroup_kind twl_cgroup_kind_of(const char *path);

/* twl_cgroup_kind_name - the wire spelling of @kind ("other" if unknown). */
const char *twl_cgroup_kind_name(enum twl_cgroup_kind kind);

/*
 * twl_cgroup_kind_parse - the kind spelt @s (a wire spelling), or -1 when
 * @s is none (NULL included).
 */
int twl_cgroup_kind_parse(const char *s);

#endif /* TWILIGHT_CGROUP_CLASS_H */
