// SPDX-License-Identifier: GPL-2.0
/*
 * Tokens and per-host keys through the storage interface (store.h),
 * the same test run against each backend: SQLite (a file) and
 * PostgreSQL (a database on the fixture's server). Open, schema version,
 * tokens added, looked up, listed and revoked; keys bound, capped per
 * enrolment token, looked up and revoked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/store.h"

/* A new empty store of @b. */
static struct twl_store *open_new(enum backend b)
{
	struct twl_store *s = NULL;
	char uri[512];

	if (b == SQLITE) {
		unlink(dbpath);
		assert_int_equal(twl_store_open(dbpath, &s), 0);
	} else {
		pg_fixture_db(uri, sizeof(uri));
		assert_int_equal(twl_store_open(uri, &s), 0);
	}
	return s;
}

static void test_schema_version(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);

	assert_true(twl_store_schema_version(s) >= 1);
	twl_store_close(s);
}

static void test_tokens(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	char role[16], name[64];
	int64_t a, v, id;
	json_t *list = NULL, *t;

	assert_int_equal(twl_store_token_add(s, "ops", "admin", "aa11", 5, &a),
			 0);
	assert_int_equal(
		twl_store_token_add(s, "dash", "viewer", "bb22", 6, &v), 0);
	assert_true(v > a);
	/* one hash, one token */
	assert_true(twl_store_token_add(s, "again", "viewer", "bb22", 7, NULL) <
		    0);
	assert_int_equal(twl_store_token_lookup(s, "bb22", role, sizeof(role),
						name, sizeof(name), &id),
			 0);
	assert_string_equal(role, "viewer");
	assert_string_equal(name, "dash");
	assert_int_equal(id, v);
	/* capped copies */
	assert_int_equal(
		twl_store_token_lookup(s, "aa11", role, 3, name, 2, &id), 0);
	assert_string_equal(role, "ad");
	assert_string_equal(name, "o");
	assert_int_equal(twl_store_token_lookup(s, "cc33", role, sizeof(role),
						name, sizeof(name), &id),
			 -ENOENT);

	assert_int_equal(twl_store_token_revoke(s, v, 9), 0);
	assert_int_equal(twl_store_token_revoke(s, v, 10), -ENOENT);
	assert_int_equal(twl_store_token_revoke(s, 12345, 10), -ENOENT);
	assert_int_equal(twl_store_token_lookup(s, "bb22", role, sizeof(role),
						name, sizeof(name), &id),
			 -ENOENT);

	assert_int_equal(twl_store_token_list(s, &list), 0);
	assert_int_equal(json_array_size(list), 2);
	t = json_array_get(list, 0);
	assert_int_equal(json_integer_value(json_object_get(t, "id")), a);
	assert_string_equal(json_string_value(json_object_get(t, "role")),
			    "admin");
	assert_int_equal(json_integer_value(json_object_get(t, "created")), 5);
	assert_true(json_is_null(json_object_get(t, "revoked")));
	assert_null(json_object_get(t, "token_hash"));
	t = json_array_get(list, 1);
	assert_string_equal(json_string_value(json_object_get(t, "name")),
			    "dash");
	assert_int_equal(json_integer_value(json_object_get(t, "revoked")), 9);
	json_decref(list);
	twl_store_close(s);
}

static void test_host_keys(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	char host[65];
	int n = -1;

	assert_int_equal(twl_store_host_key_add(s, "h1", "k1", 7, 2, 10), 0);
	assert_int_equal(twl_store_host_key_add(s, "h1", "k2", 7, 2, 11), 0);
	/* token 7 has 2 live keys: its cap */
	assert_int_equal(twl_store_host_key_add(s, "h2", "k3", 7, 2, 12),
			 -EDQUOT);
	assert_int_equal(twl_store_host_key_lookup(s, "k3", host), -ENOENT);
	/* another token has its own cap */
	assert_int_equal(twl_store_host_key_add(s, "h2", "k3", 8, 2, 12), 0);
	assert_int_equal(twl_store_host_key_lookup(s, "k2", host), 0);
	assert_string_equal(host, "h1");
	assert_int_equal(twl_store_host_key_lookup(s, "k3", host), 0);
	assert_string_equal(host, "h2");

	assert_int_equal(twl_store_host_key_revoke(s, "h1", 20, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(twl_store_host_key_lookup(s, "k1", host),
			 -EKEYREVOKED);
	assert_int_equal(twl_store_host_key_revoke(s, "h1", 21, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(twl_store_host_key_revoke(s, "nobody", 21, NULL), 0);
	/* revoked keys leave the cap: token 7 mints again */
	assert_int_equal(twl_store_host_key_add(s, "h1", "k4", 7, 2, 22), 0);
	assert_int_equal(twl_store_host_key_lookup(s, "k4", host), 0);
	assert_int_equal(twl_store_host_key_lookup(s, "k3", host), 0);
	twl_store_close(s);
}

static int group_teardown(void **state)
{
	pg_fixture_drop_all(state);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_schema_version),
		BOTH(test_tokens),
		BOTH(test_host_keys),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
