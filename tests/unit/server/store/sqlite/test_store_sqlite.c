// SPDX-License-Identifier: GPL-2.0
/*
 * The SQLite store's connections (server/store/sqlite/store_sqlite.c):
 * its process-wide settings, and that an acknowledged commit is durable.
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

#include "shim_vfs.h"
#include "sqlite_fixture.h"
#include "store/store.h"

/*
 * The store's process-wide SQLite settings took, though a constructor
 * (store_sqlite_export.c) initialises SQLite before main(): with memory
 * statistics off, SQLite reports no memory in use.
 */
static void test_sqlite_config(void **state)
{
	struct twl_store *s = NULL;
	sqlite3_int64 cur = -1, hi = -1;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(q("SELECT count(*) FROM hosts"), 0);
	assert_int_equal(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &cur, &hi,
					  0),
			 SQLITE_OK);
	assert_true(cur == 0);
	twl_store_close(s);
	unlink(dbpath);
}

/* WAL syncs seen by the shim under every connection (shim_vfs.h). */
static int wal_syncs;

static int count_wal_sync(int flags, sqlite3_file *real, int sync_flags)
{
	(void)real;
	(void)sync_flags;
	if (flags & SQLITE_OPEN_WAL)
		wal_syncs++;
	return SQLITE_OK;
}

/*
 * An acknowledgement is durable: the writer answers a batch only after its
 * COMMIT returned, and with synchronous=FULL that COMMIT synced the WAL,
 * so a power loss cannot roll back a batch the agent already deleted.
 * (With NORMAL, the WAL was synced only at checkpoints.) The shim must be
 * the default VFS before the store's first open, which layers the WAL
 * buffer over the default of that moment: this test runs first.
 */
static void test_commit_syncs_wal(void **state)
{
	static const struct shim_hooks hooks = { .sync = count_wal_sync };
	struct twl_store *s = NULL;
	int before;

	(void)state;
	assert_int_equal(shim_vfs_register("twl-count", &hooks, 1), SQLITE_OK);
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	for (int i = 0; i < 3; i++) {
		char batch[33];
		json_t *r;

		snprintf(batch, sizeof(batch), "%032x", i + 1);
		r = report("h1", batch);
		before = wal_syncs;
		ingest_one(s, "h1", r);
		assert_true(wal_syncs > before);
		json_decref(r);
	}
	twl_store_close(s);
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: see test_commit_syncs_wal() */
		cmocka_unit_test(test_commit_syncs_wal),
		cmocka_unit_test(test_sqlite_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
