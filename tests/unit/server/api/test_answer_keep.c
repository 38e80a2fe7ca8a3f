// SPDX-License-Identifier: GPL-2.0
/*
 * Kept answers shared through the database (server/api/answer_keep.c):
 * two in-process servers with real TLS on one database of the
 * PostgreSQL fixture, both keeping every answer (slow-answer = 0). What
 * one server computed, the other serves from the database on its first
 * request, with an Age header, for a feature's detail and the export;
 * an answer computed for its own request never carries one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "pg_fixture.h"

#define HOST_A \
	"a1a1000000000000000000000000000000000000000000000000000000000001"
#define SOFT "memcg_v1.soft_limit"

static char pg_uri[512];

/* On the fixture's database, every answer kept. */
static void shared_keep_all(struct twl_config *cfg)
{
	snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", pg_uri);
	cfg->slow_answer_ms = 0;
	cfg->slow_answer_max_age_s = 3600;
	cfg->slow_answer_ahead = false; /* each first request computes */
}

/* GET @path on @f: whether it had an Age header; @key's value into *@v. */
static bool get_aged(struct fixture *f, const char *path, const char *key,
		     json_int_t *v)
{
	struct http_result r;
	char age[32];
	bool aged;
	json_t *o;

	http(f, "GET", path, f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	o = json_object_get(r.json, "features");
	o = o ? json_array_get(o, 0) : r.json;
	*v = json_integer_value(json_object_get(o, key));
	aged = http_header(&r, "Age", age, sizeof(age));
	http_result_fini(&r);
	return aged;
}

static void test_two_servers(void **state)
{
	const char *detail = "/api/v1/features/" SOFT;
	const char *export =
		"/api/v1/export/linux-mm?format=json&feature=" SOFT;
	int64_t shift = (int64_t)time(NULL) - FULL_JSON_SENT - 3600;
	struct fixture a, b;
	json_int_t v;

	(void)state;
	pg_fixture_db(pg_uri, sizeof(pg_uri));
	fixture_start(&a, shared_keep_all);
	fixture_start(&b, shared_keep_all);
	post_full_report(&a, HOST_A, "000000000000000000000000000000a1", shift);
	/* computed by a for its request, then served by b from the database */
	assert_false(get_aged(&a, detail, "hosts", &v));
	assert_int_equal(v, 1);
	assert_true(get_aged(&b, detail, "hosts", &v));
	assert_int_equal(v, 1);
	assert_false(get_aged(&b, export, "hosts_using", &v));
	assert_int_equal(v, 1);
	assert_true(get_aged(&a, export, "hosts_using", &v));
	assert_int_equal(v, 1);
	fixture_stop(&b);
	fixture_stop(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_servers),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
