// SPDX-License-Identifier: GPL-2.0
/*
 * migrate-store (store/migrate_store.h): an SQLite store seeded through
 * the real ingest path copied into a fresh database of the fixture's
 * PostgreSQL server. Every table equal afterwards (counts, checksums, and
 * the rollups as SQLite has them, not counted again by PostgreSQL's
 * triggers, which are on again for the server that opens the copy); a
 * copy stopped midway resumes without copying a row twice;
 * a target row changed afterwards, and rows a live server added, are
 * reported table by table and copied again by --recopy; a source of
 * another schema version, a target holding other data, and a target
 * holding the copy of another file are refused.
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

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/migrate_store.h"
#include "store/sqlite/migrate.h"
#include "store/store.h"

static char pguri[512];
static char out[1 << 16]; /* what the last run printed */
static char last_err[1024]; /* and its error line */

/* The tables whose counts the tests compare directly, raw and rollups. */
static const char *const tables[] = {
	"hosts",	"usage",       "warnings",     "batches",
	"feature_host", "feature_day", "feature_hour", "feature_comm",
	"host_hour",	"tokens",      "annotations",  "coverage_count",
};

/* Ingest reports of @n hosts over days, a token and an annotation. */
static void seed(struct twl_store *s, int n, const char *prefix)
{
	const int64_t day = 86400, t0 = 20000 * day;
	char host[32], batch[32], boot[32];
	json_t *r;

	for (int i = 0; i < n; i++) {
		int64_t t = t0 + i * 5 * 3600;

		snprintf(host, sizeof(host), "%s%d", prefix, i % 4);
		snprintf(batch, sizeof(batch), "%s%04x", prefix, i);
		snprintf(boot, sizeof(boot), "boot-%d", i / 3);
		r = i % 2 ? report_x10(host, batch) : report(host, batch);
		move_to(r, boot, t);
		ingest_at(s, host, r, t + 30);
		json_decref(r);
	}
	assert_int_equal(twl_store_token_add(s, prefix, "viewer",
					     prefix[0] == 'a' ? "ab12" : "cd34",
					     t0, NULL),
			 0);
	assert_int_equal(twl_store_annotation_add(s, "memcg_v1.soft_limit",
						  "java",
						  "tab\there\\ and\nline", "no",
						  "tester", t0, NULL),
			 0);
}

/* A fresh SQLite store at dbpath with @n reports; left open in *@s or closed. */
static void seed_store(int n, struct twl_store **s)
{
	struct twl_store *st = NULL;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &st), 0);
	seed(st, n, "a");
	if (s)
		*s = st;
	else
		twl_store_close(st);
}

/* migrate-store from @path to pguri; its output in out[], error in last_err. */
static int migrate_from(const char *path, unsigned chunk, unsigned long stop,
			bool recopy, bool verify_only)
{
	char from[600];
	struct twl_migrate_opts o = { .from = from,
				      .to = pguri,
				      .chunk_rows = chunk,
				      .stop_after_chunks = stop,
				      .recopy = recopy,
				      .verify_only = verify_only };
	size_t n;
	int ret;

	snprintf(from, sizeof(from), "sqlite:%s", path);
	o.out = tmpfile();
	assert_non_null(o.out);
	ret = twl_migrate_store(&o);
	rewind(o.out);
	n = fread(out, 1, sizeof(out) - 1, o.out);
	out[n] = '\0';
	fclose(o.out);
	snprintf(last_err, sizeof(last_err), "%s", o.err);
	if (ret)
		print_message("migrate-store: %d: %s\n%s", ret, o.err, out);
	return ret;
}

/* migrate_from() the test's store. */
static int migrate(unsigned chunk, unsigned long stop, bool recopy,
		   bool verify_only)
{
	return migrate_from(dbpath, chunk, stop, recopy, verify_only);
}

/* Every compared table has as many rows in PostgreSQL as in SQLite. */
static void check_counts(void)
{
	char sql[128];

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s",
			 tables[i]);
		assert_true(q(sql) > 0);
		assert_int_equal(pg_q(pguri, sql), q(sql));
	}
	/* the rollups' sums as SQLite has them, not counted twice */
	assert_int_equal(pg_q(pguri, "SELECT sum(uses) FROM feature_day"),
			 q("SELECT sum(uses) FROM feature_day"));
	assert_int_equal(pg_q(pguri, "SELECT sum(hosts) FROM feature_hour"),
			 q("SELECT sum(hosts) FROM feature_hour"));
	assert_int_equal(pg_q(pguri, "SELECT sum(hosts) FROM host_hour"),
			 q("SELECT sum(hosts) FROM host_hour"));
}

/*
 * The copy opens as a PostgreSQL store and ingests: its triggers are on
 * again (host_hour counts the new host, feature_comm its processes).
 */
static void check_store_works(void)
{
	struct twl_store *s = NULL;
	json_t *r = report("new", "ffff");
	int64_t hosts = pg_q(pguri, "SELECT count(*) FROM hosts");

	assert_int_equal(pg_q(pguri, "SELECT sum(hosts) FROM host_hour"),
			 hosts);
	assert_int_equal(twl_store_open(pguri, &s), 0);
	move_to(r, "boot-new", 20000 * 86400 + 99 * 3600);
	ingest_at(s, "new", r, 20000 * 86400 + 99 * 3600 + 30);
	json_decref(r);
	twl_store_close(s);
	assert_int_equal(pg_q(pguri, "SELECT count(*) FROM hosts"), hosts + 1);
	assert_int_equal(pg_q(pguri, "SELECT sum(hosts) FROM host_hour"),
			 hosts + 1);
	assert_int_equal(pg_q(pguri, "SELECT sum(configures + listens + reads)"
				     " FROM feature_comm"),
			 pg_q(pguri, "SELECT count(*) FROM usage"));
}

/* The number of lines of out[] holding @s. */
static int lines_with(const char *s)
{
	int n = 0;

	for (const char *p = out; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/* Copied in chunks, verified, and the new tokens number after the copy's. */
static void test_copy(void **state)
{
	(void)state;
	seed_store(12, NULL);
	/* a batch's body hash, a blob: bytes PostgreSQL's COPY must escape */
	exec_sql("UPDATE batch_ids SET body_sha256 = x'00ff5c090a0d'"
		 " WHERE batch_id = 'a0003'");
	/* an answer the SQLite server kept: not copied */
	exec_sql("INSERT INTO kept_answers(key, computed, cost, body)"
		 " VALUES (printf('%064d', 1), 1000, 2000, '{}')");
	pg_fixture_db(pguri, sizeof(pguri));
	assert_int_equal(migrate(7, 0, false, false), 0);
	check_counts();
	assert_int_equal(lines_with("kept_answers: not copied"), 1);
	assert_int_equal(pg_q(pguri, "SELECT count(*) FROM kept_answers"), 0);
	assert_int_equal(pg_q(pguri, "SELECT count(*) FROM batches WHERE"
				     " body_sha256 = '\\x00ff5c090a0d'"),
			 1);
	assert_int_equal(lines_with(": equal\n"), 25);
	assert_int_equal(lines_with("MISMATCH"), 0);
	assert_non_null(strstr(out, "usage: "));
	/* the copy's statistics, gathered by the copy (not autovacuum) */
	assert_int_equal(lines_with("planner statistics gathered"), 1);
	assert_int_equal(pg_q(pguri,
			      "SELECT count(*) FROM pg_stat_user_tables"
			      " WHERE relname IN ('usage', 'hosts',"
			      " 'feature_host') AND last_analyze IS NOT NULL"),
			 3);
	pg_exec(pguri, "INSERT INTO tokens(name, role, token_hash, created)"
		       " VALUES ('next', 'admin', 'ef56', 1)");
	assert_int_equal(pg_q(pguri, "SELECT max(id) FROM tokens"),
			 q("SELECT max(id) FROM tokens") + 1);
	/* run again: nothing copied twice, all equal */
	pg_exec(pguri, "DELETE FROM tokens WHERE token_hash = 'ef56'");
	assert_int_equal(migrate(7, 0, false, false), 0);
	assert_int_equal(lines_with("copied by an earlier run"), 25);
	check_counts();
	check_store_works();
}

/* Stopped after a few chunks, then resumed to an equal copy. */
static void test_resume(void **state)
{
	(void)state;
	seed_store(12, NULL);
	pg_fixture_db(pguri, sizeof(pguri));
	assert_int_equal(migrate(3, 9, false, false), -EINTR);
	assert_true(pg_q(pguri, "SELECT count(*) FROM store_copy"
				" WHERE NOT done") > 0);
	assert_true(pg_q(pguri, "SELECT count(*) FROM store_copy"
				" WHERE NOT done AND rows > 0") == 1);
	assert_int_equal(migrate(3, 0, false, false), 0);
	assert_non_null(strstr(out, "resuming the copy"));
	assert_int_equal(lines_with("MISMATCH"), 0);
	check_counts();
	assert_int_equal(pg_q(pguri, "SELECT sum(rows) FROM store_copy"),
			 pg_q(pguri, "SELECT (SELECT count(*) FROM usage) +"
				     " (SELECT count(*) FROM warnings) +"
				     " (SELECT count(*) FROM hosts) +"
				     " (SELECT count(*) FROM batches) +"
				     " (SELECT count(*) FROM feature_host) +"
				     " (SELECT count(*) FROM feature_day) +"
				     " (SELECT count(*) FROM feature_hour) +"
				     " (SELECT count(*) FROM feature_comm) +"
				     " (SELECT count(*) FROM host_hour) +"
				     " (SELECT count(*) FROM host_labels) +"
				     " (SELECT count(*) FROM host_coverage) +"
				     " (SELECT count(*) FROM host_runtimes) +"
				     " (SELECT count(*) FROM census_knobs) +"
				     " (SELECT count(*) FROM unknown_counts) +"
				     " (SELECT count(*) FROM"
				     " unknown_deprecations) +"
				     " (SELECT count(*) FROM catalog_feature) +"
				     " (SELECT count(*) FROM server_meta) +"
				     " (SELECT count(*) FROM coverage_count) +"
				     " (SELECT count(*) FROM tokens) +"
				     " (SELECT count(*) FROM annotations)"));
}

/* A changed target row, and a live source's new rows, reported; recopied. */
static void test_mismatch(void **state)
{
	struct twl_store *s = NULL;

	(void)state;
	seed_store(8, &s);
	pg_fixture_db(pguri, sizeof(pguri));
	assert_int_equal(migrate(0, 0, false, false), 0);
	pg_exec(pguri, "UPDATE usage SET count = count + 1"
		       " WHERE id = (SELECT min(id) FROM usage)");
	assert_int_equal(migrate(0, 0, false, true), -EBADMSG);
	assert_int_equal(lines_with("MISMATCH"), 1);
	assert_non_null(strstr(out, "\nusage: MISMATCH: the source has "));
	/* one byte of a text, the rows' counts equal */
	pg_exec(pguri, "UPDATE usage SET count = count - 1"
		       " WHERE id = (SELECT min(id) FROM usage)");
	pg_exec(pguri, "UPDATE hosts SET hostname = hostname || 'x'"
		       " WHERE host_id = 'a1'");
	assert_int_equal(migrate(0, 0, false, true), -EBADMSG);
	assert_int_equal(lines_with("MISMATCH"), 1);
	assert_non_null(strstr(out, "hosts: MISMATCH"));
	/* the server still writes the source: new rows, changed rollups */
	seed(s, 3, "b");
	assert_int_equal(migrate(0, 0, false, false), -EBADMSG);
	assert_true(lines_with("MISMATCH") >= 4);
	assert_non_null(strstr(out, "feature_day: MISMATCH"));
	/* the final pass (the server stopped) copies them again */
	twl_store_close(s);
	assert_int_equal(migrate(0, 0, true, false), 0);
	assert_non_null(strstr(out, "copying the tables that differ again"));
	check_counts();
	assert_int_equal(migrate(0, 0, false, true), 0);
}

/* Other schema versions, other data, another file's copy: refused. */
static void test_refuse(void **state)
{
	char other[600], version[64], said[64];
	struct twl_store *s = NULL;

	(void)state;
	seed_store(2, NULL);
	pg_fixture_db(pguri, sizeof(pguri));
	/* a target a server already wrote to */
	assert_int_equal(twl_store_open(pguri, &s), 0);
	assert_int_equal(twl_store_token_add(s, "x", "admin", "99", 1, NULL),
			 0);
	twl_store_close(s);
	assert_int_equal(migrate(0, 0, false, false), -EEXIST);
	assert_int_equal(pg_q(pguri, "SELECT count(*) FROM store_copy"), 0);
	/* a copy of another file */
	pg_fixture_db(pguri, sizeof(pguri));
	assert_int_equal(migrate(0, 0, false, false), 0);
	snprintf(other, sizeof(other), "VACUUM INTO '%s/other.db'", dir);
	exec_sql(other);
	snprintf(other, sizeof(other), "%s/other.db", dir);
	assert_int_equal(migrate_from(other, 0, 0, false, false), -EEXIST);
	assert_non_null(strstr(last_err, "holds a copy of"));
	/* a source of another schema version, even into an empty database */
	pg_fixture_db(pguri, sizeof(pguri));
	snprintf(version, sizeof(version), "PRAGMA user_version = %d",
		 twl_migrate_latest() - 1);
	snprintf(said, sizeof(said), "schema version %d",
		 twl_migrate_latest() - 1);
	exec_sql(version);
	assert_int_equal(migrate(0, 0, false, false), -EPROTO);
	assert_non_null(strstr(last_err, said));
	snprintf(version, sizeof(version), "PRAGMA user_version = %d",
		 twl_migrate_latest());
	exec_sql(version);
	assert_int_equal(migrate(0, 0, false, false), 0);
}

/* The command line: its exit statuses, 0 only for an equal copy. */
static void test_cli(void **state)
{
	char from[300], to[600];
	char *ok[] = { "migrate-store", "--from", from, "--to", to, NULL };
	char *verify[] = { "migrate-store", "--from", from, "--to", to,
			   "--verify-only", NULL };
	char *no_to[] = { "migrate-store", "--from", from, NULL };
	char *bad_to[] = { "migrate-store", "--from", from, "--to", from, NULL };

	(void)state;
	seed_store(3, NULL);
	pg_fixture_db(pguri, sizeof(pguri));
	snprintf(from, sizeof(from), "sqlite:%s", dbpath);
	snprintf(to, sizeof(to), "%s", pguri);
	assert_int_equal(twl_migrate_store_cli(3, no_to), 2);
	assert_int_equal(twl_migrate_store_cli(5, bad_to), 2);
	assert_int_equal(twl_migrate_store_cli(5, ok), 0);
	pg_exec(pguri, "DELETE FROM batches"
		       " WHERE batch_id = (SELECT min(batch_id) FROM batches)");
	assert_int_equal(twl_migrate_store_cli(6, verify), 1);
	pg_exec(pguri, "UPDATE store_copy SET source = 'elsewhere'");
	assert_int_equal(twl_migrate_store_cli(5, ok), 1);
}

static int group_teardown(void **state)
{
	pg_fixture_drop_all(state);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),	 cmocka_unit_test(test_resume),
		cmocka_unit_test(test_mismatch), cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
