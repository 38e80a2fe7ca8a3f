// SPDX-License-Identifier: GPL-2.0
/*
 * The PostgreSQL fixture itself (pg-fixture-start.sh): a server answers
 * queries on its Unix socket, listens on no TCP address, and runs as a
 * user other than root; a database made for a test is usable and empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "pg_fixture.h"

static void test_server_answers(void **state)
{
	PGconn *c = pg_fixture_connect(pg_fixture_uri());
	PGresult *r;

	r = PQexec(c, "SELECT 6 * 7, current_setting('listen_addresses'),"
		      " current_setting('unix_socket_directories')");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(r, 0, 0), "42");
	assert_string_equal(PQgetvalue(r, 0, 1), ""); /* no TCP */
	assert_non_null(strstr(pg_fixture_uri(), PQgetvalue(r, 0, 2)));
	PQclear(r);
	/* a Unix socket connection: no server address */
	assert_true(PQhost(c)[0] == '/');
	PQfinish(c);
}

static void test_own_database(void **state)
{
	char uri[512];

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(pg_q(uri, "SELECT count(*) FROM pg_tables"
				   " WHERE schemaname = 'public'"),
			 0);
	pg_exec(uri, "CREATE TABLE t (v int); INSERT INTO t VALUES (5)");
	assert_int_equal(pg_q(uri, "SELECT v FROM t"), 5);
}

/* postgres refuses to run as root: the fixture runs it as another user. */
static void test_not_root(void **state)
{
	PGconn *c = pg_fixture_connect(pg_fixture_uri());
	char proc[64];
	struct stat st;

	/* the backend serving this connection, alive while it is open */
	snprintf(proc, sizeof(proc), "/proc/%d", PQbackendPID(c));
	assert_int_equal(stat(proc, &st), 0);
	assert_int_not_equal(st.st_uid, 0);
	PQfinish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_answers),
		cmocka_unit_test(test_own_database),
		cmocka_unit_test(test_not_root),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
