// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest path's rollups on PostgreSQL (store_pg_ingest.h): a batch's
 * evidence summed per feature (store/rollup_sum.h) and written once per
 * feature into feature_host; the triggers of migration 002 keep
 * feature_hour and feature_day from it, except for the common update
 * (r_touch), which names none of the columns their triggers watch and
 * adds to feature_day here, as SQLite's writer does (its migration 007).
 * SQLite sums those feature_day additions over a group commit; here each
 * is written at once, the same sums.
 */
#include <errno.h>

#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/rollup_sum.h"

static const struct twl_pg_stmt rsql[] = {
	/*
	 * The common case of r_upsert: the row exists, its first use is not
	 * later than this batch's, its last use stays in its hour and the
	 * batch adds no kind of use. It fires no trigger.
	 */
	{ "r_touch",
	  "UPDATE feature_host SET last_used = greatest(last_used, $4::bigint),"
	  " uses = uses + $5::bigint, reads = reads + $6::bigint,"
	  " warnings = warnings + $7::bigint"
	  " WHERE feature_id = $1 AND host_id = $2 AND first_used <= $3::bigint"
	  " AND last_hour = $4::bigint / 3600"
	  " AND kinds | $8::bigint = kinds" },
	{ "r_upsert",
	  "INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
	  " uses, last_hour, reads, warnings, kinds)"
	  " VALUES($1, $2, $3::bigint, $4::bigint, $5::bigint,"
	  " $4::bigint / 3600, $6::bigint, $7::bigint, $8::bigint)"
	  " ON CONFLICT (host_id, feature_id) DO UPDATE SET"
	  " first_used = least(feature_host.first_used, excluded.first_used),"
	  " last_used = greatest(feature_host.last_used, excluded.last_used),"
	  " last_hour = greatest(feature_host.last_hour, excluded.last_hour),"
	  " uses = feature_host.uses + excluded.uses,"
	  " reads = feature_host.reads + excluded.reads,"
	  " warnings = feature_host.warnings + excluded.warnings,"
	  " kinds = feature_host.kinds | excluded.kinds" },
	/* feature_host_day's upsert for r_touch ($4 NULL: only reads) */
	{ "r_day_add",
	  "INSERT INTO feature_day(feature_id, day, hosts, uses, last_used,"
	  " reads, warnings)"
	  " VALUES($1, $2::bigint, 0, $3::bigint, $4::bigint, $5::bigint,"
	  " $6::bigint)"
	  " ON CONFLICT (feature_id, day) DO UPDATE SET"
	  " uses = feature_day.uses + excluded.uses,"
	  " reads = feature_day.reads + excluded.reads,"
	  " warnings = feature_day.warnings + excluded.warnings,"
	  " last_used = greatest(feature_day.last_used, excluded.last_used)" },
};

/* Contract: see store_pg_internal.h. */
int twl_pg_rollup_prepare(struct twl_pg *p)
{
	return twl_pg_prepare(p->wconn, p->where, rsql,
			      sizeof(rsql) / sizeof(*rsql));
}

/* What r_touch added to feature_day, as its trigger would have. */
static int day_add(struct twl_pg *p, const struct twl_rollup_entry *e)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, e->feature);
	twl_pg_arg_i64(&a, e->last / 86400);
	twl_pg_arg_i64(&a, e->uses);
	if (e->kinds & TWL_KIND_USING)
		twl_pg_arg_i64(&a, e->last);
	else
		twl_pg_arg_text(&a, NULL); /* reads move no last use */
	twl_pg_arg_i64(&a, e->reads);
	twl_pg_arg_i64(&a, e->warnings);
	return twl_pg_run(p->wconn, "r_day_add", &a, NULL);
}

/* One feature's sums: r_touch (and its feature_day), else r_upsert. */
static int entry_write(struct twl_pg *p, const char *host_id,
		       const struct twl_rollup_entry *e)
{
	struct twl_pg_args a = { 0 };
	PGresult *r;
	int64_t n;
	int ret;

	twl_pg_arg_text(&a, e->feature);
	twl_pg_arg_text(&a, host_id);
	twl_pg_arg_i64(&a, e->first);
	twl_pg_arg_i64(&a, e->last);
	twl_pg_arg_i64(&a, e->uses);
	twl_pg_arg_i64(&a, e->reads);
	twl_pg_arg_i64(&a, e->warnings);
	twl_pg_arg_i64(&a, e->kinds);
	ret = twl_pg_run(p->wconn, "r_touch", &a, &r);
	if (ret)
		return ret;
	n = twl_pg_changed(r);
	PQclear(r);
	return n ? day_add(p, e) : twl_pg_run(p->wconn, "r_upsert", &a, NULL);
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_flush(struct twl_pg *p, const char *host_id,
			struct twl_rollup *r)
{
	int ret;

	for (size_t i = 0; i < r->n; i++) {
		ret = entry_write(p, host_id, &r->e[i]);
		if (ret)
			return ret;
	}
	r->n = 0;
	return 0;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup(struct twl_pg *p, const char *feature, const char *host_id,
		  int64_t first, int64_t last, int kind, int64_t n,
		  struct twl_rollup *r)
{
	int ret = twl_rollup_add(r, feature, first, last, kind, n);

	if (ret != -ENOSPC)
		return ret;
	ret = twl_pg_rollup_flush(p, host_id, r);
	return ret ? ret : twl_rollup_add(r, feature, first, last, kind, n);
}
