// SPDX-License-Identifier: GPL-2.0
/*
 * The kinds the export reduces cgroup paths and container identities to
 * (twl_cgroup_kind(), twl_container_kind(), see export.h): pure string
 * classifiers, also registered as SQL functions by the store so it can
 * group by kind.
 */
#include <stdbool.h>
#include <string.h>

#include "api/export.h"

static bool contains(const char *s, const char *needle)
{
	return strstr(s, needle) != NULL;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static const char *const cgroup_kinds[] = {
	"root",
	"container (docker)",
	"container (containerd)",
	"container (cri-o)",
	"container (podman)",
	"container (lxc)",
	"kubernetes pod",
	"systemd service",
	"systemd scope",
	"systemd slice",
	"user session",
	"other",
};

const char *twl_cgroup_kind(const char *path)
{
	const char *last;
	size_t len, i;

	if (!path || !path[0] || strcmp(path, "/") == 0)
		return "root";
	/* Already a kind (the store groups by kind): keep it. */
	for (i = 0; i < sizeof(cgroup_kinds) / sizeof(cgroup_kinds[0]); i++)
		if (!strcmp(path, cgroup_kinds[i]))
			return cgroup_kinds[i];
	/* Container runtimes first: their scopes also end in ".scope". */
	if (contains(path, "kubepods"))
		return "kubernetes pod";
	if (contains(path, "docker"))
		return "container (docker)";
	if (contains(path, "cri-containerd") || contains(path, "containerd"))
		return "container (containerd)";
	if (contains(path, "crio-") || contains(path, "/crio"))
		return "container (cri-o)";
	if (contains(path, "libpod") || contains(path, "podman"))
		return "container (podman)";
	if (contains(path, "/lxc") || contains(path, "lxc.payload") ||
	    contains(path, "lxc.monitor"))
		return "container (lxc)";
	last = strrchr(path, '/');
	last = last ? last + 1 : path;
	len = strlen(last);
	if (contains(path, "user.slice") &&
	    (contains(path, "session-") || contains(path, "user@")))
		return "user session";
	if (ends_with(last, len, ".service"))
		return "systemd service";
	if (ends_with(last, len, ".scope"))
		return "systemd scope";
	if (ends_with(last, len, ".slice"))
		return "systemd slice";
	return "other";
}

char *twl_container_kind(const char *container, char *out, size_t cap)
{
	const char *colon;
	size_t n;

	if (!cap)
		return out;
	out[0] = '\0';
	if (!container || !container[0])
		return out;
	colon = strchr(container, ':');
	if (!colon) {
		/* Already a runtime name (idempotent), or something else. */
		if (strlen(container) > 32 ||
		    strspn(container,
			   "abcdefghijklmnopqrstuvwxyz0123456789-") !=
			    strlen(container))
			container = "other";
		colon = container + strlen(container);
	}
	n = (size_t)(colon - container);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, container, n);
	out[n] = '\0';
	return out;
}
