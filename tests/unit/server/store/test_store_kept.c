// SPDX-License-Identifier: GPL-2.0
/*
 * Kept answers in the store (store.h: twl_store_kept_*), the same test
 * run against each backend: SQLite (a file) and PostgreSQL (a database on
 * the fixture's server). Stored and read back byte for byte, an older
 * answer never replaces a newer one, a claim holds until it lapses and
 * a put ends it, a touch marks every answer (and is seen as the latest
 * touch), at most TWL_STORE_MAX_KEPT
 * rows (the least recently computed go), and the refusals.
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

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/store.h"

static char pg_uri[512];

/* A new empty store of @b. */
static struct twl_store *open_new(enum backend b)
{
	struct twl_store *s = NULL;

	if (b == SQLITE) {
		unlink(dbpath);
		assert_int_equal(twl_store_open(dbpath, &s), 0);
	} else {
		pg_fixture_db(pg_uri, sizeof(pg_uri));
		assert_int_equal(twl_store_open(pg_uri, &s), 0);
	}
	return s;
}

static int64_t raw_q(enum backend b, const char *sql)
{
	return b == SQLITE ? q(sql) : pg_q(pg_uri, sql);
}

/* Key number @i: 64 hex digits. */
static void key_of(int i, char key[65])
{
	snprintf(key, 65, "%064x", i);
}

/* Put answer @body under key @i, computed at @computed for @cost. */
static int put(struct twl_store *s, int i, int64_t computed, int64_t cost,
	       const char *body)
{
	struct twl_kept k = { .computed = computed, .cost = cost };

	key_of(i, k.key);
	k.body = (char *)body;
	k.len = strlen(body);
	return twl_store_kept_put(s, &k);
}

/* Read key @i into @k (its body freed by the caller). */
static int get(struct twl_store *s, int i, struct twl_kept *k)
{
	memset(k, 0, sizeof(*k));
	key_of(i, k->key);
	return twl_store_kept_get(s, k);
}

static void test_put_get(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	const char *body =
		"{\"features\":[{\"id\":\"\\u00e9t\\u00e9\",\"n\":1}]}";
	struct twl_kept k;

	assert_int_equal(get(s, 1, &k), -ENOENT);
	assert_null(k.body);
	assert_int_equal(put(s, 1, 5000, 1200, body), 0);
	assert_int_equal(get(s, 1, &k), 0);
	assert_int_equal(k.computed, 5000);
	assert_int_equal(k.cost, 1200);
	assert_int_equal(k.touched, 0);
	assert_int_equal(k.len, strlen(body));
	assert_string_equal(k.body, body);
	free(k.body);
	/* an older answer does not replace it, a newer one does */
	assert_int_equal(put(s, 1, 4000, 10, "{\"old\":1}"), 0);
	assert_int_equal(get(s, 1, &k), 0);
	assert_string_equal(k.body, body);
	free(k.body);
	assert_int_equal(put(s, 1, 6000, 20, "{\"new\":1}"), 0);
	assert_int_equal(get(s, 1, &k), 0);
	assert_string_equal(k.body, "{\"new\":1}");
	assert_int_equal(k.computed, 6000);
	free(k.body);
	twl_store_close(s);
}

static void test_claim_touch(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_kept k;
	char key[65];
	int64_t at;

	key_of(1, key);
	assert_int_equal(twl_store_kept_claim(s, key, 100, 200), 0); /* none */
	assert_int_equal(put(s, 1, 5000, 10, "{}"), 0);
	assert_int_equal(twl_store_kept_claim(s, key, 6000, 7000), 1);
	assert_int_equal(twl_store_kept_claim(s, key, 6500, 8000), 0);
	assert_int_equal(twl_store_kept_claim(s, key, 7000, 8000), 1);
	/* a put ends the claim */
	assert_int_equal(put(s, 1, 7100, 10, "{}"), 0);
	assert_int_equal(twl_store_kept_claim(s, key, 7200, 9000), 1);
	/* a touch marks every stored answer; a put leaves the mark */
	assert_int_equal(put(s, 2, 5000, 10, "{}"), 0);
	assert_int_equal(twl_store_kept_touched(s, &at), 0);
	assert_int_equal(at, 0);
	assert_int_equal(twl_store_kept_touch(s, 8000), 0);
	assert_int_equal(twl_store_kept_touched(s, &at), 0);
	assert_int_equal(at, 8000);
	assert_int_equal(get(s, 2, &k), 0);
	assert_int_equal(k.touched, 8000);
	free(k.body);
	assert_int_equal(put(s, 2, 9000, 10, "{}"), 0);
	assert_int_equal(get(s, 2, &k), 0);
	assert_int_equal(k.touched, 8000);
	assert_int_equal(k.computed, 9000);
	free(k.body);
	twl_store_close(s);
}

static void test_cap_refusals(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_kept k = { .computed = 1, .cost = 1 };
	char *big;

	for (int i = 0; i < TWL_STORE_MAX_KEPT + 3; i++)
		assert_int_equal(put(s, i, 1000 + i, 1, "{}"), 0);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM kept_answers"),
			 TWL_STORE_MAX_KEPT);
	assert_int_equal(get(s, 2, &k), -ENOENT); /* the oldest went */
	assert_int_equal(get(s, 3, &k), 0);
	free(k.body);
	/* refused: a bad key, no time, too large */
	memset(&k, 0, sizeof(k));
	snprintf(k.key, sizeof(k.key), "%s", "not-hex");
	k.computed = 1;
	k.body = "{}";
	k.len = 2;
	assert_int_equal(twl_store_kept_put(s, &k), -EINVAL);
	assert_int_equal(twl_store_kept_get(s, &k), -EINVAL);
	assert_int_equal(put(s, 1, 0, 1, "{}"), -EINVAL);
	big = malloc(TWL_STORE_KEPT_BODY_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', TWL_STORE_KEPT_BODY_MAX + 1);
	big[TWL_STORE_KEPT_BODY_MAX + 1] = '\0';
	assert_int_equal(put(s, 1, 5000, 1, big), -EFBIG);
	free(big);
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
		BOTH(test_put_get),
		BOTH(test_claim_touch),
		BOTH(test_cap_refusals),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
