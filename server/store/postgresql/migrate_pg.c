// SPDX-License-Identifier: GPL-2.0
/*
 * The PostgreSQL store's migrations (migrate_pg.h): all pending ones in
 * one transaction under an advisory lock; DDL is transactional in
 * PostgreSQL, so a failed migration leaves the database as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_internal.h"

/* Contract: see migrate_pg.h. */
int twl_pg_migrate_latest(void)
{
	int v = 0;

	for (const struct twl_pg_migration *m = twl_pg_migrations; m->name; m++)
		v = atoi(m->name);
	return v;
}

/* The first column of the one row of @sql as an int, or a negative errno. */
static int query_int(PGconn *conn, const char *sql)
{
	PGresult *r;
	int ret = twl_pg_exec(conn, sql, 0, NULL, &r);

	if (ret)
		return ret;
	ret = PQntuples(r) == 1 ? atoi(PQgetvalue(r, 0, 0)) : -EIO;
	PQclear(r);
	return ret;
}

/* Contract: see migrate_pg.h. */
int twl_pg_schema_version(PGconn *conn)
{
	int ret = query_int(
		conn,
		"SELECT (to_regclass('schema_version') IS NOT NULL)::int");

	if (ret <= 0)
		return ret;
	return query_int(
		conn, "SELECT coalesce(max(version), 0) FROM schema_version");
}

static const char lock_sql[] =
	"SELECT pg_advisory_xact_lock(1953983597)"; /* TWL_PG_MIGRATE_LOCK */
_Static_assert(TWL_PG_MIGRATE_LOCK == 1953983597LL, "lock_sql's key");

static const char version_table_sql[] =
	"CREATE TABLE IF NOT EXISTS schema_version ("
	" version INT PRIMARY KEY, name TEXT NOT NULL,"
	" applied BIGINT NOT NULL DEFAULT extract(epoch FROM now())::bigint)";

/* Whether migration @num (a parameter) is in schema_version: 1, 0, -errno. */
static int applied(PGconn *conn, const char *num)
{
	PGresult *r;
	int ret = twl_pg_exec(
		conn, "SELECT 1 FROM schema_version WHERE version = $1::int", 1,
		&num, &r);

	if (ret)
		return ret;
	ret = PQntuples(r) > 0;
	PQclear(r);
	return ret;
}

/*
 * Apply the migrations schema_version lacks inside the open transaction,
 * in order: also one numbered below the newest applied (two lines of
 * work, each with its number, merged after a database took the higher).
 */
static int apply_missing(PGconn *conn, int from, char *err, size_t cap)
{
	int v = from, ret;

	for (const struct twl_pg_migration *m = twl_pg_migrations; m->name;
	     m++) {
		char num[21];
		const char *p[2] = { twl_pg_i64(num, atoi(m->name)), m->name };

		ret = applied(conn, num);
		if (ret < 0)
			return ret;
		if (ret)
			continue;
		ret = twl_pg_exec(conn, m->sql, 0, NULL, NULL);
		if (!ret)
			ret = twl_pg_exec(
				conn,
				"INSERT INTO schema_version(version, name)"
				" VALUES($1::int, $2)",
				2, p, NULL);
		if (ret) {
			snprintf(err, cap, "migration %s failed: %s", m->name,
				 PQerrorMessage(conn));
			return ret;
		}
		v = atoi(m->name) > v ? atoi(m->name) : v;
	}
	return v;
}

/* Contract: see migrate_pg.h. */
int twl_pg_migrate(PGconn *conn, char *err, size_t cap)
{
	int from, ret;

	ret = twl_pg_exec(conn, "BEGIN", 0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(conn, lock_sql, 0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(conn, version_table_sql, 0, NULL, NULL);
	if (ret) {
		snprintf(err, cap, "cannot lock the schema: %s",
			 PQerrorMessage(conn));
		goto out;
	}
	from = twl_pg_schema_version(conn);
	if (from > twl_pg_migrate_latest()) {
		snprintf(
			err, cap,
			"schema version %d is newer than this binary's %d: run a newer twilight-server",
			from, twl_pg_migrate_latest());
		ret = -EPROTO;
		goto out;
	}
	ret = from < 0 ? from : apply_missing(conn, from, err, cap);
	if (ret >= 0 && twl_pg_exec(conn, "COMMIT", 0, NULL, NULL)) {
		snprintf(err, cap, "COMMIT of the migrations failed: %s",
			 PQerrorMessage(conn));
		return -EIO;
	}
out:
	if (ret < 0)
		twl_pg_exec(conn, "ROLLBACK", 0, NULL, NULL);
	return ret;
}
