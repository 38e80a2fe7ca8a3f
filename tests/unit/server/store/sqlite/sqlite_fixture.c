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

void ingest_one(struct twl_store *s, const char *host, json_t *r)
{
	ingest_at(s, host, r, 1000);
}

/* feature_hour holds, per (feature, hour), the feature_host rows whose
 * last use is in that hour, and feature_day each feature's last use and
 * (no rows pruned here) its uses. */
void check_buckets(void)
{
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, sum(uses) AS n"
		  " FROM feature_host GROUP BY 1) g WHERE g.n IS NOT"
		  " (SELECT sum(uses) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, last_hour,"
		  " count(*) AS n FROM feature_host GROUP BY 1, 2) g"
		  " LEFT JOIN feature_hour h ON h.feature_id = g.feature_id"
		  " AND h.hour = g.last_hour WHERE h.hosts IS NOT g.n"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM feature_hour h WHERE hosts != 0"
		  " AND hosts != (SELECT count(*) FROM feature_host f"
		  " WHERE f.feature_id = h.feature_id AND f.last_hour = h.hour)"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, max(last_used) AS m"
		  " FROM feature_host GROUP BY 1) g WHERE g.m IS NOT"
		  " (SELECT max(last_used) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
}
