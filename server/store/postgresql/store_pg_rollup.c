// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest path's rollups on PostgreSQL (store_pg_ingest.h): a batch's
 * evidence summed per feature (store/rollup_sum.h) and written once per
 * feature into feature_host, one statement each that needs no answer,
 * so they go with the report's last round trip; the triggers of
 * migration 002 keep feature_hour and feature_day from it, except for
 * the common update, which names none of the columns their triggers
 * watch and leaves its feature_day addition in the writer connection's
 * temporary table day_pending; twl_pg_rollup_fold() sums that into
 * feature_day once per group commit, as SQLite's writer does (its
 * migration 007). Why: every report adds to the same few feature_day
 * rows (one per feature and day), and PostgreSQL writes a new version
 * of a row per update, so per report that was the most costly statement
 * of the ingest (0.2 ms of the backend's ~1.7 ms, measured with
 * pg_stat_statements; bench/README.md). day_pending is transactional:
 * a report rolled back to its savepoint takes its rows with it, and
 * ON COMMIT DELETE ROWS empties it at each COMMIT or ROLLBACK.
 */
#include <errno.h>

#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/rollup_sum.h"

/*
 * One feature's sums ($1 feature, $2 host, $3 first, $4 last use, $5
 * uses, $6 reads, $7 warnings, $8 kinds; $9 the last use feature_day
 * keeps, NULL for reads only), written by migration 006's function:
 * - the common case first: the row exists, its first use is not later
 *   than this batch's, its last use stays in its hour and the batch adds
 *   no kind of use; it fires no trigger, and what it added is noted for
 *   feature_day in day_pending, as its trigger would have added it;
 * - else the upsert, whose triggers keep feature_day and feature_hour.
 */
static const struct twl_pg_stmt rsql[] = {
	{ "r_write",
	  "SELECT twl_feature_host_write($1, $2, $3::bigint, $4::bigint,"
	  " $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9::bigint)" },
	/* the group's day_pending summed into feature_day, before COMMIT */
	{ "r_day_fold",
	  "INSERT INTO feature_day(feature_id, day, hosts, uses, last_used,"
	  " reads, warnings)"
	  " SELECT feature_id, day, 0, sum(uses), max(last_used), sum(reads),"
	  " sum(warnings) FROM pg_temp.day_pending GROUP BY feature_id, day"
	  " ON CONFLICT (feature_id, day) DO UPDATE SET"
	  " uses = feature_day.uses + excluded.uses,"
	  " reads = feature_day.reads + excluded.reads,"
	  " warnings = feature_day.warnings + excluded.warnings,"
	  " last_used = greatest(feature_day.last_used, excluded.last_used)" },
};

/* The writer connection's own table of feature_day additions. */
static const char day_pending_sql[] =
	"CREATE TEMP TABLE IF NOT EXISTS day_pending(feature_id TEXT NOT NULL,"
	" day BIGINT NOT NULL, uses BIGINT NOT NULL, last_used BIGINT,"
	" reads BIGINT NOT NULL, warnings BIGINT NOT NULL)"
	" ON COMMIT DELETE ROWS";

/* Contract: see store_pg_internal.h. */
int twl_pg_rollup_prepare(struct twl_pg *p)
{
	/* a temporary table lives as long as the connection: made anew */
	int ret = twl_pg_exec(p->wconn, day_pending_sql, 0, NULL, NULL);

	return ret ? ret :
		     twl_pg_prepare(p->wconn, p->where, rsql,
				    sizeof(rsql) / sizeof(*rsql));
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_fold(struct twl_pg *p)
{
	return twl_pg_run(p->wconn, "r_day_fold", NULL, NULL);
}

/* One feature's sums, sent. */
static int entry_send(struct twl_pg_report *r, const struct twl_rollup_entry *e)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, e->feature);
	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_i64(&a, e->first);
	twl_pg_arg_i64(&a, e->last);
	twl_pg_arg_i64(&a, e->uses);
	twl_pg_arg_i64(&a, e->reads);
	twl_pg_arg_i64(&a, e->warnings);
	twl_pg_arg_i64(&a, e->kinds);
	if (e->kinds & TWL_KIND_USING)
		twl_pg_arg_i64(&a, e->last);
	else
		twl_pg_arg_text(&a, NULL); /* reads move no last use */
	return twl_pg_pipe_send(&r->pipe, "r_write", &a, NULL);
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_flush(struct twl_pg_report *r)
{
	int ret;

	for (size_t i = 0; i < r->ru.n; i++) {
		ret = entry_send(r, &r->ru.e[i]);
		if (ret)
			return ret;
	}
	r->ru.n = 0;
	return 0;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup(struct twl_pg_report *r, const char *feature, int64_t first,
		  int64_t last, int kind, int64_t n)
{
	int ret = twl_rollup_add(&r->ru, feature, first, last, kind, n);

	if (ret != -ENOSPC)
		return ret;
	ret = twl_pg_rollup_flush(r);
	return ret ? ret :
		     twl_rollup_add(&r->ru, feature, first, last, kind, n);
}
