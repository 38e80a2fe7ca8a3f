// SPDX-License-Identifier: GPL-2.0
/*
 * Census on a fake cgroup tree in a temp dir (never this machine's cgroup
 * files): mount table parsing, cgroup mode, non-default knobs, bounds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/wire.h>

#include "agent_test.h"
#include "census.h"

#define UNLIMITED "9223372036854771712"

static void test_parse_mountinfo(void **state)
{
	static const char mi[] =
		"22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
		"26 22 0:23 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
		"27 26 0:24 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
		"28 26 0:25 / /sys/fs/cgroup/systemd rw shared:11 - cgroup cgroup "
		"rw,xattr,name=systemd\n"
		"31 26 0:28 / /sys/fs/cgroup/memory rw shared:14 - cgroup cgroup rw,memory\n"
		"32 26 0:29 / /sys/fs/cgroup/cpu,cpuacct rw shared:15 - cgroup cgroup "
		"rw,cpu,cpuacct\n"
		"33 26 0:30 / /sys/fs/cgroup/with\\040space rw - cgroup cgroup rw,pids\n"
		"40 1 0:31 / /srv/other rw - cgroup cgroup rw,blkio\n"
		"garbage line\n"
		"41 1 0:31 / /sys/fs/cgroup/short\n";
	static struct twl_cgroup_mounts m;

	assert_int_equal(twl_census_parse_mountinfo(mi, sizeof(mi) - 1,
						    "/sys/fs/cgroup", &m),
			 0);
	assert_int_equal(m.n, 5);
	assert_int_equal(m.m[0].kind, 2);
	assert_string_equal(m.m[0].mount, "/sys/fs/cgroup/unified");
	assert_int_equal(m.m[1].kind, 1);
	assert_string_equal(m.m[1].controllers,
			    ""); /* name=systemd: no controller */
	assert_true(m.m[2].memory);
	assert_string_equal(m.m[2].controllers, "memory");
	assert_string_equal(m.m[3].controllers, "cpu,cpuacct");
	assert_false(m.m[3].memory);
	assert_string_equal(m.m[4].mount, "/sys/fs/cgroup/with space");
	assert_string_equal(twl_census_cgroup_mode(&m), "hybrid");

	assert_int_equal(
		twl_census_parse_mountinfo(mi, sizeof(mi) - 1, "/srv", &m), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(twl_census_cgroup_mode(&m), "v1");

	assert_int_equal(
		twl_census_parse_mountinfo("", 0, "/sys/fs/cgroup", &m), 0);
	assert_string_equal(twl_census_cgroup_mode(&m), "v2");
	assert_int_equal(twl_census_parse_mountinfo(mi, 10, "relative", &m),
			 -EINVAL);
}

/* A v1 memory cgroup directory with every knob at its default. */
static void fake_cgroup(const char *dir, const char *rel,
			const char *swappiness)
{
	char p[PATH_MAX];

	test_mkdir(dir, rel);
#define K(name, val)                                     \
	do {                                             \
		snprintf(p, sizeof(p), "%s/" name, rel); \
		test_write(dir, p, val "\n");            \
	} while (0)
	K("memory.soft_limit_in_bytes", UNLIMITED);
	K("memory.kmem.tcp.limit_in_bytes", UNLIMITED);
	K("memory.memsw.limit_in_bytes", UNLIMITED);
	K("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0");
	K("memory.move_charge_at_immigrate", "0");
	K("memory.use_hierarchy", "1");
	K("cgroup.procs", "");
#undef K
	snprintf(p, sizeof(p), "%s/memory.swappiness", rel);
	test_write(dir, p, swappiness);
}

/* @census is valid inside a version 2 report (it is consumed). */
static void assert_census_valid(json_t *census)
{
	json_t *doc = json_pack(
		"{s:i, s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:O, s:{}}",
		"v", 2, "batch_id", "0d4e6b1f2a3c4d5e8f9a0b1c2d3e4f5a", "seq",
		1, "sent_time", 1764732000, "host", "host_id",
		"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
		"hostname", "h", "boot_id",
		"2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f", "kernel", "6.1",
		"cgroup_mode", "hybrid", "agent_version", "0.1.0",
		"catalog_version", 1, "census", census, "health");
	struct twl_verr verr;

	assert_non_null(doc);
	if (twl_report_validate(doc, &verr))
		fail_msg("census invalid: %s at %s: %s", verr.code, verr.field,
			 verr.reason);
	json_decref(doc);
}

static json_t *knob(json_t *census, const char *file, const char *cgroup)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(census, "knobs"), i, k)
	{
		if (!strcmp(json_string_value(json_object_get(k, "file")),
			    file) &&
		    !strcmp(json_string_value(json_object_get(k, "cgroup")),
			    cgroup))
			return k;
	}
	return NULL;
}

/* A hybrid tree under @dir/cg: cgroup2 beside a v1 memory hierarchy of 5 cgroups. */
static void make_fake_tree(const char *dir)
{
	char mi[2048];

	test_mkdir(dir, "cg");
	test_mkdir(dir, "cg/unified");
	test_write(dir, "cg/unified/cgroup.controllers",
		   "cpu io memory pids\n");
	fake_cgroup(dir, "cg/memory", "30\n");
	fake_cgroup(dir, "cg/memory/default", "30\n");
	fake_cgroup(dir, "cg/memory/web", "10\n");
	fake_cgroup(dir, "cg/memory/web/db", "30\n");
	fake_cgroup(dir, "cg/memory/batch", "30\n");
	test_write(dir, "cg/memory/web/memory.soft_limit_in_bytes",
		   "1073741824\n");
	test_write(dir, "cg/memory/web/db/memory.kmem.tcp.limit_in_bytes",
		   "65536\n");
	test_write(dir, "cg/memory/web/db/memory.memsw.limit_in_bytes",
		   "2147483648\n");
	test_write(dir, "cg/memory/batch/memory.oom_control",
		   "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n");
	test_write(dir, "cg/memory/batch/memory.move_charge_at_immigrate",
		   "3\n");
	test_write(dir, "cg/memory/batch/memory.use_hierarchy", "0\n");
	snprintf(mi, sizeof(mi),
		 "26 1 0:23 / %s/cg ro - tmpfs tmpfs ro\n"
		 "27 26 0:24 / %s/cg/unified rw - cgroup2 cgroup2 rw\n"
		 "31 26 0:28 / %s/cg/memory rw - cgroup cgroup rw,memory\n",
		 dir, dir, dir);
	test_write(dir, "mountinfo", mi);
}

/* The census of make_fake_tree(): its hierarchies and its 7 knobs. */
static void check_fake_census(json_t *c)
{
	json_t *k, *h = json_object_get(c, "hierarchies");

	assert_int_equal(
		json_integer_value(json_object_get(c, "cgroups_walked")), 5);
	assert_true(json_is_false(json_object_get(c, "truncated")));
	assert_int_equal(json_array_size(h), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(h, 0), "kind")),
			    "v2");
	assert_int_equal(json_array_size(json_object_get(json_array_get(h, 0),
							 "controllers")),
			 4);
	assert_int_equal(json_array_size(json_object_get(c, "knobs")), 7);

	k = knob(c, "memory.soft_limit_in_bytes", "/web");
	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(k, "value")),
			    "1073741824");
	assert_string_equal(json_string_value(json_object_get(k, "feature")),
			    "memcg_v1.soft_limit");
	assert_non_null(knob(c, "memory.kmem.tcp.limit_in_bytes", "/web/db"));
	k = knob(c, "memory.memsw.limit_in_bytes", "/web/db");
	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(k, "feature")),
			    "memcg_v1.memsw");
	k = knob(c, "memory.oom_control", "/batch");
	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(k, "value")),
			    "1");
	assert_non_null(knob(c, "memory.move_charge_at_immigrate", "/batch"));
	assert_non_null(knob(c, "memory.use_hierarchy", "/batch"));
	/* swappiness differs from the root's 30 only in /web. */
	k = knob(c, "memory.swappiness", "/web");
	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(k, "value")),
			    "10");
	assert_null(knob(c, "memory.swappiness", "/"));
	assert_null(knob(c, "memory.soft_limit_in_bytes", "/default"));
}

static void test_fake_tree(void **state)
{
	char *dir = test_mkdtemp(), val[64], mode[8];
	char *mipath = test_path(dir, "mountinfo");
	struct twl_census_cfg cfg = { .mountinfo = mipath,
				      .max_cgroups = 1000,
				      .max_ms = 5000,
				      .runtime_root = dir };
	json_t *c;
	int err = -1;

	make_fake_tree(dir);
	snprintf(val, sizeof(val), "%s/cg", dir);
	cfg.cgroup_root = val;

	c = twl_census_take(&cfg, 1764732000, &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	check_fake_census(c);
	/* The whole census is valid inside a report. */
	assert_census_valid(c);
	json_decref(c);

	/* Bounded: at most 2 cgroups. */
	cfg.max_cgroups = 2;
	c = twl_census_take(&cfg, 1764732000, &err);
	assert_non_null(c);
	assert_int_equal(
		json_integer_value(json_object_get(c, "cgroups_walked")), 2);
	assert_true(json_is_true(json_object_get(c, "truncated")));
	json_decref(c);

	/* Mode of the fake tree. */
	assert_int_equal(twl_census_mode_from(mipath, val, mode, sizeof(mode)),
			 0);
	assert_string_equal(mode, "hybrid");

	/* A missing mount table is an error, not an empty census. */
	free(mipath);
	mipath = test_path(dir, "no-such-mountinfo");
	cfg.mountinfo = mipath;
	assert_null(twl_census_take(&cfg, 1764732000, &err));
	assert_int_equal(err, -ENOENT);
	free(mipath);
	test_rmtree(dir);
}

/*
 * Names the wire cannot carry as they are: a path over the wire's 1024
 * bytes, a name that is not UTF-8, one with a control character, a mount
 * point that is not UTF-8. Each is sent as BPF paths are (usage_conv.c):
 * the leaf kept, the top cut to "/...", bad bytes as '?'; the census is
 * taken and valid, its other knobs intact.
 */
static void test_long_and_invalid_names(void **state)
{
	char *dir = test_mkdtemp(), *mipath = test_path(dir, "mountinfo");
	struct twl_census_cfg cfg = { .mountinfo = mipath,
				      .max_cgroups = 1000,
				      .max_ms = 5000,
				      .runtime_root = dir };
	char comp[5][251], rel[2048], want[1100], mi[4096], root[1024];
	size_t o = 0;
	json_t *c, *k, *h;
	int err = -1;

	test_mkdir(dir, "cg");
	fake_cgroup(dir, "cg/memory", "60\n");
	o = (size_t)snprintf(rel, sizeof(rel), "cg/memory");
	for (int i = 0; i < 5; i++) {
		memset(comp[i], 'a' + i, 250);
		comp[i][250] = '\0';
		o += (size_t)snprintf(rel + o, sizeof(rel) - o, "/%s", comp[i]);
		fake_cgroup(dir, rel, "60\n");
	}
	strcat(rel, "/memory.soft_limit_in_bytes");
	test_write(dir, rel, "1048576\n");
	fake_cgroup(dir, "cg/memory/bad\xff\xfename", "60\n");
	test_write(dir, "cg/memory/bad\xff\xfename/memory.use_hierarchy",
		   "0\n");
	fake_cgroup(dir, "cg/memory/tab\tname", "60\n");
	test_write(dir, "cg/memory/tab\tname/memory.move_charge_at_immigrate",
		   "1\n");
	fake_cgroup(dir, "cg/memory/plain", "60\n");
	test_write(dir, "cg/memory/plain/memory.use_hierarchy", "0\n");
	test_mkdir(dir, "cg/pi\xff"
			"ds");
	snprintf(mi, sizeof(mi),
		 "31 26 0:28 / %s/cg/memory rw - cgroup cgroup rw,memory\n"
		 "32 26 0:29 / %s/cg/pi\xff"
		 "ds rw - cgroup cgroup rw,pids\n",
		 dir, dir);
	test_write(dir, "mountinfo", mi);
	snprintf(root, sizeof(root), "%s/cg", dir);
	cfg.cgroup_root = root;

	c = twl_census_take(&cfg, 1764732000, &err);
	if (!c)
		fail_msg("no census: %s", strerror(-err));
	assert_int_equal(err, 0);
	assert_int_equal(json_array_size(json_object_get(c, "knobs")), 4);
	/* BPF keeps the names that start within 256 bytes of the leaf. */
	snprintf(want, sizeof(want), "/.../%s/%s", comp[3], comp[4]);
	assert_non_null(knob(c, "memory.soft_limit_in_bytes", want));
	assert_non_null(knob(c, "memory.use_hierarchy", "/bad??name"));
	assert_non_null(
		knob(c, "memory.move_charge_at_immigrate", "/tab?name"));
	k = knob(c, "memory.use_hierarchy", "/plain");
	assert_non_null(k);
	h = json_object_get(c, "hierarchies");
	assert_int_equal(json_array_size(h), 2);
	snprintf(want, sizeof(want), "%s/cg/pi?ds", dir);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(h, 1), "mount")),
			    want);
	assert_census_valid(c);
	json_decref(c);
	free(mipath);
	test_rmtree(dir);
}

/* Each knob says the kind of its cgroup, by the common classifier. */
static void test_knob_target_kind(void **state)
{
	static const struct {
		const char *rel, *kind;
	} cgs[] = {
		{ "", "root" },
		{ "/kubepods", "kubernetes" },
		{ "/kubepods/burstable", "kubernetes" },
		{ "/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901",
		  "kubernetes" },
		{ "/docker", "other" },
		{ "/docker/"
		  "4f2a8c1e9b7d3f5a6c0e2b4d8f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b2d4f6a",
		  "docker" },
		{ "/system.slice", "systemd_slice" },
		{ "/system.slice/cron.service", "systemd_unit" },
		{ "/web", "other" },
	};
	char *dir = test_mkdtemp(), *mipath = test_path(dir, "mountinfo");
	struct twl_census_cfg cfg = { .mountinfo = mipath,
				      .max_cgroups = 1000,
				      .max_ms = 5000,
				      .runtime_root = dir };
	char rel[1024], root[1024], mi[2048];
	json_t *c, *k;
	size_t i, n;
	int err = -1;

	for (i = 0; i < sizeof(cgs) / sizeof(cgs[0]); i++) {
		snprintf(rel, sizeof(rel), "cg%s", cgs[i].rel);
		fake_cgroup(dir, rel, "60\n");
		strcat(rel, "/memory.move_charge_at_immigrate");
		test_write(dir, rel, "1\n");
	}
	test_mkdir(dir, "run");
	test_write(dir, "run/docker.pid", "1234\n");
	snprintf(mi, sizeof(mi),
		 "31 26 0:28 / %s/cg rw - cgroup cgroup rw,memory\n", dir);
	test_write(dir, "mountinfo", mi);
	snprintf(root, sizeof(root), "%s/cg", dir);
	cfg.cgroup_root = root;
	c = twl_census_take(&cfg, 1764732000, &err);
	assert_non_null(c);
	n = json_array_size(json_object_get(c, "knobs"));
	assert_int_equal(n, sizeof(cgs) / sizeof(cgs[0]));
	for (i = 0; i < sizeof(cgs) / sizeof(cgs[0]); i++) {
		k = knob(c, "memory.move_charge_at_immigrate",
			 cgs[i].rel[0] ? cgs[i].rel : "/");
		if (!k)
			fail_msg("no knob for %s", cgs[i].rel);
		if (!json_string_value(json_object_get(k, "target_kind")) ||
		    strcmp(json_string_value(json_object_get(k, "target_kind")),
			   cgs[i].kind))
			fail_msg("%s: target_kind %s, want %s", cgs[i].rel,
				 json_string_value(
					 json_object_get(k, "target_kind")),
				 cgs[i].kind);
	}
	/* The census carries what the runtime root shows. */
	assert_int_equal(json_array_size(json_object_get(c, "runtimes")), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(c, "runtimes"), 0),
			"name")),
		"docker");
	assert_census_valid(c);
	json_decref(c);
	free(mipath);
	test_rmtree(dir);
}

/* census.runtimes of a fake root: @want, a JSON array. */
static void assert_runtimes(const char *root, const char *want)
{
	json_t *got = twl_census_runtimes(root), *w = json_loads(want, 0, NULL);
	char *txt;

	assert_non_null(got);
	assert_non_null(w);
	if (!json_equal(got, w)) {
		txt = json_dumps(got, JSON_COMPACT);
		fail_msg("runtimes %s, want %s", txt, want);
	}
	json_decref(got);
	json_decref(w);
}

/* What manages cgroups, from files of a fake root alone. */
static void test_runtimes(void **state)
{
	char *dir = test_mkdtemp(), *fifo = NULL;
	static const char *const dirs[] = {
		"run",
		"run/systemd",
		"run/systemd/system",
		"run/containerd",
		"run/libpod",
		"run/lxc",
		"run/crio",
		"usr",
		"usr/lib",
		"usr/lib/x86_64-linux-gnu",
		"usr/lib/x86_64-linux-gnu/systemd",
		"var",
		"var/lib",
		"var/lib/kubelet",
		"proc",
		"proc/1",
	};

	/* Nothing there: an empty list (known: none), not an error. */
	assert_runtimes(dir, "[]");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		test_mkdir(dir, dirs[i]);
	/* run/crio without its socket is no CRI-O. */
	test_write(dir,
		   "usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so",
		   "");
	test_write(dir,
		   "usr/lib/x86_64-linux-gnu/systemd/libsystemd-core-252.so",
		   "");
	test_write(dir, "run/docker.sock", "");
	test_write(dir, "run/containerd/containerd.sock", "");
	test_write(dir, "var/lib/kubelet/config.yaml",
		   "apiVersion: kubelet.config.k8s.io/v1beta1\n"
		   "kind: KubeletConfiguration\n"
		   "authentication:\n  cgroupDriver: cgroupfs\n"
		   "cgroupDriver: \"systemd\" # kubeadm's\n");
	assert_runtimes(
		dir,
		"[{\"name\":\"systemd\",\"version\":\"252\"},{\"name\":\"docker\"},"
		"{\"name\":\"containerd\"},"
		"{\"name\":\"kubelet\",\"cgroup_driver\":\"systemd\"},"
		"{\"name\":\"podman\"},{\"name\":\"lxc\"}]");

	/* kubeadm's flags win over the config file, as in kubelet. */
	test_write(
		dir, "var/lib/kubelet/kubeadm-flags.env",
		"KUBELET_KUBEADM_ARGS=\"--cgroup-driver=cgroupfs "
		"--container-runtime-endpoint=unix:///run/containerd/containerd.sock\"\n");
	test_write(dir, "run/crio/crio.sock", "");
	assert_runtimes(
		dir,
		"[{\"name\":\"systemd\",\"version\":\"252\"},{\"name\":\"docker\"},"
		"{\"name\":\"containerd\"},{\"name\":\"crio\"},"
		"{\"name\":\"kubelet\",\"cgroup_driver\":\"cgroupfs\"},"
		"{\"name\":\"podman\"},{\"name\":\"lxc\"}]");
	test_rmtree(dir);

	/* PID 1's name alone says systemd; no library: no version. A FIFO
	 * where kubelet's config belongs is never read (no hang). */
	dir = test_mkdtemp();
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(dirs[i], "proc", 4) || !strncmp(dirs[i], "var", 3))
			test_mkdir(dir, dirs[i]);
	test_write(dir, "proc/1/comm", "systemd\n");
	fifo = test_path(dir, "var/lib/kubelet/config.yaml");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_runtimes(dir, "[{\"name\":\"systemd\"},{\"name\":\"kubelet\"}]");
	test_write(dir, "proc/1/comm", "init\n");
	assert_runtimes(dir, "[{\"name\":\"kubelet\"}]");
	free(fifo);
	test_rmtree(dir);
}

/* The pure parts: kubelet's cgroup driver, systemd's version. */
static void test_runtime_parsers(void **state)
{
	static const struct {
		const char *text, *want;
	} cfgs[] = {
		{ "cgroupDriver: systemd\n", "systemd" },
		{ "kind: KubeletConfiguration\ncgroupDriver: cgroupfs",
		  "cgroupfs" },
		{ "cgroupDriver: 'systemd'\r\n", "systemd" },
		{ "cgroupDriver:systemd#x\n", "systemd" },
		{ "  cgroupDriver: systemd\n", "" }, /* not top-level */
		{ "cgroupDriverX: systemd\n", "" },
		{ "cgroupDriver: systemdx\n", "" },
		{ "cgroupDriver:\n", "" },
		{ "{\"kind\":\"KubeletConfiguration\",\"cgroupDriver\": \"systemd\"}",
		  "systemd" },
		{ "", "" },
	};
	static const struct {
		const char *text, *want;
	} flags[] = {
		{ "ARGS=\"--cgroup-driver=systemd --x=y\"", "systemd" },
		{ "--cgroup-driver cgroupfs", "cgroupfs" },
		{ "--cgroup-driver=other", "" },
		{ "--cgroup-drivers=systemd", "" },
		{ "--x=y", "" },
	};
	char v[65];
	size_t i;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		if (strcmp(twl_census_kubelet_driver(cfgs[i].text),
			   cfgs[i].want))
			fail_msg("config %s: got %s, want %s", cfgs[i].text,
				 twl_census_kubelet_driver(cfgs[i].text),
				 cfgs[i].want);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		assert_string_equal(
			twl_census_kubelet_flag_driver(flags[i].text),
			flags[i].want);
	assert_int_equal(twl_census_systemd_version("libsystemd-shared-252.so",
						    v, sizeof(v)),
			 0);
	assert_string_equal(v, "252");
	assert_int_equal(twl_census_systemd_version(
				 "libsystemd-shared-255.4-1ubuntu8.so", v,
				 sizeof(v)),
			 0);
	assert_string_equal(v, "255.4-1ubuntu8");
	assert_int_equal(twl_census_systemd_version("libsystemd-shared-.so", v,
						    sizeof(v)),
			 -EINVAL);
	assert_int_equal(twl_census_systemd_version("libsystemd-core-252.so", v,
						    sizeof(v)),
			 -EINVAL);
	assert_int_equal(twl_census_systemd_version("libsystemd-shared-25 2.so",
						    v, sizeof(v)),
			 -EINVAL);
	assert_int_equal(twl_census_systemd_version("libsystemd-shared-252.so",
						    v, 3),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mountinfo),
		cmocka_unit_test(test_fake_tree),
		cmocka_unit_test(test_long_and_invalid_names),
		cmocka_unit_test(test_knob_target_kind),
		cmocka_unit_test(test_runtimes),
		cmocka_unit_test(test_runtime_parsers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
