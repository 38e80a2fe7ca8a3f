// SPDX-License-Identifier: GPL-2.0
/*
 * migrate-store: the two stores opened and checked (the source's schema
 * version, the target's migrations, who else wrote the target), every
 * table copied (migrate_copy.c) and the copy verified (migrate_verify.c);
 * with --recopy the tables that differ copied again from scratch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>

#include "store/migrate_store_internal.h"
#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/sqlite/migrate.h"

/* The session lock one copy holds on its target ("twlc"). */
#define MIGRATE_LOCK "1953983587"

/* Contract: see migrate_store_internal.h. */
int twl_mig_fail(struct twl_mig *m, int err, const char *fmt, ...)
{
	char *e = m->o->err;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e, sizeof(m->o->err), fmt, ap);
	va_end(ap);
	/* one line: PostgreSQL's messages end in, and may hold, newlines */
	for (n = strlen(e); n && (e[n - 1] == '\n' || e[n - 1] == ' '); n--)
		e[n - 1] = '\0';
	for (; n; n--)
		e[n - 1] = e[n - 1] == '\n' ? ' ' : e[n - 1];
	return err;
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_pg(struct twl_mig *m, const char *sql, int n, const char *const *v)
{
	int ret = twl_pg_exec(m->dst, sql, n, v, NULL);

	if (ret)
		twl_mig_fail(m, ret, "%.60s ... in %s: %s", sql, m->where,
			     PQerrorMessage(m->dst));
	return ret;
}

/* Contract: see migrate_store_internal.h. */
double twl_mig_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The source's schema version: the one this build writes, or refused. */
static int source_version(struct twl_mig *m)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (!sqlite3_prepare_v2(m->src, "PRAGMA user_version", -1, &st, NULL) &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v < 0)
		return twl_mig_fail(m, -EIO,
				    "%s is not a readable SQLite store: %s",
				    m->source, sqlite3_errmsg(m->src));
	if (v != twl_migrate_latest())
		return twl_mig_fail(
			m, -EPROTO,
			"%s has schema version %d, this build copies version %d:"
			" %s",
			m->source, v, twl_migrate_latest(),
			v < twl_migrate_latest() ?
				"start this build's server on it once (it "
				"migrates the store), stop it, then copy" :
				"copy with the build that wrote it");
	return 0;
}

/* The source read-only ("sqlite:PATH" or PATH); a live server may write it. */
static int open_source(struct twl_mig *m)
{
	const char *path = m->o->from;

	if (!strncmp(path, "sqlite:", 7))
		path += 7;
	if (!realpath(path, m->source))
		return twl_mig_fail(m, -errno, "no SQLite store at %s: %s",
				    path, strerror(errno));
	if (sqlite3_open_v2(m->source, &m->src, SQLITE_OPEN_READONLY, NULL))
		return twl_mig_fail(m, -EIO, "opening %s: %s", m->source,
				    m->src ? sqlite3_errmsg(m->src) :
					     "no memory");
	/* a live server's checkpoint or commit may hold its lock a moment */
	sqlite3_busy_timeout(m->src, 10000);
	return source_version(m);
}

/* A one-value query on the target: 1 when its first value is "t". */
static int pg_true(struct twl_mig *m, const char *sql, int n,
		   const char *const *v)
{
	PGresult *r = NULL;
	int ret = twl_pg_exec(m->dst, sql, n, v, &r);

	if (ret)
		return twl_mig_fail(m, ret, "%.60s ... in %s: %s", sql,
				    m->where, PQerrorMessage(m->dst));
	ret = PQntuples(r) > 0 && !strcmp(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	return ret;
}

/* The target: connected, this copy alone on it, migrated to this build. */
static int open_target(struct twl_mig *m)
{
	char err[512];
	int ret;

	twl_uri_redact(m->o->to, m->where, sizeof(m->where));
	m->dst = PQconnectdb(m->o->to);
	if (!m->dst || PQstatus(m->dst) != CONNECTION_OK)
		return twl_mig_fail(
			m, -ECONNREFUSED, "connecting to %s: %s", m->where,
			m->dst ? PQerrorMessage(m->dst) : "no memory");
	ret = twl_mig_pg(
		m,
		"SET client_encoding = 'UTF8'; SET bytea_output = 'hex';"
		" SET client_min_messages = 'warning'",
		0, NULL);
	if (ret)
		return ret;
	ret = pg_true(m, "SELECT pg_try_advisory_lock(" MIGRATE_LOCK ")", 0,
		      NULL);
	if (ret <= 0)
		return ret ? ret :
			     twl_mig_fail(m, -EBUSY,
					  "another migrate-store is copying "
					  "into %s: let it finish",
					  m->where);
	ret = twl_pg_migrate(m->dst, err, sizeof(err));
	if (ret < 0)
		return twl_mig_fail(m, ret, "migrating %s: %s%s", m->where,
				    ret == -EPROTO ? "it is newer than this "
						     "build; " :
						     "",
				    err);
	return 0;
}

/* 0 when no table of the target holds rows (seeded ones apart), else -EEXIST. */
static int target_empty(struct twl_mig *m)
{
	char sql[256];
	int ret = 0;

	for (int i = 0; i < m->n_tables && !ret; i++) {
		/* migration 002 seeds a zero row per coverage bit */
		snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s%s)",
			 m->t[i].name,
			 strcmp(m->t[i].name, "coverage_count") ?
				 "" :
				 " WHERE hosts <> 0");
		ret = pg_true(m, sql, 0, NULL);
		if (ret > 0)
			ret = twl_mig_fail(
				m, -EEXIST,
				"%s already holds rows in %s that no "
				"copy of migrate-store wrote: copy "
				"into an empty database",
				m->where, m->t[i].name);
	}
	return ret;
}

/* This run's claim on the target: a new copy, or one of the same source. */
static int claim(struct twl_mig *m)
{
	PGresult *r = NULL;
	int n, ret;

	ret = twl_pg_exec(m->dst, "SELECT DISTINCT source FROM store_copy", 0,
			  NULL, &r);
	if (ret)
		return twl_mig_fail(m, ret, "reading store_copy in %s: %s",
				    m->where, PQerrorMessage(m->dst));
	n = PQntuples(r);
	if (n > 1 || (n == 1 && strcmp(PQgetvalue(r, 0, 0), m->source)))
		ret = twl_mig_fail(m, -EEXIST,
				   "%s holds a copy of %s, not of %s: copy "
				   "into an empty database",
				   m->where, PQgetvalue(r, 0, 0), m->source);
	PQclear(r);
	if (!ret && !n)
		ret = target_empty(m);
	if (!ret)
		ret = twl_mig_pg(m, "BEGIN", 0, NULL);
	for (int i = 0; i < m->n_tables && !ret; i++) {
		const char *v[] = { m->t[i].name, m->source };

		ret = twl_mig_pg(
			m,
			"INSERT INTO store_copy(tbl, source)"
			" VALUES ($1, $2) ON CONFLICT (tbl) DO NOTHING",
			2, v);
	}
	ret = ret ? ret : twl_mig_pg(m, "COMMIT", 0, NULL);
	if (!ret && n)
		fprintf(m->out, "resuming the copy of %s into %s\n", m->source,
			m->where);
	return ret;
}

/* The tables @bad marks (all when NULL) copied; those marked from scratch. */
static int copy_tables(struct twl_mig *m, const bool *bad)
{
	int ret = 0;

	for (int i = 0; i < m->n_tables && !ret; i++) {
		const char *v[] = { m->t[i].name };

		if (bad && !bad[i])
			continue;
		if (bad)
			ret = twl_mig_pg(
				m,
				"UPDATE store_copy SET cursor = NULL,"
				" rows = 0, done = false WHERE tbl = $1",
				1, v);
		if (!ret)
			ret = twl_mig_copy_table(m, &m->t[i]);
	}
	return ret;
}

/*
 * The planner's statistics of every table copied (ANALYZE): a bulk copy
 * leaves none until autovacuum gets to the table, so the server's first
 * reads on a large copy would be planned blind and autovacuum would then
 * analyze under them. Names are checked plain (twl_mig_tables()).
 */
static int analyze_tables(struct twl_mig *m)
{
	char sql[TWL_MIG_NAME + 16];
	double t0 = twl_mig_now();
	int ret = 0;

	for (int i = 0; i < m->n_tables && !ret; i++) {
		snprintf(sql, sizeof(sql), "ANALYZE %s", m->t[i].name);
		ret = twl_mig_pg(m, sql, 0, NULL);
	}
	if (!ret)
		fprintf(m->out,
			"planner statistics gathered (ANALYZE) for the %d "
			"tables in %.1f s\n",
			m->n_tables, twl_mig_now() - t0);
	return ret;
}

/*
 * Copy, verify, and with --recopy copy the unequal tables again once;
 * then, unless only verifying, ANALYZE what was copied.
 */
static int run(struct twl_mig *m)
{
	bool bad[TWL_MIG_MAX_TABLES] = { false };
	int ret = 0;

	if (!m->o->verify_only)
		ret = copy_tables(m, NULL);
	if (!ret)
		ret = twl_mig_verify(m, bad);
	if (ret == -EBADMSG && m->o->recopy) {
		fprintf(m->out, "copying the tables that differ again\n");
		ret = copy_tables(m, bad);
		if (!ret)
			ret = twl_mig_verify(m, bad);
	}
	return ret || m->o->verify_only ? ret : analyze_tables(m);
}

/* Contract: see migrate_store.h. */
int twl_migrate_store(struct twl_migrate_opts *o)
{
	struct twl_mig *m = calloc(1, sizeof(*m));
	double t0 = twl_mig_now();
	int ret;

	o->err[0] = '\0';
	if (!m) {
		snprintf(o->err, sizeof(o->err), "out of memory");
		return -ENOMEM;
	}
	m->o = o;
	m->out = o->out ? o->out : stderr;
	ret = open_source(m);
	if (!ret)
		ret = open_target(m);
	if (!ret)
		ret = twl_mig_tables(m);
	if (!ret)
		ret = claim(m);
	if (!ret)
		ret = run(m);
	if (!ret)
		fprintf(m->out,
			"%s copied into %s and verified: %d tables in %.1f s\n",
			m->source, m->where, m->n_tables, twl_mig_now() - t0);
	sqlite3_close(m->src);
	PQfinish(m->dst);
	free(m);
	return ret;
}
