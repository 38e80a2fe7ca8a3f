// SPDX-License-Identifier: GPL-2.0
/*
 * Handlers of the core server against an in-process server on 127.0.0.1
 * with real TLS: healthz, metrics, enrolment, ingest (stored, replay,
 * gzip, counters kept at their maximum, rate limit), tokens, host-key
 * revocation, static files, routing errors and security headers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sqlite3.h>

#include <twilight/util.h>

#include "harness.h"
#include "http/auth.h"
#include "store/ingest.h"
#include "store/store_read.h"

#define HOST_A \
	"aaaa000000000000000000000000000000000000000000000000000000000001"
#define HOST_B \
	"bbbb000000000000000000000000000000000000000000000000000000000002"

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

static void check_security_headers(const struct http_result *r)
{
	char v[256];

	assert_true(http_header(r, "Content-Security-Policy", v, sizeof(v)));
	assert_non_null(strstr(v, "default-src 'self'"));
	assert_true(http_header(r, "X-Content-Type-Options", v, sizeof(v)));
	assert_string_equal(v, "nosniff");
	assert_true(http_header(r, "X-Frame-Options", v, sizeof(v)));
	assert_true(http_header(r, "Referrer-Policy", v, sizeof(v)));
}

static void test_healthz(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char moved[sizeof(f->cfg.db_path) + 8];
	json_t *db;

	http(f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "status")), "ok");
	assert_true(json_integer_value(json_object_get(r.json, "schema")) >= 1);
	db = json_object_get(r.json, "database");
	assert_string_equal(json_string_value(json_object_get(db, "backend")),
			    "sqlite");
	assert_string_equal(json_string_value(json_object_get(db, "link")),
			    "ok");
	check_security_headers(&r);
	http_result_fini(&r);

	/* the database file moved away under the server: its link is down */
	snprintf(moved, sizeof(moved), "%s.moved", f->cfg.db_path);
	assert_int_equal(rename(f->cfg.db_path, moved), 0);
	http(f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 503);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "unavailable");
	assert_non_null(
		strstr(json_string_value(json_object_get(r.json, "reason")),
		       "database unavailable (sqlite): database file"));
	http_result_fini(&r);
	assert_int_equal(rename(moved, f->cfg.db_path), 0);
	http(f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
}

static void test_routing_errors(void **state)
{
	struct fixture *f = *state;
	struct http_result r;

	http(f, "GET", "/api/v1/nonexistent", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "not_found");
	check_security_headers(&r);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/reports", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 405);
	check_security_headers(&r);
	http_result_fini(&r);
}

static void test_metrics(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char ct[128];

	http(f, "GET", "/metrics", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);
	http(f, "GET", "/metrics", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_non_null(strstr(ct, "text/plain"));
	assert_non_null(strstr(
		r.body, "twilight_ingest_batches_total{result=\"stored\"}"));
	assert_non_null(strstr(
		r.body, "twilight_rejections_total{reason=\"unauthorized\"} "));
	assert_null(strstr(
		r.body,
		"twilight_rejections_total{reason=\"unauthorized\"} 0\n"));
	assert_non_null(
		strstr(r.body, "twilight_ingest_seconds_bucket{le=\"+Inf\"}"));
	assert_non_null(strstr(r.body, "twilight_db_bytes "));
	/* a fresh server's WAL never reached wal-max */
	assert_non_null(strstr(r.body, "\ntwilight_wal_catchups_total 0\n"));
	assert_non_null(strstr(
		r.body, "\ntwilight_wal_catchup_seconds_total 0.000000\n"));
	http_result_fini(&r);
}

static void test_whoami(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80];

	http(f, "GET", "/api/v1/whoami", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"role\":\"viewer\""));
	http_result_fini(&r);
	http(f, "GET", "/api/v1/whoami", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"role\":\"admin\""));
	http_result_fini(&r);
	http(f, "GET", "/api/v1/whoami", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);
	/* an agent key reads nothing */
	enrol_host(
		f,
		"c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00",
		key);
	http(f, "GET", "/api/v1/whoami", key, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
}

static void test_enroll(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80], key2[80];

	enrol_host(f, HOST_A, key);
	assert_int_equal(strncmp(key, "twlk_", 5), 0);
	/* stored hashed only: the secret itself is nowhere in the database */
	assert_int_equal(
		query_int(f,
			  "SELECT count(*) FROM host_keys WHERE key_hash = ?1",
			  key),
		0);
	assert_int_equal(
		query_int(f,
			  "SELECT count(*) FROM host_keys WHERE host_id = ?1",
			  HOST_A),
		1);
	enrol_host(f, HOST_A, key2);
	assert_string_not_equal(key, key2);
	/* a viewer token cannot enrol, a host key cannot enrol */
	http(f, "POST", "/api/v1/enroll", f->viewer, "{\"host_id\":\"ab\"}",
	     strlen("{\"host_id\":\"ab\"}"), NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(f, "POST", "/api/v1/enroll", key, "{\"host_id\":\"ab\"}",
	     strlen("{\"host_id\":\"ab\"}"), NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(f, "POST", "/api/v1/enroll", f->enrol, "{\"host_id\":\"NOT HEX\"}",
	     strlen("{\"host_id\":\"NOT HEX\"}"), NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(json_string_value(json_object_get(r.json, "field")),
			    "host_id");
	http_result_fini(&r);
	http(f, "POST", "/api/v1/enroll", f->enrol, "[1]", strlen("[1]"), NULL,
	     &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
}

static void post_report(struct fixture *f, const char *key, json_t *rep,
			long want, const char *want_status)
{
	struct http_result r;
	char *body = dump(rep);

	http(f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &r);
	if (r.status != want)
		fail_msg("POST report: want %ld got %ld: %s", want, r.status,
			 r.body ? r.body : "");
	if (want_status)
		assert_string_equal(
			json_string_value(json_object_get(r.json, "status")),
			want_status);
	http_result_fini(&r);
	free(body);
}

static void test_ingest_and_replay(void **state)
{
	struct fixture *f = *state;
	char key[80];
	json_t *rep;
	int64_t rows;

	enrol_host(f, HOST_B, key);
	rep = make_report(HOST_B, "b0000000000000000000000000000001", 1);
	post_report(f, key, rep, 200, "stored");
	/* acknowledged means committed: visible on another connection now */
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM batches WHERE batch_id = ?1",
			  "b0000000000000000000000000000001"),
		1);
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM warnings WHERE host_id = ?1",
			  HOST_B),
		(int64_t)json_array_size(json_object_get(rep, "warnings")));
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM usage WHERE host_id = ?1",
			  HOST_B),
		(int64_t)json_array_size(json_object_get(rep, "usage")));
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM hosts WHERE host_id = ?1",
			  HOST_B),
		1);
	assert_int_equal(
		query_int(f, "SELECT last_seq FROM hosts WHERE host_id = ?1",
			  HOST_B),
		1);
	assert_true(
		query_int(f,
			  "SELECT count(*) FROM feature_host WHERE host_id = ?1",
			  HOST_B) >= 2);
	assert_int_equal(
		query_int(f,
			  "SELECT uses FROM feature_host WHERE host_id = ?1 AND"
			  " feature_id = 'memcg_v1.soft_limit'",
			  HOST_B),
		12); /* 12 counted writes; their warning is not a use again */

	/* replay: 200 duplicate, nothing changes */
	rows = count_data_rows(f);
	post_report(f, key, rep, 200, "duplicate");
	assert_int_equal(count_data_rows(f), rows);

	/* new batch with a smaller counter: the maximum is kept */
	json_object_set_new(rep, "batch_id",
			    json_string("b0000000000000000000000000000002"));
	json_object_set_new(rep, "seq", json_integer(2));
	json_object_set_new(json_array_get(json_object_get(rep, "usage"), 0),
			    "count", json_integer(5));
	json_object_set_new(json_array_get(json_object_get(rep, "usage"), 0),
			    "condition_met", json_integer(5));
	post_report(f, key, rep, 200, "stored");
	assert_int_equal(
		query_int(f,
			  "SELECT count FROM usage WHERE host_id = ?1 AND"
			  " file = 'memory.soft_limit_in_bytes'",
			  HOST_B),
		12);
	/* and a larger one raises it, adding only the difference to the rollup */
	json_object_set_new(rep, "batch_id",
			    json_string("b0000000000000000000000000000003"));
	json_object_set_new(rep, "seq", json_integer(3));
	json_object_set_new(json_array_get(json_object_get(rep, "usage"), 0),
			    "count", json_integer(20));
	post_report(f, key, rep, 200, "stored");
	assert_int_equal(
		query_int(f,
			  "SELECT count FROM usage WHERE host_id = ?1 AND"
			  " file = 'memory.soft_limit_in_bytes'",
			  HOST_B),
		20);
	assert_int_equal(
		query_int(f,
			  "SELECT uses FROM feature_host WHERE host_id = ?1 AND"
			  " feature_id = 'memcg_v1.soft_limit'",
			  HOST_B),
		20);
	assert_int_equal(
		query_int(f, "SELECT last_seq FROM hosts WHERE host_id = ?1",
			  HOST_B),
		3);
	/* unknown deprecations are stored (and re-matched: this one matches nothing) */
	assert_int_equal(
		query_int(
			f,
			"SELECT count(*) FROM unknown_deprecations WHERE host_id = ?1"
			" AND matched_feature_id IS NULL",
			HOST_B),
		1);
	json_decref(rep);
}

static void test_unknown_rematched(void **state)
{
	struct fixture *f = *state;
	const char *host =
		"cccc000000000000000000000000000000000000000000000000000000000003";
	json_t *rep, *w, *u;
	char key[80];

	/* An agent with an older catalog sends a known text as "unknown". */
	enrol_host(f, host, key);
	rep = make_report(host, "c0000000000000000000000000000001", 1);
	w = json_array_get(json_object_get(rep, "warnings"), 0);
	u = json_array_get(json_object_get(rep, "unknown"), 0);
	json_object_set(u, "text", json_object_get(w, "text"));
	post_report(f, key, rep, 200, "stored");
	assert_int_equal(
		query_int(
			f,
			"SELECT count(*) FROM unknown_deprecations WHERE host_id = ?1"
			" AND matched_feature_id = 'memcg_v1.soft_limit'",
			host),
		1);
	json_decref(rep);
}

/* unknown[] texts arrive with digits as '#': they must still re-match. */
static void test_unknown_rematched_digits(void **state)
{
	struct fixture *f = *state;
	const char *host =
		"cccc000000000000000000000000000000000000000000000000000000000013";
	json_t *rep, *u;
	char key[80];

	enrol_host(f, host, key);
	rep = make_report(host, "c0000000000000000000000000000013", 1);
	u = json_array_get(json_object_get(rep, "unknown"), 0);
	json_object_set_new(
		u, "text",
		json_string(
			"The swapaccount=# commandline option is deprecated in "
			"favor of configuring swap control via cgroupfs. "
			"Please report your usecase to linux-mm@kvack.org "
			"if you depend on this functionality."));
	post_report(f, key, rep, 200, "stored");
	assert_int_equal(
		query_int(
			f,
			"SELECT count(*) FROM unknown_deprecations WHERE host_id = ?1"
			" AND matched_feature_id = 'memcg_v1.swapaccount'",
			host),
		1);
	json_decref(rep);
}

static void test_ingest_gzip(void **state)
{
	struct fixture *f = *state;
	const char *host =
		"dddd000000000000000000000000000000000000000000000000000000000004";
	struct http_result r;
	char key[80], *body, *gz;
	size_t gzlen;
	json_t *rep;

	enrol_host(f, host, key);
	rep = make_report(host, "d0000000000000000000000000000001", 1);
	body = dump(rep);
	gzip_bytes(body, strlen(body), &gz, &gzlen);
	http(f, "POST", "/api/v1/reports", key, gz, gzlen,
	     "Content-Encoding: gzip", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "status")), "stored");
	http_result_fini(&r);
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM batches WHERE host_id = ?1",
			  host),
		1);
	free(gz);
	free(body);
	json_decref(rep);
}

static void test_tokens(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char tok[80], path[64];
	json_int_t id;

	http(f, "POST", "/api/v1/tokens", f->viewer,
	     "{\"name\":\"x\",\"role\":\"viewer\"}",
	     strlen("{\"name\":\"x\",\"role\":\"viewer\"}"), NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(f, "POST", "/api/v1/tokens", f->admin,
	     "{\"name\":\"dash\",\"role\":\"viewer\"}",
	     strlen("{\"name\":\"dash\",\"role\":\"viewer\"}"), NULL, &r);
	assert_int_equal(r.status, 201);
	snprintf(tok, sizeof(tok), "%s",
		 json_string_value(json_object_get(r.json, "token")));
	id = json_integer_value(json_object_get(r.json, "id"));
	http_result_fini(&r);
	http(f, "POST", "/api/v1/tokens", f->admin,
	     "{\"name\":\"bad\",\"role\":\"root\"}",
	     strlen("{\"name\":\"bad\",\"role\":\"root\"}"), NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(json_string_value(json_object_get(r.json, "field")),
			    "role");
	http_result_fini(&r);
	http(f, "GET", "/metrics", tok, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/tokens", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(json_array_size(json_object_get(r.json, "tokens")) >= 4);
	assert_null(strstr(r.body, "hash"));
	http_result_fini(&r);
	snprintf(path, sizeof(path), "/api/v1/tokens/%lld", (long long)id);
	http(f, "DELETE", path, f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	http(f, "DELETE", path, f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	http(f, "GET", "/metrics", tok, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);
}

static void test_host_key_revoke(void **state)
{
	struct fixture *f = *state;
	const char *host =
		"eeee000000000000000000000000000000000000000000000000000000000005";
	struct http_result r;
	char key[80], path[128];
	json_t *rep;

	enrol_host(f, host, key);
	/* accepted once, so that the key is in the server's key cache */
	rep = make_report(host, "e0000000000000000000000000000000", 1);
	post_report(f, key, rep, 200, "stored");
	json_decref(rep);
	snprintf(path, sizeof(path), "/api/v1/host-keys/%s", host);
	http(f, "DELETE", path, f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(f, "DELETE", path, f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(json_object_get(r.json, "revoked")),
			 1);
	http_result_fini(&r);
	/* refused at once, not once the cached entry expires */
	rep = make_report(host, "e0000000000000000000000000000001", 2);
	post_report(f, key, rep, 401, NULL);
	assert_int_equal(
		query_int(f, "SELECT count(*) FROM batches WHERE host_id = ?1",
			  host),
		1);
	json_decref(rep);
}

static void test_static(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char path[400], ct[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/web", f->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/web/index.html", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("<!doctype html><title>twilight</title>", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/web/app.js", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("console.log(1);", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/secret.txt", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("secret", fp);
	fclose(fp);
	/* in the web root, but not a dashboard file (TWL_WEB_FILES) */
	snprintf(path, sizeof(path), "%s/web/cmake_install.cmake", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("# build file", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/web/js", f->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/web/js/extra.js", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("extra", fp);
	fclose(fp);

	http(f, "GET", "/", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/html; charset=utf-8");
	assert_non_null(strstr(r.body, "<title>twilight</title>"));
	check_security_headers(&r);
	http_result_fini(&r);
	http(f, "GET", "/app.js", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/javascript; charset=utf-8");
	http_result_fini(&r);
	http(f, "GET", "/../secret.txt", NULL, NULL, 0, "X-Test: 1", &r);
	assert_true(r.status == 404 || r.status == 400);
	assert_true(r.body == NULL || strstr(r.body, "secret\0") == NULL);
	http_result_fini(&r);
	http(f, "GET", "/%2e%2e/secret.txt", NULL, NULL, 0, NULL, &r);
	assert_true(r.status == 404 || r.status == 400);
	assert_true(r.body == NULL || strcmp(r.body, "secret") != 0);
	http_result_fini(&r);
	http(f, "GET", "/nope.css", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	/* only the dashboard's listed files are served */
	http(f, "GET", "/cmake_install.cmake", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	assert_null(strstr(r.body, "build file"));
	http_result_fini(&r);
	http(f, "GET", "/js/extra.js", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	http(f, "GET", "/js/", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	/* %00 would cut the path short: refused wherever it is in the URL */
	http(f, "GET", "/index.html%00.js", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_null(strstr(r.body, "<title>"));
	check_security_headers(&r);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/hosts?cursor=a%00b", f->viewer, NULL, 0, NULL,
	     &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
}

static void low_host_rate(struct twl_config *c)
{
	c->host_rate = 0.01;
	c->host_burst = 2;
}

static void test_rate_limit(void **state)
{
	struct fixture f;
	const char *host =
		"ffff000000000000000000000000000000000000000000000000000000000006";
	struct http_result r;
	char key[80], ra[32], *body;
	json_t *rep;
	int64_t rows;

	(void)state;
	fixture_start(&f, low_host_rate);
	enrol_host(&f, host, key);
	rep = make_report(host, "f0000000000000000000000000000001", 1);
	post_report(&f, key, rep, 200, "stored");
	json_object_set_new(rep, "batch_id",
			    json_string("f0000000000000000000000000000002"));
	post_report(&f, key, rep, 200, "stored");
	rows = count_data_rows(&f);
	json_object_set_new(rep, "batch_id",
			    json_string("f0000000000000000000000000000003"));
	body = dump(rep);
	http(&f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &r);
	assert_int_equal(r.status, 429);
	assert_true(http_header(&r, "Retry-After", ra, sizeof(ra)));
	assert_true(atoi(ra) >= 1);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "rate_limited");
	http_result_fini(&r);
	assert_int_equal(count_data_rows(&f), rows);
	free(body);
	json_decref(rep);
	fixture_stop(&f);
}

static void loopback_limited(struct twl_config *c)
{
	c->limit_loopback = true;
	c->ip_rate = 0.01;
	c->ip_burst = 3;
}

/* Per-IP request limit (normally for non-loopback peers; forced on here). */
static void test_ip_limit(void **state)
{
	struct fixture f;
	struct http_result r;
	char ra[32];

	(void)state;
	fixture_start(&f, loopback_limited);
	for (int i = 0; i < 3; i++) {
		http(&f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
		assert_int_equal(r.status, 200);
		http_result_fini(&r);
	}
	http(&f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 429);
	assert_true(http_header(&r, "Retry-After", ra, sizeof(ra)));
	assert_true(atoi(ra) >= 1);
	http_result_fini(&r);
	fixture_stop(&f);
}

static void client_certs(struct twl_config *c)
{
	/* the fixture's own CA signs the client certificate used below */
	snprintf(c->client_ca_file, sizeof(c->client_ca_file), "%.400s/ca.pem",
		 c->data_dir);
	c->require_client_cert = true;
}

/*
 * require-client-cert: every agent credential needs a certificate from
 * client-ca, the enrolment token as well as a host key.
 */
static void test_client_cert(void **state)
{
	struct fixture f;
	const char *host =
		"abab000000000000000000000000000000000000000000000000000000000008";
	const char *enrol = "{\"host_id\":\"abab\"}";
	struct http_result r;
	char key[80], *body;
	json_t *rep;
	int rc;

	(void)state;
	fixture_start(&f, client_certs);
	http(&f, "POST", "/api/v1/enroll", f.enrol, enrol, strlen(enrol),
	     "Expect: 100-continue", &r);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "client certificate"));
	http_result_fini(&r);
	assert_int_equal(count_rows(&f, "host_keys"), 0);
	/* the server's certificate is signed by the same CA: use it as client cert */
	snprintf(f.client_cert, sizeof(f.client_cert), "%.290s",
		 f.cfg.cert_file);
	snprintf(f.client_key, sizeof(f.client_key), "%.290s", f.cfg.key_file);
	enrol_host(&f, host, key);
	rep = make_report(host, "ab000000000000000000000000000001", 1);
	body = dump(rep);
	f.client_cert[0] = f.client_key[0] = '\0';
	http(&f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &r);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "client certificate"));
	http_result_fini(&r);
	assert_int_equal(count_rows(&f, "batches"), 0);
	snprintf(f.client_cert, sizeof(f.client_cert), "%.290s",
		 f.cfg.cert_file);
	snprintf(f.client_key, sizeof(f.client_key), "%.290s", f.cfg.key_file);
	rc = http_try(&f, "POST", "/api/v1/reports", key, body, strlen(body),
		      NULL, &r);
	assert_int_equal(rc, 0);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	assert_int_equal(count_rows(&f, "batches"), 1);
	free(body);
	json_decref(rep);
	fixture_stop(&f);
}

static void few_enrolments(struct twl_config *c)
{
	c->enroll_rate = 0.001;
	c->enroll_burst = 3;
}

static long enrol_status(struct fixture *f, const char *token,
			 const char *host_id, char *retry_after, size_t cap)
{
	struct http_result r;
	char body[200];
	long st;

	snprintf(body, sizeof(body), "{\"host_id\":\"%s\"}", host_id);
	http(f, "POST", "/api/v1/enroll", token, body, strlen(body), NULL, &r);
	st = r.status;
	if (retry_after && !http_header(&r, "Retry-After", retry_after, cap))
		retry_after[0] = '\0';
	if (st != 200 && st != 429 && st != 403)
		fail_msg("enrol %s: %ld %s", host_id, st, r.body);
	http_result_fini(&r);
	return st;
}

/*
 * Enrolment is bounded per enrolment token, whatever host ids it names:
 * a rate (a new host id is no new bucket) and a cap on its live keys.
 */
static void test_enroll_limits(void **state)
{
	struct fixture f;
	char ra[32], second[80], path[128];
	int64_t id;

	(void)state;
	fixture_start(&f, few_enrolments);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "e%d", i);
		assert_int_equal(enrol_status(&f, f.enrol, path, NULL, 0), 200);
	}
	/* a fourth host id, or one enrolled already: the same bucket */
	assert_int_equal(enrol_status(&f, f.enrol, "e9", ra, sizeof(ra)), 429);
	assert_true(atoi(ra) >= 1);
	assert_int_equal(enrol_status(&f, f.enrol, "e0", NULL, 0), 429);
	/* another token has its own */
	assert_int_equal(twl_auth_token_create(f.store, "t-enrol-2", "agent",
					       time(NULL), second, &id),
			 0);
	assert_int_equal(enrol_status(&f, second, "e3", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, second, "e4", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, second, "e5", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, second, "e6", NULL, 0), 429);
	fixture_stop(&f);
}

static void capped_enrolments(struct twl_config *c)
{
	c->enroll_max_keys = 3;
}

static void test_enroll_cap(void **state)
{
	struct fixture f;
	struct http_result r;
	char path[128];

	(void)state;
	fixture_start(&f, capped_enrolments);
	assert_int_equal(enrol_status(&f, f.enrol, "c1", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, f.enrol, "c2", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, f.enrol, "c2", NULL, 0), 200);
	http(&f, "POST", "/api/v1/enroll", f.enrol, "{\"host_id\":\"c3\"}",
	     strlen("{\"host_id\":\"c3\"}"), NULL, &r);
	assert_int_equal(r.status, 403);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "enrolment_cap");
	http_result_fini(&r);
	assert_int_equal(count_rows(&f, "host_keys"), 3);
	/* revoked keys are not live: room again */
	snprintf(path, sizeof(path), "/api/v1/host-keys/c2");
	http(&f, "DELETE", path, f.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	assert_int_equal(enrol_status(&f, f.enrol, "c3", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, f.enrol, "c4", NULL, 0), 200);
	assert_int_equal(enrol_status(&f, f.enrol, "c5", NULL, 0), 403);
	fixture_stop(&f);
}

/* Store a report of host_id, boot @boot, posted with @key at @now. */
static void post_as(struct fixture *f, const char *host_id, const char *key,
		    const char *boot, int64_t now)
{
	static unsigned n;
	struct twl_ingest *in;
	char batch[33];
	json_t *rep;

	snprintf(batch, sizeof(batch), "c0de%028x", ++n);
	rep = make_report(host_id, batch, n);
	json_object_set_new(json_object_get(rep, "host"), "boot_id",
			    json_string(boot));
	assert_int_equal(twl_ingest_prepare(rep, host_id, &in), 0);
	twl_sha256_hex(key, strlen(key), in->key_hash);
	assert_int_equal(twl_store_write_begin(f->store), 0);
	assert_int_equal(twl_store_ingest_prepared(f->store, host_id, in, now),
			 0);
	assert_int_equal(twl_store_write_end(f->store, true), 0);
	twl_ingest_free(in);
	json_decref(rep);
}

/* The host ids listed as cloned at @now. */
static json_t *cloned_at(struct fixture *f, int64_t now)
{
	json_t *doc = NULL, *ids = json_array(), *h;
	size_t i;

	assert_int_equal(twl_read_health(f->store, now, 3600, NULL, &doc), 0);
	json_array_foreach(
		json_object_get(json_object_get(doc, "cloned"), "hosts"), i, h)
		json_array_append(ids, json_object_get(h, "host_id"));
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(doc, "cloned"), "count")),
			 json_array_size(ids));
	json_decref(doc);
	return ids;
}

static bool listed(const json_t *ids, const char *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach(ids, i, v) if (!strcmp(json_string_value(v),
						  id)) return true;
	return false;
}

#define CLONE(n) \
	"c10e00000000000000000000000000000000000000000000000000000000000" n
#define BOOT(n) "00000000-0000-4000-8000-00000000000" n

/*
 * Machines cloned from one image share a host id. Both kinds show on the
 * health page: two live keys whose reports of different boots interleave,
 * and one key that comes back to the boot before. A host that enrolled
 * again after a reboot, or that simply reboots, does not.
 */
static void test_clones(void **state)
{
	struct fixture *f = *state;
	int64_t t = time(NULL) - 300;
	char k1[80], k2[80], k3[80], k4[80], k5[80], k6[80];
	struct http_result r;
	json_t *ids;

	enrol_host(f, CLONE("1"), k1); /* clones, a key each */
	enrol_host(f, CLONE("1"), k2);
	post_as(f, CLONE("1"), k1, BOOT("a"), t);
	post_as(f, CLONE("1"), k2, BOOT("b"), t + 5);
	post_as(f, CLONE("1"), k1, BOOT("a"), t + 70);
	post_as(f, CLONE("1"), k2, BOOT("b"), t + 75);
	enrol_host(f, CLONE("2"), k3); /* enrolled again after a reboot */
	enrol_host(f, CLONE("2"), k4);
	post_as(f, CLONE("2"), k3, BOOT("a"), t);
	post_as(f, CLONE("2"), k3, BOOT("a"), t + 70);
	post_as(f, CLONE("2"), k4, BOOT("b"), t + 100);
	post_as(f, CLONE("2"), k4, BOOT("b"), t + 170);
	enrol_host(f, CLONE("3"), k5); /* clones sharing one key */
	post_as(f, CLONE("3"), k5, BOOT("a"), t);
	post_as(f, CLONE("3"), k5, BOOT("b"), t + 10);
	post_as(f, CLONE("3"), k5, BOOT("a"), t + 20);
	enrol_host(f, CLONE("4"), k6); /* reboots */
	post_as(f, CLONE("4"), k6, BOOT("a"), t);
	post_as(f, CLONE("4"), k6, BOOT("b"), t + 100);
	post_as(f, CLONE("4"), k6, BOOT("c"), t + 200);

	ids = cloned_at(f, t + 250);
	assert_true(listed(ids, CLONE("1")));
	assert_false(listed(ids, CLONE("2")));
	assert_true(listed(ids, CLONE("3")));
	assert_false(listed(ids, CLONE("4")));
	json_decref(ids);
	/* the read API says so too, with the host's row */
	http(f, "GET", "/api/v1/health", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"cloned\":{\"count\":2"));
	assert_non_null(strstr(r.body, CLONE("1")));
	http_result_fini(&r);
	/* silent for longer than silent-after: no longer listed */
	ids = cloned_at(f, t + 75 + 3601);
	assert_false(listed(ids, CLONE("1")));
	json_decref(ids);
}

/* The key that posted a report over HTTPS is the one the store notes. */
static void test_key_noted(void **state)
{
	struct fixture *f = *state;
	const char *host = CLONE("5");
	char k1[80], k2[80], hash[65];
	json_t *rep;

	enrol_host(f, host, k1);
	enrol_host(f, host, k2);
	rep = make_report(host, "c0de0000000000000000000000000f01", 1);
	post_report(f, k2, rep, 200, "stored");
	json_decref(rep);
	twl_sha256_hex(k2, strlen(k2), hash);
	assert_int_equal(query_int(f,
				   "SELECT count(*) FROM host_keys WHERE "
				   "key_hash = ?1 AND boot_id IS NOT NULL",
				   hash),
			 1);
	twl_sha256_hex(k1, strlen(k1), hash);
	assert_int_equal(query_int(f,
				   "SELECT count(*) FROM host_keys WHERE "
				   "key_hash = ?1 AND boot_id IS NULL",
				   hash),
			 1);
}

/* Run @sql on the fixture's database through a connection of its own. */
static void exec_sql(struct fixture *f, const char *sql)
{
	sqlite3 *db;
	char *err = NULL;

	assert_int_equal(sqlite3_open(f->cfg.db_path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(db);
}

/*
 * /healthz turns 503 once report after report fails to be stored, and
 * back to 200 when one is stored again. A trigger makes every batch
 * insert fail, as a corrupt or full database would.
 */
static void test_healthz_store_failing(void **state)
{
	const char *host =
		"fa11000000000000000000000000000000000000000000000000000000000001";
	struct fixture f;
	struct http_result r;
	char key[80], batch[33];
	json_t *rep;

	(void)state;
	fixture_start(&f, NULL);
	enrol_host(&f, host, key);
	exec_sql(&f, "CREATE TRIGGER fail BEFORE INSERT ON batch_ids BEGIN"
		     " SELECT RAISE(ABORT, 'injected failure'); END");
	for (int i = 1; i <= 6; i++) {
		snprintf(batch, sizeof(batch), "fa11%028d", i);
		rep = make_report(host, batch, i);
		post_report(&f, key, rep, 500, NULL);
		json_decref(rep);
		http(&f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
		assert_int_equal(r.status, i < 5 ? 200 : 503);
		if (i >= 5)
			assert_non_null(strstr(r.body, "could not be stored"));
		http_result_fini(&r);
	}
	http(&f, "GET", "/metrics", f.admin, NULL, 0, NULL, &r);
	assert_non_null(strstr(r.body, "\ntwilight_store_failing 1\n"));
	assert_non_null(strstr(r.body, "\ntwilight_store_failures_total 6\n"));
	http_result_fini(&r);
	exec_sql(&f, "DROP TRIGGER fail");
	rep = make_report(host, "fa110000000000000000000000000099", 99);
	post_report(&f, key, rep, 200, "stored");
	json_decref(rep);
	http(&f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	fixture_stop(&f);
}

/* A server certificate (its own CA) that expires in 10 days. */
static void expiring_cert(struct twl_config *c)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256"
		 " -nodes -days 10 -subj /CN=twilight-server"
		 " -addext subjectAltName=DNS:localhost,IP:127.0.0.1"
		 " -keyout '%.400s/server.key' -out '%.400s/server.pem'"
		 " >/dev/null 2>&1 && cp '%.400s/server.pem' '%.400s/ca.pem'",
		 c->data_dir, c->data_dir, c->data_dir, c->data_dir);
	assert_int_equal(system(cmd), 0);
}

static const char *expiry_metric(const char *body, const char *name)
{
	const char *p = strstr(body, name);

	assert_non_null(p);
	return p + strlen(name);
}

/*
 * The server certificate's expiry is in /metrics always, and a warning in
 * the health API from 30 days before it.
 */
static void test_cert_expiry(void **state)
{
	struct fixture *f = *state, g;
	struct http_result r;
	json_t *cert;
	long long t, days;
	char want[64];

	http(f, "GET", "/metrics", f->admin, NULL, 0, NULL, &r);
	t = atoll(expiry_metric(
		r.body, "\ntwilight_tls_cert_expiry_timestamp_seconds "));
	assert_true(t > time(NULL) + 800LL * 86400); /* generated: 825 days */
	assert_non_null(strstr(r.body, "\ntwilight_tls_cert_expiring 0\n"));
	http_result_fini(&r);
	http(f, "GET", "/api/v1/health", f->viewer, NULL, 0, NULL, &r);
	cert = json_object_get(r.json, "certificate");
	assert_int_equal(json_integer_value(json_object_get(cert, "not_after")),
			 t);
	assert_true(json_is_null(json_object_get(cert, "warning")));
	http_result_fini(&r);

	fixture_start(&g, expiring_cert);
	http(&g, "GET", "/metrics", g.admin, NULL, 0, NULL, &r);
	t = atoll(expiry_metric(
		r.body, "\ntwilight_tls_cert_expiry_timestamp_seconds "));
	assert_true(t <= time(NULL) + 10LL * 86400 + 60);
	assert_non_null(strstr(r.body, "\ntwilight_tls_cert_expiring 1\n"));
	http_result_fini(&r);
	http(&g, "GET", "/api/v1/health", g.viewer, NULL, 0, NULL, &r);
	cert = json_object_get(r.json, "certificate");
	/* whole days left: 10 in the second the certificate was made, else 9 */
	days = json_integer_value(json_object_get(cert, "days_left"));
	assert_true(days == 9 || days == 10);
	snprintf(want, sizeof(want), "expires in %lld days", days);
	assert_non_null(strstr(
		json_string_value(json_object_get(cert, "warning")), want));
	http_result_fini(&r);
	fixture_stop(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthz),
		cmocka_unit_test(test_routing_errors),
		cmocka_unit_test(test_enroll),
		cmocka_unit_test(test_ingest_and_replay),
		cmocka_unit_test(test_unknown_rematched),
		cmocka_unit_test(test_unknown_rematched_digits),
		cmocka_unit_test(test_ingest_gzip),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_host_key_revoke),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_whoami),
		cmocka_unit_test(test_clones),
		cmocka_unit_test(test_key_noted),
		cmocka_unit_test(test_cert_expiry),
	};
	const struct CMUnitTest solo[] = {
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_ip_limit),
		cmocka_unit_test(test_client_cert),
		cmocka_unit_test(test_enroll_limits),
		cmocka_unit_test(test_enroll_cap),
		cmocka_unit_test(test_healthz_store_failing),
	};
	int fails;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fails = cmocka_run_group_tests(tests, setup, teardown);
	fails += cmocka_run_group_tests(solo, NULL, NULL);
	curl_global_cleanup();
	return fails;
}
