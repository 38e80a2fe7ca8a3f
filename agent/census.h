/* SPDX-License-Identifier: GPL-2.0 */
/*
 * census: which cgroup hierarchies are mounted and which v1 memory knobs
 * are set to non-default values. Read-only, bounded in time and in cgroups
 * walked; works on any kernel. The mount table parser is pure.
 */
#ifndef TWL_AGENT_CENSUS_H
#define TWL_AGENT_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define TWL_CENSUS_MAX_MOUNTS 64

struct twl_cgroup_mount {
	int kind; /* 1 = cgroup v1, 2 = cgroup2 */
	bool memory; /* v1 hierarchy with the memory controller */
	char mount[512]; /* mount point, decoded */
	char controllers[256]; /* v1: comma-separated from the super options */
};

struct twl_cgroup_mounts {
	size_t n;
	bool truncated; /* more than TWL_CENSUS_MAX_MOUNTS */
	struct twl_cgroup_mount m[TWL_CENSUS_MAX_MOUNTS];
};

/*
 * twl_census_parse_mountinfo - collect the cgroup and cgroup2 mounts at or
 * below @root from /proc/PID/mountinfo text (@len bytes). Lines that are
 * not well-formed are skipped. A mount point seen twice keeps the last
 * entry (it hides the earlier one). Returns 0 or -EINVAL when @root is not
 * an absolute path.
 */
int twl_census_parse_mountinfo(const char *text, size_t len, const char *root,
			       struct twl_cgroup_mounts *out);

/*
 * twl_census_cgroup_mode - "v1", "v2" or "hybrid" (both kinds mounted)
 * for @m; "v2" when nothing is mounted (nothing v1 can be in use).
 */
const char *twl_census_cgroup_mode(const struct twl_cgroup_mounts *m);

struct twl_census_cfg {
	const char *cgroup_root; /* default /sys/fs/cgroup */
	const char *mountinfo; /* default /proc/self/mountinfo */
	unsigned max_cgroups; /* memory cgroups examined at most */
	unsigned max_ms; /* walk time bound */
	/*
	 * The root below which census.runtimes are looked for (NULL: "/");
	 * tests point it at a fake tree.
	 */
	const char *runtime_root;
};

/*
 * twl_census_take - the census object of the wire format, taken now
 * (@now = Unix seconds for its "time"). Knobs name the catalog feature of
 * their control file; a file the catalog does not know is left out.
 * Cgroup paths and mount points are written as the BPF counters write
 * cgroup paths (agent/bpf/usage_conv.h), so the same cgroup has the same
 * name in knobs[] and usage[] and every path fits the wire: the leaf-most
 * names that fit the BPF capture, "/..." in front when the top was cut,
 * bytes that are not printable UTF-8 as '?' (one notice per census says
 * how many and the first). Returns a new object, or NULL with *@err set (-errno of reading the
 * mount table, -ENOMEM).
 */
json_t *twl_census_take(const struct twl_census_cfg *cfg, int64_t now,
			int *err);

/*
 * twl_census_runtimes - census.runtimes: what manages cgroups on the host
 * whose root is @root (NULL: "/"), from files alone (no socket is
 * connected to, no program run; agent/README.md lists what is read):
 * systemd (PID 1; its version from libsystemd-shared-<version>.so),
 * docker, containerd, crio, kubelet (its cgroup driver from
 * /var/lib/kubelet), podman, lxc (LXD and Incus too). Returns a new
 * array, or NULL with errno ENOMEM.
 */
json_t *twl_census_runtimes(const char *root);

/*
 * twl_census_kubelet_driver - the cgroupDriver a kubelet config file
 * (@text, YAML or JSON, NUL-terminated) sets: "systemd", "cgroupfs", or
 * "" when it sets none or another value. Pure.
 */
const char *twl_census_kubelet_driver(const char *text);

/*
 * twl_census_kubelet_flag_driver - the same from kubelet flags (@text,
 * e.g. kubeadm-flags.env: "--cgroup-driver=systemd"). Pure.
 */
const char *twl_census_kubelet_flag_driver(const char *text);

/*
 * twl_census_systemd_version - the version in the file name @name
 * "libsystemd-shared-<version>.so" into @out (@cap bytes): 1..64 bytes of
 * [0-9A-Za-z.~+_-]. Returns 0 or -EINVAL (another name). Pure.
 */
int twl_census_systemd_version(const char *name, char *out, size_t cap);

/*
 * twl_census_mode_from - read @mountinfo and return the cgroup mode of the
 * mounts below @root into @mode (at least 8 bytes). 0 or -errno.
 */
int twl_census_mode_from(const char *mountinfo, const char *root, char *mode,
			 size_t cap);

#endif /* TWL_AGENT_CENSUS_H */
