// SPDX-License-Identifier: GPL-2.0
/*
 * The server's catalog as data (catalog_data.c, api/api_catalog.c): a data
 * directory catalog.json that is missing, broken or not newer leaves the
 * compiled-in catalog; a newer one is installed before the store opens,
 * which then seeds its tables from it; both catalog routes serve it (ETag
 * and 304, the agent route's 204 and 400, roles); "catalog check" exits
 * 0, 1 or 2.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "../common/catalog_newer.h"
#include "catalog_data.h"
#include "harness.h"

#define NEW_TEXT \
	"twilight-test: memory.twl_probe is deprecated and will be removed"

static char dir[] = "/tmp/twl-srvcat-XXXXXX";

/* The shipped catalog as text, with "version" @version (and NEW_TEXT). */
static char *catalog_text(unsigned version, bool new_text)
{
	return catalog_newer(getenv("TWILIGHT_SOURCE_DIR"), version,
			     new_text ? NEW_TEXT : NULL, NULL);
}

static void put(const char *name, const char *text)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(twl_write_file_atomic(p, text, strlen(text), 0644), 0);
}

static int run_cli(const char *file)
{
	char p[300];
	char *argv[] = { "catalog", "check", p, NULL };

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return twl_catalog_cli(3, argv);
}

/* Absent, broken, not newer: the compiled-in catalog stays. */
static void test_refused_files_keep_compiled(void **state)
{
	unsigned v = twl_catalog_compiled.version;
	char *text;

	(void)state;
	assert_int_equal(twl_server_catalog_load(dir), 0);
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
	put("catalog.json", "{\"version\": 99, \"routes\": [");
	assert_int_equal(twl_server_catalog_load(dir), 0);
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
	assert_int_equal(run_cli("catalog.json"), 1);
	text = catalog_text(v, true);
	put("catalog.json", text);
	free(text);
	assert_int_equal(run_cli("catalog.json"), 0);
	assert_int_equal(twl_server_catalog_load(dir), 0);
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
	assert_int_equal(run_cli("absent.json"), 1);
	{
		char *argv[] = { "catalog", "lint", "x", NULL };

		assert_int_equal(twl_catalog_cli(3, argv), 2);
	}
}

static void expect_get(struct fixture *f, const char *path, const char *token,
		       const char *extra, long status, struct http_result *r)
{
	http(f, "GET", path, token, NULL, 0, extra, r);
	if (r->status != status)
		fail_msg("GET %s: %ld, want %ld: %.*s", path, r->status, status,
			 (int)r->len, r->body ? r->body : "");
}

/* A newer file is installed, seeded into the store and served. */
static void test_newer_file_served(void **state)
{
	unsigned v = twl_catalog_compiled.version + 1;
	struct fixture f;
	struct http_result r;
	struct twl_catalog *c;
	char path[64], etag[128], hdr[160], key[80], err[512];
	char *text = catalog_text(v, true);

	(void)state;
	put("catalog.json", text);
	free(text);
	assert_int_equal(twl_server_catalog_load(dir), 0);
	assert_int_equal(twl_catalog_version(), v);
	memset(&f, 0, sizeof(f));
	fixture_start(&f, NULL);
	assert_int_equal(query_int(&f,
				   "SELECT count(*) FROM catalog_message"
				   " WHERE text = ?1",
				   NEW_TEXT),
			 1);
	expect_get(&f, "/api/v1/catalog", f.viewer, NULL, 200, &r);
	assert_int_equal(json_integer_value(json_object_get(r.json, "version")),
			 v);
	assert_true(http_header(&r, "ETag", etag, sizeof(etag)));
	http_result_fini(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s", etag);
	expect_get(&f, "/api/v1/catalog", f.viewer, hdr, 304, &r);
	assert_int_equal(r.len, 0);
	http_result_fini(&r);

	enrol_host(
		&f,
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		key);
	snprintf(path, sizeof(path), "/api/v1/agent/catalog?have=%u", v - 1);
	expect_get(&f, path, key, NULL, 200, &r);
	c = twl_catalog_load(r.body, r.len, "served", err, sizeof(err));
	if (!c)
		fail_msg("the served catalog is refused: %s", err);
	assert_int_equal(c->version, v);
	twl_catalog_free(c);
	http_result_fini(&r);
	snprintf(path, sizeof(path), "/api/v1/agent/catalog?have=%u", v);
	expect_get(&f, path, key, NULL, 204, &r);
	http_result_fini(&r);
	expect_get(&f, "/api/v1/agent/catalog?have=x1", key, NULL, 400, &r);
	http_result_fini(&r);
	expect_get(&f, "/api/v1/agent/catalog", f.viewer, NULL, 403, &r);
	http_result_fini(&r);
	expect_get(&f, "/api/v1/catalog", key, NULL, 403, &r);
	http_result_fini(&r);
	fixture_stop(&f);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char p[300];

	(void)state;
	snprintf(p, sizeof(p), "%s/catalog.json", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_files_keep_compiled),
		cmocka_unit_test(test_newer_file_served),
	};

	twl_log_init("test", LOG_DEBUG);
	return cmocka_run_group_tests(tests, setup, teardown);
}
