/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PostgreSQL server of the ctest fixture "postgresql"
 * (pg-fixture-start.sh, pg-fixture-stop.sh; tests/unit/server/CMakeLists.txt
 * gives the fixture to every test that includes this header). Each test
 * makes databases of its own on it; without the server the test fails.
 */
#ifndef TWL_TEST_PG_FIXTURE_H
#define TWL_TEST_PG_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/*
 * The URI of the fixture's maintenance database, read from
 * $TWILIGHT_BINARY_DIR/postgresql-fixture/uri: fails the test when the
 * fixture is not running.
 */
const char *pg_fixture_uri(void);

/*
 * pg_fixture_db - create an empty database of this test's own and put its
 * URI in @uri (@cap bytes). Dropped by pg_fixture_drop_all().
 */
void pg_fixture_db(char *uri, size_t cap);

/*
 * pg_fixture_db_icu - pg_fixture_db() whose text collation is ICU's
 * @icu_locale ("en-US": letters before case, punctuation ignored), not
 * the fixture cluster's byte order.
 */
void pg_fixture_db_icu(char *uri, size_t cap, const char *icu_locale);

/* Drop every database pg_fixture_db() made (a group teardown). */
int pg_fixture_drop_all(void **state);

/* A connection to @uri (fails the test otherwise); PQfinish() it. */
PGconn *pg_fixture_connect(const char *uri);

/*
 * pg_fixture_wait_lock - block until backend @pid of @uri waits for a
 * lock, then put its pg_locks locktype in @type (@cap bytes) and its
 * classid << 32 | objid (an advisory lock's key) in *@id. No timeout of
 * its own: a backend that never waits hangs the test until ctest's.
 */
void pg_fixture_wait_lock(const char *uri, int pid, char *type, size_t cap,
			  int64_t *id);

/* The first column of the first row of @sql on @uri as an integer (-1: no row). */
int64_t pg_q(const char *uri, const char *sql);

/* Run @sql on @uri; fails the test on an error. */
void pg_exec(const char *uri, const char *sql);

/*
 * pg_fixture_same - fail the test unless answer @i of SQLite (@sq) and of
 * PostgreSQL (@pg) are the same text, showing both from just before the
 * first byte that differs.
 */
void pg_fixture_same(size_t i, const char *sq, const char *pg);

/*
 * The store backends a test runs against: a cmocka test's state points to
 * one of pg_fixture_backends[], and BOTH(t) registers @t once per backend,
 * named after it ("test_x/sqlite", "test_x/postgresql").
 */
enum backend { SQLITE, POSTGRESQL };
extern enum backend pg_fixture_backends[2];

#define BOTH(t)                                                        \
	{ #t "/sqlite", t, NULL, NULL, &pg_fixture_backends[SQLITE] }, \
	{                                                              \
#t "/postgresql", t, NULL, NULL,                       \
			&pg_fixture_backends[POSTGRESQL]               \
	}

#endif
