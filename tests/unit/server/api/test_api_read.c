// SPDX-License-Identifier: GPL-2.0
/*
 * Read API, annotations and linux-mm export handlers against an
 * in-process server on 127.0.0.1 with real TLS (tests/unit/server
 * harness). Data arrives through the real ingest API (enrol + POST
 * /api/v1/reports) with known figures; answers are checked against them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "api/export.h"
#include "harness.h"

#define HOST_A \
	"aaaa000000000000000000000000000000000000000000000000000000000001"
#define HOST_B \
	"bbbb000000000000000000000000000000000000000000000000000000000002"
#define HOST_C \
	"cccc000000000000000000000000000000000000000000000000000000000003"
#define SOFT "memcg_v1.soft_limit"
#define HOSTILE "<b>x</b>&\"'"

struct afx {
	struct fixture f;
	char key_a[80];
};

static int batch_no;

static json_t *report(const char *host_id, const char *hostname,
		      const char *mode)
{
	char bid[33];

	snprintf(bid, sizeof(bid), "%032x", ++batch_no);
	return json_pack(
		"{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i},"
		" s:[], s:[], s:[], s:{s:i}}",
		"v", 1, "batch_id", bid, "seq", batch_no, "sent_time",
		(json_int_t)time(NULL), "host", "host_id", host_id, "hostname",
		hostname, "boot_id", "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
		"kernel", "6.1.0-28-amd64", "cgroup_mode", mode,
		"agent_version", "0.1.0", "catalog_version", 1, "warnings",
		"unknown", "usage", "health", "records_lost", 0);
}

static void add_usage(json_t *r, const char *comm, const char *wcg,
		      const char *ct, int count)
{
	json_int_t now = (json_int_t)time(NULL);

	json_array_append_new(
		json_object_get(r, "usage"),
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s,"
			  " s:i, s:i, s:i, s:i, s:I, s:I}",
			  "boot_id", "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
			  "feature", SOFT, "file", "memory.soft_limit_in_bytes",
			  "op", "write", "cgroup", wcg, "comm", comm, "uid", 0,
			  "writer_cgroup", wcg, "container", ct, "last_pid", 1,
			  "count", count, "failed", 0, "condition_met", count,
			  "first_seen", now - 120, "last_seen", now - 60));
}

static void post(struct fixture *f, const char *key, json_t *r)
{
	struct http_result res;
	char *body = dump(r);

	http(f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &res);
	if (res.status != 200)
		fail_msg("report rejected (%ld): %.*s", res.status,
			 (int)res.len, res.body);
	http_result_fini(&res);
	free(body);
	json_decref(r);
}

/* A docker container id: 64 hex digits. */
#define DOCKER_ID \
	"0123abcdeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

/*
 * Fleet: web-1 (v1) java in a docker container, 7 uses; web-2 (v1) a
 * process with a hostile name, 3 uses; db-1 (v2) nothing.
 */
static int setup(void **state)
{
	static struct afx a;
	char key[80];
	json_t *r;

	memset(&a, 0, sizeof(a));
	fixture_start(&a.f, NULL);
	enrol_host(&a.f, HOST_A, a.key_a);
	r = report(HOST_A, "web-1", "v1");
	add_usage(r, "java", "/docker/" DOCKER_ID, "docker:" DOCKER_ID, 7);
	post(&a.f, a.key_a, r);
	enrol_host(&a.f, HOST_B, key);
	r = report(HOST_B, "web-2", "v1");
	add_usage(r, HOSTILE, "/system.slice/app.service", "", 3);
	post(&a.f, key, r);
	enrol_host(&a.f, HOST_C, key);
	post(&a.f, key, report(HOST_C, "db-1", "v2"));
	*state = &a;
	return 0;
}

static int teardown(void **state)
{
	struct afx *a = *state;

	fixture_stop(&a->f);
	return 0;
}

static long get(struct fixture *f, const char *path, const char *token,
		struct http_result *r)
{
	http(f, "GET", path, token, NULL, 0, NULL, r);
	return r->status;
}

static void expect_error(struct http_result *r, long status, const char *code,
			 const char *field)
{
	assert_int_equal(r->status, status);
	assert_non_null(r->json);
	assert_string_equal(
		json_string_value(json_object_get(r->json, "error")), code);
	if (field)
		assert_string_equal(
			json_string_value(json_object_get(r->json, "field")),
			field);
}

static json_t *find_by(json_t *arr, const char *key, const char *val)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x)
	{
		const char *s = json_string_value(json_object_get(x, key));

		if (s && !strcmp(s, val))
			return x;
	}
	fail_msg("no %s=%s", key, val);
	return NULL;
}

#define GETI(o, k) json_integer_value(json_object_get((o), (k)))

static void test_auth(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	const char *body = "{\"feature\":\"" SOFT "\",\"text\":\"x\"}";

	assert_int_equal(get(&a->f, "/api/v1/summary", NULL, &r), 401);
	http_result_fini(&r);
	/* Agents enrol and post, nothing else. */
	assert_int_equal(get(&a->f, "/api/v1/summary", a->key_a, &r), 403);
	http_result_fini(&r);
	assert_int_equal(get(&a->f, "/api/v1/export/linux-mm", a->f.enrol, &r),
			 403);
	http_result_fini(&r);
	/* Viewers read; writing annotations needs admin. */
	http(&a->f, "POST", "/api/v1/annotations", a->f.viewer, body,
	     strlen(body), NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(&a->f, "DELETE", "/api/v1/annotations/1", a->f.viewer, NULL, 0,
	     NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	assert_int_equal(count_rows(&a->f, "annotations"), 0);
}

static void test_catalog(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	json_t *soft;

	assert_int_equal(get(&a->f, "/api/v1/catalog", a->f.viewer, &r), 200);
	soft = find_by(json_object_get(r.json, "features"), "id", SOFT);
	assert_string_equal(
		json_string_value(json_object_get(soft, "replacement")),
		"memory.low");
	assert_true(GETI(r.json, "version") >= 1);
	http_result_fini(&r);
}

static void test_summary(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	json_t *h, *soft, *cov;

	assert_int_equal(get(&a->f, "/api/v1/summary", a->f.viewer, &r), 200);
	h = json_object_get(r.json, "hosts");
	assert_int_equal(GETI(h, "total"), 3);
	assert_int_equal(GETI(h, "reporting_1d"), 3);
	assert_int_equal(GETI(json_object_get(h, "by_cgroup_mode"), "v1"), 2);
	assert_int_equal(GETI(json_object_get(h, "by_cgroup_mode"), "v2"), 1);
	soft = find_by(json_object_get(r.json, "features"), "id", SOFT);
	assert_int_equal(GETI(soft, "hosts_1d"), 2);
	assert_int_equal(GETI(soft, "hosts_30d"), 2);
	assert_int_equal(GETI(soft, "uses"), 10);
	assert_int_equal(GETI(soft, "workloads"), 2);
	assert_true(json_real_value(json_object_get(soft, "share_v1_30d")) ==
		    1.0);
	/*
	 * Coverage: the three hosts sent version 1 reports, no controllers:
	 * none counts by BPF, so a memory feature nobody used is not
	 * measured, nor is a freezer one; soft limit was seen.
	 */
	cov = json_object_get(r.json, "coverage");
	assert_int_equal(GETI(cov, "hosts"), 3);
	assert_int_equal(GETI(cov, "bpf_memory"), 0);
	assert_int_equal(GETI(cov, "kmsg_only"), 3);
	assert_int_equal(GETI(cov, "boot_uncovered"), 0);
	assert_int_equal(GETI(cov, "records_lost"), 0);
	assert_int_equal(GETI(cov, "probe_missing"), 0);
	assert_true(json_is_true(json_object_get(soft, "measured")));
	assert_true(json_is_false(
		json_object_get(find_by(json_object_get(r.json, "features"),
					"id", "memcg_v1.swappiness"),
				"measured")));
	assert_true(json_is_false(
		json_object_get(find_by(json_object_get(r.json, "features"),
					"id", "cgroup_v1.freezer"),
				"measured")));
	http_result_fini(&r);
}

static void test_feature(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	json_t *p;

	assert_int_equal(get(&a->f, "/api/v1/features/" SOFT, a->f.viewer, &r),
			 200);
	assert_int_equal(GETI(r.json, "hosts"), 2);
	assert_int_equal(GETI(r.json, "uses"), 10);
	/* Hostile process names come back as data, byte for byte. */
	p = find_by(json_object_get(r.json, "processes"), "process", HOSTILE);
	assert_int_equal(GETI(p, "uses"), 3);
	p = find_by(json_object_get(r.json, "containers"), "container",
		    "docker:" DOCKER_ID);
	assert_int_equal(GETI(p, "hosts"), 1);
	assert_int_equal(json_array_size(json_object_get(r.json, "timeline")),
			 1);
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/features/memcg_v1.nope",
			     a->f.viewer, &r),
			 404);
	http_result_fini(&r);
	get(&a->f, "/api/v1/features/" SOFT "?since=yesterday", a->f.viewer,
	    &r);
	expect_error(&r, 400, "bad_parameter", "since");
	http_result_fini(&r);
	get(&a->f,
	    "/api/v1/features/" SOFT "?since=2026-02-01&until=2026-01-01",
	    a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "since");
	http_result_fini(&r);
	/* a label that is no KEY=VALUE: refused, not ignored */
	get(&a->f, "/api/v1/features/" SOFT "?label=team", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "label");
	http_result_fini(&r);
	/* A range in the past holds nothing. */
	assert_int_equal(get(&a->f,
			     "/api/v1/features/" SOFT
			     "?since=2020-01-01&until=2020-01-31",
			     a->f.viewer, &r),
			 200);
	assert_int_equal(GETI(r.json, "hosts"), 0);
	http_result_fini(&r);
}

#define HOST_D \
	"dddd000000000000000000000000000000000000000000000000000000000004"

/*
 * A team's view of a feature: pay-4 (labelled team=payments) runs java
 * writing the soft limit 4 times; with ?label=team=payments every figure
 * is pay-4's alone, and the fleet's daily timeline is left out.
 */
static void test_feature_label(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	char key[80];
	json_t *rep, *p;

	enrol_host(&a->f, HOST_D, key);
	rep = report(HOST_D, "pay-4", "v1");
	json_object_set_new(rep, "v", json_integer(2));
	json_object_set_new(json_object_get(rep, "host"), "labels",
			    json_pack("{s:s}", "team", "payments"));
	add_usage(rep, "java", "/pay.slice", "", 4);
	json_object_set_new(json_array_get(json_object_get(rep, "usage"), 0),
			    "use", json_string("configures"));
	post(&a->f, key, rep);

	assert_int_equal(get(&a->f,
			     "/api/v1/features/" SOFT "?label=team=payments",
			     a->f.viewer, &r),
			 200);
	assert_int_equal(GETI(r.json, "hosts"), 1);
	assert_int_equal(GETI(r.json, "uses"), 4);
	assert_int_equal(json_array_size(json_object_get(r.json, "processes")),
			 1);
	p = find_by(json_object_get(r.json, "processes"), "process", "java");
	assert_int_equal(GETI(p, "uses"), 4);
	assert_null(json_object_get(r.json, "timeline"));
	assert_string_equal(
		json_string_value(json_object_get(r.json, "timeline_scope")) ?:
			"(none)",
		"none");
	/* the value classes of the labelled hosts' values, as without */
	assert_non_null(
		json_object_get(json_object_get(r.json, "values"), "classes"));
	http_result_fini(&r);

	assert_int_equal(get(&a->f,
			     "/api/v1/features/" SOFT "?label=team=search",
			     a->f.viewer, &r),
			 200);
	assert_int_equal(GETI(r.json, "hosts"), 0);
	assert_int_equal(GETI(r.json, "uses"), 0);
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/features/" SOFT, a->f.viewer, &r),
			 200);
	assert_int_equal(GETI(r.json, "hosts"), 3);
	assert_int_equal(GETI(r.json, "uses"), 14);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "timeline_scope")) ?:
			"(none)",
		"fleet");
	http_result_fini(&r);
}

static void test_hosts(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	char path[256];
	json_t *hosts;

	assert_int_equal(get(&a->f, "/api/v1/hosts?limit=2", a->f.viewer, &r),
			 200);
	hosts = json_object_get(r.json, "hosts");
	assert_int_equal(json_array_size(hosts), 2);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "next_cursor")),
		HOST_B);
	http_result_fini(&r);
	assert_int_equal(get(&a->f, "/api/v1/hosts?limit=2&cursor=" HOST_B,
			     a->f.viewer, &r),
			 200);
	hosts = json_object_get(r.json, "hosts");
	assert_int_equal(json_array_size(hosts), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(hosts, 0), "hostname")),
			    "db-1");
	assert_true(json_is_null(json_object_get(r.json, "next_cursor")));
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/hosts?host=web-*&feature=" SOFT,
			     a->f.viewer, &r),
			 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "hosts")), 2);
	http_result_fini(&r);
	assert_int_equal(get(&a->f, "/api/v1/hosts?cgroup_mode=v2", a->f.viewer,
			     &r),
			 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "hosts")), 1);
	http_result_fini(&r);
	/* URL-encoded LIKE metacharacters match literally: no host has '%'. */
	assert_int_equal(get(&a->f, "/api/v1/hosts?host=%25", a->f.viewer, &r),
			 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "hosts")), 0);
	http_result_fini(&r);

	get(&a->f, "/api/v1/hosts?limit=0", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "limit");
	http_result_fini(&r);
	get(&a->f, "/api/v1/hosts?limit=1001", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "limit");
	http_result_fini(&r);
	get(&a->f, "/api/v1/hosts?cgroup_mode=v3", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "cgroup_mode");
	http_result_fini(&r);
	get(&a->f, "/api/v1/hosts?feature=nope", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "feature");
	http_result_fini(&r);
	get(&a->f, "/api/v1/hosts?host=a%01b", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "host");
	http_result_fini(&r);

	snprintf(path, sizeof(path), "/api/v1/hosts/%s", HOST_A);
	assert_int_equal(get(&a->f, path, a->f.viewer, &r), 200);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "kernel")),
		"6.1.0-28-amd64");
	assert_string_equal(
		json_string_value(json_object_get(r.json, "cgroup_mode")),
		"v1");
	find_by(json_object_get(r.json, "features"), "id", SOFT);
	assert_true(json_is_object(json_object_get(r.json, "health")));
	http_result_fini(&r);
	assert_int_equal(get(&a->f, "/api/v1/hosts/dddd", a->f.viewer, &r),
			 404);
	http_result_fini(&r);
	assert_int_equal(get(&a->f, "/api/v1/hosts/..%2f..", a->f.viewer, &r),
			 404);
	http_result_fini(&r);
}

/* A report of host_id naming the unknown deprecation text. */
static json_t *report_unknown(const char *host_id, const char *hostname,
			      const char *text)
{
	json_t *r = report(host_id, hostname, "v1");

	json_array_append_new(json_object_get(r, "unknown"),
			      json_pack("{s:s, s:i, s:i, s:I, s:i, s:s}",
					"text", text, "kmsg_seq", 5, "mono_us",
					1000, "time",
					(json_int_t)time(NULL) - 30, "count", 1,
					"origin", "kmsg"));
	return r;
}

/*
 * GET /api/v1/unknown: a text two hosts sent is one entry of two hosts;
 * pages are bounded; a cursor may be as long as a text. The hosts list's
 * use=reads lists the hosts that only read a feature.
 */
static void test_unknown(void **state)
{
	const char *text = "cgroup#: new_knob is deprecated";
	struct afx *a = *state;
	struct http_result r;
	char key[80], path[400];
	json_t *e;

	post(&a->f, a->key_a, report_unknown(HOST_A, "web-1", text));
	enrol_host(&a->f, HOST_C, key);
	post(&a->f, key, report_unknown(HOST_C, "db-1", text));
	assert_int_equal(get(&a->f, "/api/v1/unknown", a->f.viewer, &r), 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "texts")), 1);
	e = json_array_get(json_object_get(r.json, "texts"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "text")),
			    text);
	assert_int_equal(GETI(e, "hosts"), 2);
	assert_int_equal(json_array_size(json_object_get(e, "kernels")), 1);
	assert_true(json_is_null(json_object_get(r.json, "next_cursor")));
	http_result_fini(&r);
	get(&a->f, "/api/v1/unknown?limit=1001", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "limit");
	http_result_fini(&r);
	/* a cursor past the texts: an empty page */
	snprintf(path, sizeof(path), "/api/v1/unknown?cursor=%0300d", 0);
	memset(strchr(path, '=') + 1, 'z', 300);
	assert_int_equal(get(&a->f, path, a->f.viewer, &r), 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "texts")), 0);
	http_result_fini(&r);
	get(&a->f, "/api/v1/unknown", NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/hosts?use=reads&feature=" SOFT,
			     a->f.viewer, &r),
			 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "hosts")), 0);
	http_result_fini(&r);
	get(&a->f, "/api/v1/hosts?use=all&feature=" SOFT, a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "use");
	http_result_fini(&r);
}

static void test_health(void **state)
{
	struct afx *a = *state;
	struct http_result r;

	assert_int_equal(get(&a->f, "/api/v1/health", a->f.viewer, &r), 200);
	assert_int_equal(GETI(json_object_get(r.json, "silent"), "count"), 0);
	assert_int_equal(GETI(json_object_get(r.json, "records_lost"), "count"),
			 0);
	assert_true(json_is_array(json_object_get(
		json_object_get(r.json, "probe_missing"), "hosts")));
	http_result_fini(&r);
	get(&a->f, "/api/v1/health?silent_after=5", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "silent_after");
	http_result_fini(&r);
}

static void post_ann(struct fixture *f, const char *body, struct http_result *r)
{
	http(f, "POST", "/api/v1/annotations", f->admin, body, strlen(body),
	     NULL, r);
}

static void test_annotations(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	char path[64];
	json_int_t id;

	post_ann(&a->f,
		 "{\"feature\":\"" SOFT "\",\"workload\":\"java\","
		 "\"text\":\"The JVM sizes its heap from the soft limit.\","
		 "\"fits\":\"no\"}",
		 &r);
	assert_int_equal(r.status, 201);
	id = GETI(r.json, "id");
	assert_true(id > 0);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "author")),
		"t-admin");
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/annotations?feature=" SOFT,
			     a->f.viewer, &r),
			 200);
	assert_int_equal(
		json_array_size(json_object_get(r.json, "annotations")), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(r.json, "annotations"),
				       0),
			"fits")),
		"no");
	http_result_fini(&r);

	/* Bad bodies: each names its field, nothing is stored. */
	post_ann(&a->f, "{\"feature\":\"" SOFT "\"}", &r);
	expect_error(&r, 400, "missing_field", "text");
	http_result_fini(&r);
	post_ann(&a->f, "{\"feature\":\"nope\",\"text\":\"x\"}", &r);
	expect_error(&r, 400, "unknown_feature", "feature");
	http_result_fini(&r);
	post_ann(&a->f,
		 "{\"feature\":\"" SOFT "\",\"text\":\"x\",\"fits\":\"maybe\"}",
		 &r);
	expect_error(&r, 400, "out_of_range", "fits");
	http_result_fini(&r);
	post_ann(&a->f, "{\"feature\":\"" SOFT "\",\"text\":\"x\",\"extra\":1}",
		 &r);
	expect_error(&r, 400, "unknown_field", "extra");
	http_result_fini(&r);
	post_ann(&a->f, "{\"feature\":\"" SOFT "\",\"text\":\"a\\u001bb\"}",
		 &r);
	expect_error(&r, 400, "invalid_text", "text");
	http_result_fini(&r);
	post_ann(&a->f, "{\"feature\":\"" SOFT "\",\"text\":\"   \"}", &r);
	expect_error(&r, 400, "out_of_range", "text");
	http_result_fini(&r);
	post_ann(&a->f, "[1]", &r);
	expect_error(&r, 400, "wrong_type", NULL);
	http_result_fini(&r);
	post_ann(&a->f, "{\"feature\":", &r);
	expect_error(&r, 400, "invalid_json", NULL);
	http_result_fini(&r);
	assert_int_equal(count_rows(&a->f, "annotations"), 1);

	snprintf(path, sizeof(path), "/api/v1/annotations/%lld", (long long)id);
	http(&a->f, "DELETE", path, a->f.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	http(&a->f, "DELETE", path, a->f.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	http(&a->f, "DELETE", "/api/v1/annotations/abc", a->f.admin, NULL, 0,
	     NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	assert_int_equal(count_rows(&a->f, "annotations"), 0);
}

static void test_export(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	char ct[128];
	char *body;
	json_t *j;

	post_ann(&a->f,
		 "{\"feature\":\"" SOFT
		 "\",\"text\":\"Batch jobs yield memory to"
		 " services under pressure.\",\"fits\":\"partial\"}",
		 &r);
	assert_int_equal(r.status, 201);
	http_result_fini(&r);

	assert_int_equal(get(&a->f, "/api/v1/export/linux-mm", a->f.viewer, &r),
			 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/plain; charset=utf-8");
	body = strndup(r.body, r.len);
	assert_true(!strncmp(body, "Subject: ", 9));
	assert_non_null(strstr(body, "\nTo: linux-mm@kvack.org\n"));
	assert_non_null(strstr(body, "\nCc: cgroups@vger.kernel.org\n"));
	assert_non_null(strstr(
		body,
		"Hosts using it: 2 of 2 cgroup v1/hybrid hosts (100.0%)"));
	assert_non_null(strstr(body, "Share of all hosts: 2 of 3 (66.7%)"));
	assert_non_null(strstr(body, "Uses counted: 10"));
	assert_non_null(strstr(body, "- java in a docker container, on docker"
				     " container cgroups: 1 host, 7\n"
				     "      uses"));
	assert_non_null(strstr(body, "2 of our hosts will lose this with our"
				     " distribution's next kernel."));
	assert_non_null(strstr(body, "yield"));
	/* Default redaction: no host names, no cgroup paths, no container ids. */
	assert_null(strstr(body, "web-1"));
	assert_null(strstr(body, "/docker/"));
	assert_null(strstr(body, "0123abcd"));
	assert_null(strstr(body, "app.service"));
	free(body);
	http_result_fini(&r);

	/* Showing more on request: host names and full cgroup paths. */
	assert_int_equal(get(&a->f,
			     "/api/v1/export/linux-mm?hosts=show&cgroups=full",
			     a->f.viewer, &r),
			 200);
	body = strndup(r.body, r.len);
	assert_non_null(strstr(body, "web-1"));
	/* (the id is wider than a line: the wrapper breaks it) */
	assert_non_null(strstr(
		body, "java in a docker container\n      (0123abcdeeee"));
	free(body);
	http_result_fini(&r);

	assert_int_equal(get(&a->f,
			     "/api/v1/export/linux-mm?format=csv&feature=" SOFT,
			     a->f.viewer, &r),
			 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/csv; charset=utf-8");
	body = strndup(r.body, r.len);
	assert_non_null(strstr(body, "\r\n\"" SOFT "\","));
	assert_null(strstr(body, "memcg_v1.oom_control"));
	free(body);
	http_result_fini(&r);

	assert_int_equal(
		get(&a->f, "/api/v1/export/linux-mm?format=json&feature=" SOFT,
		    a->f.viewer, &r),
		200);
	j = json_array_get(json_object_get(r.json, "features"), 0);
	assert_int_equal(GETI(j, "hosts_using"), 2);
	assert_int_equal(GETI(j, "hosts_v1"), 2);
	assert_int_equal(GETI(j, "hosts_all"), 3);
	assert_null(json_object_get(j, "hosts"));
	http_result_fini(&r);

	get(&a->f, "/api/v1/export/linux-mm?format=xml", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "format");
	http_result_fini(&r);
	get(&a->f, "/api/v1/export/linux-mm?feature=nope", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "feature");
	http_result_fini(&r);
	get(&a->f, "/api/v1/export/linux-mm?hosts=all", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "hosts");
	http_result_fini(&r);
	get(&a->f, "/api/v1/export/linux-mm?days=0", a->f.viewer, &r);
	expect_error(&r, 400, "bad_parameter", "days");
	http_result_fini(&r);
}

/* "twilight-server export" prints exactly what the endpoint returns. */
static void test_export_cli(void **state)
{
	struct afx *a = *state;
	struct http_result r;
	char out[512], *text = NULL;
	size_t len = 0;
	char *argv[] = { "export", "--data-dir", a->f.dir, "--feature",
			 SOFT,	   "--output",	 out,	   NULL };
	char *bad_fmt[] = { "export",	"--data-dir", a->f.dir,
			    "--format", "pdf",	      NULL };
	char *bad_feat[] = { "export",	  "--data-dir", a->f.dir,
			     "--feature", "x",		NULL };
	char *no_db[] = { "export", "--data-dir", "/nonexistent/twl", NULL };

	snprintf(out, sizeof(out), "%s/export.txt", a->f.dir);
	assert_int_equal(twl_export_cli(7, argv), 0);
	assert_int_equal(twl_read_file(out, 1 << 20, &text, &len), 0);
	unlink(out);
	assert_int_equal(get(&a->f, "/api/v1/export/linux-mm?feature=" SOFT,
			     a->f.viewer, &r),
			 200);
	assert_int_equal(r.len, len);
	assert_memory_equal(r.body, text, len);
	assert_non_null(strstr(text, "Hosts using it: 2 of 2"));
	http_result_fini(&r);
	free(text);

	assert_int_equal(twl_export_cli(5, bad_fmt), 2);
	assert_int_equal(twl_export_cli(5, bad_feat), 2);
	assert_int_equal(twl_export_cli(3, no_db), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feature, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feature_label, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_health, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_annotations, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_cli, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
