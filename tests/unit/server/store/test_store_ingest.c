// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest write path through the storage interface (store.h), the
 * same tests run against each backend: SQLite (a file) and PostgreSQL (a
 * database on the fixture's server). Reports in nested transactions (a
 * failing one rolls back alone, also when it fails in its last round
 * trip on PostgreSQL), batch ids (a replay is a duplicate,
 * another body under the same id a conflict), counters max-merged,
 * retention, the catalog rematch, and every rollup equal to a recount of
 * the raw rows, checked with SQL both dialects run. On PostgreSQL, two
 * servers ingesting the same host at once: the second waits for the
 * first's COMMIT (the ingest lock, store/postgresql/README.md).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/ingest.h"
#include "store/postgresql/store_pg_ingest.h" /* TWL_PG_INGEST_LOCK */
#include "store/postgresql/store_pg_internal.h" /* the writer's pid */
#include "store/store.h"

static enum backend cur;
static char pguri[512];

/* A new empty store of @b; bq() then queries it. */
static struct twl_store *open_new(enum backend b)
{
	struct twl_store *s = NULL;

	cur = b;
	if (b == SQLITE) {
		unlink(dbpath);
		assert_int_equal(twl_store_open(dbpath, &s), 0);
	} else {
		pg_fixture_db(pguri, sizeof(pguri));
		assert_int_equal(twl_store_open(pguri, &s), 0);
	}
	return s;
}

/* The current store opened again. */
static struct twl_store *reopen(void)
{
	struct twl_store *s = NULL;

	assert_int_equal(twl_store_open(cur == SQLITE ? dbpath : pguri, &s), 0);
	return s;
}

/* The first column of the first row of @sql on the current store. */
static int64_t bq(const char *sql)
{
	return cur == SQLITE ? q(sql) : pg_q(pguri, sql);
}

/* Run @sql on the current store (its dialect's @sqlite or @pg). */
static void bexec(const char *sqlite, const char *pg)
{
	if (cur == SQLITE)
		exec_sql(sqlite);
	else
		pg_exec(pguri, pg);
}

/*
 * What feature_host must hold per (feature, host), recounted from the
 * raw rows with SQL of the test's own (not the stores' recount view).
 */
#define RAW_EVIDENCE                                                          \
	"SELECT feature_id AS f, host_id AS h, first_seen AS t0,"             \
	" last_seen AS t1,"                                                   \
	" CASE WHEN op = 'read' THEN 0 ELSE count END AS u,"                  \
	" CASE WHEN op = 'read' THEN count ELSE 0 END AS r, 0 AS w,"          \
	" CASE op WHEN 'write' THEN 1 WHEN 'register_event' THEN 2 ELSE 4"    \
	" END AS k FROM usage UNION ALL SELECT feature_id, host_id, time,"    \
	" time, 0, 0, 1, 8 FROM warnings UNION ALL SELECT"                    \
	" matched_feature_id, host_id, first_time, first_time, 0, 0, count,"  \
	" 8 FROM unknown_deprecations WHERE matched_feature_id IS NOT NULL"   \
	" UNION ALL SELECT feature_id, host_id, time, time, 0, 0, 0, 16 FROM" \
	" census_knobs"
#define RAW_RECOUNT                                                       \
	"SELECT f, h, min(t0) AS t0, max(t1) AS t1, sum(u) AS u,"         \
	" sum(r) AS r, sum(w) AS w, max(k & 1) + max(k & 2) + max(k & 4)" \
	" + max(k & 8) + max(k & 16) AS k FROM (" RAW_EVIDENCE ") e"      \
	" GROUP BY f, h"
#define ONE(cond) "sum(CASE WHEN " cond " THEN 1 ELSE 0 END)"
/* test_recount's first report's time */
#define RECOUNT_T0 (20000 * 86400LL)

/* Every rollup equals a recount of the raw rows; fails the test if not. */
static void check_recount_both(void)
{
	assert_true(bq("SELECT count(*) FROM feature_host") > 0);
	/* every recounted pair has its row, equal in every count */
	assert_int_equal(bq("SELECT count(*) FROM (" RAW_RECOUNT ") g"
			    " LEFT JOIN feature_host fh"
			    " ON fh.feature_id = g.f AND fh.host_id = g.h"
			    " WHERE fh.uses IS DISTINCT FROM g.u"
			    " OR fh.reads IS DISTINCT FROM g.r"
			    " OR fh.warnings IS DISTINCT FROM g.w"
			    " OR fh.kinds IS DISTINCT FROM g.k"
			    " OR fh.first_used IS DISTINCT FROM g.t0"
			    " OR fh.last_used IS DISTINCT FROM g.t1"),
			 0);
	/* and no row holds what no raw row shows */
	assert_int_equal(bq("SELECT count(*) FROM feature_host fh WHERE NOT"
			    " EXISTS (SELECT 1 FROM (" RAW_EVIDENCE ") e"
			    " WHERE e.f = fh.feature_id AND e.h = fh.host_id)"),
			 0);
	/* the store's own recount view agrees */
	assert_int_equal(
		bq("SELECT count(*) FROM feature_host_recount r"
		   " LEFT JOIN feature_host fh ON fh.feature_id = r.feature_id"
		   " AND fh.host_id = r.host_id"
		   " WHERE fh.uses IS DISTINCT FROM r.uses"
		   " OR fh.kinds IS DISTINCT FROM r.kinds"),
		0);
	/* feature_hour: per hour, hosts using (not read-only) and per kind */
	assert_int_equal(
		bq("SELECT count(*) FROM (SELECT feature_id, last_hour,"
		   " " ONE("(kinds & 27) <> 0") " AS u,"
						" " ONE("(kinds & 17) <> 0") " AS c,"
									     " " ONE("(kinds & 2) <> 0") " AS l,"
													 " " ONE("kinds = 4") " AS r"
															      " FROM feature_host GROUP BY feature_id, last_hour) g"
															      " FULL JOIN feature_hour h ON h.feature_id = g.feature_id"
															      " AND h.hour = g.last_hour"
															      " WHERE coalesce(h.hosts, 0) <> coalesce(g.u, 0)"
															      " OR coalesce(h.configuring, 0) <> coalesce(g.c, 0)"
															      " OR coalesce(h.listening, 0) <> coalesce(g.l, 0)"
															      " OR coalesce(h.reading_only, 0) <> coalesce(g.r, 0)"),
		0);
	/* feature_comm: per process, its usage rows of each kind */
	assert_int_equal(
		bq("SELECT count(*) FROM (SELECT feature_id, comm,"
		   " " ONE("op = 'write'") " AS c,"
					   " " ONE("op = 'register_event'") " AS l,"
									    " " ONE("op = 'read'") " AS r FROM usage"
												   " GROUP BY feature_id, comm) g"
												   " FULL JOIN feature_comm fc ON fc.feature_id = g.feature_id"
												   " AND fc.comm = g.comm WHERE fc.configures IS DISTINCT FROM"
												   " g.c OR fc.listens IS DISTINCT FROM g.l"
												   " OR fc.reads IS DISTINCT FROM g.r"),
		0);
	/* host_hour: hosts per cgroup mode and hour of their last report */
	assert_int_equal(
		bq("SELECT count(*) FROM (SELECT cgroup_mode, last_seen / 3600"
		   " AS hour, count(*) AS n FROM hosts"
		   " GROUP BY cgroup_mode, last_seen / 3600) g"
		   " FULL JOIN host_hour hh ON hh.cgroup_mode = g.cgroup_mode"
		   " AND hh.hour = g.hour"
		   " WHERE coalesce(hh.hosts, 0) <> coalesce(g.n, 0)"),
		0);
	/* coverage_count: per fact bit, the hosts that have it */
	assert_int_equal(
		bq("SELECT count(*) FROM coverage_count c WHERE c.hosts <>"
		   " (SELECT count(*) FROM host_coverage"
		   " WHERE ((facts >> CAST(c.bit AS INTEGER)) & 1) = 1)"),
		0);
}

/* check_recount_both(), and feature_day (nothing pruned) sums them. */
static void check_days_both(void)
{
	check_recount_both();
	assert_int_equal(
		bq("SELECT count(*) FROM (SELECT feature_id, sum(uses) AS n,"
		   " sum(reads) AS r, sum(warnings) AS w FROM feature_host"
		   " GROUP BY feature_id) g WHERE g.n IS DISTINCT FROM"
		   " (SELECT sum(uses) FROM feature_day d"
		   " WHERE d.feature_id = g.feature_id)"
		   " OR g.r IS DISTINCT FROM (SELECT sum(reads) FROM feature_day d"
		   " WHERE d.feature_id = g.feature_id)"
		   " OR g.w IS DISTINCT FROM (SELECT sum(warnings)"
		   " FROM feature_day d WHERE d.feature_id = g.feature_id)"),
		0);
	assert_int_equal(
		bq("SELECT count(*) FROM (SELECT feature_id, max(last_used) AS m"
		   " FROM feature_host WHERE (kinds & 27) <> 0"
		   " GROUP BY feature_id) g WHERE g.m IS DISTINCT FROM"
		   " (SELECT max(last_used) FROM feature_day d"
		   " WHERE d.feature_id = g.feature_id)"),
		0);
}

/* Ingest @r for @host at @now, its body's hash @hash (NULL: none). */
static int ingest_hashed(struct twl_store *s, const char *host, json_t *r,
			 int64_t now, const char *hash)
{
	struct twl_ingest *in = NULL;
	int ret;

	assert_int_equal(twl_ingest_prepare(r, host, &in), 0);
	if (hash) {
		in->has_body_sha256 = true;
		memset(in->body_sha256, 0, sizeof(in->body_sha256));
		memcpy(in->body_sha256, hash, strlen(hash));
	}
	ret = twl_store_ingest_prepared(s, host, in, now);
	twl_ingest_free(in);
	return ret;
}

/* A replay is a duplicate, another body under its id a conflict. */
static void test_replay(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *b = report_x10("h1", "aa01");
	int64_t rows;

	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(ingest_hashed(s, "h1", a, 1000, "one"), 0);
	assert_int_equal(ingest_hashed(s, "h1", a, 1000, "one"),
			 TWL_STORE_DUPLICATE);
	assert_int_equal(twl_store_write_end(s, true), 0);
	rows = bq("SELECT sum(count) FROM usage");
	assert_true(rows > 0);
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(ingest_hashed(s, "h1", b, 1000, "two"),
			 TWL_STORE_CONFLICT);
	assert_int_equal(ingest_hashed(s, "h1", a, 1000, NULL),
			 TWL_STORE_DUPLICATE);
	/* the same batch id of another host is its own */
	assert_int_equal(ingest_hashed(s, "h2", a, 1000, "one"), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 2);
	assert_int_equal(
		bq("SELECT sum(count) FROM usage WHERE host_id = 'h1'"), rows);
	assert_int_equal(bq("SELECT count(*) FROM warnings"),
			 2 * bq("SELECT count(*) FROM warnings"
				" WHERE host_id = 'h1'"));
	assert_int_equal(bq("SELECT sum(count) FROM unknown_deprecations"),
			 2 * bq("SELECT sum(count) FROM unknown_deprecations"
				" WHERE host_id = 'h1'"));
	check_days_both();
	json_decref(a);
	json_decref(b);
	twl_store_close(s);
}

/* A report that fails rolls back alone; the others of its commit stay. */
static void test_nested(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *b = report("h1", "aa02");
	json_t *bad = report("h1", "aa03");

	bexec("CREATE TRIGGER boom BEFORE INSERT ON warnings"
	      " WHEN NEW.text = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
	      "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS"
	      " $$BEGIN IF NEW.text = 'boom' THEN RAISE EXCEPTION 'boom';"
	      " END IF; RETURN NEW; END$$;"
	      " CREATE TRIGGER boom BEFORE INSERT ON warnings"
	      " FOR EACH ROW EXECUTE FUNCTION boom()");
	json_object_set_new(bad, "seq", json_integer(99));
	json_object_set_new(json_array_get(json_object_get(bad, "warnings"), 0),
			    "text", json_string("boom"));
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, "h1", a, 1000), 0);
	assert_true(twl_store_ingest(s, "h1", bad, 1000) < 0);
	assert_int_equal(twl_store_ingest(s, "h1", b, 1000), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 2);
	assert_int_equal(
		bq("SELECT count(*) FROM batches WHERE batch_id = 'aa03'"), 0);
	assert_int_equal(bq("SELECT max(last_seq) FROM hosts"), 1);
	/* a commit not made leaves nothing */
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, "h9", a, 1000), 0);
	assert_int_equal(twl_store_write_end(s, false), 0);
	assert_int_equal(bq("SELECT count(*) FROM hosts WHERE host_id = 'h9'"),
			 0);
	check_days_both();
	json_decref(a);
	json_decref(b);
	json_decref(bad);
	twl_store_close(s);
}

/*
 * Inserts into feature_host of h2 and into usage of h3 fail (both stores;
 * SQLite's usage rows are inserted into usage_key, its migration 021).
 */
static void boom_triggers(void)
{
	bexec("CREATE TRIGGER boom_fh BEFORE INSERT ON feature_host"
	      " WHEN NEW.host_id = 'h2' BEGIN SELECT RAISE(ABORT, 'boom'); END;"
	      " CREATE TRIGGER boom_u BEFORE INSERT ON usage_key"
	      " WHEN NEW.host_id = 'h3' BEGIN SELECT RAISE(ABORT, 'boom'); END",
	      "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS"
	      " $$BEGIN IF (TG_TABLE_NAME, NEW.host_id) IN"
	      " (('feature_host', 'h2'), ('usage', 'h3')) THEN"
	      " RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END$$;"
	      " CREATE TRIGGER boom_fh BEFORE INSERT ON feature_host"
	      " FOR EACH ROW EXECUTE FUNCTION boom();"
	      " CREATE TRIGGER boom_u BEFORE INSERT ON usage"
	      " FOR EACH ROW EXECUTE FUNCTION boom()");
}

/*
 * Reports that fail late roll back alone too: on PostgreSQL a report's
 * statements go in few round trips (store/postgresql/README.md), so h3's
 * fails in the middle one (its new usage rows' inserts) and h2's in the
 * last (its rollups, sent with the RELEASE); the reports before, between
 * and after them in the same commit stay, every rollup a recount.
 */
static void test_nested_late(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *b = report("h1", "aa02");
	json_t *c = report("h1", "aa03");
	json_t *late = report("h2", "bb01"), *mid = report("h3", "cc01");

	boom_triggers();
	json_object_set_new(b, "seq", json_integer(2));
	json_object_set_new(c, "seq", json_integer(3));
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, "h1", a, 1000), 0);
	assert_true(twl_store_ingest(s, "h2", late, 1000) < 0);
	assert_int_equal(twl_store_ingest(s, "h1", b, 1000), 0);
	assert_true(twl_store_ingest(s, "h3", mid, 1000) < 0);
	assert_int_equal(twl_store_ingest(s, "h1", c, 1000), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	/* nothing of h2 and h3: not their batch ids, host rows, warnings */
	assert_int_equal(bq("SELECT count(*) FROM batches"), 3);
	assert_int_equal(bq("SELECT count(*) FROM hosts"), 1);
	assert_int_equal(bq("SELECT count(*) FROM usage WHERE host_id <> 'h1'"),
			 0);
	assert_int_equal(
		bq("SELECT count(*) FROM warnings WHERE host_id <> 'h1'"), 0);
	assert_int_equal(
		bq("SELECT count(*) FROM census_knobs WHERE host_id <> 'h1'"),
		0);
	assert_int_equal(bq("SELECT max(last_seq) FROM hosts"), 3);
	assert_true(bq("SELECT count(*) FROM usage") > 0);
	check_days_both();
	/* their batches are not known: stored once the fault is gone */
	bexec("DROP TRIGGER boom_fh; DROP TRIGGER boom_u",
	      "DROP TRIGGER boom_fh ON feature_host;"
	      " DROP TRIGGER boom_u ON usage");
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, "h2", late, 1000), 0);
	assert_int_equal(twl_store_ingest(s, "h3", mid, 1000), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 5);
	assert_int_equal(bq("SELECT count(*) FROM hosts"), 3);
	check_days_both();
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(late);
	json_decref(mid);
	twl_store_close(s);
}

/*
 * A group as the writer stores it (twl_store_ingest_deferred(): on
 * PostgreSQL a report's last statements go with the next report's first
 * ones): a report failing in its last statements (h2: feature_host)
 * fails alone, also when the next report's statements were sent behind
 * it, or when it is the group's last; one failing in the middle (h3:
 * usage) too. The reports after a failure are stored once.
 */
static void test_nested_deferred(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	const char *host[] = { "h1", "h2", "h1", "h3", "h1", "h2" };
	const char *id[] = { "aa01", "bb01", "aa02", "cc01", "aa03", "bb02" };
	const int fails[] = { 0, 1, 0, 1, 0, 1 };
	struct twl_ingest *in[6];
	json_t *r[6];
	int res[6];

	boom_triggers();
	for (int i = 0; i < 6; i++) {
		r[i] = report(host[i], id[i]);
		json_object_set_new(r[i], "seq", json_integer(i + 1));
		assert_int_equal(twl_ingest_prepare(r[i], host[i], &in[i]), 0);
	}
	assert_int_equal(twl_store_write_begin(s), 0);
	for (int i = 0; i < 6; i++)
		twl_store_ingest_deferred(s, host[i], in[i], 1000, &res[i]);
	assert_int_equal(twl_store_write_end(s, true), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(res[i] < 0, fails[i]);
	/* nothing of h2 and h3; each of h1's three reports once */
	assert_int_equal(bq("SELECT count(*) FROM batches"), 3);
	assert_int_equal(bq("SELECT count(*) FROM hosts"), 1);
	assert_int_equal(bq("SELECT count(*) FROM usage WHERE host_id <> 'h1'"),
			 0);
	assert_int_equal(
		bq("SELECT count(*) FROM warnings WHERE host_id <> 'h1'"), 0);
	assert_int_equal(bq("SELECT max(last_seq) FROM hosts"), 5);
	check_days_both();
	for (int i = 0; i < 6; i++) {
		twl_ingest_free(in[i]);
		json_decref(r[i]);
	}
	twl_store_close(s);
}

/*
 * The same usage key twice in one report (an agent's repeat): one row,
 * its counter's maximum, the rollups a recount. On PostgreSQL such
 * entries go one at a time, not together in a round trip (both would
 * miss, both insert: the second a duplicate key).
 */
static void test_same_key_twice(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *again = report("h1", "aa02");
	json_t *usage = json_object_get(a, "usage");
	json_t *twice = json_deep_copy(json_array_get(usage, 0));
	int64_t n = (int64_t)json_array_size(usage);
	int64_t c = json_integer_value(json_object_get(twice, "count"));
	int64_t sum = -c;
	json_t *u;
	size_t i;

	json_array_foreach(usage, i, u)
		sum += json_integer_value(json_object_get(u, "count"));
	json_object_set_new(twice, "count", json_integer(2 * c + 1));
	json_array_append(usage, twice);
	json_array_append(json_object_get(again, "usage"), twice);
	json_object_set_new(again, "seq", json_integer(2));
	ingest_one(s, "h1", a);
	assert_int_equal(bq("SELECT count(*) FROM usage"), n);
	assert_int_equal(bq("SELECT sum(count) FROM usage"), sum + 2 * c + 1);
	check_days_both();
	/* again, the rows there: the grown one found at its hash */
	json_object_set_new(twice, "count", json_integer(3 * c + 2));
	ingest_one(s, "h1", again);
	assert_int_equal(bq("SELECT count(*) FROM usage"), n);
	assert_int_equal(bq("SELECT sum(count) FROM usage"), sum + 3 * c + 2);
	check_days_both();
	json_decref(twice);
	json_decref(a);
	json_decref(again);
	twl_store_close(s);
}

/* Cumulative counters keep their maximum; uses grow by what they grew. */
static void test_max_merge(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *x10 = report_x10("h1", "aa02");
	json_t *again = report("h1", "aa03");
	int64_t sum1, uses1;

	ingest_one(s, "h1", a);
	sum1 = bq("SELECT sum(count) FROM usage");
	uses1 = bq("SELECT sum(uses) + sum(reads) FROM feature_host");
	assert_int_equal(uses1, sum1);
	ingest_one(s, "h1", x10);
	ingest_one(s, "h1", again); /* a lower count: kept at its maximum */
	assert_int_equal(bq("SELECT sum(count) FROM usage"), 10 * sum1);
	assert_int_equal(bq("SELECT sum(uses) + sum(reads) FROM feature_host"),
			 10 * sum1);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 3);
	check_days_both();
	json_decref(a);
	json_decref(x10);
	json_decref(again);
	twl_store_close(s);
}

/*
 * test_recount's report @i (of 12: three hosts in turn, 7 hours apart,
 * over four days, two boots, x10 counts every other one, a change of
 * cgroup mode), its host in *@h and its time in *@t.
 */
static json_t *recount_report(int i, const char **h, int64_t *t)
{
	static const char *const hosts[] = { "h1", "h2", "h3" };
	char batch[32], boot[32];
	json_t *r;

	*h = hosts[i % 3];
	*t = RECOUNT_T0 + i * 7 * 3600;
	snprintf(batch, sizeof(batch), "b%02d", i);
	snprintf(boot, sizeof(boot), "boot-%d", i / 6);
	r = i % 2 ? report_x10(*h, batch) : report(*h, batch);
	move_to(r, boot, *t);
	if (i == 5) /* a host changes its cgroup mode */
		json_object_set_new(json_object_get(r, "host"), "cgroup_mode",
				    json_string("v2"));
	return r;
}

/*
 * A report stored alone (twl_store_ingest_prepared()) in a group of
 * deferred ones fails alone, in its sums too (h2's feature_host insert):
 * the group's sums kept before it stay (on PostgreSQL they are written
 * before it begins, outside its savepoint).
 */
static void test_alone_in_group(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	json_t *a = report("h1", "aa01"), *b = report("h2", "bb01");
	struct twl_ingest *in;
	int res = -1;

	boom_triggers();
	assert_int_equal(twl_ingest_prepare(a, "h1", &in), 0);
	assert_int_equal(twl_store_write_begin_deferred(s), 0);
	twl_store_ingest_deferred(s, "h1", in, 1000, &res);
	assert_true(twl_store_ingest(s, "h2", b, 1000) < 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	assert_int_equal(res, 0);
	assert_int_equal(bq("SELECT count(*) FROM feature_host"
			    " WHERE host_id = 'h2'"),
			 0);
	check_days_both();
	twl_ingest_free(in);
	json_decref(a);
	json_decref(b);
	twl_store_close(s);
}

/*
 * Reports of several hosts and boots over hours and days: the rollups
 * stay a recount, also after retention deletes the older rows.
 */
static void test_recount(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	int64_t deleted = -1, t;
	const char *h;
	json_t *r;

	for (int i = 0; i < 12; i++) {
		r = recount_report(i, &h, &t);
		ingest_at(s, h, r, t + 60);
		json_decref(r);
	}
	check_days_both();
	assert_int_equal(
		twl_store_prune(s, RECOUNT_T0 + 4 * 86400, 1, 2, &deleted), 0);
	assert_true(deleted > 0);
	assert_true(bq("SELECT count(*) FROM usage") > 0);
	check_recount_both();
	twl_store_close(s);
}

/*
 * The rollups as numbers that change when any value of any row moves to
 * another row (a day, an hour, a host): weighted by the row's key. Both
 * dialects compute them alike.
 */
static void rollup_digest(int64_t d[3])
{
	d[0] = bq("SELECT count(*) + coalesce(sum(hosts * (day % 997 + 1) * 3"
		  " + uses * (day % 991 + 1) * 5 + reads * (day % 983 + 1) * 7"
		  " + warnings * (day % 977 + 1) * 11"
		  " + coalesce(last_used, 0) % 100003), 0) FROM feature_day");
	d[1] = bq("SELECT count(*) + coalesce(sum((hosts * 3 + configuring * 5"
		  " + listening * 7 + reading_only * 11) * (hour % 997 + 1)),"
		  " 0) FROM feature_hour");
	d[2] = bq("SELECT count(*) + coalesce(sum(uses * 3 + reads * 5"
		  " + warnings * 7 + kinds * 11 + first_used % 100003"
		  " + (last_used % 100003) * 13 + (last_hour % 997) * 17), 0)"
		  " FROM feature_host");
}

/*
 * test_recount's 12 reports in one group commit as the writer stores
 * them (twl_store_ingest_deferred()): each host reports four times in
 * the group, hours and days apart, so on PostgreSQL its feature_host
 * rows are written in four rounds at the group's end
 * (store_pg_fold.h), and one report in the middle is stored alone
 * (twl_store_ingest_prepared(): the group's sums before it are written
 * first). Every rollup equals both the recount and what the same
 * reports give stored one commit each, to the day and hour.
 */
static void test_recount_group(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_ingest *in[12];
	int64_t one[3], group[3], t[12];
	const char *h[12];
	int res[12];

	for (int i = 0; i < 12; i++) {
		json_t *r = recount_report(i, &h[i], &t[i]);

		ingest_at(s, h[i], r, t[i] + 60);
		assert_int_equal(twl_ingest_prepare(r, h[i], &in[i]), 0);
		json_decref(r);
	}
	rollup_digest(one);
	twl_store_close(s);
	s = open_new(b);
	assert_int_equal(twl_store_write_begin_deferred(s), 0);
	for (int i = 0; i < 12; i++) {
		if (i == 6)
			res[i] = twl_store_ingest_prepared(s, h[i], in[i],
							   t[i] + 60);
		else
			twl_store_ingest_deferred(s, h[i], in[i], t[i] + 60,
						  &res[i]);
	}
	assert_int_equal(twl_store_write_end(s, true), 0);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(res[i], 0);
		twl_ingest_free(in[i]);
	}
	check_days_both();
	rollup_digest(group);
	for (int k = 0; k < 3; k++)
		assert_int_equal(group[k], one[k]);
	twl_store_close(s);
}

/*
 * Texts stored while the catalog lacked their feature are matched once
 * it has it, counted as warnings in the rollups, once; at open only when
 * the catalog is new to the database.
 */
static void test_rematch(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	static const char rows[] =
		"INSERT INTO unknown_deprecations(host_id, boot_id, text,"
		" first_kmsg_seq, first_time, count, received, feature_id)"
		" VALUES('h1', 'b', 'some text', 0, 7200, 3, 7200,"
		" 'memcg_v1.oom_control'),"
		" ('h1', 'b', 'other text', 0, 7300, 1, 7300,"
		" 'memcg_v9.still_unknown'),"
		" ('h2', 'b', 'soft_limit_in_bytes is deprecated and will be"
		" removed. Please report your usecase to linux-mm@kvack.org"
		" if you depend on this functionality.', 0, 9000, 2, 9000,"
		" NULL)";
	static const char pending[] =
		"INSERT INTO unknown_deprecations(host_id, boot_id, text,"
		" first_kmsg_seq, first_time, count, received, feature_id)"
		" VALUES('h3', 'b', 't', 0, 7200, 1, 7200,"
		" 'memcg_v1.swappiness')";
	static const char older[] = "UPDATE server_meta SET value = 'older'"
				    " WHERE key = 'catalog_rematched'";
	int64_t n = -1;

	bexec(rows, rows);
	assert_int_equal(twl_store_catalog_rematch(s, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(bq("SELECT count(*) FROM unknown_deprecations WHERE"
			    " matched_feature_id = 'memcg_v1.soft_limit'"
			    " AND host_id = 'h2'"),
			 1);
	assert_int_equal(bq("SELECT warnings FROM feature_host WHERE host_id ="
			    " 'h1' AND feature_id = 'memcg_v1.oom_control'"),
			 3);
	assert_int_equal(bq("SELECT sum(uses) FROM feature_host"), 0);
	check_days_both();
	assert_int_equal(twl_store_catalog_rematch(s, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(bq("SELECT sum(warnings) FROM feature_host"), 5);
	twl_store_close(s);

	/* at open: not for a catalog the database saw */
	bexec(pending, pending);
	s = reopen();
	twl_store_close(s);
	assert_int_equal(bq("SELECT count(*) FROM unknown_deprecations WHERE"
			    " host_id = 'h3' AND matched_feature_id IS NULL"),
			 1);
	/* a catalog new to it: matched */
	bexec(older, older);
	s = reopen();
	twl_store_close(s);
	assert_int_equal(bq("SELECT count(*) FROM unknown_deprecations WHERE"
			    " host_id = 'h3' AND matched_feature_id ="
			    " 'memcg_v1.swappiness'"),
			 1);
}

/* The start-up check passes on a sound store; its size is known. */
static void test_check_size(void **state)
{
	struct twl_store *s = open_new(*(enum backend *)*state);
	char problem[128];
	int64_t bytes = 0;

	assert_int_equal(twl_store_check(s, problem, sizeof(problem)), 0);
	assert_string_equal(problem, "");
	assert_int_equal(twl_store_db_size(s, &bytes), 0);
	assert_true(bytes > 0);
	twl_store_close(s);
}

/* What the second server did, in its thread. */
struct second {
	struct twl_store *s;
	json_t *next, *again;
	int begin, ret_next, ret_again, end;
};

static void *second_ingest(void *arg)
{
	struct second *b = arg;

	b->begin = twl_store_write_begin(b->s); /* waits for the first */
	b->ret_next = twl_store_ingest(b->s, "h1", b->next, 2000);
	b->ret_again = twl_store_ingest(b->s, "h1", b->again, 2000);
	b->end = twl_store_write_end(b->s, true);
	return NULL;
}

/* Block until the writer connection of @s waits for the ingest lock. */
static void wait_for_ingest_lock(struct twl_store *s)
{
	char type[32];
	int64_t id;

	pg_fixture_wait_lock(pguri, PQbackendPID(twl_pg_of(s)->wconn), type,
			     sizeof(type), &id);
	assert_string_equal(type, "advisory");
	assert_int_equal(id, TWL_PG_INGEST_LOCK);
}

/*
 * Two servers on one database ingest the same host at once: the first
 * holds its transaction open after storing a batch; the second, in a
 * thread, stores the host's next batch (counters ten times as high) and
 * the first's batch id again. It waits for the ingest lock until the
 * first commits, then stores its batch and calls the other a duplicate:
 * counters at their maximum, every rollup exact.
 */
static void test_ingest_waits(void **state)
{
	struct twl_store *a = open_new(POSTGRESQL), *b_store = NULL;
	json_t *first = report("h1", "aa01");
	/* not on the stack: a failed check leaves the thread running */
	static struct second b;
	pthread_t t;
	int64_t sum1;

	(void)state;
	b.next = report_x10("h1", "aa02");
	b.again = report("h1", "aa01");
	assert_int_equal(twl_store_open(pguri, &b_store), 0);
	b.s = b_store;
	assert_int_equal(twl_store_write_begin(a), 0);
	assert_int_equal(twl_store_ingest(a, "h1", first, 1000), 0);
	assert_int_equal(pthread_create(&t, NULL, second_ingest, &b), 0);
	wait_for_ingest_lock(b_store);
	/* nothing of either is visible before the first commits */
	assert_int_equal(bq("SELECT count(*) FROM batches"), 0);
	assert_int_equal(twl_store_write_end(a, true), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(b.begin, 0);
	assert_int_equal(b.ret_next, 0);
	assert_int_equal(b.ret_again, TWL_STORE_DUPLICATE);
	assert_int_equal(b.end, 0);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 2);
	assert_int_equal(bq("SELECT last_seen FROM hosts"), 2000);
	sum1 = bq("SELECT sum(count) FROM usage") / 10;
	assert_true(sum1 > 0);
	assert_int_equal(bq("SELECT sum(uses) + sum(reads) FROM feature_host"),
			 10 * sum1);
	assert_int_equal(
		bq("SELECT count(*) FROM warnings"),
		bq("SELECT count(*) FROM warnings WHERE received = 1000"));
	check_days_both();
	json_decref(first);
	json_decref(b.next);
	json_decref(b.again);
	twl_store_close(b_store);
	twl_store_close(a);
}

/*
 * The writer's connection lost between two commits (PostgreSQL restarted,
 * its backend terminated): the next transaction connects again, and
 * nothing committed before is lost.
 */
static void test_writer_reconnects(void **state)
{
	struct twl_store *s = open_new(POSTGRESQL);
	json_t *a = report("h1", "aa01"), *b = report("h1", "aa02");
	char sql[128];

	(void)state;
	ingest_one(s, "h1", a);
	/* returns once the backend is gone (PostgreSQL 14 and later) */
	snprintf(sql, sizeof(sql),
		 "SELECT pg_terminate_backend(%d, 60000)::int",
		 PQbackendPID(twl_pg_of(s)->wconn));
	assert_int_equal(bq(sql), 1);
	ingest_one(s, "h1", b);
	assert_int_equal(bq("SELECT count(*) FROM batches"), 2);
	check_days_both();
	json_decref(a);
	json_decref(b);
	twl_store_close(s);
}

static int group_teardown(void **state)
{
	pg_fixture_drop_all(state);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_replay),
		BOTH(test_nested),
		BOTH(test_nested_late),
		BOTH(test_nested_deferred),
		BOTH(test_same_key_twice),
		BOTH(test_max_merge),
		BOTH(test_recount),
		BOTH(test_recount_group),
		BOTH(test_alone_in_group),
		BOTH(test_rematch),
		BOTH(test_check_size),
		/* two servers at once: PostgreSQL only */
		{ "test_ingest_waits/postgresql", test_ingest_waits, NULL, NULL,
		  &pg_fixture_backends[POSTGRESQL] },
		{ "test_writer_reconnects/postgresql", test_writer_reconnects,
		  NULL, NULL, &pg_fixture_backends[POSTGRESQL] },
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
