// SPDX-License-Identifier: GPL-2.0
/*
 * A group commit's feature sums kept until its end on PostgreSQL
 * (store/postgresql/store_pg_fold.h): only the reports that succeeded
 * are written, and a (host, feature) row named by several reports of the
 * group is written once per round, in the reports' order.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store/postgresql/store_pg_fold.h"

/* One feature's sums, @uses telling entries apart. */
static struct twl_rollup_entry entry(const char *feature, int64_t uses)
{
	struct twl_rollup_entry e = { .first = 1, .last = 2, .uses = uses };

	strcpy(e.feature, feature);
	return e;
}

static void add(struct twl_pg_fold *f, const char *host, const char *feature,
		int64_t uses)
{
	struct twl_rollup_entry e = entry(feature, uses);

	assert_int_equal(twl_pg_fold_add(f, host, &e), 0);
}

static void test_rounds(void **state)
{
	struct twl_pg_fold f = { 0 };
	int r[4] = { 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(twl_pg_fold_rounds(&f), 0);
	assert_int_equal(twl_pg_fold_begin(&f, &r[0], NULL, NULL, 0), 0);
	add(&f, "h1", "f1", 10);
	assert_int_equal(twl_pg_fold_begin(&f, &r[1], NULL, NULL, 0), 0);
	add(&f, "h2", "f1", 11);
	assert_int_equal(twl_pg_fold_begin(&f, &r[2], NULL, NULL, 0), 0);
	add(&f, "h1", "f1", 12);
	add(&f, "h1", "f2", 13);
	assert_int_equal(twl_pg_fold_begin(&f, &r[3], NULL, NULL, 0), 0);
	add(&f, "h1", "f1", 14);
	/* h1/f1 three times: three rounds, in the reports' order */
	assert_int_equal(twl_pg_fold_rounds(&f), 3);
	assert_int_equal(f.e[0].round, 0);
	assert_int_equal(f.e[1].round, 0);
	assert_int_equal(f.e[2].round, 1);
	assert_int_equal(f.e[3].round, 0);
	assert_int_equal(f.e[4].round, 2);
	/* report 2 failed at its tail: its entries are not written */
	r[2] = -EIO;
	assert_int_equal(twl_pg_fold_rounds(&f), 2);
	assert_int_equal(f.e[2].round, UINT_MAX);
	assert_int_equal(f.e[3].round, UINT_MAX);
	assert_int_equal(f.e[4].round, 1);
	/* a repeated batch (> 0) wrote nothing itself, its result is kept */
	r[2] = 1;
	assert_int_equal(twl_pg_fold_rounds(&f), 3);
	twl_pg_fold_empty(&f);
	assert_int_equal(twl_pg_fold_rounds(&f), 0);
	twl_pg_fold_free(&f);
}

/* A report stored alone (result NULL) is kept, whatever happens later. */
static void test_alone(void **state)
{
	struct twl_pg_fold f = { 0 };
	int b = -EIO;

	(void)state;
	assert_int_equal(twl_pg_fold_begin(&f, NULL, NULL, NULL, 0), 0);
	add(&f, "h1", "f1", 1);
	assert_int_equal(twl_pg_fold_begin(&f, &b, "h2", NULL, 7), 0);
	add(&f, "h2", "f1", 2);
	assert_int_equal(twl_pg_fold_rounds(&f), 1);
	assert_int_equal(f.e[0].round, 0);
	assert_int_equal(f.e[1].round, UINT_MAX);
	/* what a retry of the group needs is kept as given */
	assert_string_equal(f.r[1].host, "h2");
	assert_int_equal(f.r[1].now, 7);
	/* written: the entries go, the reports stay for a retry */
	twl_pg_fold_written(&f);
	assert_int_equal(f.n, 0);
	assert_int_equal(f.nr, 2);
	twl_pg_fold_free(&f);
}

static void test_refused(void **state)
{
	struct twl_pg_fold f = { 0 };
	struct twl_rollup_entry e = entry("f1", 1);
	char host[66];
	int r = 0;

	(void)state;
	/* no report begun: nothing to keep it under */
	assert_int_equal(twl_pg_fold_add(&f, "h1", &e), -EINVAL);
	assert_int_equal(twl_pg_fold_begin(&f, &r, NULL, NULL, 0), 0);
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(twl_pg_fold_add(&f, host, &e), -EINVAL);
	host[64] = '\0';
	assert_int_equal(twl_pg_fold_add(&f, host, &e), 0);
	assert_false(twl_pg_fold_full(&f));
	for (int i = 1; i < TWL_PG_FOLD_MAX; i++)
		assert_int_equal(twl_pg_fold_add(&f, host, &e), 0);
	assert_true(twl_pg_fold_full(&f));
	twl_pg_fold_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
