// SPDX-License-Identifier: GPL-2.0
/*
 * Array literals (store/postgresql/store_pg_array.h): the exact text,
 * and what a real PostgreSQL (the test fixture) reads back from it, for
 * elements that need quoting (quotes, backslashes, braces, commas,
 * spaces, the word NULL, the empty string, UTF-8) and for NULLs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "pg_fixture.h"
#include "store/postgresql/store_pg_array.h"

static const char *const texts[] = {
	"plain",
	"",
	"a \"quoted\" word",
	"back\\slash\\",
	"{braces}",
	"a,b",
	" ",
	"NULL",
	"caf\xc3\xa9",
	"\\\"",
};
#define N_TEXTS (sizeof(texts) / sizeof(texts[0]))

static void test_literals(void **state)
{
	struct twl_buf b;

	twl_buf_init(&b, 1024);
	assert_int_equal(twl_pg_array_end(&b), 0);
	assert_string_equal(b.data, "{}");
	twl_buf_reset(&b);
	assert_int_equal(twl_pg_array_i64(&b, 1), 0);
	assert_int_equal(twl_pg_array_null(&b), 0);
	assert_int_equal(twl_pg_array_i64(&b, INT64_MIN), 0);
	assert_int_equal(twl_pg_array_end(&b), 0);
	assert_string_equal(b.data, "{1,NULL,-9223372036854775808}");
	twl_buf_reset(&b);
	assert_int_equal(twl_pg_array_text(&b, "a\"b\\c"), 0);
	assert_int_equal(twl_pg_array_text(&b, NULL), 0);
	assert_int_equal(twl_pg_array_text(&b, ""), 0);
	assert_int_equal(twl_pg_array_end(&b), 0);
	assert_string_equal(b.data, "{\"a\\\"b\\\\c\",NULL,\"\"}");
	twl_buf_fini(&b);
	/* a cap reached is an error, never a cut literal */
	twl_buf_init(&b, 4);
	assert_int_equal(twl_pg_array_text(&b, "abcdef"), -E2BIG);
	twl_buf_fini(&b);
}

/* What PostgreSQL reads back: every text, in order, and the NULL. */
static void test_round_trip(void **state)
{
	char uri[512];
	struct twl_buf b;
	PGconn *c;
	PGresult *r;
	const char *v[1];

	pg_fixture_db(uri, sizeof(uri));
	c = PQconnectdb(uri);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	twl_buf_init(&b, 4096);
	for (size_t i = 0; i < N_TEXTS; i++)
		assert_int_equal(twl_pg_array_text(&b, texts[i]), 0);
	assert_int_equal(twl_pg_array_null(&b), 0);
	assert_int_equal(twl_pg_array_end(&b), 0);
	v[0] = b.data;
	r = PQexecParams(c, "SELECT t FROM unnest($1::text[]) t", 1, NULL, v,
			 NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_int_equal(PQntuples(r), N_TEXTS + 1);
	for (size_t i = 0; i < N_TEXTS; i++) {
		assert_false(PQgetisnull(r, (int)i, 0));
		assert_string_equal(PQgetvalue(r, (int)i, 0), texts[i]);
	}
	assert_true(PQgetisnull(r, N_TEXTS, 0));
	PQclear(r);
	twl_buf_fini(&b);
	PQfinish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
