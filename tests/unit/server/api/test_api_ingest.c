// SPDX-License-Identifier: GPL-2.0
/*
 * Report ingest (api_ingest.c): the one mapping from a queue or writer
 * result to the agent's reply, for every result; then end to end against
 * an in-process server: stored and duplicate after the writer's COMMIT,
 * 503 shutting_down once the writer stopped, 503 overloaded when the
 * database stays locked past the writer's busy timeout, and the latency
 * histogram counting report requests only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sqlite3.h>

#include "api/api_ingest.h"
#include "harness.h"
#include "store/writer.h"

#define HOST_A \
	"aaaa000000000000000000000000000000000000000000000000000000000001"

/* The value of metric line name (e.g. `x{reason="y"}`) in m's text. */
static long long metric(struct twl_metrics *m, const char *name)
{
	struct twl_metrics_store st = { .db_bytes = -1, .wal_catchups = -1 };
	struct twl_buf b;
	const char *p;
	long long v;
	size_t n = strlen(name);

	twl_buf_init(&b, 1 << 20);
	assert_int_equal(twl_metrics_render(m, &st, &b), 0);
	for (p = b.data; (p = strstr(p, name)); p += n)
		if ((p == b.data || p[-1] == '\n') && p[n] == ' ')
			break;
	assert_non_null(p);
	v = strtoll(p + n + 1, NULL, 10);
	twl_buf_fini(&b);
	return v;
}

static const char *header_of(const struct twl_response *resp, const char *name)
{
	for (size_t i = 0; i < resp->n_headers; i++)
		if (!strcmp(resp->headers[i].name, name))
			return resp->headers[i].value;
	return NULL;
}

/* Every result: status, body and Retry-After, and what is counted. */
static void test_reply_mapping(void **state)
{
	static const struct {
		int result;
		int status;
		const char *code; /* "error", or "status" for a 200 */
		const char *retry_after; /* NULL: none */
		const char *counted; /* rejection reason, or NULL */
	} cases[] = {
		{ 0, 200, "stored", NULL, NULL },
		{ 1, 200, "duplicate", NULL, NULL },
		{ -EAGAIN, 503, "overloaded", "5", "overloaded" },
		{ -EBUSY, 503, "overloaded", "5", "overloaded" },
		{ -ESHUTDOWN, 503, "shutting_down", "5", "shutting_down" },
		{ -ENOSPC, 500, "store_failed", "30", NULL },
		{ -EIO, 500, "store_failed", "30", NULL },
		{ -ENOMEM, 500, "store_failed", "30", NULL },
		{ -EEXIST, 500, "store_failed", "30", NULL },
	};
	struct twl_metrics *m = twl_metrics_new();

	assert_non_null(m);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct twl_response resp = { .status = 500 };
		long long before = 0;
		const char *ra, *reason;
		char label[80];
		json_t *j;

		if (cases[i].counted) {
			snprintf(label, sizeof(label),
				 "twilight_rejections_total{reason=\"%s\"}",
				 cases[i].counted);
			before = metric(m, label);
		}
		assert_int_equal(twl_api_ingest_reply(m, cases[i].result, "b-1",
						      &resp),
				 0);
		assert_int_equal(resp.status, cases[i].status);
		j = json_loadb(resp.body, resp.len, 0, NULL);
		assert_non_null(j);
		ra = header_of(&resp, "Retry-After");
		if (cases[i].status == 200) {
			assert_string_equal(
				json_string_value(json_object_get(j, "status")),
				cases[i].code);
			assert_string_equal(json_string_value(json_object_get(
						    j, "batch_id")),
					    "b-1");
			assert_int_equal(json_object_size(j), 2);
			assert_null(ra);
		} else {
			assert_string_equal(
				json_string_value(json_object_get(j, "error")),
				cases[i].code);
			reason =
				json_string_value(json_object_get(j, "reason"));
			assert_non_null(reason);
			assert_true(strlen(reason) > 10);
			assert_non_null(ra);
			assert_string_equal(ra, cases[i].retry_after);
		}
		if (cases[i].counted)
			assert_int_equal(metric(m, label), before + 1);
		json_decref(j);
		twl_response_fini(&resp);
	}
	/* 200s and 500s are not rejections */
	assert_int_equal(
		metric(m, "twilight_rejections_total{reason=\"other\"}"), 0);
	twl_metrics_free(m);
}

/* One wording per case: the two 503 overloaded causes say which. */
static void test_reply_wording(void **state)
{
	struct twl_response a = { .status = 500 }, b = { .status = 500 };
	struct twl_metrics *m = twl_metrics_new();

	assert_non_null(m);
	assert_int_equal(twl_api_ingest_reply(m, -EAGAIN, NULL, &a), 0);
	assert_int_equal(twl_api_ingest_reply(m, -EBUSY, NULL, &b), 0);
	assert_non_null(strstr(a.body, "queue full"));
	assert_non_null(strstr(b.body, "database busy"));
	twl_response_fini(&a);
	twl_response_fini(&b);
	/* a 200 without a batch id still has the member */
	assert_int_equal(twl_api_ingest_reply(m, 0, NULL, &a), 0);
	assert_string_equal(a.body,
			    "{\"status\":\"stored\",\"batch_id\":\"\"}");
	twl_response_fini(&a);
	twl_metrics_free(m);
}

static int setup(void **state)
{
	static struct fixture f;

	fixture_start(&f, NULL);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(*state);
	return 0;
}

static void post(struct fixture *f, const char *key, const char *batch,
		 int64_t seq, struct http_result *r)
{
	json_t *rep = make_report(HOST_A, batch, seq);
	char *txt = dump(rep);

	http(f, "POST", "/api/v1/reports", key, txt, strlen(txt), NULL, r);
	free(txt);
	json_decref(rep);
}

static void expect(const struct http_result *r, long status, const char *member,
		   const char *value, const char *retry_after)
{
	char v[64];

	assert_int_equal(r->status, status);
	assert_non_null(r->json);
	assert_string_equal(json_string_value(json_object_get(r->json, member)),
			    value);
	if (retry_after) {
		assert_true(http_header(r, "Retry-After", v, sizeof(v)));
		assert_string_equal(v, retry_after);
	}
}

static void test_stored_then_duplicate(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80];

	enrol_host(f, HOST_A, key);
	post(f, key, "a0000000000000000000000000000001", 1, &r);
	expect(&r, 200, "status", "stored", NULL);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "batch_id")),
		"a0000000000000000000000000000001");
	http_result_fini(&r);
	post(f, key, "a0000000000000000000000000000001", 1, &r);
	expect(&r, 200, "status", "duplicate", NULL);
	http_result_fini(&r);
}

static void test_writer_stopped(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80];

	enrol_host(f, HOST_A, key);
	twl_writer_stop(twl_api_writer(f->srv));
	post(f, key, "a0000000000000000000000000000002", 1, &r);
	expect(&r, 503, "error", "shutting_down", "5");
	http_result_fini(&r);
	assert_int_equal(count_rows(f, "batches"), 0);
}

/* The writer's BEGIN IMMEDIATE gives up after its busy timeout: -EBUSY. */
static void test_database_locked(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	sqlite3 *db;
	char key[80];

	enrol_host(f, HOST_A, key);
	assert_int_equal(sqlite3_open(f->cfg.db_path, &db), SQLITE_OK);
	/* the server writes on its own too (the alert detector's scans):
	 * wait for such a write before taking the lock */
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL),
			 SQLITE_OK);
	post(f, key, "a0000000000000000000000000000003", 1, &r);
	expect(&r, 503, "error", "overloaded", "5");
	http_result_fini(&r);
	assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	/* nothing of it was stored; the agent's resend is */
	assert_int_equal(count_rows(f, "batches"), 0);
	post(f, key, "a0000000000000000000000000000003", 1, &r);
	expect(&r, 200, "status", "stored", NULL);
	http_result_fini(&r);
}

static long long latency_count(struct fixture *f)
{
	struct http_result r;
	const char *p;
	long long n;

	http(f, "GET", "/metrics", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	p = strstr(r.body, "\ntwilight_ingest_seconds_count ");
	assert_non_null(p);
	n = strtoll(p + strlen("\ntwilight_ingest_seconds_count "), NULL, 10);
	http_result_fini(&r);
	return n;
}

/* Reports reaching the handler are timed, whatever their answer. */
static void test_latency_counted(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80];

	enrol_host(f, HOST_A, key);
	assert_int_equal(latency_count(f), 0);
	post(f, key, "a0000000000000000000000000000004", 1, &r);
	expect(&r, 200, "status", "stored", NULL);
	http_result_fini(&r);
	http(f, "POST", "/api/v1/reports", key, "{}", 2, NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
	http(f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	/* refused before the handler (no token): not a report's latency */
	http(f, "POST", "/api/v1/reports", NULL, "{}", 2, NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);
	assert_int_equal(latency_count(f), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_mapping),
		cmocka_unit_test(test_reply_wording),
		cmocka_unit_test_setup_teardown(test_stored_then_duplicate,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_stopped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_database_locked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_latency_counted, setup,
						teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
