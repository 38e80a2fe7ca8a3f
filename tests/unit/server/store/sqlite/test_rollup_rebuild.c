// SPDX-License-Identifier: GPL-2.0
/*
 * The rollups rebuilt from the raw rows (server/store/sqlite/
 * rollup_rebuild.c), the function the migrations and the fleet seed run:
 * after reports stored through the real ingest path, and again after
 * retention pruning, every rollup ingest keeps equals a GROUP BY recount
 * of the raw rows (check_recount()), and rebuilding them changes none.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "sqlite_fixture.h"
#include "store/sqlite/rollup_rebuild.h"
#include "store/store.h"

#define DAY 86400

/*
 * The rollups as ingest keeps them, without the zero rows its triggers
 * leave behind (a bucket whose hosts all moved on), which a recount has
 * no row for. feature_day is a history (retention never lowers it): a
 * rebuild that keeps it must leave it as it was; one that restarts it
 * is checked by its totals and last use (check_buckets()).
 */
static const char *const views[] = {
	"SELECT feature_id, host_id, first_used, last_used, uses, last_hour,"
	" reads, warnings, kinds FROM feature_host",
	"SELECT * FROM feature_hour WHERE hosts + configuring + listening"
	" + reading_only != 0",
	"SELECT * FROM feature_comm",
	"SELECT * FROM host_hour WHERE hosts != 0",
	"SELECT * FROM coverage_count",
	"SELECT * FROM feature_day",
};
#define N_VIEWS (sizeof(views) / sizeof(*views))

/* Copy each rollup view into a snapshot table snap_N. */
static void snapshot(void)
{
	char sql[512];

	for (size_t i = 0; i < N_VIEWS; i++) {
		snprintf(sql, sizeof(sql),
			 "DROP TABLE IF EXISTS snap_%zu;"
			 " CREATE TABLE snap_%zu AS %s",
			 i, i, views[i]);
		exec_sql(sql);
	}
}

/* The rows of view i and snap_i that the other lacks. */
static int64_t differ(size_t i)
{
	return qf("SELECT (SELECT count(*) FROM (%s EXCEPT SELECT * FROM"
		  " snap_%zu)) + (SELECT count(*) FROM (SELECT * FROM snap_%zu"
		  " EXCEPT %s))",
		  views[i], i, i, views[i]);
}

/*
 * Run twl_rollup_rebuild() in a transaction of the test's connection,
 * feature_day kept when @keep_history.
 */
static void rebuild(bool keep_history)
{
	char err[256] = "";
	sqlite3 *db;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL),
			 SQLITE_OK);
	if (twl_rollup_rebuild(db, keep_history, err, sizeof(err)))
		fail_msg("twl_rollup_rebuild: %s", err);
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
}

/*
 * Rebuilding, the history kept (as migrations do), changes no rollup
 * ingest (and retention) keeps.
 */
static void rebuild_changes_nothing(void)
{
	snapshot();
	rebuild(true);
	for (size_t i = 0; i < N_VIEWS; i++) {
		if (differ(i))
			fprintf(stderr, "rebuilt rollup differs: %s\n",
				views[i]);
		assert_int_equal(differ(i), 0);
	}
	check_recount();
}

/* Store host's report @batch (counters times ten when @x10) at boot, t. */
static void store_at(struct twl_store *s, const char *host, const char *batch,
		     bool x10, const char *boot, int64_t t)
{
	json_t *r = x10 ? report_x10(host, batch) : report(host, batch);

	move_to(r, boot, t);
	ingest_at(s, host, r, t);
	json_decref(r);
}

/*
 * Three hosts over 40 days (a reboot, counters growing, one host silent),
 * through twl_store_ingest: the rollups are a recount and a rebuild
 * changes none of them; retention at 30 days, and again the same.
 */
static void test_rebuild_matches_ingest(void **state)
{
	const int64_t now = 1800000000;
	struct twl_store *s = NULL;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	store_at(s, "0123", "rb01", false, "b1", now - 40 * DAY);
	store_at(s, "0123", "rb02", true, "b2", now - 2 * DAY);
	store_at(s, "0123", "rb03", true, "b2", now - DAY);
	store_at(s, "4567", "rb04", false, "b3", now - 40 * DAY);
	store_at(s, "89ab", "rb05", true, "b4", now - 3 * 3600);
	assert_true(q("SELECT count(*) FROM feature_host") > 3);
	assert_true(q("SELECT count(*) FROM host_coverage") == 3);
	check_buckets();
	rebuild_changes_nothing();
	/* restarted from the rows (the seed): the same totals and last use */
	rebuild(false);
	check_buckets();

	assert_int_equal(twl_store_prune(s, now, 35, 30, NULL), 0);
	assert_int_equal(
		q("SELECT count(*) FROM feature_host WHERE host_id = '4567'"),
		0);
	check_recount();
	rebuild_changes_nothing();
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * Rollups that drifted from the rows (written by hand, as the fleet seed
 * once did) are brought back to the recount by a rebuild.
 */
static void test_rebuild_repairs(void **state)
{
	struct twl_store *s = NULL;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	store_at(s, "0123", "rr01", false, "b1", 1800000000);
	twl_store_close(s);
	exec_sql("UPDATE feature_host SET uses = uses + 1, kinds = 4;"
		 " UPDATE feature_comm SET reads = reads + 2;"
		 " UPDATE host_hour SET hosts = hosts + 3;"
		 " UPDATE coverage_count SET hosts = 7 WHERE bit = 20;"
		 " INSERT INTO feature_hour(feature_id, hour, hosts)"
		 " VALUES ('memcg_v1.soft_limit', 1, 5)");
	rebuild(false);
	check_recount();
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rebuild_matches_ingest),
		cmocka_unit_test(test_rebuild_repairs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
