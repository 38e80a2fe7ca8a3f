// SPDX-License-Identifier: GPL-2.0
/*
 * census.runtimes: what manages cgroups on this host (census.h). Only
 * files are looked at, never a socket connected to nor a program run:
 * the presence of a runtime's socket, pid file or state directory, and
 * three small files read at most RT_READ_MAX bytes each (the agent's
 * README says which and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <twilight/wire.h>

#include "census.h"

/* Bytes read of a file that says a version or a cgroup driver. */
#define RT_READ_MAX (64 * 1024)

/* Where a runtime shows: paths below the root, any one of them present. */
struct presence {
	const char *name; /* wire census.runtimes[].name */
	const char *const paths[5]; /* NULL-terminated; "/" at the end: a dir */
};

/* After systemd, in the wire's order of names. */
static const struct presence presences[] = {
	{ "docker",
	  { "run/docker.pid", "var/run/docker.pid", "run/docker.sock",
	    "var/run/docker.sock", NULL } },
	{ "containerd",
	  { "run/containerd/containerd.sock",
	    "var/run/containerd/containerd.sock", NULL } },
	{ "crio", { "run/crio/crio.sock", "var/run/crio/crio.sock", NULL } },
	{ "kubelet", { "var/lib/kubelet/config.yaml", NULL } },
	{ "podman", { "run/podman/podman.sock", "run/libpod/", NULL } },
	{ "lxc",
	  { "run/lxc/", "var/snap/lxd/common/lxd/unix.socket",
	    "var/lib/lxd/unix.socket", "var/lib/incus/unix.socket", NULL } },
};

/* The path of @rel below @root ("" for "/") into @out. false when too long. */
static bool below_root(const char *root, const char *rel, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", root, rel);

	return n > 0 && (size_t)n < cap;
}

/* Does @rel exist below @root (a directory when it ends in '/')? */
static bool present(const char *root, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	size_t n = strlen(rel);

	if (!below_root(root, rel, path, sizeof(path)) || stat(path, &st))
		return false;
	return rel[n - 1] != '/' || S_ISDIR(st.st_mode);
}

/*
 * At most @cap - 1 bytes of the regular file @rel below @root into @buf,
 * NUL-terminated (a longer file is cut: the start is what matters).
 * O_NONBLOCK: a FIFO planted there must not stop the census. Returns the
 * bytes read or a negative errno.
 */
static ssize_t read_head(const char *root, const char *rel, char *buf,
			 size_t cap)
{
	char path[PATH_MAX];
	struct stat st;
	size_t got = 0;
	ssize_t r = 0;
	int fd;

	if (!below_root(root, rel, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (got + 1 < cap) {
		r = read(fd, buf + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (r < 0)
		r = -errno;
	close(fd);
	buf[got] = '\0';
	return r < 0 ? r : (ssize_t)got;
}

/* The driver a value names: "systemd", "cgroupfs" or "" (anything else). */
static const char *driver_of(const char *v, size_t n)
{
	if (n == 7 && !strncmp(v, "systemd", 7))
		return "systemd";
	if (n == 8 && !strncmp(v, "cgroupfs", 8))
		return "cgroupfs";
	return "";
}

/* The value at @v up to a quote, blank, comma or comment: its driver. */
static const char *value_driver(const char *v)
{
	while (*v == ' ' || *v == '\t' || *v == '"' || *v == '\'')
		v++;
	return driver_of(v, strcspn(v, "\"' \t\r\n,#}"));
}

/* Contract: see census.h. */
const char *twl_census_kubelet_driver(const char *text)
{
	const char *p = text, *key = "cgroupDriver";
	size_t kl = strlen(key);

	/* YAML: a top-level "cgroupDriver: systemd" line. */
	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return value_driver(p + kl + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	/* JSON, which kubelet reads too: "cgroupDriver": "systemd". */
	p = strstr(text, "\"cgroupDriver\"");
	if (!p)
		return "";
	p += kl + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p == ':' ? value_driver(p + 1) : "";
}

/* Contract: see census.h. */
const char *twl_census_kubelet_flag_driver(const char *text)
{
	const char *p = strstr(text, "--cgroup-driver");

	if (!p)
		return "";
	p += strlen("--cgroup-driver");
	return *p == '=' || *p == ' ' ? value_driver(p + 1) : "";
}

/* Contract: see census.h. */
int twl_census_systemd_version(const char *name, char *out, size_t cap)
{
	static const char prefix[] = "libsystemd-shared-", suffix[] = ".so";
	size_t pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1;
	size_t n = strlen(name), vl;

	if (n <= pl + sl || strncmp(name, prefix, pl) ||
	    strcmp(name + n - sl, suffix))
		return -EINVAL;
	vl = n - pl - sl;
	if (vl > TWL_WIRE_MAX_SHORT || vl >= cap ||
	    strspn(name + pl, "0123456789abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ.~+_-") < vl)
		return -EINVAL;
	memcpy(out, name + pl, vl);
	out[vl] = '\0';
	return 0;
}

/* @s with glob's special characters escaped, into @out. false: too long. */
static bool glob_escape(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	for (; *s; s++) {
		if (o + 3 > cap)
			return false;
		if (strchr("*?[]\\", *s))
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
	return true;
}

/*
 * systemd's version from the name of the library every systemd program
 * links, libsystemd-shared-<version>.so, in the directories distributions
 * put it in (Debian's multiarch one included): no program is run.
 */
static void systemd_version(const char *root, char *out, size_t cap)
{
	static const char *const dirs[] = { "usr/lib/systemd",
					    "usr/lib/*/systemd", "lib/systemd",
					    "usr/lib64/systemd" };
	char esc[PATH_MAX], pat[PATH_MAX + 64];
	glob_t g;
	size_t i, k;

	out[0] = '\0';
	if (!glob_escape(root, esc, sizeof(esc)))
		return;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !out[0]; i++) {
		snprintf(pat, sizeof(pat), "%s/%s/libsystemd-shared-*.so", esc,
			 dirs[i]);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (k = 0; k < g.gl_pathc && !out[0]; k++) {
			const char *base = strrchr(g.gl_pathv[k], '/');

			if (twl_census_systemd_version(base ? base + 1 : "",
						       out, cap))
				out[0] = '\0';
		}
		globfree(&g);
	}
}

/* systemd manages cgroups: it is PID 1 (sd_booted()'s test, or comm). */
static bool systemd_runs(const char *root)
{
	char comm[32];

	if (present(root, "run/systemd/system/"))
		return true;
	return read_head(root, "proc/1/comm", comm, sizeof(comm)) > 0 &&
	       !strcmp(comm, "systemd\n");
}

/*
 * kubelet's cgroup driver: its kubeadm flags (which win over the config
 * file, as in kubelet), then its config file; "" when neither says.
 */
static const char *kubelet_driver(const char *root, char *buf)
{
	const char *d = "";

	if (read_head(root, "var/lib/kubelet/kubeadm-flags.env", buf,
		      RT_READ_MAX) > 0)
		d = twl_census_kubelet_flag_driver(buf);
	if (!d[0] && read_head(root, "var/lib/kubelet/config.yaml", buf,
			       RT_READ_MAX) > 0)
		d = twl_census_kubelet_driver(buf);
	return d;
}

/* Append {"name": @name[, "version"][, "cgroup_driver"]}. 0 or -ENOMEM. */
static int add_runtime(json_t *arr, const char *name, const char *version,
		       const char *driver)
{
	json_t *o = json_pack("{s:s}", "name", name);

	if (!o)
		return -ENOMEM;
	if ((version[0] &&
	     json_object_set_new(o, "version", json_string(version))) ||
	    (driver[0] &&
	     json_object_set_new(o, "cgroup_driver", json_string(driver))) ||
	    json_array_append_new(arr, o))
		return -ENOMEM;
	return 0;
}

/* Contract: see census.h. */
json_t *twl_census_runtimes(const char *root)
{
	json_t *arr = json_array();
	char version[TWL_WIRE_MAX_SHORT + 1], *buf = malloc(RT_READ_MAX);
	size_t i, k;
	int ret = 0;

	if (!arr || !buf)
		goto nomem;
	if (!root || !strcmp(root, "/"))
		root = ""; /* paths are root + "/" + rel */
	if (systemd_runs(root)) {
		systemd_version(root, version, sizeof(version));
		ret = add_runtime(arr, "systemd", version, "");
	}
	for (i = 0; !ret && i < sizeof(presences) / sizeof(presences[0]); i++) {
		const struct presence *p = &presences[i];

		for (k = 0; p->paths[k] && !present(root, p->paths[k]); k++)
			;
		if (!p->paths[k])
			continue;
		ret = add_runtime(arr, p->name, "",
				  strcmp(p->name, "kubelet") ?
					  "" :
					  kubelet_driver(root, buf));
	}
	if (ret)
		goto nomem;
	free(buf);
	return arr;
nomem:
	free(buf);
	json_decref(arr);
	errno = ENOMEM;
	return NULL;
}
