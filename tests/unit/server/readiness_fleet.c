// SPDX-License-Identifier: GPL-2.0
/*
 * The readiness tests' mixed fleet and its answer on the Debian 6.12
 * target (readiness_fleet.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "readiness_fleet.h"

struct seeding {
	int64_t now;
	int batch;
	fleet_ingest_fn ingest;
	void *ctx;
};

/* A version 2 report of host @n (its id from @n) at s->now. */
static json_t *report(struct seeding *s, int n, const char *hostname,
		      const char *kernel, const char *mode)
{
	char hid[65], bid[33];

	snprintf(hid, sizeof(hid), "%064x", n);
	snprintf(bid, sizeof(bid), "%032x", ++s->batch);
	return json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s,"
			 " s:s, s:i}, s:[], s:[], s:[], s:{}}",
			 "v", 2, "batch_id", bid, "seq", s->batch, "sent_time",
			 (json_int_t)s->now, "host", "host_id", hid, "hostname",
			 hostname, "boot_id", "b0", "kernel", kernel,
			 "cgroup_mode", mode, "agent_version", "0.2.0",
			 "catalog_version", 1, "warnings", "unknown", "usage",
			 "health");
}

static void usage(struct seeding *s, json_t *r, const char *feature,
		  const char *file, const char *op, const char *use,
		  const char *comm, int count)
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
			  (json_int_t)s->now - 100, "last_seen",
			  (json_int_t)s->now - 10));
}

/* A census whose one hierarchy (@kind) holds @controller. */
static void census(struct seeding *s, json_t *r, const char *kind,
		   const char *controller, bool runtimes)
{
	json_t *c = json_pack(
		"{s:I, s:[{s:s, s:s, s:[s]}], s:[], s:i, s:b}", "time",
		(json_int_t)s->now - 5, "hierarchies", "kind", kind, "mount",
		strcmp(kind, "v1") ? "/sys/fs/cgroup" : "/sys/fs/cgroup/x",
		"controllers", controller, "knobs", "cgroups_walked", 10,
		"truncated", 0);

	if (runtimes)
		json_object_set_new(
			c, "runtimes",
			json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "name",
				  "systemd", "version", "252", "cgroup_driver",
				  "", "name", "docker", "version", "20.10",
				  "cgroup_driver", "cgroupfs"));
	json_object_set_new(r, "census", c);
}

static void ingest(struct seeding *s, json_t *r)
{
	const char *hid = json_string_value(
		json_object_get(json_object_get(r, "host"), "host_id"));

	s->ingest(hid, r, s->ctx);
}

static void kernel_warning(struct seeding *s, json_t *r)
{
	json_array_append_new(
		json_object_get(r, "warnings"),
		json_pack("{s:s, s:s, s:i, s:I, s:I, s:i, s:{}, s:s}",
			  "feature", FLEET_SOFT, "text",
			  "soft_limit_in_bytes is deprecated", "kmsg_seq", 7,
			  "mono_us", (json_int_t)1000, "time",
			  (json_int_t)s->now - 50, "level", 4, "fields",
			  "origin", "kmsg"));
}

void fleet_seed(int64_t now, fleet_ingest_fn fn, void *ctx)
{
	struct seeding s = { .now = now, .ingest = fn, .ctx = ctx };
	const char *old = "6.1.0-28-amd64";
	json_t *r;

	r = report(&s, 1, "web-1", old, "v1");
	usage(&s, r, FLEET_SOFT, "memory.soft_limit_in_bytes", "write",
	      "configures", "java", 7);
	/* it reads it back too: a reader, but not only a reader */
	usage(&s, r, FLEET_SOFT, "memory.soft_limit_in_bytes", "read", "reads",
	      "java", 2);
	census(&s, r, "v1", "memory", false);
	ingest(&s, r);
	r = report(&s, 2, "db-2", old, "v1");
	usage(&s, r, FLEET_OOM, "memory.oom_control", "register_event",
	      "listens", "oomd", 1);
	ingest(&s, r);
	r = report(&s, 3, "lim-3", old, "v1");
	usage(&s, r, FLEET_IFACE, "memory.limit_in_bytes", "write",
	      "configures", "dockerd", 3);
	census(&s, r, "v1", "memory", true);
	ingest(&s, r);
	r = report(&s, 4, "lim-4", old, "v1");
	/* a monitor that only reads the soft limit: it loses it too */
	usage(&s, r, FLEET_SOFT, "memory.soft_limit_in_bytes", "read", "reads",
	      "runc", 4);
	census(&s, r, "v1", "memory", false);
	ingest(&s, r);
	r = report(&s, 5, "new-5", "6.12.9", "v2");
	census(&s, r, "v2", "memory", false);
	ingest(&s, r);
	ingest(&s, report(&s, 6, "kmsg-6", old, "v1"));
	r = report(&s, 7, "kmsg-7", old, "v1");
	kernel_warning(&s, r);
	ingest(&s, r);
	r = report(&s, 8, "cpu-8", old, "v1");
	census(&s, r, "v1", "cpu", false);
	json_object_set_new(json_object_get(r, "health"), "probes",
			    json_pack("[{s:s, s:s, s:s}]", "name",
				      "cgroup_write", "state", "attached",
				      "reason", ""));
	ingest(&s, r);
	/* 13, not 9: the store test's teams beside the fleet are 9 to 12 */
	r = report(&s, 13, "cset-13", old, "v1");
	census(&s, r, "v1", "cpuset", false);
	ingest(&s, r);
}

json_t *fleet_feature(const json_t *doc, const char *id)
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

int64_t fleet_num(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	if (!json_is_integer(v))
		fail_msg("%s.%s is not an integer", a, b);
	return json_integer_value(v);
}

void fleet_names(const json_t *arr, char *out, size_t cap)
{
	const json_t *h;
	size_t i, n = 0;

	out[0] = '\0';
	json_array_foreach(arr, i, h) n +=
		snprintf(out + n, cap - n, "%s%s", n ? " " : "",
			 json_string_value(json_object_get(h, "hostname")));
}

/* What breaks, by feature: the kinds of use and the evidence. */
static void check_features(const json_t *doc)
{
	json_t *f = fleet_feature(doc, FLEET_SOFT);

	assert_non_null(f);
	/* web-1 writes and reads, kmsg-7 warned, lim-4 only reads */
	assert_int_equal(fleet_num(f, "by_kind", "configures"), 1);
	assert_int_equal(fleet_num(f, "by_kind", "reads"), 2);
	assert_int_equal(fleet_num(f, "by_kind", "reading_only"), 1);
	assert_int_equal(json_integer_value(json_object_get(f, "hosts")), 3);
	assert_int_equal(fleet_num(f, "evidence", "bpf_count"), 13);
	assert_int_equal(fleet_num(f, "evidence", "kernel_warning_hosts"), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(f, "workloads"), 0),
			"comm")),
		"java");
	f = fleet_feature(doc, FLEET_OOM);
	assert_non_null(f);
	assert_int_equal(fleet_num(f, "by_kind", "listens"), 1);
	assert_int_equal(fleet_num(f, "by_kind", "configures"), 0);
	assert_int_equal(fleet_num(f, "by_kind", "reading_only"), 0);
	/* the v1 interface: web-1, lim-3 (BPF and census), lim-4 (census) */
	f = fleet_feature(doc, FLEET_IFACE);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f, "hosts")), 3);
	assert_int_equal(fleet_num(f, "evidence", "v1_hierarchy_hosts"), 3);
	assert_int_equal(fleet_num(f, "evidence", "bpf_hosts"), 1);
	assert_int_equal(fleet_num(f, "by_kind", "configures"), 1);
	/* cpuset's: cset-13, from its census alone (BPF counts no cpuset) */
	f = fleet_feature(doc, FLEET_CPUSET_IFACE);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f, "hosts")), 1);
	assert_int_equal(fleet_num(f, "evidence", "v1_hierarchy_hosts"), 1);
	assert_int_equal(fleet_num(f, "evidence", "bpf_hosts"), 0);
}

void fleet_check_debian_612(const json_t *doc)
{
	char buf[256];

	assert_int_equal(fleet_num(doc, "breaks", "count"), 6);
	fleet_names(json_object_get(json_object_get(doc, "breaks"), "hosts"),
		    buf, sizeof(buf));
	assert_string_equal(buf, "web-1 db-2 lim-3 lim-4 kmsg-7 cset-13");
	/* new-5 (v2) and cpu-8 (no memory on v1): counted, not listed */
	assert_int_equal(fleet_num(doc, "ready", "count"), 2);
	assert_int_equal(fleet_num(doc, "not_measured", "count"), 1);
	fleet_names(json_object_get(json_object_get(doc, "not_measured"),
				    "hosts"),
		    buf, sizeof(buf));
	assert_string_equal(buf, "kmsg-6");
	check_features(doc);
}
