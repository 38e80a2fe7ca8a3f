// SPDX-License-Identifier: GPL-2.0
/*
 * The SQLite store's connections (server/store/sqlite/store_sqlite.c):
 * its process-wide settings.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqlite_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
