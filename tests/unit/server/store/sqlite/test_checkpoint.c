// SPDX-License-Identifier: GPL-2.0
/*
 * WAL checkpoints of the writer connection (server/store/sqlite/
 * checkpoint.c): the thread copies the WAL back, the policy of when it is
 * asked, the writer's own catch-up at wal-max, and the database sync.
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
#include <sys/stat.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "shim_vfs.h"
#include "sqlite_fixture.h"
#include "store/sqlite/checkpoint.h"
#include "store/sqlite/store_sqlite_internal.h" /* twl_store_admin_write_lock */
#include "store/store.h"

/* Counts xSync calls on main databases and on other files (shim_vfs.h). */
static int count_main_syncs, count_other_syncs;

/* One commit of blobs 4000-byte rows into bulk, on the writer's connection. */
static void bulk_commit(struct twl_store *s, int blobs)
{
	sqlite3 *db = twl_store_admin_write_lock(s);
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
		 " SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO bulk SELECT randomblob(4000) FROM n",
		 blobs);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	twl_store_admin_write_unlock(s);
}

/*
 * WAL checkpoints run on the store's own thread (server/store/sqlite/checkpoint.c),
 * not in the writer's COMMIT: after ~20 MB (past its 4000-page
 * threshold) committed through the writer
 * connection in small transactions, the database file itself grows while
 * the writer does nothing more, which only a checkpoint can do; and the
 * thread starts the kernel's writeback of the file after its pass.
 */
static void test_checkpoint_thread(void **state)
{
	struct twl_store *s = NULL;
	struct stat st;
	off_t before;
	int i, waited;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(stat(dbpath, &st), 0);
	before = st.st_size;
	{
		sqlite3 *db = twl_store_admin_write_lock(s);

		assert_int_equal(sqlite3_exec(db, "CREATE TABLE bulk(x BLOB)",
					      NULL, NULL, NULL),
				 SQLITE_OK);
		twl_store_admin_write_unlock(s);
	}
	for (i = 0; i < 100; i++)
		bulk_commit(s, 50);
	for (waited = 0; waited < 100; waited++) {
		assert_int_equal(stat(dbpath, &st), 0);
		if (st.st_size > before + (4 << 20) &&
		    twl_ckpt_writebacks(s->ckpt) > 0)
			break;
		usleep(100 * 1000);
	}
	if (st.st_size <= before + (4 << 20))
		fail_msg(
			"database file %lld -> %lld bytes in 10 s: no checkpoint ran",
			(long long)before, (long long)st.st_size);
	/* and the thread started the writeback of what it copied */
	if (twl_ckpt_writebacks(s->ckpt) == 0)
		fail_msg(
			"a checkpoint ran, but no writeback of the database file started");
	twl_store_close(s);
}

/*
 * Saturated: the moving average of frames per commit reaches 512. The
 * closed loop's 500-1,100 frames a commit get there within a few commits;
 * the open loop's 25-250 never, nor does one large commit among them.
 */
static void test_checkpoint_busy(void **state)
{
	int avg = 0, i;

	(void)state;
	for (i = 0; i < 50; i++)
		assert_false(twl_ckpt_busy(250, &avg));
	assert_false(twl_ckpt_busy(2000, &avg)); /* one large group */
	for (i = 0; i < 3; i++)
		twl_ckpt_busy(250, &avg);
	for (i = 0; i < 30 && !twl_ckpt_busy(900, &avg); i++)
		;
	assert_true(i < 30);
	assert_true(twl_ckpt_busy(900, &avg));
	for (i = 0; i < 30 && twl_ckpt_busy(100, &avg); i++)
		;
	assert_true(i < 30); /* and back when the load falls */
	assert_false(twl_ckpt_busy(100, &avg));
}

/* One commit's WAL size, saturated or not, and what the policy says. */
struct policy_step {
	int pages, limit;
	bool busy;
	enum twl_ckpt_action want;
	int asked_at;
};

static void run_policy(const struct policy_step *steps, size_t n)
{
	int asked_at = 0;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(twl_ckpt_step(steps[i].pages, steps[i].limit,
					       steps[i].busy, &asked_at),
				 steps[i].want);
		assert_int_equal(asked_at, steps[i].asked_at);
	}
}

/*
 * The checkpoint policy (checkpoint.h): the thread is asked once per 4000
 * new WAL frames (16000 while the writer is saturated), not after every
 * commit past that, but after every commit in the last 8000 frames before
 * the limit; past the limit the writer tries itself after every commit; a
 * restarted WAL counts from 0 again.
 */
static void test_checkpoint_policy(void **state)
{
	static const struct policy_step steps[] = {
		{ 120, 16384, false, TWL_CKPT_NONE, 0 },
		{ 3999, 16384, false, TWL_CKPT_NONE, 0 },
		{ 4000, 16384, false, TWL_CKPT_ASK, 4000 },
		{ 4100, 16384, false, TWL_CKPT_NONE, 4000 },
		{ 7999, 16384, false, TWL_CKPT_NONE, 4000 },
		{ 8000, 16384, false, TWL_CKPT_ASK, 8000 },
		{ 8383, 16384, false, TWL_CKPT_NONE, 8000 },
		/* the last stretch: after every commit that added frames */
		{ 8384, 16384, false, TWL_CKPT_ASK, 8384 },
		{ 8400, 16384, false, TWL_CKPT_ASK, 8400 },
		{ 8400, 16384, false, TWL_CKPT_NONE, 8400 },
		{ 16383, 16384, false, TWL_CKPT_ASK, 16383 },
		{ 16384, 16384, false, TWL_CKPT_SELF, 16383 },
		{ 16900, 16384, false, TWL_CKPT_SELF, 16383 },
		{ 90, 16384, false, TWL_CKPT_NONE, 0 },
		{ 3999, 16384, false, TWL_CKPT_NONE, 0 },
		{ 4000, 16384, false, TWL_CKPT_ASK, 4000 },
		/* the default limit: 16384 is just another ask */
		{ 16384, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_ASK, 16384 },
		{ 20000, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_NONE, 16384 },
		{ 57000, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_ASK, 57000 },
		{ 57535, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_NONE, 57000 },
		{ 57536, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_ASK, 57536 },
		{ 65535, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_ASK, 65535 },
		{ 65536, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_SELF, 65535 },
	};
	/* a saturated writer: once per 16000 new frames, same last stretch */
	static const struct policy_step busy[] = {
		{ 4000, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_NONE, 0 },
		{ 15999, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_NONE, 0 },
		{ 16000, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_ASK, 16000 },
		/* no longer saturated: back to 4000 */
		{ 19999, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_NONE, 16000 },
		{ 20000, TWL_CKPT_LIMIT_PAGES, false, TWL_CKPT_ASK, 20000 },
		{ 57536, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_ASK, 57536 },
		{ 57600, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_ASK, 57600 },
		{ 65536, TWL_CKPT_LIMIT_PAGES, true, TWL_CKPT_SELF, 57600 },
	};

	(void)state;
	run_policy(steps, sizeof(steps) / sizeof(steps[0]));
	run_policy(busy, sizeof(busy) / sizeof(busy[0]));
	/* the thread syncs the database in the last stretch only */
	assert_false(twl_ckpt_near_limit(4000, TWL_CKPT_LIMIT_PAGES));
	assert_false(twl_ckpt_near_limit(57535, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(57536, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(70000, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(8000, 16000));
	assert_false(twl_ckpt_near_limit(7999, 16000));
}

/*
 * Frames in the WAL as a PASSIVE checkpoint from @db reports them, or -1.
 * The store's checkpoint thread may hold the checkpoint lock at that moment
 * (the pragma then reports -1 or SQLITE_BUSY): ask again a little later,
 * up to about a second, without committing anything in between.
 */
static int wal_frames(sqlite3 *db)
{
	sqlite3_stmt *st;
	int rc, log = -1;

	for (int tries = 0; tries < 100 && log < 0; tries++) {
		if (tries)
			usleep(10000);
		assert_int_equal(
			sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(PASSIVE)",
					   -1, &st, NULL),
			SQLITE_OK);
		rc = sqlite3_step(st);
		if (rc != SQLITE_BUSY)
			assert_int_equal(rc, SQLITE_ROW);
		if (rc == SQLITE_ROW)
			log = sqlite3_column_int(st, 1);
		sqlite3_finalize(st);
	}
	return log;
}

/*
 * At wal-max the writer checkpoints the WAL itself after its commits
 * (counted for /metrics), and once every frame is copied its next
 * transaction starts the WAL again. A reader's open snapshot first keeps
 * any checkpoint short of the WAL's end, so the WAL must reach the limit.
 */
static void test_wal_catchup(void **state)
{
	struct twl_store *s = NULL;
	sqlite3 *reader = NULL, *db;
	uint64_t n = 0;
	double secs = -1;
	int i, log = -1;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_set_wal_max(s, 1), 8000);
	assert_int_equal(twl_store_wal_catchups(s, &n, &secs), 0);
	assert_int_equal(n, 0);
	assert_true(secs == 0);
	db = twl_store_admin_write_lock(s);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE bulk(x BLOB)", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	twl_store_admin_write_unlock(s);
	assert_int_equal(sqlite3_open(dbpath, &reader), SQLITE_OK);
	assert_int_equal(sqlite3_exec(reader,
				      "BEGIN; SELECT count(*) FROM bulk;", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	for (i = 0; i < 200; i++) /* ~10,000 pages */
		bulk_commit(s, 50);
	assert_int_equal(twl_store_wal_catchups(s, &n, &secs), 0);
	if (n < 1)
		fail_msg(
			"WAL past its limit, but the writer never checkpointed it");
	assert_true(secs > 0);
	assert_int_equal(sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(reader);
	/* the size of the WAL in frames, from another connection */
	assert_int_equal(sqlite3_open(dbpath, &reader), SQLITE_OK);
	for (i = 0; i < 100; i++) {
		bulk_commit(s, 1);
		log = wal_frames(reader);
		if (log >= 0 && log < 1000)
			break;
	}
	if (log < 0 || log >= 1000)
		fail_msg("the WAL did not start again: %d frames", log);
	sqlite3_close(reader);
	twl_store_close(s);
}

static int count_sync(int flags, sqlite3_file *real, int sync_flags)
{
	(void)real;
	(void)sync_flags;
	if (flags & SQLITE_OPEN_MAIN_DB)
		count_main_syncs++;
	else
		count_other_syncs++;
	return SQLITE_OK;
}

/*
 * twl_ckpt_sync_db(), which the checkpoint thread runs after each of its
 * checkpoints, syncs the main database file (not the WAL), through the
 * connection's VFS.
 */
static void test_ckpt_sync_db(void **state)
{
	static const struct shim_hooks hooks = { .sync = count_sync };
	sqlite3 *db = NULL;
	int before, other;

	(void)state;
	unlink(dbpath);
	assert_int_equal(shim_vfs_register("twl-count", &hooks, 0), SQLITE_OK);
	assert_int_equal(sqlite3_open_v2(dbpath, &db,
					 SQLITE_OPEN_READWRITE |
						 SQLITE_OPEN_CREATE,
					 "twl-count"),
			 SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "PRAGMA journal_mode = WAL;"
			     " PRAGMA synchronous = NORMAL;"
			     " CREATE TABLE t(x); INSERT INTO t VALUES(1);",
			     NULL, NULL, NULL),
		SQLITE_OK);
	before = count_main_syncs;
	other = count_other_syncs;
	assert_int_equal(twl_ckpt_sync_db(db), SQLITE_OK);
	assert_int_equal(count_main_syncs, before + 1);
	assert_int_equal(count_other_syncs, other);
	sqlite3_close(db);
	shim_vfs_unregister();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_thread),
		cmocka_unit_test(test_checkpoint_policy),
		cmocka_unit_test(test_checkpoint_busy),
		cmocka_unit_test(test_ckpt_sync_db),
		cmocka_unit_test(test_wal_catchup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
