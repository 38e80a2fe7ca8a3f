// SPDX-License-Identifier: GPL-2.0
/*
 * Upkeep of the SQLite store (server/store/sqlite/store_sqlite_maint.c):
 * retention, the WAL limit, the database size.
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
#include <sqlite3.h>

#include "sqlite_fixture.h"
#include "store/store.h"

/*
 * Retention: batch ids received before batch_days go and newer ones stay;
 * data rows go only with data_days, those older than it; and every
 * deleted row is counted.
 */
static void test_retention(void **state)
{
	const int64_t now = 1800000000, day = 86400;
	struct twl_store *s = NULL;
	int64_t deleted = -1, rows;
	json_t *r;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report("0123", "aa01");
	ingest_at(s, "0123", r, now - 40 * day);
	json_decref(r);
	r = report("0123", "aa02");
	ingest_at(s, "0123", r, now - 10 * day);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM batches"), 2);
	rows = q("SELECT count(*) FROM usage");
	assert_true(rows > 0);

	assert_int_equal(twl_store_prune(s, now, 35, 0, &deleted), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'aa02'"), 1);
	assert_int_equal(q("SELECT count(*) FROM batches"), 1);
	/* data_days 0 = keep */
	assert_int_equal(q("SELECT count(*) FROM usage"), rows);

	/* every row was received, or last used, more than a day ago */
	assert_int_equal(twl_store_prune(s, now, 35, 1, &deleted), 0);
	assert_true(deleted >= rows);
	assert_int_equal(q("SELECT count(*) FROM usage"), 0);
	/* a key's counts go with it (migration 021) */
	assert_int_equal(q("SELECT count(*) FROM usage_key"), 0);
	assert_int_equal(q("SELECT count(*) FROM usage_count"), 0);
	assert_int_equal(q("SELECT count(*) FROM warnings"), 0);
	assert_int_equal(q("SELECT count(*) FROM feature_host"), 0);
	assert_int_equal(q("SELECT count(*) FROM batches"), 1);
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * Retention keeps every rollup a recount of the raw rows it keeps: a
 * (feature, host) with an old boot's rows pruned and a new boot's kept
 * holds the new boot's counts alone, a host silent since before the
 * cut-off has nothing left, and the per-kind hour counts follow.
 */
static void test_retention_recount(void **state)
{
	const int64_t now = 1800000000, day = 86400;
	struct twl_store *s = NULL;
	json_t *r;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	/* host 0123: boot b1 40 days ago, boot b2 yesterday */
	r = report("0123", "rc01");
	move_to(r, "b1", now - 40 * day);
	ingest_at(s, "0123", r, now - 40 * day);
	json_decref(r);
	r = report_x10("0123", "rc02");
	move_to(r, "b2", now - day);
	ingest_at(s, "0123", r, now - day);
	json_decref(r);
	/* host 4567: only 40 days ago */
	r = report("4567", "rc03");
	move_to(r, "b3", now - 40 * day);
	ingest_at(s, "4567", r, now - 40 * day);
	json_decref(r);
	check_buckets();
	/* b1's 12 + b2's 120 writes of soft_limit */
	assert_int_equal(q("SELECT uses FROM feature_host WHERE host_id ="
			   " '0123' AND feature_id = 'memcg_v1.soft_limit'"),
			 132);

	assert_int_equal(twl_store_prune(s, now, 35, 30, NULL), 0);
	check_recount();
	assert_int_equal(q("SELECT uses FROM feature_host WHERE host_id ="
			   " '0123' AND feature_id = 'memcg_v1.soft_limit'"),
			 120);
	assert_int_equal(q("SELECT reads FROM feature_host WHERE host_id ="
			   " '0123' AND feature_id = 'memcg_v1.memsw'"),
			 72000);
	assert_int_equal(
		q("SELECT count(*) FROM feature_host WHERE host_id = '4567'"),
		0);
	assert_int_equal(q("SELECT sum(reading_only) FROM feature_hour"
			   " WHERE feature_id = 'memcg_v1.memsw'"),
			 1);
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * The database's size: the pages the file holds, growing with the data
 * (the WAL apart).
 */
static void test_db_size(void **state)
{
	struct twl_store *s = NULL;
	int64_t before = -1, after = -1;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_db_size(s, &before), 0);
	assert_int_equal(before, q("SELECT page_count * page_size FROM"
				   " pragma_page_count(), pragma_page_size()"));
	exec_sql("CREATE TABLE pad(x); WITH RECURSIVE n(i) AS (SELECT 1"
		 " UNION ALL SELECT i + 1 FROM n WHERE i < 500)"
		 " INSERT INTO pad SELECT randomblob(4000) FROM n");
	assert_int_equal(twl_store_db_size(s, &after), 0);
	assert_true(after >= before + 500 * 4000);
	twl_store_close(s);
	unlink(dbpath);
}

/* wal-max in bytes becomes the writer's limit in pages, at least 8000. */
static void test_wal_max(void **state)
{
	struct twl_store *s = NULL;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_set_wal_max(s, 256u << 20), 65536);
	assert_int_equal(twl_store_set_wal_max(s, 64u << 20), 16384);
	assert_int_equal(twl_store_set_wal_max(s, 1u << 20), 8000);
	twl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retention),
		cmocka_unit_test(test_retention_recount),
		cmocka_unit_test(test_db_size),
		cmocka_unit_test(test_wal_max),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
