// SPDX-License-Identifier: GPL-2.0
/*
 * The read queries of store_read.h against a store filled through the
 * ingest path (twl_store_ingest) with known figures: on SQLite, and the
 * reads the PostgreSQL store has (summary, hosts, one host, health,
 * unknown texts, feature detail, the export's data: store/read_answers.c,
 * read_feature.c, read_export.c over each backend's queries) on both
 * backends, which must answer the same JSON for the same reports.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "api/export.h"
#include "harness.h"
#include "pg_fixture.h"
#include "store/store.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

#define NOW 1764732000LL
#define DAY 86400LL

#define SOFT "memcg_v1.soft_limit"
#define OOM "memcg_v1.oom_control"
#define MEMSW "memcg_v1.memsw"

struct fx {
	char dir[64];
	char path[128];
	char uri[512]; /* the PostgreSQL database's, or "" */
	struct twl_store *s;
};

static int seq_counter;

/* Host ids: 64 hex digits derived from a small number. */
static void host_id(int n, char out[65])
{
	snprintf(out, 65, "%064x", n);
}

static json_t *report(int host, const char *hostname, const char *kernel,
		      const char *mode, json_t *health)
{
	char hid[65], bid[33];

	host_id(host, hid);
	snprintf(bid, sizeof(bid), "%032x", ++seq_counter);
	return json_pack(
		"{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i},"
		" s:[], s:[], s:[], s:o}",
		"v", 1, "batch_id", bid, "seq", seq_counter, "sent_time",
		(json_int_t)NOW, "host", "host_id", hid, "hostname", hostname,
		"boot_id", "b0", "kernel", kernel, "cgroup_mode", mode,
		"agent_version", "0.1.0", "catalog_version", 1, "warnings",
		"unknown", "usage", "health", health ? health : json_object());
}

static void add_usage(json_t *r, const char *feature, const char *comm,
		      const char *wcg, const char *container,
		      const char *cgroup, int64_t count, int64_t first,
		      int64_t last)
{
	json_array_append_new(
		json_object_get(r, "usage"),
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s,"
			  " s:i, s:I, s:i, s:i, s:I, s:I}",
			  "boot_id", "b0", "feature", feature, "file",
			  "memory.x", "op", "write", "cgroup", cgroup, "comm",
			  comm, "uid", 0, "writer_cgroup", wcg, "container",
			  container, "last_pid", 1, "count", (json_int_t)count,
			  "failed", 0, "condition_met", 0, "first_seen",
			  (json_int_t)first, "last_seen", (json_int_t)last));
}

/* add_usage() of op (write, register_event or read) on file. */
static void add_usage_op(json_t *r, const char *feature, const char *file,
			 const char *op, const char *comm, int64_t count)
{
	json_t *u;

	add_usage(r, feature, comm, "/", "", "/c", count, NOW - 300, NOW - 30);
	u = json_array_get(json_object_get(r, "usage"),
			   json_array_size(json_object_get(r, "usage")) - 1);
	json_object_set_new(u, "file", json_string(file));
	json_object_set_new(u, "op", json_string(op));
}

static void add_unknown(json_t *r, const char *text, int64_t t, int count)
{
	json_array_append_new(json_object_get(r, "unknown"),
			      json_pack("{s:s, s:i, s:I, s:I, s:i, s:s}",
					"text", text, "kmsg_seq", 9, "mono_us",
					(json_int_t)1000, "time", (json_int_t)t,
					"count", count, "origin", "kmsg"));
}

static void add_warning(json_t *r, const char *feature, int64_t t)
{
	json_array_append_new(
		json_object_get(r, "warnings"),
		json_pack("{s:s, s:s, s:i, s:I, s:I, s:i, s:{}, s:s}",
			  "feature", feature, "text",
			  "soft_limit_in_bytes is"
			  " deprecated",
			  "kmsg_seq", 7, "mono_us", (json_int_t)1000, "time",
			  (json_int_t)t, "level", 4, "fields", "origin",
			  "kmsg"));
}

static void ingest(struct twl_store *s, json_t *r, int64_t now)
{
	const char *hid = json_string_value(
		json_object_get(json_object_get(r, "host"), "host_id"));

	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, hid, r, now), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	json_decref(r);
}

/*
 * A new empty store of the backend @state points to (NULL: SQLite), and
 * the directory of the SQLite database.
 */
static struct fx *fx_open(void **state)
{
	enum backend b = *state ? *(enum backend *)*state : SQLITE;
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/twl-read-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	if (b == POSTGRESQL) {
		pg_fixture_db(f->uri, sizeof(f->uri));
		assert_int_equal(twl_store_open(f->uri, &f->s), 0);
	} else {
		assert_int_equal(twl_store_open(f->path, &f->s), 0);
	}
	return f;
}

/*
 * The fleet:
 *   1 web-1  v1     6.1.0-28  soft_limit java/docker 10 then 15 (cumulative), now
 *   2 web-2  v1     6.1.0-28  soft_limit java/systemd service 5, now
 *   3 db_1   v1     6.1.0-31  oom_control 2 uses, 10 days ago; records_lost 4
 *   4 web-4  hybrid 6.12.9    soft_limit kmsg warning 2 days ago; key_rejected
 *   5 db-5   v2     6.12.9    nothing; last report 3 days ago; probe missing
 */
static void fill(struct twl_store *s)
{
	json_t *r;

	r = report(1, "web-1", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/docker/abc", "docker:abc", "/docker/abc",
		  10, NOW - 100, NOW - 50);
	ingest(s, r, NOW - 40);
	r = report(1, "web-1", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/docker/abc", "docker:abc", "/docker/abc",
		  15, NOW - 100, NOW - 10);
	ingest(s, r, NOW);
	r = report(2, "web-2", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/system.slice/app.service", "", "/app", 5,
		  NOW - 200, NOW - 20);
	ingest(s, r, NOW);
	r = report(3, "db_1", "6.1.0-31-amd64", "v1",
		   json_pack("{s:i}", "records_lost", 4));
	add_usage(r, OOM, "oomd", "/system.slice/oomd.service", "", "/batch", 2,
		  NOW - 10 * DAY, NOW - 10 * DAY);
	ingest(s, r, NOW);
	r = report(4, "web-4", "6.12.9", "hybrid",
		   json_pack("{s:b}", "key_rejected", 1));
	add_warning(r, SOFT, NOW - 2 * DAY);
	ingest(s, r, NOW);
	r = report(5, "db-5", "6.12.9", "v2",
		   json_pack("{s:[s]}", "probe_missing", SOFT));
	ingest(s, r, NOW - 3 * DAY);
}

static int setup(void **state)
{
	struct fx *f = fx_open(state);

	fill(f->s);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[192];

	twl_store_close(f->s);
	snprintf(p, sizeof(p), "%s/t.db", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/t.db-wal", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/t.db-shm", f->dir);
	unlink(p);
	rmdir(f->dir);
	free(f);
	return 0;
}

static json_t *find_by(json_t *arr, const char *key, const char *val)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x)
	{
		if (!strcmp(json_string_value(json_object_get(x, key)) ?: "",
			    val))
			return x;
	}
	print_error("no %s=%s in array\n", key, val);
	fail();
	return NULL;
}

#define GETI(o, k) json_integer_value(json_object_get((o), (k)))
#define GETS(o, k) json_string_value(json_object_get((o), (k)))

static void test_summary(void **state)
{
	struct fx *f = *state;
	json_t *doc, *h, *m, *soft, *oom, *tl;

	assert_int_equal(twl_read_summary(f->s, NOW, &doc), 0);
	h = json_object_get(doc, "hosts");
	assert_int_equal(GETI(h, "total"), 5);
	assert_int_equal(GETI(h, "reporting_1d"), 4);
	assert_int_equal(GETI(h, "reporting_7d"), 5);
	assert_int_equal(GETI(h, "reporting_30d"), 5);
	m = json_object_get(h, "by_cgroup_mode");
	assert_int_equal(GETI(m, "v1"), 3);
	assert_int_equal(GETI(m, "hybrid"), 1);
	assert_int_equal(GETI(m, "v2"), 1);
	assert_int_equal(GETI(m, "unknown"), 0);
	assert_int_equal(GETI(h, "v1_or_hybrid_30d"), 4);

	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 2);
	assert_int_equal(GETI(soft, "hosts_7d"), 3);
	assert_int_equal(GETI(soft, "hosts_30d"), 3);
	/* 15 (cumulative max of 10 then 15) + 5; the warning apart. */
	assert_int_equal(GETI(soft, "uses"), 20);
	assert_int_equal(GETI(soft, "warnings"), 1);
	assert_int_equal(GETI(soft, "reads"), 0);
	assert_int_equal(GETI(soft, "workloads"), 1);
	assert_int_equal(GETI(soft, "workloads_configuring"), 1);
	assert_int_equal(GETI(soft, "hosts_configuring_30d"), 2);
	assert_int_equal(GETI(soft, "hosts_reading_only_30d"), 0);
	assert_true(
		fabs(json_real_value(json_object_get(soft, "share_v1_30d")) -
		     0.75) < 1e-9);
	assert_int_equal(GETI(soft, "first_seen"), NOW - 2 * DAY);
	assert_int_equal(GETI(soft, "last_seen"), NOW - 10);

	/* The overview's trend: the last 30 days of the timeline. */
	tl = json_object_get(soft, "trend");
	assert_int_equal(json_array_size(tl), 2);
	assert_int_equal(GETI(json_array_get(tl, 0), "day"),
			 (NOW - 2 * DAY) / DAY * DAY);
	assert_int_equal(GETI(json_array_get(tl, 1), "hosts"), 2);
	assert_int_equal(GETI(json_array_get(tl, 1), "uses"), 20);

	oom = find_by(json_object_get(doc, "features"), "id", OOM);
	assert_int_equal(GETI(oom, "hosts_1d"), 0);
	assert_int_equal(GETI(oom, "hosts_7d"), 0);
	assert_int_equal(GETI(oom, "hosts_30d"), 1);
	assert_int_equal(GETI(oom, "uses"), 2);
	assert_int_equal(GETI(oom, "workloads"), 1);
	json_decref(doc);
}

/*
 * The summary's windows count whole hours from the hour buckets kept by
 * triggers: "last day" at now = since the start of the hour that holds
 * now - 1 day (docs/api.md). Check both sides of that hour's start, a
 * host whose last use moves to a later day, a host that changes cgroup
 * mode, and the window moving on at the next hour.
 */
static void test_summary_windows(void **state)
{
	const int64_t w1 = (NOW - DAY) / 3600 * 3600; /* the 1-day window */
	struct fx *f = *state;
	json_t *doc, *h, *m, *soft, *r;

	r = report(6, "edge-a", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/x", "", "/x", 1, w1 - 10, w1 - 10);
	ingest(f->s, r, w1 - 10);
	r = report(7, "edge-b", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/x", "", "/x", 1, w1, w1);
	ingest(f->s, r, w1);

	assert_int_equal(twl_read_summary(f->s, NOW, &doc), 0);
	h = json_object_get(doc, "hosts");
	assert_int_equal(GETI(h, "total"), 7);
	assert_int_equal(GETI(h, "reporting_1d"), 5);
	assert_int_equal(GETI(h, "reporting_7d"), 7);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 3);
	assert_int_equal(GETI(soft, "hosts_7d"), 5);
	assert_int_equal(GETI(soft, "uses"), 22);
	json_decref(doc);

	/* edge-a uses it again today; db-5 comes back as a v1 host. */
	r = report(6, "edge-a", "6.1.0-28-amd64", "v1", NULL);
	add_usage(r, SOFT, "java", "/x", "", "/x", 4, w1 - 10, NOW - 5);
	ingest(f->s, r, NOW);
	ingest(f->s, report(5, "db-5", "6.12.9", "v1", NULL), NOW);

	assert_int_equal(twl_read_summary(f->s, NOW, &doc), 0);
	h = json_object_get(doc, "hosts");
	assert_int_equal(GETI(h, "total"), 7);
	assert_int_equal(GETI(h, "reporting_1d"), 7);
	m = json_object_get(h, "by_cgroup_mode");
	assert_int_equal(GETI(m, "v1"), 6);
	assert_int_equal(GETI(m, "hybrid"), 1);
	assert_int_equal(GETI(m, "v2"), 0);
	assert_int_equal(GETI(h, "v1_or_hybrid_30d"), 7);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 4);
	assert_int_equal(GETI(soft, "hosts_7d"), 5);
	assert_int_equal(GETI(soft, "hosts_30d"), 5);
	assert_int_equal(GETI(soft, "uses"), 25);
	json_decref(doc);

	/*
	 * A day after NOW's hour ends, less a second: NOW's hour (its start
	 * is NOW - 1200) is still in: web-1, web-2 and edge-a used it there,
	 * and all hosts but edge-b reported there. A second later it is out.
	 */
	assert_int_equal(NOW % 3600, 1200);
	assert_int_equal(twl_read_summary(f->s, NOW + 2399 + DAY, &doc), 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 3);
	assert_int_equal(GETI(json_object_get(doc, "hosts"), "reporting_1d"),
			 6);
	json_decref(doc);
	assert_int_equal(twl_read_summary(f->s, NOW + 2400 + DAY, &doc), 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 0);
	assert_int_equal(GETI(json_object_get(doc, "hosts"), "reporting_1d"),
			 0);
	json_decref(doc);
}

/* Retention deletes rows: the trigger-kept buckets follow. */
static void test_summary_after_prune(void **state)
{
	struct fx *f = *state;
	json_t *doc, *oom, *soft;
	int64_t deleted = 0;

	assert_int_equal(twl_store_prune(f->s, NOW, 35, 5, &deleted), 0);
	assert_true(deleted >= 2); /* db_1's oom_control usage and rollup */
	assert_int_equal(twl_read_summary(f->s, NOW, &doc), 0);
	oom = find_by(json_object_get(doc, "features"), "id", OOM);
	assert_int_equal(GETI(oom, "hosts_30d"), 0);
	assert_int_equal(GETI(oom, "workloads"), 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_30d"), 3);
	assert_int_equal(GETI(soft, "workloads"), 1);
	json_decref(doc);
}

static void test_feature(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *p, *tl;

	assert_int_equal(twl_read_feature(f->s, "no.such", &flt, &doc),
			 -ENOENT);
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 3);
	assert_int_equal(GETI(doc, "uses"), 20);
	assert_int_equal(GETI(json_object_get(doc, "warnings"), "count"), 1);
	p = find_by(json_object_get(doc, "processes"), "process", "java");
	assert_int_equal(GETI(p, "hosts"), 2);
	assert_int_equal(GETI(p, "uses"), 20);
	p = find_by(json_object_get(doc, "top_cgroups"), "cgroup",
		    "/docker/abc");
	assert_int_equal(GETI(p, "uses"), 15);
	p = find_by(json_object_get(doc, "containers"), "container",
		    "docker:abc");
	assert_int_equal(GETI(p, "hosts"), 1);
	p = find_by(json_object_get(doc, "kernels"), "kernel",
		    "6.1.0-28-amd64");
	assert_int_equal(GETI(p, "hosts"), 2);
	p = find_by(json_object_get(doc, "kernels"), "kernel", "6.12.9");
	assert_int_equal(GETI(p, "hosts"), 1);
	/* Timeline: web-4's warning 2 days ago, web-1 and web-2 today. */
	tl = json_object_get(doc, "timeline");
	assert_int_equal(json_array_size(tl), 2);
	assert_int_equal(GETI(json_array_get(tl, 0), "day"),
			 (NOW - 2 * DAY) / DAY * DAY);
	assert_int_equal(GETI(json_array_get(tl, 0), "hosts"), 1);
	assert_int_equal(GETI(json_array_get(tl, 0), "uses"), 0);
	assert_int_equal(GETI(json_array_get(tl, 1), "hosts"), 2);
	assert_int_equal(GETI(json_array_get(tl, 1), "uses"), 20);
	json_decref(doc);

	/* A time range that only holds the warning. */
	flt.since = NOW - 3 * DAY;
	flt.until = NOW - DAY;
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 1);
	assert_int_equal(json_array_size(json_object_get(doc, "processes")), 0);
	json_decref(doc);

	/*
	 * Bounds inside an hour: feature_host's index narrows by hour, the
	 * row decides (web-1's last use NOW - 10, web-2's NOW - 20).
	 */
	flt.since = NOW - 15;
	flt.until = NOW;
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 1);
	assert_int_equal(json_array_size(json_object_get(doc, "kernels")), 1);
	p = find_by(json_object_get(doc, "kernels"), "kernel",
		    "6.1.0-28-amd64");
	assert_int_equal(GETI(p, "hosts"), 1);
	json_decref(doc);
	flt.since = NOW - 3 * DAY;
	flt.until = NOW - 15;
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 2);
	assert_int_equal(json_array_size(json_object_get(doc, "kernels")), 2);
	json_decref(doc);
}

static void names(json_t *doc, char *out, size_t cap);

/*
 * Three kinds of use apart (migration 015), from reports through ingest:
 * mon-8 only reads soft_limit (as runc's stats do), app-9's java writes
 * and reads it, ntf-10's notifier registers for oom_control (opening it
 * for reading too). mon-8 is not among the hosts using soft_limit, its
 * reads are no uses; app-9 and ntf-10 are never read-only.
 */
static void add_kinds_fleet(struct twl_store *s)
{
	json_t *r;

	r = report(8, "mon-8", "5.10.0-mon", "v1", NULL);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "runc",
		     100);
	add_usage_op(r, MEMSW, "memory.memsw.usage_in_bytes", "read", "runc",
		     7);
	ingest(s, r, NOW);
	r = report(9, "app-9", "6.1.0-28-amd64", "v1", NULL);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "write", "java", 3);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "java", 50);
	ingest(s, r, NOW);
	r = report(10, "ntf-10", "6.1.0-28-amd64", "v1", NULL);
	add_usage_op(r, OOM, "memory.oom_control", "register_event", "notifier",
		     4);
	add_usage_op(r, OOM, "memory.oom_control", "read", "notifier", 4);
	ingest(s, r, NOW);
}

static void test_use_kinds_summary(void **state)
{
	struct fx *f = *state;
	json_t *doc, *soft, *oom, *p;

	add_kinds_fleet(f->s);
	assert_int_equal(twl_read_summary(f->s, NOW, &doc), 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	/* web-1, web-2, web-4 (a warning), app-9; not mon-8 */
	assert_int_equal(GETI(soft, "hosts_30d"), 4);
	assert_int_equal(GETI(soft, "hosts_1d"), 3);
	assert_int_equal(GETI(soft, "hosts_configuring_30d"), 3);
	assert_int_equal(GETI(soft, "hosts_listening_30d"), 0);
	assert_int_equal(GETI(soft, "hosts_reading_only_30d"), 1);
	assert_int_equal(GETI(soft, "uses"), 23);
	assert_int_equal(GETI(soft, "reads"), 150);
	assert_int_equal(GETI(soft, "warnings"), 1);
	assert_int_equal(GETI(soft, "workloads"), 1);
	assert_int_equal(GETI(soft, "workloads_configuring"), 1);
	assert_int_equal(GETI(soft, "workloads_reading_only"), 1);
	assert_true(
		fabs(json_real_value(json_object_get(soft, "share_v1_30d")) -
		     4.0 / 7.0) < 1e-9);
	oom = find_by(json_object_get(doc, "features"), "id", OOM);
	assert_int_equal(GETI(oom, "hosts_30d"), 2);
	assert_int_equal(GETI(oom, "hosts_listening_30d"), 1);
	assert_int_equal(GETI(oom, "hosts_configuring_30d"), 1);
	assert_int_equal(GETI(oom, "hosts_reading_only_30d"), 0);
	assert_int_equal(GETI(oom, "uses"), 6);
	assert_int_equal(GETI(oom, "reads"), 4);
	assert_int_equal(GETI(oom, "workloads_listening"), 1);
	assert_int_equal(GETI(oom, "workloads_reading_only"), 0);
	/* read by nobody but a monitor: not used, no first or last use */
	p = find_by(json_object_get(doc, "features"), "id", MEMSW);
	assert_int_equal(GETI(p, "hosts_30d"), 0);
	assert_int_equal(GETI(p, "hosts_reading_only_30d"), 1);
	assert_int_equal(GETI(p, "uses"), 0);
	assert_int_equal(GETI(p, "reads"), 7);
	assert_true(json_is_null(json_object_get(p, "first_seen")));
	assert_true(json_is_null(json_object_get(p, "last_seen")));
	json_decref(doc);
}

static void test_use_kinds_detail(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *p, *wl;

	add_kinds_fleet(f->s);
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 4);
	assert_int_equal(GETI(doc, "hosts_configuring"), 3);
	assert_int_equal(GETI(doc, "hosts_listening"), 0);
	assert_int_equal(GETI(doc, "hosts_reading_only"), 1);
	assert_int_equal(GETI(doc, "uses"), 23);
	assert_int_equal(GETI(doc, "reads"), 150);
	assert_int_equal(GETI(json_object_get(doc, "warnings"), "count"), 1);
	wl = json_object_get(doc, "workloads");
	assert_int_equal(GETI(wl, "using"), 1);
	assert_int_equal(GETI(wl, "configuring"), 1);
	assert_int_equal(GETI(wl, "reading_only"), 1);
	p = find_by(json_object_get(doc, "processes"), "process", "runc");
	assert_string_equal(json_string_value(json_object_get(p, "use")),
			    "reads");
	assert_int_equal(GETI(p, "hosts"), 1);
	assert_int_equal(GETI(p, "uses"), 0);
	assert_int_equal(GETI(p, "reads"), 100);
	/* java writes (and reads) on app-9: configures, never read-only */
	p = find_by(json_object_get(doc, "processes"), "process", "java");
	assert_string_equal(json_string_value(json_object_get(p, "use")),
			    "configures");
	assert_int_equal(GETI(p, "hosts"), 3);
	assert_int_equal(GETI(p, "uses"), 23);
	assert_int_equal(GETI(p, "reads"), 50);
	/* the read-only host's kernel is no kernel using it */
	json_array_foreach(json_object_get(doc, "kernels"), flt.limit, p)
		assert_string_not_equal(
			json_string_value(json_object_get(p, "kernel")),
			"5.10.0-mon");
	json_decref(doc);
}

/* The kinds of use in host lists and on the host pages. */
static void test_use_kinds_hosts(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *p;
	char buf[256], hid[65];

	add_kinds_fleet(f->s);
	/* hosts using it, and apart the hosts that only read it */
	flt.feature = SOFT;
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2,web-4,app-9");
	json_decref(doc);
	flt.reading_only = true;
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "mon-8");
	json_decref(doc);

	/* the host pages */
	host_id(8, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	p = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_true(json_is_true(json_object_get(p, "reads_only")));
	assert_true(json_is_false(json_object_get(p, "configures")));
	assert_int_equal(GETI(p, "uses"), 0);
	assert_int_equal(GETI(p, "reads"), 100);
	json_decref(doc);
	host_id(10, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	p = find_by(json_object_get(doc, "features"), "id", OOM);
	assert_true(json_is_true(json_object_get(p, "listens")));
	assert_true(json_is_false(json_object_get(p, "reads_only")));
	assert_int_equal(GETI(p, "uses"), 4);
	assert_int_equal(GETI(p, "reads"), 4);
	json_decref(doc);
	host_id(4, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	p = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_true(json_is_true(json_object_get(p, "warned")));
	assert_int_equal(GETI(p, "warnings"), 1);
	assert_int_equal(GETI(p, "uses"), 0);
	json_decref(doc);
}

/*
 * Unknown texts fleet-wide: grouped by text over hosts, with host
 * counts, first and last seen and kernels, one page at a time.
 */
static void test_unknown_fleet(void **state)
{
	const char *t1 = "cgroup#: knob_a is deprecated",
		   *t2 = "cgroup#: knob_b is deprecated";
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *r, *doc, *e;

	r = report(11, "u-11", "6.15.0", "v1", NULL);
	add_unknown(r, t1, NOW - 500, 2);
	ingest(f->s, r, NOW - 400);
	r = report(12, "u-12", "6.16.1", "v1", NULL);
	add_unknown(r, t1, NOW - 300, 1);
	add_unknown(r, t2, NOW - 200, 5);
	ingest(f->s, r, NOW - 100);
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "texts")), 2);
	e = json_array_get(json_object_get(doc, "texts"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "text")), t1);
	assert_int_equal(GETI(e, "hosts"), 2);
	assert_int_equal(GETI(e, "count"), 3);
	assert_int_equal(GETI(e, "first_seen"), NOW - 500);
	assert_int_equal(GETI(e, "last_seen"), NOW - 100);
	assert_int_equal(json_array_size(json_object_get(e, "kernels")), 2);
	find_by(json_object_get(e, "kernels"), "kernel", "6.15.0");
	find_by(json_object_get(e, "kernels"), "kernel", "6.16.1");
	assert_true(json_is_null(json_object_get(doc, "next_cursor")));
	json_decref(doc);

	/* one a page */
	flt.limit = 1;
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "texts")), 1);
	assert_string_equal(
		json_string_value(json_object_get(doc, "next_cursor")), t1);
	json_decref(doc);
	flt.cursor = t1;
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	e = json_array_get(json_object_get(doc, "texts"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "text")), t2);
	assert_int_equal(GETI(e, "hosts"), 1);
	assert_true(json_is_null(json_object_get(doc, "next_cursor")));
	json_decref(doc);
	/* texts last seen in a range */
	memset(&flt, 0, sizeof(flt));
	flt.until = NOW - 200;
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "texts")), 0);
	json_decref(doc);
}

/* Collect hostnames of a hosts page into "a,b,c". */
static void names(json_t *doc, char *out, size_t cap)
{
	size_t i;
	json_t *h;

	out[0] = '\0';
	json_array_foreach(json_object_get(doc, "hosts"), i, h)
	{
		if (i)
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, json_string_value(json_object_get(h, "hostname")),
			cap - strlen(out) - 1);
	}
}

static void test_hosts_filters(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc;
	char buf[256], cur[80];

	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2,db_1,web-4,db-5");
	assert_true(json_is_null(json_object_get(doc, "next_cursor")));
	json_decref(doc);

	/* Pagination by cursor. */
	flt.limit = 2;
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2");
	snprintf(cur, sizeof(cur), "%s",
		 json_string_value(json_object_get(doc, "next_cursor")));
	json_decref(doc);
	flt.cursor = cur;
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "db_1,web-4");
	snprintf(cur, sizeof(cur), "%s",
		 json_string_value(json_object_get(doc, "next_cursor")));
	json_decref(doc);
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "db-5");
	assert_true(json_is_null(json_object_get(doc, "next_cursor")));
	json_decref(doc);

	/* Host patterns: glob, prefix, and LIKE metacharacters taken literally. */
	memset(&flt, 0, sizeof(flt));
	flt.host_pattern = "web-*";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2,web-4");
	json_decref(doc);
	flt.host_pattern = "db_";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "db_1");
	json_decref(doc);
	flt.host_pattern = "db?5";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "db-5");
	json_decref(doc);
	flt.host_pattern = "%";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "hosts")), 0);
	json_decref(doc);

	/* Kernel (exact, or prefix with *), cgroup mode, feature + time range. */
	memset(&flt, 0, sizeof(flt));
	flt.kernel = "6.1.0-28-amd64";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2");
	json_decref(doc);
	flt.kernel = "6.1.0*";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2,db_1");
	json_decref(doc);
	flt.kernel = "6.1";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "hosts")), 0);
	json_decref(doc);
	memset(&flt, 0, sizeof(flt));
	flt.cgroup_mode = "hybrid";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-4");
	json_decref(doc);
	memset(&flt, 0, sizeof(flt));
	flt.feature = SOFT;
	flt.since = NOW - DAY;
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	names(doc, buf, sizeof(buf));
	assert_string_equal(buf, "web-1,web-2");
	json_decref(doc);
	flt.feature = "memcg_v1.nope";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), -ENOENT);
}

static void test_host_detail(void **state)
{
	struct fx *f = *state;
	json_t *doc, *feat;
	char hid[65];

	host_id(1, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "kernel")),
			    "6.1.0-28-amd64");
	assert_string_equal(
		json_string_value(json_object_get(doc, "cgroup_mode")), "v1");
	assert_int_equal(json_array_size(json_object_get(doc, "features")), 1);
	feat = json_array_get(json_object_get(doc, "features"), 0);
	assert_string_equal(json_string_value(json_object_get(feat, "id")),
			    SOFT);
	assert_int_equal(GETI(feat, "uses"), 15);
	assert_int_equal(GETI(doc, "last_seen"), NOW);
	assert_true(json_is_object(json_object_get(doc, "health")));
	json_decref(doc);
	host_id(99, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), -ENOENT);
}

/* The host name of entry i of a health part's host list. */
static const char *part_host(json_t *part, size_t i)
{
	return json_string_value(json_object_get(
		json_array_get(json_object_get(part, "hosts"), i), "hostname"));
}

static void test_health(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *part;

	assert_int_equal(twl_read_health(f->s, NOW, 0, &flt, &doc), -EINVAL);
	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	part = json_object_get(doc, "silent");
	assert_int_equal(GETI(part, "count"), 1);
	assert_string_equal(part_host(part, 0), "db-5");
	part = json_object_get(doc, "records_lost");
	assert_int_equal(GETI(part, "count"), 1);
	assert_int_equal(GETI(json_array_get(json_object_get(part, "hosts"), 0),
			      "records_lost"),
			 4);
	assert_int_equal(GETI(json_object_get(doc, "key_rejected"), "count"),
			 1);
	part = json_object_get(doc, "probe_missing");
	assert_int_equal(GETI(part, "count"), 1);
	assert_string_equal(
		json_string_value(json_array_get(
			json_object_get(
				json_array_get(json_object_get(part, "hosts"),
					       0),
				"probe_missing"),
			0)),
		SOFT);
	json_decref(doc);
	/* Silent after 4 days: nobody. */
	assert_int_equal(twl_read_health(f->s, NOW, 4 * DAY, &flt, &doc), 0);
	assert_int_equal(GETI(json_object_get(doc, "silent"), "count"), 0);
	json_decref(doc);
}

/* A report of host @n whose agent matched with catalog version @v. */
static json_t *report_catalog(int n, const char *name, json_int_t v)
{
	json_t *r = report(n, name, "6.1.0-28-amd64", "v1", NULL);

	json_object_set_new(json_object_get(r, "host"), "catalog_version",
			    json_integer(v));
	return r;
}

/*
 * Catalog skew on the health page: agents older and newer than the
 * server's catalog are listed apart; one on the same version in neither.
 */
static void test_health_catalog(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_int_t v = twl_catalog_version();
	json_t *doc, *cat;
	size_t before;

	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	cat = json_object_get(doc, "catalog");
	assert_int_equal(GETI(cat, "version"), v);
	/* the fixture's five agents all send version 1 */
	before = (size_t)GETI(json_object_get(cat, "older"), "count");
	assert_int_equal(before, v > 1 ? 5 : 0);
	assert_int_equal(GETI(json_object_get(cat, "newer"), "count"), 0);
	json_decref(doc);

	ingest(f->s, report_catalog(20, "ahead", v + 1), NOW);
	ingest(f->s, report_catalog(21, "same", v), NOW);
	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	cat = json_object_get(doc, "catalog");
	assert_int_equal(GETI(json_object_get(cat, "older"), "count"), before);
	assert_int_equal(GETI(json_object_get(cat, "newer"), "count"), 1);
	assert_string_equal(part_host(json_object_get(cat, "newer"), 0),
			    "ahead");
	json_decref(doc);
}

/* A version 2 report of host @n with the operator's labels @labels. */
static json_t *report_labels(int n, const char *name, json_t *labels)
{
	json_t *r = report(n, name, "6.1.0-28-amd64", "v1", NULL);

	json_object_set_new(r, "v", json_integer(2));
	json_object_set_new(json_object_get(r, "host"), "labels", labels);
	return r;
}

/*
 * Owners: the hosts list filters by one operator label, and a host's
 * detail shows its labels as its last report carrying them set them.
 */
static void test_hosts_by_label(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *hosts;
	char hid[65];

	ingest(f->s,
	       report_labels(30, "pay-1",
			     json_pack("{s:s, s:s}", "team", "payments", "env",
				       "prod")),
	       NOW);
	ingest(f->s,
	       report_labels(31, "pay-2", json_pack("{s:s}", "team", "search")),
	       NOW);
	strcpy(flt.label_key, "team");
	flt.label_value = "payments";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	hosts = json_object_get(doc, "hosts");
	assert_int_equal(json_array_size(hosts), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(hosts, 0), "hostname")),
			    "pay-1");
	json_decref(doc);
	flt.label_value = "nobody";
	assert_int_equal(twl_read_hosts(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "hosts")), 0);
	json_decref(doc);

	host_id(30, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(doc, "labels"), "env")),
			    "prod");
	json_decref(doc);
	/* a host without labels: an empty object */
	host_id(1, hid);
	assert_int_equal(twl_read_host(f->s, hid, &doc), 0);
	assert_int_equal(json_object_size(json_object_get(doc, "labels")), 0);
	assert_true(json_is_object(json_object_get(doc, "labels")));
	json_decref(doc);
}

/* The last usage entry of report @r gets the value summary @min..@max. */
static void set_value(json_t *r, json_int_t min, json_int_t max)
{
	json_t *u = json_array_get(
		json_object_get(r, "usage"),
		json_array_size(json_object_get(r, "usage")) - 1);

	json_object_set_new(u, "value",
			    json_pack("{s:I, s:I, s:I, s:b, s:s, s:s}", "last",
				      max, "min", min, "max", max, "unlimited",
				      0, "unit", "bytes", "source", "stored"));
}

/*
 * Two teams beside the unlabelled fleet of setup(): payments' pay-1 (java
 * writes a soft limit of 1 GiB 7 times, runc reads it 11 times, a kernel
 * warning), search's srch-2 (nginx writes 4 GiB 4 times, reads 9).
 */
static void add_team_fleet(struct twl_store *s)
{
	json_t *r;

	r = report_labels(30, "pay-1", json_pack("{s:s}", "team", "payments"));
	json_object_set_new(json_object_get(r, "host"), "kernel",
			    json_string("6.1.0-40-pay"));
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "write", "java", 7);
	set_value(r, 1LL << 30, 1LL << 30);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "runc", 11);
	add_warning(r, SOFT, NOW - DAY);
	ingest(s, r, NOW);
	r = report_labels(31, "srch-2", json_pack("{s:s}", "team", "search"));
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "write", "nginx",
		     4);
	set_value(r, 4LL << 30, 4LL << 30);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "nginx", 9);
	ingest(s, r, NOW);
}

/*
 * An SRE's feature detail for the team's own hosts: with a label filter
 * every figure is of the labelled hosts alone; the daily timeline, kept
 * for the whole fleet only, is left out and "timeline_scope" says so.
 */
static void test_feature_by_label(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *p, *w;

	add_team_fleet(f->s);
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 5);
	assert_string_equal(GETS(doc, "timeline_scope") ?: "(none)", "fleet");
	assert_true(json_array_size(json_object_get(doc, "timeline")) > 0);
	json_decref(doc);

	strcpy(flt.label_key, "team");
	flt.label_value = "payments";
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 1);
	assert_int_equal(GETI(doc, "hosts_configuring"), 1);
	assert_int_equal(GETI(doc, "hosts_reading_only"), 0);
	assert_int_equal(GETI(doc, "first_seen"), NOW - DAY);
	assert_int_equal(GETI(doc, "last_seen"), NOW - 30);
	assert_int_equal(GETI(doc, "uses"), 7);
	assert_int_equal(GETI(doc, "reads"), 11);
	w = json_object_get(doc, "warnings");
	assert_int_equal(GETI(w, "count"), 1);
	assert_int_equal(GETI(w, "hosts"), 1);
	w = json_object_get(doc, "workloads");
	assert_int_equal(GETI(w, "using"), 1);
	assert_int_equal(GETI(w, "configuring"), 1);
	assert_int_equal(GETI(w, "reading_only"), 1);
	assert_int_equal(json_array_size(json_object_get(doc, "processes")), 2);
	p = find_by(json_object_get(doc, "processes"), "process", "java");
	assert_int_equal(GETI(p, "hosts"), 1);
	assert_int_equal(GETI(p, "uses"), 7);
	find_by(json_object_get(doc, "processes"), "process", "runc");
	assert_int_equal(json_array_size(json_object_get(doc, "top_cgroups")),
			 1);
	assert_int_equal(json_array_size(json_object_get(doc, "containers")),
			 1);
	assert_int_equal(json_array_size(json_object_get(doc, "kernels")), 1);
	p = find_by(json_object_get(doc, "kernels"), "kernel", "6.1.0-40-pay");
	assert_int_equal(GETI(p, "hosts"), 1);
	w = json_object_get(json_object_get(doc, "values"), "written");
	assert_int_equal(GETI(w, "hosts"), 1);
	assert_int_equal(GETI(w, "min"), 1LL << 30);
	assert_int_equal(GETI(w, "max"), 1LL << 30);
	assert_null(json_object_get(doc, "timeline"));
	assert_string_equal(GETS(doc, "timeline_scope") ?: "(none)", "none");
	json_decref(doc);

	/* a label nobody carries: nothing, not the fleet */
	flt.label_value = "nobody";
	assert_int_equal(twl_read_feature(f->s, SOFT, &flt, &doc), 0);
	assert_int_equal(GETI(doc, "hosts"), 0);
	assert_int_equal(GETI(doc, "uses"), 0);
	assert_int_equal(GETI(doc, "reads"), 0);
	assert_int_equal(GETI(json_object_get(doc, "warnings"), "count"), 0);
	assert_int_equal(GETI(json_object_get(doc, "workloads"), "using"), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "processes")), 0);
	assert_true(json_is_null(json_object_get(doc, "first_seen")));
	json_decref(doc);
}

/*
 * Owners: health and the unknown texts take the same label filter; the
 * counts and lists are of the labelled hosts alone.
 */
static void test_health_unknown_by_label(void **state)
{
	const char *t = "cgroup#: knob_l is deprecated";
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *r, *doc, *silent, *e;

	r = report_labels(32, "lab-1", json_pack("{s:s}", "team", "payments"));
	add_unknown(r, t, NOW - 500, 2);
	ingest(f->s, r, NOW);
	r = report_labels(33, "lab-2", json_pack("{s:s}", "team", "search"));
	add_unknown(r, t, NOW - 400, 3);
	ingest(f->s, r, NOW);
	/* a day later every host is silent; the filter leaves lab-1 */
	strcpy(flt.label_key, "team");
	flt.label_value = "payments";
	assert_int_equal(twl_read_health(f->s, NOW + 2 * DAY, DAY, &flt, &doc),
			 0);
	silent = json_object_get(doc, "silent");
	assert_int_equal(GETI(silent, "count"), 1);
	assert_string_equal(part_host(silent, 0), "lab-1");
	json_decref(doc);
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "texts")), 1);
	e = json_array_get(json_object_get(doc, "texts"), 0);
	assert_int_equal(GETI(e, "hosts"), 1);
	assert_int_equal(GETI(e, "count"), 2);
	json_decref(doc);
	flt.label_key[0] = '\0';
	assert_int_equal(twl_read_health(f->s, NOW + 2 * DAY, DAY, &flt, &doc),
			 0);
	assert_true(GETI(json_object_get(doc, "silent"), "count") > 2);
	json_decref(doc);
	assert_int_equal(twl_read_unknown(f->s, &flt, &doc), 0);
	e = json_array_get(json_object_get(doc, "texts"), 0);
	assert_int_equal(GETI(e, "hosts"), 2);
	assert_int_equal(GETI(e, "count"), 5);
	json_decref(doc);
}

/* A version 2 report whose current boot's start was covered or not. */
static json_t *report_boot(int n, const char *name, bool covered)
{
	json_t *r = report(n, name, "6.1.0-28-amd64", "v1",
			   json_pack("{s:[{s:s, s:b}]}", "boots", "boot_id",
				     "b0", "start_covered", covered));

	json_object_set_new(r, "v", json_integer(2));
	return r;
}

/*
 * Boot start coverage on the health page: a host whose current boot's
 * start no log source covered is listed; a covered one and a version 1
 * agent (which says nothing of it) are not.
 */
static void test_health_boot_uncovered(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *part;

	ingest(f->s, report_boot(22, "uncovered", false), NOW);
	ingest(f->s, report_boot(23, "covered", true), NOW);
	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	part = json_object_get(doc, "boot_uncovered");
	assert_int_equal(GETI(part, "count"), 1);
	assert_int_equal(json_array_size(json_object_get(part, "hosts")), 1);
	assert_string_equal(part_host(part, 0), "uncovered");
	json_decref(doc);
	/* covered on its next report: no longer listed */
	ingest(f->s, report_boot(22, "uncovered", true), NOW);
	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	assert_int_equal(GETI(json_object_get(doc, "boot_uncovered"), "count"),
			 0);
	json_decref(doc);
}

/*
 * Host time bounds inside an hour: the hosts' indexes narrow by hour
 * (migration 008), the row decides. Two hosts report a minute before and
 * after NOW - DAY, in the same hour: silent after a day, and reporting
 * within an export's one-day window, is exactly one of them. A third
 * reports in the hour before, silent too.
 */
static void test_host_hour_bounds(void **state)
{
	struct fx *f = *state;
	struct twl_read_filter flt = { 0 };
	json_t *doc, *part, *soft;

	ingest(f->s, report(8, "early", "6.1.0-28-amd64", "v1", NULL),
	       NOW - DAY - 60);
	ingest(f->s, report(9, "late", "6.1.0-28-amd64", "v1", NULL),
	       NOW - DAY + 60);
	ingest(f->s, report(10, "prev", "6.1.0-28-amd64", "v1", NULL),
	       NOW - DAY - 3600);
	assert_int_equal((NOW - DAY - 60) / 3600, (NOW - DAY + 60) / 3600);

	assert_int_equal(twl_read_health(f->s, NOW, DAY, &flt, &doc), 0);
	part = json_object_get(doc, "silent");
	assert_int_equal(GETI(part, "count"), 3);
	assert_int_equal(json_array_size(json_object_get(part, "hosts")), 3);
	/* oldest first: db-5 (3 days), prev, early */
	assert_string_equal(part_host(part, 1), "prev");
	assert_string_equal(part_host(part, 2), "early");
	json_decref(doc);

	assert_int_equal(twl_read_export_data(f->s, NOW, 1, NULL, NULL, &doc),
			 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	/* all but db-5 (3 days ago), prev and early; all v1 or hybrid */
	assert_int_equal(GETI(soft, "hosts_all"), 5);
	assert_int_equal(GETI(soft, "hosts_v1"), 5);
	json_decref(doc);
}

static void test_annotations(void **state)
{
	struct fx *f = *state;
	json_t *doc, *a;
	int64_t id1, id2;

	assert_int_equal(twl_store_annotation_add(f->s, SOFT, NULL,
						  "JVM heap sizing", "no",
						  "alice", NOW, &id1),
			 0);
	assert_int_equal(twl_store_annotation_add(f->s, OOM, "oomd",
						  "user-space OOM", NULL, "bob",
						  NOW + 1, &id2),
			 0);
	assert_int_equal(twl_store_annotation_add(f->s, OOM, NULL, "x", "maybe",
						  "bob", NOW, NULL),
			 -EINVAL);
	assert_true(id2 > id1);
	assert_int_equal(twl_read_annotations(f->s, NULL, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "annotations")),
			 2);
	json_decref(doc);
	assert_int_equal(twl_read_annotations(f->s, SOFT, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "annotations")),
			 1);
	a = json_array_get(json_object_get(doc, "annotations"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "author")),
			    "alice");
	assert_string_equal(json_string_value(json_object_get(a, "fits")),
			    "no");
	assert_true(json_is_null(json_object_get(a, "workload")));
	assert_int_equal(GETI(a, "created"), NOW);
	json_decref(doc);
	assert_int_equal(twl_store_annotation_delete(f->s, id2), 0);
	assert_int_equal(twl_store_annotation_delete(f->s, id2), -ENOENT);
	assert_int_equal(twl_read_annotations(f->s, OOM, &doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "annotations")),
			 0);
	json_decref(doc);
}

/* Annotations are capped: the one past the cap is refused, nothing grows. */
static void test_annotation_cap(void **state)
{
	struct fx *f = *state;
	int64_t id;
	int i;

	for (i = 0; i < TWL_STORE_MAX_ANNOTATIONS; i++)
		assert_int_equal(twl_store_annotation_add(f->s, SOFT, NULL, "n",
							  NULL, "alice", NOW,
							  NULL),
				 0);
	assert_int_equal(twl_store_annotation_add(f->s, SOFT, NULL, "one more",
						  NULL, "alice", NOW, &id),
			 -EDQUOT);
	assert_int_equal(twl_store_annotation_delete(f->s, 1), 0);
	assert_int_equal(twl_store_annotation_add(f->s, SOFT, NULL,
						  "fits again", NULL, "alice",
						  NOW, &id),
			 0);
	assert_int_equal(id, TWL_STORE_MAX_ANNOTATIONS + 1);
}

/*
 * A read is monitoring, not a use: runc reading a soft limit on every
 * host must not make a workload row of the export, whose rows are the
 * processes that configure or listen (and their uses, writes only).
 */
static void test_export_workloads_no_reads(void **state)
{
	struct fx *f = *state;
	json_t *r, *doc, *wl, *row;
	size_t i;

	r = report(40, "reader", "6.1.0-28-amd64", "v1", NULL);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "runc",
		     7200);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "write", "java", 1);
	ingest(f->s, r, NOW);
	assert_int_equal(twl_read_export_data(f->s, NOW, 30, SOFT, NULL, &doc),
			 0);
	wl = json_object_get(json_array_get(json_object_get(doc, "features"),
					    0),
			     "workloads");
	assert_true(json_array_size(wl) > 0);
	json_array_foreach(wl, i, row)
	{
		if (!strcmp(json_string_value(json_object_get(row, "process")),
			    "runc"))
			fail_msg("a reader is listed as a workload using it");
	}
	json_decref(doc);
}

/*
 * The export's evidence apart from uses: hosts per kind, the processes
 * that only read (never one that writes on that host), kernel warnings
 * by the kernel that printed them, upstream or the backport.
 *   40 reader  6.1.0-28: runc reads soft_limit, java writes and reads it
 *   41 mon     6.1.0-28: runc reads soft_limit and kmem.tcp.usage only
 *   42 bp      6.1.0-28: a soft_limit warning (the backport's)
 * and web-4 (6.12.9) of the fixture: a soft_limit warning upstream.
 */
static void test_export_evidence(void **state)
{
	struct twl_export_opts names = { .show_hosts = true };
	struct fx *f = *state;
	json_t *r, *doc, *soft, *tcpu, *rd, *kw, *k;
	size_t i;

	r = report(40, "reader", "6.1.0-28-amd64", "v1", NULL);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "runc", 70);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "write", "java", 1);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "java", 9);
	ingest(f->s, r, NOW);
	r = report(41, "mon", "6.1.0-28-amd64", "v1", NULL);
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", "runc", 30);
	add_usage_op(r, "memcg_v1.kmem_tcp_usage",
		     "memory.kmem.tcp.usage_in_bytes", "read", "runc", 5);
	ingest(f->s, r, NOW);
	r = report(42, "bp", "6.1.0-28-amd64", "v1", NULL);
	add_warning(r, SOFT, NOW - 60);
	ingest(f->s, r, NOW);

	assert_int_equal(twl_read_export_data(f->s, NOW, 30, NULL, NULL, &doc),
			 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	/* web-1, web-2, reader write; web-4 and bp warned; mon only reads */
	assert_int_equal(GETI(soft, "hosts_using"), 5);
	assert_int_equal(GETI(soft, "hosts_configuring"), 3);
	assert_int_equal(GETI(soft, "hosts_listening"), 0);
	assert_int_equal(GETI(soft, "hosts_reading_only"), 1);
	assert_true(json_is_true(json_object_get(soft, "bpf_measured")));
	rd = json_object_get(soft, "readers");
	assert_int_equal(json_array_size(rd), 1); /* java writes on reader */
	assert_string_equal(GETS(json_array_get(rd, 0), "process"), "runc");
	assert_int_equal(GETI(json_array_get(rd, 0), "hosts"), 2);
	assert_int_equal(GETI(json_array_get(rd, 0), "reads"), 100);
	kw = json_object_get(soft, "kernel_warnings");
	assert_int_equal(GETI(kw, "hosts"), 2);
	assert_int_equal(GETI(kw, "warnings"), 2);
	k = find_by(json_object_get(kw, "kernels"), "kernel", "6.12.9");
	assert_string_equal(GETS(k, "origin"), "upstream");
	k = find_by(json_object_get(kw, "kernels"), "kernel", "6.1.0-28-amd64");
	assert_string_equal(GETS(k, "origin"), "backport");
	assert_int_equal(GETI(k, "hosts"), 1);

	/* read only: not in use, its reader listed */
	tcpu = find_by(json_object_get(doc, "features"), "id",
		       "memcg_v1.kmem_tcp_usage");
	assert_int_equal(GETI(tcpu, "hosts_using"), 0);
	assert_int_equal(GETI(tcpu, "uses"), 0);
	assert_int_equal(GETI(tcpu, "hosts_reading_only"), 1);
	assert_string_equal(
		GETS(json_array_get(json_object_get(tcpu, "readers"), 0),
		     "process"),
		"runc");
	/* BPF cannot see a freezer or a boot parameter */
	assert_true(json_is_false(
		json_object_get(find_by(json_object_get(doc, "features"), "id",
					"cgroup_v1.freezer"),
				"bpf_measured")));
	assert_true(json_is_false(
		json_object_get(find_by(json_object_get(doc, "features"), "id",
					"memcg_v1.swapaccount"),
				"bpf_measured")));
	json_decref(doc);

	/* the hosts listed are those using it: no read-only host */
	assert_int_equal(
		twl_read_export_data(f->s, NOW, 30, SOFT, &names, &doc), 0);
	soft = json_array_get(json_object_get(doc, "features"), 0);
	assert_int_equal(json_array_size(json_object_get(soft, "hosts")), 5);
	for (i = 0; i < 5; i++)
		assert_string_not_equal(
			json_string_value(json_array_get(
				json_object_get(soft, "hosts"), i)),
			"mon");
	json_decref(doc);
}

/* report @n as version 2 with the current boot read from @seq (NULL: no log) */
static json_t *report_log(int n, const char *name, const char *seq, bool census)
{
	json_t *boot = json_pack("{s:s, s:b}", "boot_id", "b0", "start_covered",
				 false);
	json_t *r = report(n, name, "6.1.0-28-amd64", "v1",
			   json_pack("{s:[o], s:i}", "boots", boot,
				     "map_overflows", n == 52 ? 3 : 0));

	if (seq)
		json_object_set_new(boot, seq, json_integer(5));
	json_object_set_new(r, "v", json_integer(2));
	if (census)
		json_object_set_new(
			r, "census",
			json_pack("{s:I, s:[], s:[], s:i, s:b}", "time",
				  (json_int_t)NOW, "hierarchies", "knobs",
				  "cgroups_walked", 1, "truncated", false));
	return r;
}

/*
 * Coverage in the export: a host whose agent read its boot from neither
 * kmsg nor the journal has no kernel log; with a census and no BPF it has
 * the census only. A full BPF map is counted.
 */
static void test_export_coverage(void **state)
{
	struct fx *f = *state;
	json_t *doc, *cov;

	ingest(f->s, report_log(50, "census-only", NULL, true), NOW);
	ingest(f->s, report_log(51, "blind", NULL, false), NOW);
	ingest(f->s, report_log(52, "kmsg", "first_kmsg_seq", false), NOW);
	ingest(f->s, report_log(53, "journal", "first_journal_us", true), NOW);
	assert_int_equal(twl_read_export_data(f->s, NOW, 30, SOFT, NULL, &doc),
			 0);
	cov = json_object_get(json_object_get(doc, "fleet"), "coverage");
	assert_int_equal(GETI(cov, "no_log_source"), 2);
	assert_int_equal(GETI(cov, "unmeasured"), 2);
	assert_int_equal(GETI(cov, "census_only"), 1);
	assert_int_equal(GETI(cov, "map_overflow"), 1);
	json_decref(doc);
}

static void test_export_data(void **state)
{
	struct twl_export_opts full = { .show_hosts = true,
					.full_cgroups = true };
	struct fx *f = *state;
	json_t *doc, *fl, *soft, *wl, *red;
	char *text;

	assert_int_equal(twl_read_export_data(f->s, NOW, 30, "x", NULL, &doc),
			 -ENOENT);
	assert_int_equal(twl_read_export_data(f->s, NOW, 0, NULL, NULL, &doc),
			 -EINVAL);
	assert_int_equal(twl_store_annotation_add(f->s, SOFT, "java",
						  "heap sizing", "partial",
						  "alice", NOW, NULL),
			 0);
	assert_int_equal(twl_read_export_data(f->s, NOW, 30, SOFT, NULL, &doc),
			 0);
	fl = json_object_get(doc, "fleet");
	assert_int_equal(GETI(fl, "hosts"), 5);
	assert_int_equal(GETI(fl, "hosts_v1"), 3);
	assert_int_equal(json_array_size(json_object_get(doc, "features")), 1);
	soft = json_array_get(json_object_get(doc, "features"), 0);
	assert_int_equal(GETI(soft, "hosts_using"), 3);
	assert_int_equal(GETI(soft, "hosts_v1"), 4);
	assert_int_equal(GETI(soft, "hosts_all"), 5);
	assert_int_equal(GETI(soft, "uses"), 20);
	assert_null(json_object_get(soft, "hosts"));
	wl = json_object_get(soft, "workloads");
	assert_int_equal(json_array_size(wl), 2);
	/*
	 * Grouped as docs/workloads.md defines a workload: process,
	 * kind of the writer's place, kind of the target; no path or name
	 * leaves the store. "/docker/abc" is no docker id (64 hex digits).
	 */
	assert_string_equal(GETS(json_array_get(wl, 0), "place"), "other");
	assert_string_equal(GETS(json_array_get(wl, 0), "target"), "other");
	assert_string_equal(GETS(json_array_get(wl, 0), "place_name"), "");
	assert_int_equal(GETI(json_array_get(wl, 0), "uses"), 15);
	assert_string_equal(GETS(json_array_get(wl, 1), "place"),
			    "systemd_unit");
	assert_string_equal(GETS(json_array_get(wl, 1), "place_name"), "");
	assert_int_equal(json_array_size(json_object_get(soft, "annotations")),
			 1);

	red = twl_export_redact(doc, NULL);
	assert_int_equal(twl_export_render(red, TWL_EXPORT_TEXT, &text, NULL),
			 0);
	assert_non_null(strstr(text, "3 of 4 cgroup v1/hybrid hosts (75.0%)"));
	assert_non_null(strstr(text, "Share of all hosts: 3 of 5 (60.0%)"));
	assert_null(strstr(text, "web-1"));
	assert_null(strstr(text, "/docker/abc"));
	assert_non_null(strstr(text, "heap sizing"));
	assert_non_null(strstr(text, "java in another cgroup, on other"
				     " cgroups: 1 host, 15 uses"));
	assert_non_null(strstr(text, "java in a systemd unit, on other"
				     " cgroups: 1 host, 5 uses"));
	free(text);
	json_decref(red);
	json_decref(doc);

	/* Showing more: paths and host names. */
	assert_int_equal(twl_read_export_data(f->s, NOW, 30, SOFT, &full, &doc),
			 0);
	soft = json_array_get(json_object_get(doc, "features"), 0);
	assert_int_equal(json_array_size(json_object_get(soft, "hosts")), 3);
	find_by(json_object_get(soft, "workloads"), "place_name",
		"app.service");
	json_decref(doc);

	/* A one-day window: only today's users count. */
	assert_int_equal(twl_read_export_data(f->s, NOW, 1, NULL, NULL, &doc),
			 0);
	soft = find_by(json_object_get(doc, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_using"), 2);
	assert_int_equal(GETI(soft, "hosts_all"), 4);
	json_decref(doc);
}

static void test_glob_to_like(void **state)
{
	char out[16];

	assert_int_equal(twl_glob_to_like("web-*", true, out, sizeof(out)), 0);
	assert_string_equal(out, "web-%");
	assert_int_equal(twl_glob_to_like("a_b%c\\", true, out, sizeof(out)),
			 0);
	assert_string_equal(out, "a\\_b\\%c\\\\%");
	assert_int_equal(twl_glob_to_like("a?b", false, out, sizeof(out)), 0);
	assert_string_equal(out, "a_b");
	assert_int_equal(twl_glob_to_like("exact", false, out, sizeof(out)), 0);
	assert_string_equal(out, "exact");
	assert_int_equal(twl_glob_to_like("0123456789abcdef", true, out,
					  sizeof(out)),
			 -ENAMETOOLONG);
}

/* ---- both backends, one answer ------------------------------------- */

/*
 * What the five reads show, in one fleet: the fixture's, the kinds of
 * use, unknown texts (whose byte order differs from a locale's), labels,
 * catalog skew, an uncovered boot, and the v2 example's values, census
 * knobs and keys.
 */
static void fill_all(struct twl_store *s)
{
	const char *t1 = "cgroup#: knob_a is deprecated",
		   *t2 = "Zeta#: knob_b is deprecated";
	json_int_t v = twl_catalog_version();
	char hid[65];
	json_t *r;

	seq_counter = 0; /* the same batch ids and seqs in each store */
	fill(s);
	add_kinds_fleet(s);
	r = report_labels(30, "Pay-1",
			  json_pack("{s:s, s:s}", "team", "payments", "env",
				    "prod"));
	add_unknown(r, t1, NOW - 500, 2);
	add_unknown(r, "alpha: x is deprecated", NOW - 450, 1);
	ingest(s, r, NOW - 400);
	r = report_labels(31, "pay_2", json_pack("{s:s}", "team", "search"));
	add_unknown(r, t1, NOW - 300, 1);
	add_unknown(r, t2, NOW - 200, 5);
	ingest(s, r, NOW - 100);
	ingest(s, report_catalog(20, "ahead", v + 1), NOW);
	ingest(s, report_boot(22, "uncovered", false), NOW);
	host_id(40, hid);
	r = load_example("full-v2.json");
	json_object_set_new(json_object_get(r, "host"), "host_id",
			    json_string(hid));
	ingest(s, r, NOW + DAY);
	assert_int_equal(twl_store_host_key_add(s, hid, "k1", 0, 4, NOW), 0);
}

/* Each answer's JSON text (or its error), appended to @out. */
struct answers {
	char *a[64];
	size_t n;
};

static void keep(struct answers *o, int rc, json_t **docp)
{
	json_t *doc = *docp;

	char err[32];

	assert_true(o->n < sizeof(o->a) / sizeof(o->a[0]));
	snprintf(err, sizeof(err), "error %d", rc);
	o->a[o->n++] = rc ? strdup(err) : json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
}

/* The host lists of several filters, a page at a time. */
static void ask_hosts(struct twl_store *s, struct answers *o)
{
	struct twl_read_filter flt = { .limit = 4 };
	const char *cur;
	char buf[80];
	json_t *doc;
	int rc;

	do {
		rc = twl_read_hosts(s, &flt, &doc);
		cur = json_string_value(json_object_get(doc, "next_cursor"));
		if (cur)
			snprintf(buf, sizeof(buf), "%s", cur);
		flt.cursor = cur ? buf : NULL;
		keep(o, rc, &doc);
	} while (flt.cursor);
	memset(&flt, 0, sizeof(flt));
	flt.host_pattern = "PAY*"; /* LIKE ignores ASCII case */
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
	flt.host_pattern = "db_?";
	flt.kernel = "6.1*";
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
	memset(&flt, 0, sizeof(flt));
	flt.feature = SOFT;
	flt.since = NOW - DAY;
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
	flt.reading_only = true;
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
	memset(&flt, 0, sizeof(flt));
	flt.cgroup_mode = "hybrid";
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
	strcpy(flt.label_key, "team");
	flt.label_value = "payments";
	flt.cgroup_mode = NULL;
	keep(o, twl_read_hosts(s, &flt, &doc), &doc);
}

/* The five reads of @s, in order. */
static void ask_all(struct twl_store *s, struct answers *o)
{
	struct twl_read_filter flt = { 0 };
	const int hosts[] = { 1, 3, 4, 5, 8, 9, 10, 22, 30, 40, 99 };
	char hid[65];
	json_t *doc;

	keep(o, twl_read_summary(s, NOW, &doc), &doc);
	keep(o, twl_read_summary(s, NOW + 40 * DAY, &doc), &doc);
	ask_hosts(s, o);
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		host_id(hosts[i], hid);
		keep(o, twl_read_host(s, hid, &doc), &doc);
	}
	keep(o, twl_read_health(s, NOW, DAY, &flt, &doc), &doc);
	keep(o, twl_read_unknown(s, &flt, &doc), &doc);
	flt.limit = 1;
	flt.cursor = "Zeta#: knob_b is deprecated";
	keep(o, twl_read_unknown(s, &flt, &doc), &doc);
	memset(&flt, 0, sizeof(flt));
	strcpy(flt.label_key, "team");
	flt.label_value = "payments";
	keep(o, twl_read_health(s, NOW + 2 * DAY, DAY, &flt, &doc), &doc);
	keep(o, twl_read_unknown(s, &flt, &doc), &doc);
}

/*
 * A new empty PostgreSQL store whose text collation is a locale's
 * (ICU en-US), which the answers must not follow.
 */
static struct fx *fx_open_icu(void)
{
	struct fx *pg = calloc(1, sizeof(*pg));

	assert_non_null(pg);
	snprintf(pg->dir, sizeof(pg->dir), "/tmp/twl-read-XXXXXX");
	assert_non_null(mkdtemp(pg->dir));
	pg_fixture_db_icu(pg->uri, sizeof(pg->uri), "en-US");
	assert_int_equal(twl_store_open(pg->uri, &pg->s), 0);
	return pg;
}

/*
 * The same reports into a SQLite and a PostgreSQL store: every answer of
 * the five reads is the same JSON text, member order and all.
 */
static void test_same_json(void **state)
{
	void *sq_state = &pg_fixture_backends[SQLITE];
	struct fx *sq = fx_open(&sq_state), *pg = fx_open_icu();
	struct answers a = { 0 }, b = { 0 };
	size_t errors = 0;

	(void)state;
	fill_all(sq->s);
	fill_all(pg->s);
	ask_all(sq->s, &a);
	ask_all(pg->s, &b);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		pg_fixture_same(i, a.a[i], b.a[i]);
		/* host 99 is no host: the one error */
		if (!strncmp(a.a[i], "error", 5)) {
			assert_string_equal(a.a[i], "error -2");
			errors++;
		}
		free(a.a[i]);
		free(b.a[i]);
	}
	assert_int_equal(errors, 1);
	assert_true(a.n > 20);
	teardown((void **)&sq);
	teardown((void **)&pg);
}

/*
 * Values beside the fleets: boolean oom_kill_disable written 1 by dockerd
 * and 0 then 1 by runc on pay-1's team mate pay-3, an OOM listener, and
 * census knobs (numbers, and one that is no number).
 */
static void add_values_fleet(struct twl_store *s)
{
	json_t *r, *k;

	r = report_labels(32, "pay-3", json_pack("{s:s}", "team", "payments"));
	add_usage_op(r, OOM, "memory.oom_control", "write", "dockerd", 3);
	set_value(r, 1, 1);
	add_usage_op(r, OOM, "memory.oom_control", "write", "runc", 2);
	set_value(r, 0, 1);
	add_usage_op(r, OOM, "memory.oom_control", "register_event", "oomd", 1);
	k = json_array();
	json_array_append_new(k,
			      json_pack("{s:s, s:s, s:s, s:s}", "feature", SOFT,
					"file", "memory.soft_limit_in_bytes",
					"cgroup", "/a", "value", "1073741824"));
	json_array_append_new(k, json_pack("{s:s, s:s, s:s, s:s}", "feature",
					   OOM, "file", "memory.oom_control",
					   "cgroup", "/b", "value", "1"));
	json_array_append_new(k, json_pack("{s:s, s:s, s:s, s:s}", "feature",
					   OOM, "file", "memory.oom_control",
					   "cgroup", "/c", "value", "x1"));
	json_object_set_new(r, "census",
			    json_pack("{s:I, s:[], s:o, s:i, s:b}", "time",
				      (json_int_t)NOW - 30, "hierarchies",
				      "knobs", k, "cgroups_walked", 3,
				      "truncated", 0));
	ingest(s, r, NOW);
}

/* Every fleet of the feature tests into a new store of backend @b. */
static struct fx *filled(enum backend b)
{
	void *st = &pg_fixture_backends[b];
	struct fx *f;

	seq_counter = 0;
	f = fx_open(&st);
	fill(f->s);
	add_kinds_fleet(f->s);
	add_team_fleet(f->s);
	add_values_fleet(f->s);
	return f;
}

/* Feature @id's detail over @flt on @s as JSON text (free() it). */
static char *detail_text(struct twl_store *s, const char *id,
			 const struct twl_read_filter *flt)
{
	json_t *doc;
	char *t;

	assert_int_equal(twl_read_feature(s, id, flt, &doc), 0);
	t = json_dumps(doc, 0);
	assert_non_null(t);
	json_decref(doc);
	return t;
}

/*
 * The same reports into SQLite and PostgreSQL: every catalog feature's
 * detail is the same JSON text on both, for the fleet and one label,
 * over all data and a range.
 */
static void test_same_feature_json(void **state)
{
	struct fx *sq = filled(SQLITE), *pg = filled(POSTGRESQL);
	struct twl_read_filter flt[4] = { { 0 } };
	char *a, *b;

	(void)state;
	for (size_t i = 2; i < 4; i++) {
		strcpy(flt[i].label_key, "team");
		flt[i].label_value = "payments";
	}
	flt[1].since = flt[3].since = NOW - 3 * DAY;
	flt[1].until = flt[3].until = NOW - 15;
	for (size_t i = 0; i < twl_catalog_count(); i++) {
		for (size_t j = 0; j < 4; j++) {
			const char *id = twl_catalog_at(i)->id;

			a = detail_text(sq->s, id, &flt[j]);
			b = detail_text(pg->s, id, &flt[j]);
			if (strcmp(a, b))
				print_error("%s (filter %zu):\n%s\n%s\n", id, j,
					    a, b);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	}
	teardown((void **)&sq);
	teardown((void **)&pg);
}

/* Fail unless the alert detector's page @p of @s is the JSON text @want. */
static void alert_page_is(struct twl_store *s, const struct twl_alert_page *p,
			  const char *want)
{
	json_t *doc;
	char *t;

	assert_int_equal(twl_read_alert_uses(s, p, &doc), 0);
	t = json_dumps(doc, JSON_COMPACT);
	assert_string_equal(t, want);
	free(t);
	json_decref(doc);
}

/* A page of two hosts (id, last seen), then the uses' lists. */
#define PAGE_OF_TWO                                           \
	"{\"page\":[{\"host_id\":\"%s\",\"last_seen\":%lld}," \
	"{\"host_id\":\"%s\",\"last_seen\":%lld}],"

/*
 * The alert detector's pages of setup()'s fleet: hosts by last report,
 * then host id; their features used (never reads alone) and processes.
 */
static void test_alert_uses(void **state)
{
	struct fx *f = *state;
	struct twl_alert_page pg = { NOW - 5 * DAY, 0, "", 2 };
	char h1[65], h2[65], h3[65], h5[65];
	char want[1024];
	json_t *doc;
	int64_t n = -1;

	host_id(1, h1);
	host_id(2, h2);
	host_id(3, h3);
	host_id(5, h5);
	snprintf(want, sizeof(want),
		 PAGE_OF_TWO
		 "\"hosts\":[{\"feature\":\"%s\",\"host_id\":\"%s\","
		 "\"last\":%lld}],\"comms\":[{\"feature\":\"%s\","
		 "\"comm\":\"java\",\"last\":%lld}]}",
		 h5, NOW - 3 * DAY, h1, NOW, SOFT, h1, NOW - 10, SOFT,
		 NOW - 10);
	alert_page_is(f->s, &pg, want);
	pg.after_seen = NOW;
	pg.after_host = h1;
	snprintf(want, sizeof(want),
		 PAGE_OF_TWO
		 "\"hosts\":[{\"feature\":\"%s\",\"host_id\":\"%s\","
		 "\"last\":%lld},{\"feature\":\"%s\",\"host_id\":\"%s\","
		 "\"last\":%lld}],\"comms\":[{\"feature\":\"%s\","
		 "\"comm\":\"oomd\",\"last\":%lld},{\"feature\":\"%s\","
		 "\"comm\":\"java\",\"last\":%lld}]}",
		 h2, NOW, h3, NOW, OOM, h3, NOW - 10 * DAY, SOFT, h2, NOW - 20,
		 OOM, NOW - 10 * DAY, SOFT, NOW - 20);
	alert_page_is(f->s, &pg, want);
	pg.max = 0;
	assert_int_equal(twl_read_alert_uses(f->s, &pg, &doc), -EINVAL);
	assert_null(doc);

	/* a catalog installed while running: nothing new to match here */
	assert_int_equal(twl_store_catalog_reload(f->s, &n), 0);
	assert_int_equal(n, 0);
}

/* ---- the export, the same on both backends ------------------------- */

/* A version 2 use by @comm of a soft limit, written from @wcg into @cg. */
static void add_use(json_t *r, const char *comm, const char *wcg,
		    const char *container, const char *cg, int64_t count,
		    const char *image, const char *target)
{
	json_t *u;

	add_usage(r, SOFT, comm, wcg, container, cg, count, NOW - 500,
		  NOW - 60);
	u = json_array_get(json_object_get(r, "usage"),
			   json_array_size(json_object_get(r, "usage")) - 1);
	json_object_set_new(u, "file",
			    json_string("memory.soft_limit_in_bytes"));
	json_object_set_new(u, "use", json_string("configures"));
	if (image)
		json_object_set_new(u, "image", json_string(image));
	if (target)
		json_object_set_new(u, "target_kind", json_string(target));
}

/* A read-only use by @comm of a soft limit, @n reads. */
static void add_read(json_t *r, const char *comm, int64_t n)
{
	add_usage_op(r, SOFT, "memory.soft_limit_in_bytes", "read", comm, n);
	json_object_set_new(
		json_array_get(json_object_get(r, "usage"),
			       json_array_size(json_object_get(r, "usage")) -
				       1),
		"use", json_string("reads"));
}

/*
 * Workloads of every kind of place, named and hashed, with images, on
 * hosts labelled "Zeta" and "alpha", and ties everywhere a list is
 * ordered: between names that differ in case ("Java", "java"; "Runc",
 * "runc"; hostnames "Zed", "abe"; label values), whose byte order is
 * not a locale's.
 *   70 Zed  team=Zeta:  Java in a pod (image app:1), java in a systemd
 *                       unit, _tool hashed in docker; Mon reads
 *   71 abe  team=alpha: Java in another pod, java in another unit;
 *                       mon reads; a warning
 *   72 mid  no team:    Java in a docker container (image app:2) on a
 *                       kubernetes target; a warning on another kernel
 */
static void add_export_fleet(struct twl_store *s)
{
	char pod[3][200], id[65];
	json_t *r;

	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "%064x", 0xc0de + i);
		if (i < 2)
			snprintf(pod[i], sizeof(pod[i]),
				 "/kubepods/burstable/pod%d-aa/%s", i, id);
		else
			snprintf(pod[i], sizeof(pod[i]), "/docker/%s", id);
	}
	r = report_labels(70, "Zed", json_pack("{s:s}", "team", "Zeta"));
	add_use(r, "Java", pod[0], "cri-containerd:x", pod[0], 5,
		"registry/app:1", NULL);
	add_use(r, "java", "/system.slice/app.service", "", "/app", 5, NULL,
		NULL);
	add_use(r, "_tool", "h:5eed", "docker:h:feed", "/t", 2, NULL, "other");
	add_read(r, "Mon", 4);
	ingest(s, r, NOW);
	r = report_labels(71, "abe", json_pack("{s:s}", "team", "alpha"));
	add_use(r, "Java", pod[1], "cri-containerd:y", pod[1], 5, NULL, NULL);
	add_use(r, "java", "/system.slice/web.service", "", "/web", 5, NULL,
		NULL);
	add_read(r, "mon", 4);
	add_warning(r, SOFT, NOW - 90);
	ingest(s, r, NOW);
	r = report(72, "mid", "6.1.0-Z", "v1", NULL);
	json_object_set_new(r, "v", json_integer(2));
	add_use(r, "Java", pod[2], "docker:c0", pod[2], 12, "registry/app:2",
		"kubernetes");
	add_warning(r, SOFT, NOW - 80);
	ingest(s, r, NOW);
}

/*
 * A store of backend @b (PostgreSQL in a locale's collation) with
 * fill_all()'s fleet and the export's.
 */
static struct fx *export_store(enum backend b)
{
	void *st = &pg_fixture_backends[SQLITE];
	struct fx *f = b == SQLITE ? fx_open(&st) : fx_open_icu();

	fill_all(f->s);
	add_export_fleet(f->s);
	return f;
}

/*
 * The export of @s under @o (window @days, one @feature or all) as JSON
 * text, then its text and CSV renderings, appended to @out.
 */
static void export_texts(struct twl_store *s, unsigned days,
			 const char *feature, const struct twl_export_opts *o,
			 struct answers *out)
{
	static const enum twl_export_format fmt[] = { TWL_EXPORT_TEXT,
						      TWL_EXPORT_CSV };
	json_t *doc = NULL, *red;
	char *text;
	int rc = twl_read_export_data(s, NOW, days, feature, o, &doc);

	assert_int_equal(rc, 0);
	red = twl_export_redact(doc, o);
	assert_non_null(red);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(twl_export_render(red, fmt[i], &text, NULL),
				 0);
		assert_true(out->n < sizeof(out->a) / sizeof(out->a[0]));
		out->a[out->n++] = text;
	}
	json_decref(red);
	keep(out, rc, &doc);
}

/* Every export test_same_export compares, in order. */
static void ask_exports(struct twl_store *s, struct answers *out)
{
	struct twl_export_opts full = { .show_hosts = true,
					.full_cgroups = true,
					.show_images = true,
					.show_labels = true,
					.group_label = "team" },
			       one = full;

	export_texts(s, 30, NULL, NULL, out);
	export_texts(s, 30, NULL, &full, out);
	export_texts(s, 1, SOFT, &full, out);
	one.label_key = "team";
	one.label_value = "Zeta";
	export_texts(s, 30, SOFT, &one, out);
	one.label_value = "nobody";
	export_texts(s, 30, NULL, &one, out);
}

/* The place of process @comm among the export's first feature's readers. */
static size_t reader_at(json_t *doc, const char *comm)
{
	json_t *rd = json_object_get(
		json_array_get(json_object_get(doc, "features"), 0), "readers");
	size_t i;
	json_t *x;

	json_array_foreach(rd, i, x)
	{
		if (!strcmp(GETS(x, "process"), comm))
			return i;
	}
	fail_msg("no reader %s", comm);
	return 0;
}

/*
 * The same reports into SQLite and PostgreSQL: the export's data is the
 * same JSON text on both, member order and every list's order included,
 * and so its text and CSV.
 */
static void test_same_export(void **state)
{
	struct fx *sq = export_store(SQLITE), *pg = export_store(POSTGRESQL);
	struct answers a = { 0 }, b = { 0 };
	json_t *doc;

	(void)state;
	ask_exports(sq->s, &a);
	ask_exports(pg->s, &b);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		if (strcmp(a.a[i], b.a[i]))
			print_error("export %zu:\nsqlite:     %s\n"
				    "postgresql: %s\n",
				    i, a.a[i], b.a[i]);
		assert_string_equal(a.a[i], b.a[i]);
		free(a.a[i]);
		free(b.a[i]);
	}
	/* the ties were there to break, in byte order, not the locale's */
	assert_int_equal(twl_read_export_data(pg->s, NOW, 30, SOFT, NULL, &doc),
			 0);
	assert_true(reader_at(doc, "Mon") + 1 == reader_at(doc, "mon"));
	json_decref(doc);
	teardown((void **)&sq);
	teardown((void **)&pg);
}

/* @t with the fleet, once per backend (pg_fixture.h's BOTH()). */
#define BOTH_FX(t)                                                          \
	{ #t "/sqlite", t, setup, teardown, &pg_fixture_backends[SQLITE] }, \
	{                                                                   \
#t "/postgresql", t, setup, teardown,                       \
			&pg_fixture_backends[POSTGRESQL]                    \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_to_like),
		cmocka_unit_test(test_same_json),
		BOTH_FX(test_summary),
		BOTH_FX(test_summary_windows),
		cmocka_unit_test_setup_teardown(test_host_hour_bounds, setup,
						teardown),
		BOTH_FX(test_summary_after_prune),
		BOTH_FX(test_feature),
		BOTH_FX(test_use_kinds_summary),
		BOTH_FX(test_use_kinds_detail),
		BOTH_FX(test_use_kinds_hosts),
		BOTH_FX(test_unknown_fleet),
		BOTH_FX(test_hosts_filters),
		BOTH_FX(test_host_detail),
		BOTH_FX(test_health),
		BOTH_FX(test_health_catalog),
		BOTH_FX(test_health_boot_uncovered),
		BOTH_FX(test_health_unknown_by_label),
		BOTH_FX(test_hosts_by_label),
		BOTH_FX(test_feature_by_label),
		cmocka_unit_test(test_same_feature_json),
		BOTH_FX(test_alert_uses),
		BOTH_FX(test_export_workloads_no_reads),
		cmocka_unit_test_setup_teardown(test_annotations, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_annotation_cap, setup,
						teardown),
		BOTH_FX(test_export_evidence),
		BOTH_FX(test_export_coverage),
		BOTH_FX(test_export_data),
		cmocka_unit_test(test_same_export),
	};

	twl_log_init("test_store_read", LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
