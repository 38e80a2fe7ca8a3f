// SPDX-License-Identifier: GPL-2.0
/* The SQLite backend tests' fixture (sqlite_fixture.h). */
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

#include "harness.h"
#include "sqlite_fixture.h"

char dir[64];
char dbpath[128];

int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/twl-store-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
	return 0;
}

int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int64_t q(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

int64_t qf(const char *fmt, ...)
{
	char sql[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return q(sql);
}

void exec_sql(const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

json_t *report(const char *host, const char *batch)
{
	return make_report(host, batch, 1);
}

/* The example report again, each usage counter times ten. */
json_t *report_x10(const char *host, const char *batch)
{
	json_t *r = report(host, batch), *u;
	size_t i;

	json_array_foreach(json_object_get(r, "usage"), i, u)
		json_object_set_new(
			u, "count",
			json_integer(10 * json_integer_value(json_object_get(
						  u, "count"))));
	return r;
}

void ingest_at(struct twl_store *s, const char *host, json_t *r, int64_t now)
{
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, host, r, now), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
}

/* r's usage, warnings, unknown texts and census moved to boot and time t. */
void move_to(json_t *r, const char *boot, int64_t t)
{
	static const char *const arrs[] = { "usage", "warnings", "unknown" };
	json_t *e;
	size_t i;

	json_object_set_new(json_object_get(r, "host"), "boot_id",
			    json_string(boot));
	for (size_t a = 0; a < 3; a++)
		json_array_foreach(json_object_get(r, arrs[a]), i, e)
		{
			if (json_object_get(e, "boot_id"))
				json_object_set_new(e, "boot_id",
						    json_string(boot));
			if (json_object_get(e, "first_seen"))
				json_object_set_new(e, "first_seen",
						    json_integer(t - 60));
			if (json_object_get(e, "last_seen"))
				json_object_set_new(e, "last_seen",
						    json_integer(t));
			if (json_object_get(e, "time"))
				json_object_set_new(e, "time", json_integer(t));
		}
	json_object_set_new(json_object_get(r, "census"), "time",
			    json_integer(t));
}

void ingest_one(struct twl_store *s, const char *host, json_t *r)
{
	ingest_at(s, host, r, 1000);
}

/*
 * What feature_host must hold per (feature, host), recounted from the raw
 * rows with SQL of the test's own (not the store's feature_host_recount
 * view): BPF uses (writes, registrations), reads, warnings (kernel
 * warnings and matched unknown texts), the kinds bits (1 write, 2
 * registration, 4 read, 8 warning, 16 census) and the first and last
 * evidence.
 */
#define RAW_EVIDENCE                                                          \
	"SELECT feature_id AS f, host_id AS h, first_seen AS t0,"             \
	" last_seen AS t1, iif(op = 'read', 0, count) AS u,"                  \
	" iif(op = 'read', count, 0) AS r, 0 AS w,"                           \
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
	" + max(k & 8) + max(k & 16) AS k FROM (" RAW_EVIDENCE ")"        \
	" GROUP BY f, h"

/* Print sql's rows to stderr: what a failed recount check differs in. */
static void dump_rows(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++)
			fprintf(stderr, "%s%s", i ? " | " : "recount differs: ",
				(const char *)sqlite3_column_text(st, i));
		fputc('\n', stderr);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Fail when sql ("SELECT count(*) FROM (rows) ...") counts rows. */
static void none_of(const char *count_sql, const char *rows_sql)
{
	if (q(count_sql) != 0)
		dump_rows(rows_sql);
	assert_int_equal(q(count_sql), 0);
}

void check_recount(void)
{
	/* every recounted pair has its row, equal in every count */
#define DIFFER                                                \
	" FROM (" RAW_RECOUNT ") g LEFT JOIN feature_host fh" \
	" ON fh.feature_id = g.f AND fh.host_id = g.h"        \
	" WHERE fh.uses IS NOT g.u OR fh.reads IS NOT g.r"    \
	" OR fh.warnings IS NOT g.w OR fh.kinds IS NOT g.k"   \
	" OR fh.first_used IS NOT g.t0 OR fh.last_used IS NOT g.t1"
	none_of("SELECT count(*)" DIFFER,
		"SELECT g.*, fh.first_used, fh.last_used, fh.uses, fh.reads,"
		" fh.warnings, fh.kinds" DIFFER);
#undef DIFFER
	/* and no row holds what no raw row shows */
	assert_int_equal(
		q("SELECT count(*) FROM feature_host fh WHERE NOT EXISTS"
		  " (SELECT 1 FROM (" RAW_EVIDENCE
		  ") e WHERE e.f = fh.feature_id"
		  " AND e.h = fh.host_id)"),
		0);
	/* feature_hour: per hour, hosts using (not read-only) and per kind */
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, last_hour,"
		  " sum((kinds & 27) != 0) AS u, sum((kinds & 17) != 0) AS c,"
		  " sum((kinds & 2) != 0) AS l, sum(kinds = 4) AS r"
		  " FROM feature_host GROUP BY 1, 2) g FULL JOIN feature_hour h"
		  " ON h.feature_id = g.feature_id AND h.hour = g.last_hour"
		  " WHERE coalesce(h.hosts, 0) IS NOT coalesce(g.u, 0)"
		  " OR coalesce(h.configuring, 0) IS NOT coalesce(g.c, 0)"
		  " OR coalesce(h.listening, 0) IS NOT coalesce(g.l, 0)"
		  " OR coalesce(h.reading_only, 0) IS NOT coalesce(g.r, 0)"),
		0);
	/* feature_comm: per process, its usage rows of each kind */
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, comm,"
		  " sum(op = 'write') AS c, sum(op = 'register_event') AS l,"
		  " sum(op = 'read') AS r FROM usage GROUP BY 1, 2) g"
		  " FULL JOIN feature_comm fc ON fc.feature_id = g.feature_id"
		  " AND fc.comm = g.comm WHERE fc.configures IS NOT g.c"
		  " OR fc.listens IS NOT g.l OR fc.reads IS NOT g.r"),
		0);
	/* host_hour: hosts per cgroup mode and hour of their last report */
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT cgroup_mode, last_seen / 3600"
		  " AS hour, count(*) AS n FROM hosts GROUP BY 1, 2) g"
		  " FULL JOIN host_hour hh ON hh.cgroup_mode = g.cgroup_mode"
		  " AND hh.hour = g.hour"
		  " WHERE coalesce(hh.hosts, 0) IS NOT coalesce(g.n, 0)"),
		0);
	/* coverage_count: per fact bit, the hosts that have it */
	assert_int_equal(
		q("SELECT count(*) FROM coverage_count c WHERE c.hosts IS NOT"
		  " (SELECT count(*) FROM host_coverage WHERE (facts >> c.bit)"
		  " & 1)"),
		0);
}

/* feature_day holds each feature's last use by hosts using it and (no
 * rows pruned) its uses, reads and warnings; the rollups are a recount
 * (check_recount). */
void check_buckets(void)
{
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, sum(uses) AS n,"
		  " sum(reads) AS r, sum(warnings) AS w"
		  " FROM feature_host GROUP BY 1) g WHERE g.n IS NOT"
		  " (SELECT sum(uses) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id) OR g.r IS NOT"
		  " (SELECT sum(reads) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id) OR g.w IS NOT"
		  " (SELECT sum(warnings) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, max(last_used) AS m"
		  " FROM feature_host WHERE kinds & 27 GROUP BY 1) g"
		  " WHERE g.m IS NOT"
		  " (SELECT max(last_used) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
	check_recount();
}
