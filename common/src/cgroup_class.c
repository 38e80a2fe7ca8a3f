// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup classifier (cgroup_class.h): a path is split into its
 * components once, then two readings are taken of them. The kind and
 * its name follow schema/wire-format.md ("target_kind"); the place keeps
 * exactly the rules wire v1's usage[].container was made with, so that
 * agents old and new spell the same writer the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <twilight/cgroup_class.h>

const char *const twl_cgroup_kind_names[] = {
	[TWL_CGROUP_ROOT] = "root",
	[TWL_CGROUP_KUBERNETES] = "kubernetes",
	[TWL_CGROUP_DOCKER] = "docker",
	[TWL_CGROUP_CONTAINER] = "container",
	[TWL_CGROUP_SYSTEMD_UNIT] = "systemd_unit",
	[TWL_CGROUP_SYSTEMD_SLICE] = "systemd_slice",
	[TWL_CGROUP_OTHER] = "other",
	[TWL_CGROUP_N_KINDS] = NULL,
};

/* A path's components, from the top; at most TWL_CGROUP_MAX_DEPTH. */
struct comps {
	const char *s[TWL_CGROUP_MAX_DEPTH];
	size_t len[TWL_CGROUP_MAX_DEPTH];
	size_t n;
};

/* A name found in a component: where it starts and how long it is. */
struct found {
	const char *s;
	size_t len;
};

/* Runtimes whose containers run in "<prefix><64 hex>.scope" (systemd). */
static const struct {
	const char *prefix, *runtime;
	enum twl_cgroup_kind kind;
} scopes[] = {
	{ "docker-", "docker", TWL_CGROUP_DOCKER },
	{ "cri-containerd-", "cri-containerd", TWL_CGROUP_CONTAINER },
	{ "crio-", "crio", TWL_CGROUP_CONTAINER },
	{ "libpod-", "podman", TWL_CGROUP_CONTAINER },
};

#define N_SCOPES (sizeof(scopes) / sizeof(scopes[0]))

static void split(const char *path, struct comps *c)
{
	const char *p = path ? path : "";

	c->n = 0;
	while (*p && c->n < TWL_CGROUP_MAX_DEPTH) {
		const char *s;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		if (p > s) {
			c->s[c->n] = s;
			c->len[c->n] = (size_t)(p - s);
			c->n++;
		}
	}
}

static bool is_hex64(const char *s, size_t n)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t m = strlen(prefix);

	return n >= m && !memcmp(s, prefix, m);
}

static bool is(const struct comps *c, size_t i, const char *word)
{
	return c->len[i] == strlen(word) && !memcmp(c->s[i], word, c->len[i]);
}

/* "<prefix><64 hex><suffix>" -> the id, or NULL. */
static const char *prefixed_id(const char *s, size_t n, const char *prefix,
			       const char *suffix)
{
	size_t p = strlen(prefix), q = strlen(suffix);

	if (n < p + q || !starts_with(s, n, prefix) || !ends_with(s, n, suffix))
		return NULL;
	return is_hex64(s + p, n - p - q) ? s + p : NULL;
}

/* The innermost container scope: its index into scopes[] (*@id set), or -1. */
static int container_scope(const struct comps *c, struct found *id)
{
	const char *s;
	size_t i, k;

	for (i = c->n; i-- > 0;)
		for (k = 0; k < N_SCOPES; k++) {
			s = prefixed_id(c->s[i], c->len[i], scopes[k].prefix,
					".scope");
			if (s) {
				*id = (struct found){ s, 64 };
				return (int)k;
			}
		}
	return -1;
}

static int put(char *out, size_t cap, const char *runtime, const char *s,
	       size_t n)
{
	int w = snprintf(out, cap, "%s%s%.*s", runtime, *runtime ? ":" : "",
			 (int)n, s);

	return w < 0 || (size_t)w >= cap ? -ENAMETOOLONG : 0;
}

/*
 * The place, by wire v1's rules: a container scope (innermost first),
 * then from the top the cgroupfs forms (/docker/<id>, a kubepods pod's
 * <id>, /lxc/<name>, lxc.payload.<name>), then the innermost .scope or
 * .service, then the innermost .slice but the root slice "-.slice".
 */
static int place_of(const struct comps *c, char *out, size_t cap)
{
	struct found id;
	bool kubepods = false;
	size_t i;
	int k = container_scope(c, &id);

	if (k >= 0)
		return put(out, cap, scopes[k].runtime, id.s, id.len);
	for (i = 0; i < c->n; i++) {
		if (starts_with(c->s[i], c->len[i], "kubepods"))
			kubepods = true;
		if (i + 1 < c->n && is(c, i, "docker") &&
		    is_hex64(c->s[i + 1], c->len[i + 1]))
			return put(out, cap, "docker", c->s[i + 1], 64);
		if (kubepods && i > 0 &&
		    starts_with(c->s[i - 1], c->len[i - 1], "pod") &&
		    is_hex64(c->s[i], c->len[i]))
			return put(out, cap, "cri-containerd", c->s[i], 64);
		if (is(c, i, "lxc") && i + 1 < c->n)
			return put(out, cap, "lxc", c->s[i + 1], c->len[i + 1]);
		if (starts_with(c->s[i], c->len[i], "lxc.payload.") &&
		    c->len[i] > 12)
			return put(out, cap, "lxc", c->s[i] + 12,
				   c->len[i] - 12);
	}
	for (i = c->n; i-- > 0;)
		if (ends_with(c->s[i], c->len[i], ".scope") ||
		    ends_with(c->s[i], c->len[i], ".service"))
			return put(out, cap, "systemd", c->s[i], c->len[i]);
	for (i = c->n; i-- > 0;)
		if (ends_with(c->s[i], c->len[i], ".slice") &&
		    !is(c, i, "-.slice"))
			return put(out, cap, "systemd", c->s[i], c->len[i]);
	out[0] = '\0';
	return 0;
}

static bool is_kubepods(const char *s, size_t n)
{
	return starts_with(s, n, "kubepods") ||
	       starts_with(s, n, "kubelet-kubepods");
}

/*
 * A pod's component: cgroupfs "pod<uid>", systemd
 * "kubepods[-<qos>]-pod<uid>.slice" (uid with '_' for '-').
 */
static bool pod_uid(const char *s, size_t n, struct found *uid)
{
	const char *at;

	if (starts_with(s, n, "pod") && n > 3 && !memchr(s, '.', n)) {
		*uid = (struct found){ s + 3, n - 3 };
		return true;
	}
	if (!ends_with(s, n, ".slice"))
		return false;
	for (at = s + n - 6; at > s; at--)
		if (at - s >= 4 && !memcmp(at - 4, "-pod", 4))
			break;
	if (at <= s || at == s + n - 6)
		return false;
	*uid = (struct found){ at, (size_t)(s + n - 6 - at) };
	return true;
}

/* A container of a pod under cgroupfs: "<64 hex>" or "<runtime>-<64 hex>". */
static bool pod_container(const char *s, size_t n, struct found *id)
{
	size_t k;

	if (is_hex64(s, n)) {
		*id = (struct found){ s, n };
		return true;
	}
	for (k = 0; k < N_SCOPES; k++) {
		const char *p = prefixed_id(s, n, scopes[k].prefix, "");

		if (p) {
			*id = (struct found){ p, 64 };
			return true;
		}
	}
	return false;
}

/* Below kubepods (from @top on): the container's id, else the pod's uid. */
static void kube_name(const struct comps *c, size_t top, struct found *name)
{
	size_t i;

	*name = (struct found){ "", 0 };
	if (container_scope(c, name) >= 0)
		return;
	for (i = top + 1; i < c->n; i++) {
		struct found uid;

		if (!pod_uid(c->s[i], c->len[i], &uid))
			continue;
		*name = uid;
		if (i + 1 < c->n)
			pod_container(c->s[i + 1], c->len[i + 1], name);
	}
}

/* Containers outside kubepods: scopes, cgroupfs docker, LXC, machines. */
static bool container_kind(const struct comps *c, enum twl_cgroup_kind *kind,
			   struct found *name)
{
	size_t i;
	int k = container_scope(c, name);

	if (k >= 0) {
		*kind = scopes[k].kind;
		return true;
	}
	*kind = TWL_CGROUP_CONTAINER;
	for (i = 0; i < c->n; i++) {
		if (i + 1 < c->n && is(c, i, "docker") &&
		    is_hex64(c->s[i + 1], c->len[i + 1])) {
			*kind = TWL_CGROUP_DOCKER;
			*name = (struct found){ c->s[i + 1], 64 };
			return true;
		}
		if (i + 1 < c->n &&
		    (is(c, i, "lxc") || is(c, i, "machine.slice"))) {
			*name = (struct found){ c->s[i + 1], c->len[i + 1] };
			return true;
		}
		if (starts_with(c->s[i], c->len[i], "lxc.payload.") &&
		    c->len[i] > 12) {
			*name = (struct found){ c->s[i] + 12, c->len[i] - 12 };
			return true;
		}
	}
	return false;
}

/*
 * The kind of the components in @c, and with @name non-NULL the name that
 * goes with it; @name NULL skips what only the name needs (a pod's
 * container or uid), so that twl_cgroup_kind_of() and
 * twl_cgroup_classify() share one reading of the kind.
 */
static enum twl_cgroup_kind kind_of(const struct comps *c, struct found *name)
{
	enum twl_cgroup_kind kind;
	struct found unused;
	size_t i;

	if (name)
		*name = (struct found){ "", 0 };
	if (!c->n)
		return TWL_CGROUP_ROOT;
	for (i = 0; i < c->n; i++)
		if (is_kubepods(c->s[i], c->len[i])) {
			if (name)
				kube_name(c, i, name);
			return TWL_CGROUP_KUBERNETES;
		}
	if (container_kind(c, &kind, name ? name : &unused))
		return kind;
	/* The innermost systemd name decides: a unit's own subtree is the
	 * unit's, a slice inside a unit (user@.service/app.slice) a slice. */
	for (i = c->n; i-- > 0;) {
		if (ends_with(c->s[i], c->len[i], ".service") ||
		    ends_with(c->s[i], c->len[i], ".scope"))
			kind = TWL_CGROUP_SYSTEMD_UNIT;
		else if (ends_with(c->s[i], c->len[i], ".slice"))
			kind = TWL_CGROUP_SYSTEMD_SLICE;
		else
			continue;
		if (name)
			*name = (struct found){ c->s[i], c->len[i] };
		return kind;
	}
	if (name)
		*name = (struct found){ "", 0 };
	return TWL_CGROUP_OTHER;
}

/* Contract: see cgroup_class.h. */
enum twl_cgroup_kind twl_cgroup_kind_of(const char *path)
{
	struct comps c;

	split(path, &c);
	return kind_of(&c, NULL);
}

/* Contract: see cgroup_class.h. */
int twl_cgroup_classify(const char *path, struct twl_cgroup_class *out)
{
	struct comps c;
	struct found name;
	int ret;

	split(path, &c);
	out->kind = kind_of(&c, &name);
	ret = put(out->name, sizeof(out->name), "", name.s, name.len);
	if (!ret)
		ret = place_of(&c, out->place, sizeof(out->place));
	if (ret) {
		out->name[0] = '\0';
		out->place[0] = '\0';
	}
	return ret;
}

/* Contract: see cgroup_class.h. */
const char *twl_cgroup_kind_name(enum twl_cgroup_kind kind)
{
	return (unsigned)kind < TWL_CGROUP_N_KINDS ?
		       twl_cgroup_kind_names[kind] :
		       twl_cgroup_kind_names[TWL_CGROUP_OTHER];
}

/* Contract: see cgroup_class.h. */
int twl_cgroup_kind_parse(const char *s)
{
	int k;

	for (k = 0; s && k < TWL_CGROUP_N_KINDS; k++)
		if (!strcmp(s, twl_cgroup_kind_names[k]))
			return k;
	return -1;
}
