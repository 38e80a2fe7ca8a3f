// SPDX-License-Identifier: GPL-2.0
/*
 * The read API's figures per kind of use (migration 015): hosts and
 * processes that configure, listen or only read a feature, and the reads
 * and kernel warnings counted apart from uses. From the rollups ingest
 * keeps (feature_hour, feature_day, feature_comm), or one index range of
 * feature_host for a time range of feature detail.
 */
#include <errno.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"

#define DAY 86400

/* hosts per kind whose last evidence is at or after the start of an hour */
static const char q_fhour_kinds[] =
	"SELECT coalesce(sum(configuring), 0), coalesce(sum(listening), 0),"
	" coalesce(sum(reading_only), 0) FROM feature_hour"
	" WHERE feature_id = ?1 AND hour >= ?2";

static const char q_day_counts[] =
	"SELECT coalesce(sum(reads), 0), coalesce(sum(warnings), 0)"
	" FROM feature_day WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3";

/*
 * Feature detail's reads on days ?2..?3: feature_day's, whose days are
 * the fleet's; under a label filter the labelled hosts' read rows last
 * seen in those days (as q_day_uses has their uses).
 */
static const char q_day_reads[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT coalesce(sum(reads), 0) FROM feature_day"
	" WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3)"
	" ELSE (SELECT coalesce(sum(count), 0) FROM usage"
	" WHERE feature_id = ?1 AND op = 'read'"
	" AND last_seen / 86400 BETWEEN ?2 AND ?3" TWL_SQL_LABELED(
		"host_id") ") END";

/*
 * Processes per kind of use (migration 015): feature_comm's, kept for
 * the fleet; under a label filter counted from the labelled hosts' usage
 * rows as feature_comm's triggers count them.
 */
#define COMM_KINDS(from)                                           \
	"SELECT count(*) FILTER (WHERE configures + listens > 0)," \
	" count(*) FILTER (WHERE configures > 0),"                 \
	" count(*) FILTER (WHERE listens > 0),"                    \
	" count(*) FILTER (WHERE configures + listens = 0 AND reads > 0)" from

/* a process that configures or listens is never a read-only one */
static const char q_comm_kinds[] =
	COMM_KINDS(" FROM feature_comm WHERE feature_id = ?1");

static const char q_comm_kinds_labeled[] =
	COMM_KINDS(" FROM (SELECT sum(op = 'write') configures,"
		   " sum(op = 'register_event') listens,"
		   " sum(op NOT IN ('write', 'register_event')) reads"
		   " FROM usage WHERE feature_id = ?1" TWL_SQL_LABELED(
			   "host_id") " GROUP BY comm)");

static const struct twl_col day_count_cols[] = {
	{ "reads", 0, TWL_COL_INT },
	{ "warnings", 1, TWL_COL_INT },
};
/* feature detail's "warnings" is an object of the warnings table's */
static const struct twl_row day_reads_row = { day_count_cols, 1 };

static const struct twl_col comm_obj_cols[] = {
	{ "using", 0, TWL_COL_INT },
	{ "configuring", 1, TWL_COL_INT },
	{ "listening", 2, TWL_COL_INT },
	{ "reading_only", 3, TWL_COL_INT },
};
static const struct twl_row comm_obj_row = TWL_ROW(comm_obj_cols);

/* Feature @id's row of @sql (?1 the id, ?2 and ?3 @a and @b) into @obj. */
static int kinds_into(struct twl_rctx *c, const char *sql, const char *id,
		      int64_t a, int64_t b, const struct twl_row *r,
		      json_t *obj)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = twl_rctx_stmt(c, sql, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sql != q_comm_kinds && sql != q_comm_kinds_labeled)
		sqlite3_bind_int64(st, 2, a);
	if (sql == q_day_counts || sql == q_day_reads)
		sqlite3_bind_int64(st, 3, b);
	return twl_row_into(st, r, obj);
}

/* Contract: see store_sqlite_internal.h. */
int twl_rq_feature_kinds(struct twl_rctx *c, const char *id, int64_t since,
			 int64_t until, json_t *doc)
{
	json_t *wl;
	int rc;

	rc = kinds_into(c, q_day_reads, id, since / DAY, until / DAY,
			&day_reads_row, doc);
	if (!rc)
		rc = twl_jset(doc, "workloads", wl = json_object());
	if (!rc)
		rc = kinds_into(
			c, c->label_key ? q_comm_kinds_labeled : q_comm_kinds,
			id, 0, 0, &comm_obj_row, wl);
	return rc;
}

/* Contract: see store_sqlite_internal.h (the summary's, read_answers.c). */
const char *const twl_sqlite_kinds_sql[TWL_RQ_N] = {
	[TWL_RQ_FHOUR_KINDS] = q_fhour_kinds,
	[TWL_RQ_DAY_COUNTS] = q_day_counts,
	[TWL_RQ_COMM_KINDS] = q_comm_kinds,
};
