// SPDX-License-Identifier: GPL-2.0
/* The one definition of a workload (workload.h, docs/workloads.md). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <twilight/cgroup_class.h>
#include <twilight/wire.h>
#include <twilight/workload.h>

/* Copy @s into @out (@cap bytes); -ENAMETOOLONG leaves "". */
static int copy_name(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (n >= cap) {
		out[0] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(out, s, n + 1);
	return 0;
}

/*
 * The writer's place of a hashed writer_cgroup, from the kind its
 * container keeps: "docker:h:..." and the like. Only the runtimes that
 * tell the kind apart count; cri-containerd and crio run in and outside
 * Kubernetes, and "systemd:" is a unit or a slice.
 */
static enum twl_cgroup_kind hashed_place(const char *container,
					 const char **name)
{
	static const struct {
		const char *prefix;
		enum twl_cgroup_kind kind;
	} known[] = {
		{ "docker:", TWL_CGROUP_DOCKER },
		{ "podman:", TWL_CGROUP_CONTAINER },
		{ "lxc:", TWL_CGROUP_CONTAINER },
	};
	size_t i, n;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		n = strlen(known[i].prefix);
		if (!strncmp(container, known[i].prefix, n)) {
			*name = container + n;
			return known[i].kind;
		}
	}
	*name = "";
	return TWL_CGROUP_OTHER;
}

/* Contract: see workload.h. */
int twl_workload_of(const struct twl_wire_usage *u, unsigned allow,
		    struct twl_workload *w)
{
	struct twl_cgroup_class cls;
	const char *name;
	int ret, ret2;

	memset(w, 0, sizeof(*w));
	ret = copy_name(w->comm, sizeof(w->comm), u->comm);
	w->target_kind = (enum twl_cgroup_kind)twl_wire_usage_target_kind(u);
	if (!strncmp(u->writer_cgroup, "h:", 2)) {
		w->place_kind = hashed_place(u->container, &name);
	} else {
		ret2 = twl_cgroup_classify(u->writer_cgroup, &cls);
		ret = ret ? ret : ret2;
		w->place_kind = cls.kind;
		name = cls.name;
	}
	if (allow & TWL_WORKLOAD_PLACE_NAME) {
		ret2 = copy_name(w->place_name, sizeof(w->place_name), name);
		ret = ret ? ret : ret2;
	}
	if (allow & TWL_WORKLOAD_IMAGE) {
		ret2 = copy_name(w->image, sizeof(w->image), u->image);
		ret = ret ? ret : ret2;
	}
	return ret;
}

/* Contract: see workload.h. */
int twl_workload_cmp(const struct twl_workload *a, const struct twl_workload *b)
{
	int d = strcmp(a->comm, b->comm);

	if (!d)
		d = (int)a->place_kind - (int)b->place_kind;
	if (!d)
		d = strcmp(a->place_name, b->place_name);
	if (!d)
		d = (int)a->target_kind - (int)b->target_kind;
	if (!d)
		d = strcmp(a->image, b->image);
	return d;
}

/* Append @s, its '|' and '\' escaped, then @sep (if not NUL). */
static bool put_field(char *out, size_t cap, size_t *o, const char *s, char sep)
{
	for (; *s; s++) {
		if ((*s == '|' || *s == '\\') && *o + 1 < cap)
			out[(*o)++] = '\\';
		if (*o + 1 >= cap)
			return false;
		out[(*o)++] = *s;
	}
	if (sep && *o + 1 >= cap)
		return false;
	if (sep)
		out[(*o)++] = sep;
	return true;
}

/* Contract: see workload.h. */
int twl_workload_key(const struct twl_workload *w, char *out, size_t cap)
{
	size_t o = 0;

	if (!cap)
		return -ENOSPC;
	if (!put_field(out, cap, &o, w->comm, '|') ||
	    !put_field(out, cap, &o, twl_cgroup_kind_name(w->place_kind),
		       '|') ||
	    !put_field(out, cap, &o, w->place_name, '|') ||
	    !put_field(out, cap, &o, twl_cgroup_kind_name(w->target_kind),
		       '|') ||
	    !put_field(out, cap, &o, w->image, '\0')) {
		out[0] = '\0';
		return -ENOSPC;
	}
	out[o] = '\0';
	return (int)o;
}
