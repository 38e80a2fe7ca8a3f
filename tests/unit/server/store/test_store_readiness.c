// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (twl_read_readiness(), on SQLite store_sqlite_
 * readiness.c) on a fleet stored through the ingest path from validated
 * wire documents, against the shipped targets (schema/targets.json) and
 * against targets made from Debian's real linux-config-6.12 files, which
 * kernel/fetch downloads (apt-get download, never installed) into the
 * kernel cache outside the repository. Without them the test fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "harness.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"
#include "store/store.h"
#include "store/store_read.h"

#define NOW 1764732000LL
#define SOFT "memcg_v1.soft_limit"
#define OOM "memcg_v1.oom_control"
#define IFACE "memcg_v1.interface"

static struct twl_store *store;
static char tmpdir[64];
static int batch;

/* A version 2 report of host @n (its id from @n) at NOW. */
static json_t *report(int n, const char *hostname, const char *kernel,
		      const char *mode)
{
	char hid[65], bid[33];

	snprintf(hid, sizeof(hid), "%064x", n);
	snprintf(bid, sizeof(bid), "%032x", ++batch);
	return json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s,"
			 " s:s, s:i}, s:[], s:[], s:[], s:{}}",
			 "v", 2, "batch_id", bid, "seq", batch, "sent_time",
			 (json_int_t)NOW, "host", "host_id", hid, "hostname",
			 hostname, "boot_id", "b0", "kernel", kernel,
			 "cgroup_mode", mode, "agent_version", "0.2.0",
			 "catalog_version", 1, "warnings", "unknown", "usage",
			 "health");
}

static void usage(json_t *r, const char *feature, const char *file,
		  const char *op, const char *use, const char *comm, int count)
{
	json_array_append_new(
		json_object_get(r, "usage"),
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s,"
			  " s:i, s:i, s:i, s:i, s:I, s:I}",
			  "boot_id", "b0", "feature", feature, "file", file,
			  "op", op, "use", use, "cgroup", "/docker/abc", "comm",
			  comm, "uid", 0, "writer_cgroup", "/docker/abc",
			  "container", "docker:abc", "last_pid", 1, "count",
			  count, "failed", 0, "condition_met", 0, "first_seen",
			  (json_int_t)NOW - 100, "last_seen",
			  (json_int_t)NOW - 10));
}

/* A census whose one v1 hierarchy holds @controller. */
static void census(json_t *r, const char *controller, bool runtimes)
{
	json_t *c = json_pack("{s:I, s:[{s:s, s:s, s:[s]}], s:[], s:i, s:b}",
			      "time", (json_int_t)NOW - 5, "hierarchies",
			      "kind", "v1", "mount", "/sys/fs/cgroup/x",
			      "controllers", controller, "knobs",
			      "cgroups_walked", 10, "truncated", 0);

	if (runtimes)
		json_object_set_new(
			c, "runtimes",
			json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "name",
				  "systemd", "version", "252", "cgroup_driver",
				  "", "name", "docker", "version", "20.10",
				  "cgroup_driver", "cgroupfs"));
	json_object_set_new(r, "census", c);
}

static void ingest(json_t *r)
{
	const char *hid = json_string_value(
		json_object_get(json_object_get(r, "host"), "host_id"));
	struct twl_verr err;

	if (twl_report_validate(r, &err))
		fail_msg("test report invalid: %s %s %s", err.code, err.field,
			 err.reason);
	assert_int_equal(twl_store_write_begin(store), 0);
	assert_int_equal(twl_store_ingest(store, hid, r, NOW), 0);
	assert_int_equal(twl_store_write_end(store, true), 0);
	json_decref(r);
}

/*
 * The fleet (all seen at NOW):
 *   1 web-1  v1  6.1  BPF: soft_limit written (java); census: memory on v1
 *   2 db-2   v1  6.1  BPF: oom_control event registered (oomd)
 *   3 lim-3  v1  6.1  BPF: memory.limit_in_bytes written, nothing else;
 *                     census: memory on v1, systemd and docker
 *   4 lim-4  v1  6.1  census only: memory on v1 (sets limits, no knob)
 *   5 new-5  v2  6.12 census: nothing on v1
 *   6 kmsg-6 v1  6.1  no BPF, no census: not measured
 *   7 kmsg-7 v1  6.1  no BPF, no census, a soft_limit kernel warning
 *   8 cpu-8  v1  6.1  census: only cpu on v1; BPF attached (probes)
 */
static void seed(void)
{
	json_t *r;

	r = report(1, "web-1", "6.1.0-28-amd64", "v1");
	usage(r, SOFT, "memory.soft_limit_in_bytes", "write", "configures",
	      "java", 7);
	census(r, "memory", false);
	ingest(r);
	r = report(2, "db-2", "6.1.0-28-amd64", "v1");
	usage(r, OOM, "memory.oom_control", "register_event", "listens", "oomd",
	      1);
	ingest(r);
	r = report(3, "lim-3", "6.1.0-28-amd64", "v1");
	usage(r, IFACE, "memory.limit_in_bytes", "write", "configures",
	      "dockerd", 3);
	census(r, "memory", true);
	ingest(r);
	r = report(4, "lim-4", "6.1.0-28-amd64", "v1");
	census(r, "memory", false);
	ingest(r);
	r = report(5, "new-5", "6.12.9", "v2");
	json_object_set_new(r, "census",
			    json_pack("{s:I, s:[{s:s, s:s, s:[s]}], s:[], s:i,"
				      " s:b}",
				      "time", (json_int_t)NOW, "hierarchies",
				      "kind", "v2", "mount", "/sys/fs/cgroup",
				      "controllers", "memory", "knobs",
				      "cgroups_walked", 3, "truncated", 0));
	ingest(r);
	ingest(report(6, "kmsg-6", "6.1.0-28-amd64", "v1"));
	r = report(7, "kmsg-7", "6.1.0-28-amd64", "v1");
	json_array_append_new(
		json_object_get(r, "warnings"),
		json_pack("{s:s, s:s, s:i, s:I, s:I, s:i, s:{}, s:s}",
			  "feature", SOFT, "text",
			  "soft_limit_in_bytes is deprecated", "kmsg_seq", 7,
			  "mono_us", (json_int_t)1000, "time",
			  (json_int_t)NOW - 50, "level", 4, "fields", "origin",
			  "kmsg"));
	ingest(r);
	r = report(8, "cpu-8", "6.1.0-28-amd64", "v1");
	census(r, "cpu", false);
	json_object_set_new(json_object_get(r, "health"), "probes",
			    json_pack("[{s:s, s:s, s:s}]", "name",
				      "cgroup_write", "state", "attached",
				      "reason", ""));
	ingest(r);
}

static int group_setup(void **state)
{
	char path[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/twl-readiness-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.db", tmpdir);
	assert_int_equal(twl_store_open(path, &store), 0);
	seed();
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[128];

	twl_store_close(store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* The shipped target @name. */
static json_t *shipped(const char *name)
{
	json_t *doc = twl_targets_shipped(), *t, *out = NULL;
	size_t i;

	assert_non_null(doc);
	json_array_foreach(json_object_get(doc, "targets"), i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")),
			    name))
			out = json_incref(t);
	}
	json_decref(doc);
	assert_non_null(out);
	return out;
}

/* twl_read_readiness() for target @t, as the API asks it. */
static json_t *readiness(const json_t *t, unsigned limit)
{
	json_t *plan = twl_target_plan(t), *ids = json_array(), *v, *out;
	struct twl_readiness_query q = { .since = NOW - 30 * 86400,
					 .limit = limit };
	size_t i;

	assert_non_null(plan);
	json_array_foreach(json_object_get(plan, "removed"), i, v)
		json_array_append(ids, json_object_get(v, "id"));
	q.removed_json = json_dumps(ids, JSON_COMPACT);
	q.interfaces_json =
		json_dumps(json_object_get(plan, "interfaces"), JSON_COMPACT);
	assert_int_equal(twl_read_readiness(store, &q, &out), 0);
	free((char *)q.removed_json);
	free((char *)q.interfaces_json);
	json_decref(ids);
	json_decref(plan);
	return out;
}

static json_t *feature(const json_t *doc, const char *id)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(doc, "breaks"),
					   "features"),
			   i, f)
	{
		if (!strcmp(json_string_value(json_object_get(f, "id")), id))
			return f;
	}
	return NULL;
}

static int64_t num(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	if (!json_is_integer(v))
		fail_msg("%s.%s is not an integer", a, b);
	return json_integer_value(v);
}

/* Host names in @arr, in order, joined by ' '. */
static void names(const json_t *arr, char *out, size_t cap)
{
	const json_t *h;
	size_t i, n = 0;

	out[0] = '\0';
	json_array_foreach(arr, i, h) n +=
		snprintf(out + n, cap - n, "%s%s", n ? " " : "",
			 json_string_value(json_object_get(h, "hostname")));
}

static void test_debian_612(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 100), *f;
	char buf[256];

	assert_int_equal(num(doc, "breaks", "count"), 5);
	names(json_object_get(json_object_get(doc, "breaks"), "hosts"), buf,
	      sizeof(buf));
	assert_string_equal(buf, "web-1 db-2 lim-3 lim-4 kmsg-7");
	assert_int_equal(num(doc, "ready", "count"), 2);
	assert_int_equal(num(doc, "not_measured", "count"), 1);
	names(json_object_get(json_object_get(doc, "not_measured"), "hosts"),
	      buf, sizeof(buf));
	assert_string_equal(buf, "kmsg-6");

	f = feature(doc, SOFT);
	assert_non_null(f);
	assert_int_equal(num(f, "by_kind", "configures"), 1);
	assert_int_equal(json_integer_value(json_object_get(f, "hosts")), 2);
	assert_int_equal(num(f, "evidence", "bpf_count"), 7);
	assert_int_equal(num(f, "evidence", "kernel_warning_hosts"), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(f, "workloads"), 0),
			"comm")),
		"java");
	f = feature(doc, OOM);
	assert_non_null(f);
	assert_int_equal(num(f, "by_kind", "listens"), 1);
	assert_int_equal(num(f, "by_kind", "configures"), 0);
	/* the v1 interface: web-1, lim-3 (BPF and census), lim-4 (census) */
	f = feature(doc, IFACE);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f, "hosts")), 3);
	assert_int_equal(num(f, "evidence", "v1_hierarchy_hosts"), 3);
	assert_int_equal(num(f, "evidence", "bpf_hosts"), 1);
	assert_int_equal(num(f, "by_kind", "configures"), 1);
	json_decref(doc);
	json_decref(t);
}

/* A page of one host still counts every host. */
static void test_limit_keeps_counts(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 1);

	assert_int_equal(num(doc, "breaks", "count"), 5);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(doc, "breaks"), "hosts")),
			 1);
	json_decref(doc);
	json_decref(t);
}

/* A target that removes nothing of what the fleet uses: the measured
 * hosts are ready; kmsg-6 and kmsg-7 (whose warning no longer counts)
 * are not measured. */
static void test_nothing_removed(void **state)
{
	json_t *t = json_pack("{s:s, s:s, s:{s:b}}", "name", "old", "kernel",
			      "6.1", "config", "CONFIG_MEMCG_V1", 1);
	json_t *doc = readiness(t, 100);

	assert_int_equal(num(doc, "breaks", "count"), 0);
	assert_int_equal(num(doc, "ready", "count"), 6);
	assert_int_equal(num(doc, "not_measured", "count"), 2);
	json_decref(doc);
	json_decref(t);
}

/* Debian's real .config files give the shipped target's answer. */
static void test_real_debian_configs(void **state)
{
	static const char *const flavours[] = { "amd64_none_amd64",
						"amd64_none_cloud-amd64",
						"amd64_rt_amd64" };
	json_t *ship = shipped("debian-12-6.12"), *want = readiness(ship, 100);
	json_t *splan = twl_target_plan(ship);
	char err[256], *text;

	for (size_t i = 0; i < 3; i++) {
		json_t *t, *got, *plan;
		size_t len;

		text = debian_config(flavours[i], &len);
		assert_int_equal(twl_target_from_kconfig("debian-up", text, len,
							 NULL, "uploaded", &t,
							 err, sizeof(err)),
				 0);
		free(text);
		assert_string_equal(
			json_string_value(json_object_get(t, "kernel")),
			"6.12.118");
		plan = twl_target_plan(t);
		assert_true(json_equal(json_object_get(plan, "removed"),
				       json_object_get(splan, "removed")));
		got = readiness(t, 100);
		assert_true(json_equal(got, want));
		json_decref(got);
		json_decref(plan);
		json_decref(t);
	}
	json_decref(splan);
	json_decref(want);
	json_decref(ship);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_612),
		cmocka_unit_test(test_limit_keeps_counts),
		cmocka_unit_test(test_nothing_removed),
		cmocka_unit_test(test_real_debian_configs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
