// SPDX-License-Identifier: GPL-2.0
/*
 * The writer's WAL write buffer (server/wal_buffer.h): a connection on it
 * commits, rolls back, spills pages mid-transaction (a tiny page cache),
 * checkpoints and restarts its WAL, while a reader on the default VFS in
 * another thread checks in every snapshot that a summary row agrees with
 * the table it summarises. A commit whose frames were not in the file when
 * it became visible shows up there as a mismatch or a corrupt page. At the
 * end the database must pass integrity_check and hold what a model in C
 * says.
 */
#include <errno.h>
#include <pthread.h>
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

#include "wal_buffer.h"

#define KEYS 400

static char dir[64], path[128];

struct reader {
	pthread_t thread;
	volatile bool stop;
	int checks, failures;
	char why[256];
};

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/twl-walbuf-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/w.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
}

/* One snapshot: count and total of t against the summary row. */
static int check_snapshot(sqlite3 *db, char *why, size_t cap)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
			db,
			"SELECT (SELECT count(*) FROM t),"
			" (SELECT coalesce(sum(length(v)), 0) FROM t), n, total"
			" FROM meta",
			-1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			if (sqlite3_column_int64(st, 0) !=
				    sqlite3_column_int64(st, 2) ||
			    sqlite3_column_int64(st, 1) !=
				    sqlite3_column_int64(st, 3)) {
				snprintf(
					why, cap,
					"t has %lld rows, %lld bytes; meta says %lld, %lld",
					(long long)sqlite3_column_int64(st, 0),
					(long long)sqlite3_column_int64(st, 1),
					(long long)sqlite3_column_int64(st, 2),
					(long long)sqlite3_column_int64(st, 3));
				rc = SQLITE_MISMATCH;
			} else {
				rc = SQLITE_OK;
			}
		}
	}
	if (rc != SQLITE_OK && rc != SQLITE_MISMATCH && rc != SQLITE_BUSY)
		snprintf(why, cap, "read: %s", sqlite3_errstr(rc));
	sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return rc == SQLITE_BUSY ? SQLITE_OK : rc;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		snprintf(r->why, sizeof(r->why), "reader cannot open");
		r->failures++;
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 1000);
	while (!r->stop) {
		if (check_snapshot(db, r->why, sizeof(r->why)) != SQLITE_OK)
			r->failures++;
		r->checks++;
	}
	sqlite3_close(db);
	return NULL;
}

static void test_walbuf_readers_and_model(void **state)
{
	static int64_t model[KEYS]; /* byte length per key, -1 = absent */
	struct reader r = { 0 };
	sqlite3 *w = NULL, *db = NULL;
	sqlite3_stmt *ins, *del, *meta, *st;
	unsigned seed = 12345;
	int64_t rows = 0, bytes = 0;

	(void)state;
	assert_int_equal(twl_walbuf_register(), 0);
	assert_int_equal(sqlite3_open_v2(path, &w,
					 SQLITE_OPEN_READWRITE |
						 SQLITE_OPEN_CREATE,
					 TWL_WALBUF_VFS),
			 SQLITE_OK);
	sqlite3_busy_timeout(w, 5000);
	/* 8 cached pages: dirty pages spill into the WAL mid-transaction */
	exec_ok(w, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		   " PRAGMA cache_size = 8; PRAGMA wal_autocheckpoint = 300;"
		   " CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
		   " CREATE TABLE meta(n INT, total INT);"
		   " INSERT INTO meta VALUES(0, 0);");
	assert_int_equal(
		sqlite3_prepare_v2(w,
				   "INSERT OR REPLACE INTO t VALUES(?1,"
				   " randomblob(?2))",
				   -1, &ins, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(w, "DELETE FROM t WHERE k = ?1", -1,
					    &del, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(
				 w,
				 "UPDATE meta SET n = (SELECT count(*) FROM t),"
				 " total = (SELECT coalesce(sum(length(v)), 0)"
				 " FROM t)",
				 -1, &meta, NULL),
			 SQLITE_OK);
	for (int k = 0; k < KEYS; k++)
		model[k] = -1;
	assert_int_equal(pthread_create(&r.thread, NULL, reader_main, &r), 0);
	for (int tx = 0; tx < 1500; tx++) {
		static int64_t undo[KEYS];
		bool rollback = rand_r(&seed) % 5 == 0;
		int ops = 1 + rand_r(&seed) % 12;

		memcpy(undo, model, sizeof(undo));
		exec_ok(w, "BEGIN IMMEDIATE");
		for (int i = 0; i < ops; i++) {
			int k = rand_r(&seed) % KEYS;

			if (rand_r(&seed) % 4 == 0) {
				sqlite3_bind_int(del, 1, k);
				assert_int_equal(sqlite3_step(del),
						 SQLITE_DONE);
				sqlite3_reset(del);
				model[k] = -1;
			} else {
				int len = 100 + rand_r(&seed) % 6000;

				sqlite3_bind_int(ins, 1, k);
				sqlite3_bind_int(ins, 2, len);
				assert_int_equal(sqlite3_step(ins),
						 SQLITE_DONE);
				sqlite3_reset(ins);
				model[k] = len;
			}
		}
		assert_int_equal(sqlite3_step(meta), SQLITE_DONE);
		sqlite3_reset(meta);
		if (rollback) {
			exec_ok(w, "ROLLBACK");
			memcpy(model, undo, sizeof(undo));
		} else {
			exec_ok(w, "COMMIT");
		}
	}
	r.stop = true;
	pthread_join(r.thread, NULL);
	sqlite3_finalize(ins);
	sqlite3_finalize(del);
	sqlite3_finalize(meta);
	assert_int_equal(sqlite3_close(w), SQLITE_OK);
	if (r.failures)
		fail_msg("%d of %d snapshots were inconsistent; last: %s",
			 r.failures, r.checks, r.why);
	assert_true(r.checks > 0);

	/* reopened on the default VFS: intact, and what the model says */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
					    &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	for (int k = 0; k < KEYS; k++) {
		if (model[k] < 0)
			continue;
		rows++;
		bytes += model[k];
	}
	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT count(*), coalesce(sum(length(v)), 0),"
			" (SELECT n FROM meta), (SELECT total FROM meta)"
			" FROM t",
			-1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), rows);
	assert_int_equal(sqlite3_column_int64(st, 1), bytes);
	assert_int_equal(sqlite3_column_int64(st, 2), rows);
	assert_int_equal(sqlite3_column_int64(st, 3), bytes);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walbuf_readers_and_model),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
