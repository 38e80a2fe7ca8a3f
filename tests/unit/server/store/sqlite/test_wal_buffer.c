// SPDX-License-Identifier: GPL-2.0
/*
 * The writer's WAL write buffer (server/store/sqlite/wal_buffer.h): a connection on it
 * commits, rolls back, spills pages mid-transaction (a tiny page cache),
 * checkpoints and restarts its WAL, while a reader on the default VFS in
 * another thread checks in every snapshot that a summary row agrees with
 * the table it summarises. A commit whose frames were not in the file when
 * it became visible shows up there as a mismatch or a corrupt page. At the
 * end the database must pass integrity_check and hold what a model in C
 * says.
 *
 * Below the layer, a test VFS (shim_vfs.h) plays the disk: it keeps each
 * file as it was at its last sync (what a power loss would leave) and can
 * refuse writes past a size (a full disk). With synchronous=FULL every
 * acknowledged commit must survive a power loss; a full disk must fail the
 * statement that wrote, keep what was committed, and not stop the process.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "shim_vfs.h"
#include "store/sqlite/wal_buffer.h"

#define KEYS 400

static char dir[64], path[128];

/* The disk below the layer (shim hooks). */
static struct {
	bool keep_synced; /* keep each file's content at its last sync */
	unsigned char *db, *wal; /* ... the main database's and the WAL's */
	sqlite3_int64 db_len, wal_len;
	sqlite3_int64 wal_cap; /* > 0: WAL writes past it fail, disk full */
	int full_hits;
} disk;

static int disk_write(int flags, sqlite3_file *real, const void *buf, int n,
		      sqlite3_int64 off)
{
	(void)real;
	(void)buf;
	if ((flags & SQLITE_OPEN_WAL) && disk.wal_cap > 0 &&
	    off + n > disk.wal_cap) {
		disk.full_hits++;
		return SQLITE_FULL;
	}
	return SQLITE_OK;
}

static int disk_sync(int flags, sqlite3_file *real, int sync_flags)
{
	unsigned char **keep = NULL, *now;
	sqlite3_int64 *keep_len = NULL, len;

	(void)sync_flags;
	if (!disk.keep_synced)
		return SQLITE_OK;
	if (flags & SQLITE_OPEN_MAIN_DB) {
		keep = &disk.db;
		keep_len = &disk.db_len;
	} else if (flags & SQLITE_OPEN_WAL) {
		keep = &disk.wal;
		keep_len = &disk.wal_len;
	} else {
		return SQLITE_OK;
	}
	now = shim_read_all(real, &len);
	if (!now)
		return SQLITE_IOERR_FSYNC;
	free(*keep);
	*keep = now;
	*keep_len = len;
	return SQLITE_OK;
}

static const struct shim_hooks disk_hooks = {
	.write = disk_write,
	.sync = disk_sync,
};

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

/* @db passes PRAGMA integrity_check. */
static void assert_intact(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
					    &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
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

/* The writer's statements over tables t(k, v) and meta(n, total). */
struct model_writer {
	sqlite3 *db;
	sqlite3_stmt *ins, *del, *meta;
	unsigned seed;
};

static sqlite3_stmt *prepare_ok(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	return st;
}

static void model_writer_open(struct model_writer *mw)
{
	assert_int_equal(sqlite3_open_v2(path, &mw->db,
					 SQLITE_OPEN_READWRITE |
						 SQLITE_OPEN_CREATE,
					 TWL_WALBUF_VFS),
			 SQLITE_OK);
	sqlite3_busy_timeout(mw->db, 5000);
	/* 8 cached pages: dirty pages spill into the WAL mid-transaction */
	exec_ok(mw->db,
		"PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		" PRAGMA cache_size = 8; PRAGMA wal_autocheckpoint = 300;"
		" CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
		" CREATE TABLE meta(n INT, total INT);"
		" INSERT INTO meta VALUES(0, 0);");
	mw->ins = prepare_ok(mw->db, "INSERT OR REPLACE INTO t VALUES(?1,"
				     " randomblob(?2))");
	mw->del = prepare_ok(mw->db, "DELETE FROM t WHERE k = ?1");
	mw->meta = prepare_ok(mw->db,
			      "UPDATE meta SET n = (SELECT count(*) FROM t),"
			      " total = (SELECT coalesce(sum(length(v)), 0)"
			      " FROM t)");
	mw->seed = 12345;
}

/*
 * One random transaction of 1 to 12 inserts or deletes plus the meta
 * update, rolled back one time in five; @model follows what committed.
 */
static void model_writer_tx(struct model_writer *mw, int64_t *model)
{
	static int64_t undo[KEYS];
	bool rollback = rand_r(&mw->seed) % 5 == 0;
	int ops = 1 + rand_r(&mw->seed) % 12;

	memcpy(undo, model, sizeof(undo));
	exec_ok(mw->db, "BEGIN IMMEDIATE");
	for (int i = 0; i < ops; i++) {
		int k = rand_r(&mw->seed) % KEYS;

		if (rand_r(&mw->seed) % 4 == 0) {
			sqlite3_bind_int(mw->del, 1, k);
			assert_int_equal(sqlite3_step(mw->del), SQLITE_DONE);
			sqlite3_reset(mw->del);
			model[k] = -1;
		} else {
			int len = 100 + rand_r(&mw->seed) % 6000;

			sqlite3_bind_int(mw->ins, 1, k);
			sqlite3_bind_int(mw->ins, 2, len);
			assert_int_equal(sqlite3_step(mw->ins), SQLITE_DONE);
			sqlite3_reset(mw->ins);
			model[k] = len;
		}
	}
	assert_int_equal(sqlite3_step(mw->meta), SQLITE_DONE);
	sqlite3_reset(mw->meta);
	if (rollback) {
		exec_ok(mw->db, "ROLLBACK");
		memcpy(model, undo, sizeof(undo));
	} else {
		exec_ok(mw->db, "COMMIT");
	}
}

static void model_writer_close(struct model_writer *mw)
{
	sqlite3_finalize(mw->ins);
	sqlite3_finalize(mw->del);
	sqlite3_finalize(mw->meta);
	assert_int_equal(sqlite3_close(mw->db), SQLITE_OK);
}

/* Reopened on the default VFS: intact, and what @model says. */
static void check_model(const int64_t *model)
{
	int64_t rows = 0, bytes = 0;
	sqlite3_stmt *st;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_intact(db);
	for (int k = 0; k < KEYS; k++) {
		if (model[k] < 0)
			continue;
		rows++;
		bytes += model[k];
	}
	st = prepare_ok(db, "SELECT count(*), coalesce(sum(length(v)), 0),"
			    " (SELECT n FROM meta), (SELECT total FROM meta)"
			    " FROM t");
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), rows);
	assert_int_equal(sqlite3_column_int64(st, 1), bytes);
	assert_int_equal(sqlite3_column_int64(st, 2), rows);
	assert_int_equal(sqlite3_column_int64(st, 3), bytes);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_walbuf_readers_and_model(void **state)
{
	static int64_t model[KEYS]; /* byte length per key, -1 = absent */
	struct model_writer mw = { 0 };
	struct reader r = { 0 };

	(void)state;
	assert_int_equal(twl_walbuf_register(), 0);
	model_writer_open(&mw);
	for (int k = 0; k < KEYS; k++)
		model[k] = -1;
	assert_int_equal(pthread_create(&r.thread, NULL, reader_main, &r), 0);
	for (int tx = 0; tx < 1500; tx++)
		model_writer_tx(&mw, model);
	r.stop = true;
	pthread_join(r.thread, NULL);
	model_writer_close(&mw);
	if (r.failures)
		fail_msg("%d of %d snapshots were inconsistent; last: %s",
			 r.failures, r.checks, r.why);
	assert_true(r.checks > 0);
	check_model(model);
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The rows of t in what a power loss now would leave on disk. */
static int64_t rows_after_power_loss(void)
{
	char img[160];
	sqlite3 *db;
	int64_t rows;

	snprintf(img, sizeof(img), "%s/image.db", dir);
	db = shim_open_image(img, disk.db, disk.db_len, disk.wal, disk.wal_len);
	assert_non_null(db);
	rows = query_int(db, "SELECT count(*) FROM t");
	assert_int_equal(query_int(db, "SELECT count(*) FROM t WHERE"
				       " length(v) != 3000"),
			 0);
	sqlite3_close(db);
	return rows;
}

/*
 * A writer on the layer: database @file in the test directory, WAL with
 * synchronous=@sync and no automatic checkpoints, table t, and *@ins that
 * adds a row of 3000 bytes.
 */
static sqlite3 *open_writer(const char *file, const char *sync,
			    sqlite3_stmt **ins)
{
	char name[160], sql[200];
	sqlite3 *w = NULL;

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	assert_int_equal(sqlite3_open_v2(name, &w,
					 SQLITE_OPEN_READWRITE |
						 SQLITE_OPEN_CREATE,
					 TWL_WALBUF_VFS),
			 SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s;"
		 " PRAGMA wal_autocheckpoint = 0;"
		 " CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);",
		 sync);
	exec_ok(w, sql);
	assert_int_equal(sqlite3_prepare_v2(w,
					    "INSERT INTO t VALUES(NULL,"
					    " randomblob(3000))",
					    -1, ins, NULL),
			 SQLITE_OK);
	return w;
}

/*
 * synchronous=FULL over the layer: after each COMMIT returns, the files as
 * last synced hold it. The WAL is restarted first, so that its frames are
 * rewritten inside the file (the writes the layer holds back).
 */
static void test_walbuf_power_loss(void **state)
{
	sqlite3 *w = NULL;
	sqlite3_stmt *ins;
	int committed = 0;

	(void)state;
	disk.keep_synced = true;
	w = open_writer("power.db", "FULL", &ins);
	for (int i = 0; i < 160; i++) {
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
		committed++;
		if (i == 99) { /* the WAL's frames go into the database */
			assert_int_equal(query_int(w,
						   "PRAGMA"
						   " wal_checkpoint(RESTART)"),
					 0);
			assert_int_equal(rows_after_power_loss(), committed);
		}
		if (i >= 100) /* rewriting the WAL from its start */
			assert_int_equal(rows_after_power_loss(), committed);
	}
	sqlite3_finalize(ins);
	assert_int_equal(sqlite3_close(w), SQLITE_OK);
	disk.keep_synced = false;
	free(disk.db);
	free(disk.wal);
	disk.db = disk.wal = NULL;
}

/*
 * A full disk while the WAL grows: the statement that wrote fails with
 * SQLITE_FULL (the process goes on), everything committed before stays,
 * and once there is room again the writer goes on.
 */
static void test_walbuf_disk_full(void **state)
{
	char name[160];
	sqlite3 *w = NULL, *r = NULL;
	sqlite3_stmt *ins;
	int committed = 0, rc = SQLITE_DONE;
	sqlite3_int64 wal_size;
	struct stat st;

	(void)state;
	w = open_writer("full.db", "NORMAL", &ins);
	snprintf(name, sizeof(name), "%s/full.db-wal", dir);
	assert_int_equal(stat(name, &st), 0);
	wal_size = st.st_size;
	disk.wal_cap = wal_size + 256 * 1024;
	for (int i = 0; i < 1000 && rc == SQLITE_DONE; i++) {
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		if (rc == SQLITE_DONE)
			committed++;
	}
	assert_int_equal(rc, SQLITE_FULL);
	assert_true(disk.full_hits > 0);
	assert_true(committed > 10);

	snprintf(name, sizeof(name), "%s/full.db", dir);
	assert_int_equal(sqlite3_open_v2(name, &r, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	assert_int_equal(query_int(r, "SELECT count(*) FROM t"), committed);

	disk.wal_cap = 0; /* room again */
	assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
	sqlite3_finalize(ins);
	assert_int_equal(query_int(r, "SELECT count(*) FROM t"), committed + 1);
	assert_int_equal(sqlite3_close(w), SQLITE_OK);
	assert_intact(r);
	sqlite3_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walbuf_readers_and_model),
		cmocka_unit_test(test_walbuf_power_loss),
		cmocka_unit_test(test_walbuf_disk_full),
	};

	/* the test disk first: the layer sits on the default VFS */
	if (shim_vfs_register("twl-test-disk", &disk_hooks, 1) != SQLITE_OK ||
	    twl_walbuf_register() != 0) {
		fprintf(stderr, "cannot register the test VFS layers\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
