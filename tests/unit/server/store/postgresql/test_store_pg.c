// SPDX-License-Identifier: GPL-2.0
/*
 * The PostgreSQL store (server/store/postgresql/store_pg.c, migrate_pg.c)
 * against the fixture's server: migrations applied once, also by two
 * servers opening one database together; a newer schema refused; what
 * the store does not implement yet answers -ENOTSUP; a server that does
 * not answer fails the open; passwords stay out of messages.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "pg_fixture.h"
#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/store.h"
#include "store/store_read.h"

/* How many migrations this binary has (their numbers may have gaps). */
static int n_migrations(void)
{
	int n = 0;

	while (twl_pg_migrations[n].name)
		n++;
	return n;
}

static void test_open_migrates(void **state)
{
	struct twl_store *s = NULL;
	char uri[512];
	int latest = twl_pg_migrate_latest();

	assert_true(latest >= 1);
	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	assert_int_equal(twl_store_schema_version(s), latest);
	twl_store_close(s);
	/* opened again: nothing more to apply */
	assert_int_equal(twl_store_open(uri, &s), 0);
	assert_int_equal(twl_store_schema_version(s), latest);
	twl_store_close(s);
	assert_int_equal(pg_q(uri, "SELECT count(*) FROM schema_version"),
			 n_migrations());
	assert_int_equal(pg_q(uri, "SELECT count(*) FROM pg_tables WHERE"
				   " tablename IN ('hosts', 'host_keys',"
				   " 'tokens', 'batches', 'usage')"),
			 5);
}

struct opener {
	const char *uri;
	pthread_barrier_t *go;
	int ret, version;
};

static void *open_thread(void *p)
{
	struct opener *o = p;
	struct twl_store *s = NULL;

	pthread_barrier_wait(o->go);
	o->ret = twl_store_open(o->uri, &s);
	if (!o->ret)
		o->version = twl_store_schema_version(s);
	twl_store_close(s);
	return NULL;
}

/*
 * Servers started together on one new database: both open it, and each
 * migration ran once (without the advisory lock, the second one's
 * CREATE TABLE fails, or schema_version gets a version twice).
 */
static void test_two_migrators(void **state)
{
	enum { N = 4 };
	struct opener o[N];
	pthread_barrier_t go;
	pthread_t th[N];
	char uri[512];

	for (int round = 0; round < 3; round++) {
		pg_fixture_db(uri, sizeof(uri));
		pthread_barrier_init(&go, NULL, N);
		for (int i = 0; i < N; i++) {
			o[i] = (struct opener){ uri, &go, 1, -1 };
			assert_int_equal(pthread_create(&th[i], NULL,
							open_thread, &o[i]),
					 0);
		}
		for (int i = 0; i < N; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&go);
		for (int i = 0; i < N; i++) {
			assert_int_equal(o[i].ret, 0);
			assert_int_equal(o[i].version, twl_pg_migrate_latest());
		}
		assert_int_equal(pg_q(uri,
				      "SELECT count(*) FROM schema_version"),
				 n_migrations());
		assert_int_equal(pg_q(uri, "SELECT count(DISTINCT version)"
					   " FROM schema_version"),
				 n_migrations());
	}
}

/*
 * A migration numbered below the newest one applied (two branches' work
 * merged after a database took the higher number) is applied too: here
 * a database that had all but the one before the newest.
 */
static void test_missing_below_newest(void **state)
{
	struct twl_store *s = NULL;
	int n = n_migrations(), skip = n - 2;
	char uri[512], sql[256];

	assert_true(n >= 3);
	pg_fixture_db(uri, sizeof(uri));
	pg_exec(uri, "CREATE TABLE schema_version (version INT PRIMARY KEY,"
		     " name TEXT NOT NULL, applied BIGINT NOT NULL DEFAULT 0)");
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		pg_exec(uri, twl_pg_migrations[i].sql);
		snprintf(sql, sizeof(sql),
			 "INSERT INTO schema_version(version, name)"
			 " VALUES (%d, '%s')",
			 atoi(twl_pg_migrations[i].name),
			 twl_pg_migrations[i].name);
		pg_exec(uri, sql);
	}
	assert_int_equal(twl_store_open(uri, &s), 0);
	assert_int_equal(twl_store_schema_version(s), twl_pg_migrate_latest());
	twl_store_close(s);
	assert_int_equal(pg_q(uri, "SELECT count(*) FROM schema_version"), n);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM schema_version WHERE version = %d",
		 atoi(twl_pg_migrations[skip].name));
	assert_int_equal(pg_q(uri, sql), 1);
}

/*
 * /healthz's look at the link: a round trip; a connection the server
 * ended (a restart of PostgreSQL, say) is made again once, and a server
 * that is gone is a clear error.
 */
static void test_ping(void **state)
{
	struct twl_store *s = NULL;
	const char *backend = NULL;
	char uri[512], problem[256], sql[256];

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	assert_int_equal(twl_store_ping(s, &backend, problem, sizeof(problem)),
			 0);
	assert_string_equal(backend, "postgresql");
	snprintf(
		sql, sizeof(sql),
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
		" WHERE datname = current_database() AND pid <> pg_backend_pid()");
	assert_true(pg_q(uri, sql) >= 1); /* the store's connections */
	assert_int_equal(twl_store_ping(s, &backend, problem, sizeof(problem)),
			 0);
	assert_int_equal(twl_store_schema_version(s), twl_pg_migrate_latest());
	twl_store_close(s);
}

/* A database migrated by a newer binary: -EPROTO, and left as it was. */
static void test_newer_schema(void **state)
{
	struct twl_store *s = NULL;
	char uri[512];

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	twl_store_close(s);
	pg_exec(uri, "INSERT INTO schema_version(version, name)"
		     " VALUES (999, '999_future.sql')");
	s = (struct twl_store *)1;
	assert_int_equal(twl_store_open(uri, &s), -EPROTO);
	assert_null(s);
	assert_int_equal(pg_q(uri, "SELECT max(version) FROM schema_version"),
			 999);
	assert_int_equal(pg_q(uri, "SELECT count(*) FROM schema_version"),
			 n_migrations() + 1);
}

/* What the store lacks answers -ENOTSUP (no JSON), and does not crash. */
static void test_not_supported(void **state)
{
	struct twl_store *s = NULL;
	char uri[512];
	uint64_t n;
	double seconds;

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	/* PostgreSQL sizes and checkpoints its own WAL */
	assert_int_equal(twl_store_set_wal_max(s, 1 << 30), -ENOTSUP);
	assert_int_equal(twl_store_wal_catchups(s, &n, &seconds), -ENOTSUP);
	twl_store_close(s);
}

/*
 * A read API answer holds the read connection alone: while one is open,
 * the credentials' connection (token look-ups) and the writer's stay
 * free, and a token is looked up.
 */
static void test_read_apart(void **state)
{
	struct twl_store *s = NULL;
	struct twl_pg *p;
	char uri[512], role[16], name[64];
	int64_t id;
	void *ctx = NULL;

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	p = twl_pg_of(s);
	assert_int_equal(twl_pg_rq_io.begin(s, true, NULL, &ctx), 0);
	assert_int_equal(pthread_mutex_trylock(&p->lock), 0);
	pthread_mutex_unlock(&p->lock);
	assert_int_equal(pthread_mutex_trylock(&p->wlock), 0);
	pthread_mutex_unlock(&p->wlock);
	assert_int_equal(twl_store_token_lookup(s, "no-such-hash", role,
						sizeof(role), name,
						sizeof(name), &id),
			 -ENOENT);
	twl_pg_rq_io.end(ctx);
	twl_store_close(s);
}

/*
 * A scan (a private answer: feature detail, readiness, an export, the
 * alert detector's) runs on a connection of its own: while two are open
 * the shared read connection stays free and a short answer (the summary)
 * runs; afterwards both connections wait idle for the next scans, which
 * reuse them. On one shared connection a detector's readiness scan held
 * the dashboard's summary for minutes.
 */
static void test_private_scans(void **state)
{
	struct twl_store *s = NULL;
	struct twl_pg *p;
	char uri[512];
	void *scan1 = NULL, *scan2 = NULL, *quick = NULL;
	json_t *doc = NULL;
	PGconn *first;

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	p = twl_pg_of(s);
	assert_int_equal(twl_pg_rq_io.begin(s, true, NULL, &scan1), 0);
	assert_int_equal(pthread_mutex_trylock(&p->rlock), 0);
	pthread_mutex_unlock(&p->rlock);
	assert_int_equal(twl_pg_rq_io.begin(s, true, NULL, &scan2), 0);
	assert_int_equal(twl_pg_rq_io.begin(s, false, NULL, &quick), 0);
	twl_pg_rq_io.end(quick);
	assert_int_equal(twl_read_summary(s, 86400, &doc), 0);
	json_decref(doc);
	twl_pg_rq_io.end(scan2);
	twl_pg_rq_io.end(scan1);
	assert_int_equal(p->n_idle, 2);
	first = p->idle[1];
	assert_int_equal(twl_pg_rq_io.begin(s, true, NULL, &scan1), 0);
	assert_int_equal(p->n_idle, 1);
	assert_ptr_not_equal(p->idle[0],
			     first); /* the last one given back taken */
	twl_pg_rq_io.end(scan1);
	twl_store_close(s);
}

/*
 * Short answers run prepared statements on the shared read connection;
 * one that fails (here: a column's type changed under it, as another
 * server's migration could) has every statement prepared again for the
 * next answer instead of failing every answer after it.
 */
static void test_prepared_reads(void **state)
{
	struct twl_store *s = NULL;
	struct twl_pg *p;
	char uri[512];
	json_t *doc = NULL;
	PGconn *other;
	PGresult *r;

	pg_fixture_db(uri, sizeof(uri));
	assert_int_equal(twl_store_open(uri, &s), 0);
	p = twl_pg_of(s);
	assert_int_equal(twl_read_summary(s, 86400, &doc), 0);
	json_decref(doc);
	assert_true(p->rprepared[TWL_RQ_TIMELINE / 64] &
		    (1ULL << (TWL_RQ_TIMELINE % 64)));
	other = PQconnectdb(uri);
	assert_int_equal(PQstatus(other), CONNECTION_OK);
	r = PQexec(other,
		   "ALTER TABLE feature_day ALTER COLUMN uses TYPE numeric");
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	PQfinish(other);
	doc = NULL;
	assert_int_not_equal(twl_read_summary(s, 86400, &doc), 0);
	assert_int_equal(twl_read_summary(s, 86400, &doc), 0);
	json_decref(doc);
	twl_store_close(s);
}

/* A server that is not there: the open fails, with nothing left open. */
static void test_no_server(void **state)
{
	struct twl_store *s = NULL;

	assert_true(twl_store_is_postgresql("postgresql://u@/db?host=/x"));
	assert_true(twl_store_is_postgresql("POSTGRES://u@h/db"));
	assert_false(twl_store_is_postgresql("/var/lib/twilight/twilight.db"));
	assert_false(twl_store_is_postgresql("postgresql.db"));
	assert_int_equal(
		twl_store_open(
			"postgresql://twilight@/none?host=/nonexistent-dir",
			&s),
		-ECONNREFUSED);
	assert_null(s);
}

static void test_redact(void **state)
{
	char out[128];

	twl_uri_redact("postgresql://u:secret@db.example/twl", out,
		       sizeof(out));
	assert_string_equal(out, "postgresql://u:***@db.example/twl");
	twl_uri_redact("postgresql://u@/twl?host=/run/pg", out, sizeof(out));
	assert_string_equal(out, "postgresql://u@/twl?host=/run/pg");
	twl_uri_redact("postgresql:///twl", out, sizeof(out));
	assert_string_equal(out, "postgresql:///twl");
	twl_uri_redact("postgresql://u@h/twl?sslmode=require&password=pw&x=1",
		       out, sizeof(out));
	assert_string_equal(
		out, "postgresql://u@h/twl?sslmode=require&password=***");
	twl_uri_redact("postgresql://u:p@h/twl?x=a@b", out, sizeof(out));
	assert_string_equal(out, "postgresql://u:***@h/twl?x=a@b");
	/* too long for @out: cut before the password, never in it */
	twl_uri_redact("postgresql://u@h/twl?password=longsecret", out, 33);
	assert_string_equal(out, "postgresql://u@h/twl");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_migrates),
		cmocka_unit_test(test_two_migrators),
		cmocka_unit_test(test_missing_below_newest),
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_newer_schema),
		cmocka_unit_test(test_not_supported),
		cmocka_unit_test(test_read_apart),
		cmocka_unit_test(test_private_scans),
		cmocka_unit_test(test_prepared_reads),
		cmocka_unit_test(test_no_server),
		cmocka_unit_test(test_redact),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
