/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a workload is (docs/workloads.md): the process name, the kind of
 * the writer's place and the kind of the target cgroup of a usage[] entry,
 * with the writer's place name and image added only where the caller's
 * redaction settings allow. Every grouping of usage (the linux-mm export,
 * the dashboard, alerts, readiness, migration status) builds its groups
 * with twl_workload_of() and compares or keys them with twl_workload_cmp()
 * and twl_workload_key(), so that they all mean the same thing.
 */
#ifndef TWILIGHT_WORKLOAD_H
#define TWILIGHT_WORKLOAD_H

#include <stddef.h>

#include <twilight/cgroup_class.h>
#include <twilight/wire.h>

/* What a grouping may show beyond the kinds (flags for twl_workload_of()). */
#define TWL_WORKLOAD_PLACE_NAME 0x1 /* the writer's unit, pod or container */
#define TWL_WORKLOAD_IMAGE 0x2 /* the writer's container image */

struct twl_workload {
	char comm[TWL_WIRE_MAX_COMM + 1];
	enum twl_cgroup_kind place_kind; /* of the writer's cgroup */
	enum twl_cgroup_kind target_kind; /* of the cgroup used */
	char place_name[TWL_CGROUP_NAME_MAX + 1]; /* "" unless allowed */
	char image[TWL_WIRE_MAX_IMAGE + 1]; /* "" unless allowed or absent */
};

/* Bytes of a twl_workload_key(), NUL included: every field escaped. */
#define TWL_WORKLOAD_KEY_MAX                                                  \
	(2 * (TWL_WIRE_MAX_COMM + TWL_CGROUP_NAME_MAX + TWL_WIRE_MAX_IMAGE) + \
	 2 * 16 + 5)

/*
 * twl_workload_of - the workload of usage entry @u (valid, as
 * twl_wire_decode() gives it) into *@w. The writer's place is
 * twl_cgroup_classify() of writer_cgroup; a privacy-hashed writer_cgroup
 * ("h:...") is classified by the kind its container keeps ("docker:h:..."
 * is docker, "podman:" and "lxc:" a container, anything else other). The
 * target's kind is twl_wire_usage_target_kind(). @allow (TWL_WORKLOAD_*)
 * says which names to fill. Returns 0, or -ENAMETOOLONG when a name does
 * not fit (the kinds and comm are set all the same, the name left "").
 */
int twl_workload_of(const struct twl_wire_usage *u, unsigned allow,
		    struct twl_workload *w);

/* twl_workload_cmp - order of @a and @b (<0, 0, >0): a total order. */
int twl_workload_cmp(const struct twl_workload *a,
		     const struct twl_workload *b);

/*
 * twl_workload_key - @w as one line of text, equal for equal workloads and
 * different for different ones: "comm|place_kind|place_name|target_kind|
 * image", '|' and '\' in the names escaped with '\'. Writes at most @cap
 * bytes with the NUL; returns the length, or -ENOSPC (@out then "").
 * TWL_WORKLOAD_KEY_MAX bytes always suffice.
 */
int twl_workload_key(const struct twl_workload *w, char *out, size_t cap);

#endif /* TWILIGHT_WORKLOAD_H */
