// SPDX-License-Identifier: GPL-2.0
/* The PostgreSQL fixture's client side (pg_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg_fixture.h"

#define MAX_DBS 64

static char base_uri[512];
static char dbs[MAX_DBS][64];
static int n_dbs;

/* Contract: see pg_fixture.h. */
const char *pg_fixture_uri(void)
{
	const char *b = getenv("TWILIGHT_BINARY_DIR");
	char path[512];
	FILE *f;

	if (base_uri[0])
		return base_uri;
	if (!b)
		fail_msg(
			"TWILIGHT_BINARY_DIR is not set: run this test with ctest");
	snprintf(path, sizeof(path), "%s/postgresql-fixture/uri", b);
	f = fopen(path, "r");
	if (!f)
		fail_msg(
			"no PostgreSQL fixture (%s): run the test with ctest, which starts it (postgresql_fixture_start)",
			path);
	if (!fgets(base_uri, sizeof(base_uri), f))
		base_uri[0] = '\0';
	fclose(f);
	base_uri[strcspn(base_uri, "\n")] = '\0';
	if (!strstr(base_uri, "/postgres?"))
		fail_msg("%s: unexpected URI '%s'", path, base_uri);
	return base_uri;
}

/* "database ... does not exist, skipping" and the like: no news. */
static void quiet(void *arg, const char *msg)
{
}

/* Contract: see pg_fixture.h. */
PGconn *pg_fixture_connect(const char *uri)
{
	PGconn *c = PQconnectdb(uri);

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("cannot connect to %s: %s", uri, PQerrorMessage(c));
	PQsetNoticeProcessor(c, quiet, NULL);
	return c;
}

/* Contract: see pg_fixture.h. */
void pg_exec(const char *uri, const char *sql)
{
	PGconn *c = pg_fixture_connect(uri);
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
}

/* Contract: see pg_fixture.h. */
int64_t pg_q(const char *uri, const char *sql)
{
	PGconn *c = pg_fixture_connect(uri);
	PGresult *r = PQexec(c, sql);
	int64_t v = -1;

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(c));
	if (PQntuples(r) > 0)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(c);
	return v;
}

/* @uri with the database @db instead of the maintenance database. */
static void uri_of(const char *db, char *uri, size_t cap)
{
	const char *base = pg_fixture_uri();
	const char *at = strstr(base, "/postgres?");

	snprintf(uri, cap, "%.*s/%s%s", (int)(at - base), base, db,
		 at + strlen("/postgres"));
}

/* Contract: see pg_fixture.h. */
void pg_fixture_db_icu(char *uri, size_t cap, const char *icu_locale)
{
	char sql[256];

	if (n_dbs == MAX_DBS)
		fail_msg("more than %d fixture databases in one test", MAX_DBS);
	snprintf(dbs[n_dbs], sizeof(dbs[0]), "twl_test_%ld_%d", (long)getpid(),
		 n_dbs);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", dbs[n_dbs]);
	pg_exec(pg_fixture_uri(), sql);
	if (icu_locale)
		snprintf(sql, sizeof(sql),
			 "CREATE DATABASE %s TEMPLATE template0"
			 " LOCALE_PROVIDER icu ICU_LOCALE '%s'",
			 dbs[n_dbs], icu_locale);
	else
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", dbs[n_dbs]);
	pg_exec(pg_fixture_uri(), sql);
	uri_of(dbs[n_dbs++], uri, cap);
}

/* Contract: see pg_fixture.h. */
void pg_fixture_db(char *uri, size_t cap)
{
	pg_fixture_db_icu(uri, cap, NULL);
}

/* Contract: see pg_fixture.h. */
int pg_fixture_drop_all(void **state)
{
	char sql[128];

	(void)state;
	while (n_dbs > 0) {
		snprintf(sql, sizeof(sql),
			 "DROP DATABASE IF EXISTS %s WITH (FORCE)",
			 dbs[--n_dbs]);
		pg_exec(pg_fixture_uri(), sql);
	}
	return 0;
}

/* Contract: see pg_fixture.h. */
enum backend pg_fixture_backends[2] = { SQLITE, POSTGRESQL };

/* Contract: see pg_fixture.h. */
void pg_fixture_wait_lock(const char *uri, int pid, char *type, size_t cap,
			  int64_t *id)
{
	PGconn *c = pg_fixture_connect(uri);
	const struct timespec poll = { 0, 5 * 1000 * 1000 };
	char sql[256];
	PGresult *r;

	snprintf(sql, sizeof(sql),
		 "SELECT locktype, classid::bigint << 32 | objid::bigint"
		 " FROM pg_locks WHERE pid = %d AND NOT granted",
		 pid);
	for (;;) {
		r = PQexec(c, sql);
		assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
		if (PQntuples(r) > 0)
			break;
		PQclear(r);
		nanosleep(&poll, NULL); /* polling a condition, not a delay */
	}
	snprintf(type, cap, "%s", PQgetvalue(r, 0, 0));
	*id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	PQclear(r);
	PQfinish(c);
}

/* Contract: see pg_fixture.h. */
void pg_fixture_same(size_t i, const char *sq, const char *pg)
{
	size_t at = 0;

	if (!strcmp(sq, pg))
		return;
	while (sq[at] == pg[at])
		at++;
	at = at > 60 ? at - 60 : 0;
	fail_msg("answer %zu differs at byte %zu:\n"
		 "sqlite:     %.200s\npostgresql: %.200s",
		 i, at, sq + at, pg + at);
}
