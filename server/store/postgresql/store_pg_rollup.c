// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest path's rollups on PostgreSQL (store_pg_ingest.h): a batch's
 * evidence summed per feature (store/rollup_sum.h), kept with the
 * group's other reports (store_pg_fold.h) and written at the group's end
 * into feature_host by two set statements per round, after every
 * report's result is known: the common update (the row exists, its first
 * use is not later than this batch's, its last use stays in its hour, no
 * new kind of use: it names no column a trigger watches) with its
 * feature_day additions summed in the same statement, then the upsert of
 * the rest, whose triggers (migration 002) keep feature_day and
 * feature_hour. The same rows as one statement per feature and report
 * (migration 006's twl_feature_host_write(), no longer called), without
 * its four statements per report: bench/README.md, "server-load on
 * PostgreSQL: the group's rollups at its end".
 *
 * The two statements take the round's rows as nine arrays; a generic
 * plan is forced around them (plan_cache_mode), so the planner never
 * swaps the key look-ups for a scan of feature_host because one round
 * was large.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/postgresql/store_pg_fold.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/rollup_sum.h"

/* The round's rows: p(feature_id, host_id, first_used, last_used, ...) */
#define ROWS                                                              \
	"unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[],"      \
	" $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],"        \
	" $9::bigint[]) AS p(feature_id, host_id, first_used, last_used," \
	" uses, reads, warnings, kinds, day_last)"

/* The common update's condition: a row of feature_host f that p adds to. */
#define COMMON                                                  \
	"f.feature_id = p.feature_id AND f.host_id = p.host_id" \
	" AND f.first_used <= p.first_used"                     \
	" AND f.last_hour = p.last_used / 3600"                 \
	" AND f.kinds | p.kinds = f.kinds"

static const struct twl_pg_stmt rsql[] = {
	{ "r_generic", "SET plan_cache_mode = force_generic_plan" },
	{ "r_generic_end", "RESET plan_cache_mode" },
	/* the common update, its feature_day additions summed per day */
	{ "r_fold_upd",
	  "WITH u AS (UPDATE feature_host f SET"
	  " last_used = greatest(f.last_used, p.last_used),"
	  " uses = f.uses + p.uses, reads = f.reads + p.reads,"
	  " warnings = f.warnings + p.warnings FROM " ROWS " WHERE " COMMON
	  " RETURNING p.feature_id, p.last_used / 86400 AS day, p.uses,"
	  " p.day_last, p.reads, p.warnings)"
	  " INSERT INTO feature_day(feature_id, day, hosts, uses, last_used,"
	  " reads, warnings)"
	  " SELECT feature_id, day, 0, sum(uses), max(day_last), sum(reads),"
	  " sum(warnings) FROM u GROUP BY feature_id, day"
	  " ON CONFLICT (feature_id, day) DO UPDATE SET"
	  " uses = feature_day.uses + excluded.uses,"
	  " reads = feature_day.reads + excluded.reads,"
	  " warnings = feature_day.warnings + excluded.warnings,"
	  " last_used = greatest(feature_day.last_used, excluded.last_used)" },
	/* the rest: rows the update did not add to (it left them as they were) */
	{ "r_fold_ins",
	  "INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
	  " uses, last_hour, reads, warnings, kinds)"
	  " SELECT p.feature_id, p.host_id, p.first_used, p.last_used, p.uses,"
	  " p.last_used / 3600, p.reads, p.warnings, p.kinds FROM " ROWS
	  " WHERE NOT EXISTS (SELECT 1 FROM feature_host f WHERE " COMMON ")"
	  " ON CONFLICT (host_id, feature_id) DO UPDATE SET"
	  " first_used = least(feature_host.first_used, excluded.first_used),"
	  " last_used = greatest(feature_host.last_used, excluded.last_used),"
	  " last_hour = greatest(feature_host.last_hour, excluded.last_hour),"
	  " uses = feature_host.uses + excluded.uses,"
	  " reads = feature_host.reads + excluded.reads,"
	  " warnings = feature_host.warnings + excluded.warnings,"
	  " kinds = feature_host.kinds | excluded.kinds" },
};

/* Contract: see store_pg_internal.h. */
int twl_pg_rollup_prepare(struct twl_pg *p)
{
	return twl_pg_prepare(p->wconn, p->where, rsql,
			      sizeof(rsql) / sizeof(*rsql));
}

/* Nine array literals being written, one per column of ROWS. */
#define NCOL 9
struct arrays {
	char *buf[NCOL];
	size_t len[NCOL];
	FILE *f[NCOL];
};

/* One text element, quoted for an array literal. */
static void put_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Entry @x as the next element of each array. */
static void put_entry(struct arrays *a, const struct twl_pg_fold_entry *x,
		      bool first)
{
	const struct twl_rollup_entry *e = &x->e;
	const int64_t v[] = { e->first, e->last,     e->uses,
			      e->reads, e->warnings, e->kinds };

	for (int c = 0; c < NCOL && !first; c++)
		fputc(',', a->f[c]);
	put_text(a->f[0], e->feature);
	put_text(a->f[1], x->host);
	for (int c = 0; c < 6; c++)
		fprintf(a->f[2 + c], "%lld", (long long)v[c]);
	/* reads move no last use */
	if (e->kinds & TWL_KIND_USING)
		fprintf(a->f[8], "%lld", (long long)e->last);
	else
		fputs("NULL", a->f[8]);
}

/* Round @k's entries as array literals in @a: 0 or -ENOMEM. */
static int arrays_build(struct arrays *a, const struct twl_pg_fold *f,
			unsigned k)
{
	bool first = true;
	int ret = 0;

	for (int c = 0; c < NCOL; c++) {
		a->f[c] = open_memstream(&a->buf[c], &a->len[c]);
		if (!a->f[c])
			return -ENOMEM;
		fputc('{', a->f[c]);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->e[i].round != k)
			continue;
		put_entry(a, &f->e[i], first);
		first = false;
	}
	for (int c = 0; c < NCOL; c++) {
		fputc('}', a->f[c]);
		if (fclose(a->f[c]))
			ret = -ENOMEM;
		a->f[c] = NULL;
	}
	return ret;
}

static void arrays_free(struct arrays *a)
{
	for (int c = 0; c < NCOL; c++) {
		if (a->f[c])
			fclose(a->f[c]);
		free(a->buf[c]);
	}
}

/* Round @k's two statements sent on @pp. */
static int round_send(struct twl_pg_pipe *pp, const struct twl_pg_fold *f,
		      unsigned k)
{
	struct arrays a = { 0 };
	struct twl_pg_args args = { 0 };
	int ret = arrays_build(&a, f, k);

	for (int c = 0; !ret && c < NCOL; c++)
		twl_pg_arg_text(&args, a.buf[c]);
	if (!ret)
		ret = twl_pg_pipe_send(pp, "r_fold_upd", &args, NULL);
	if (!ret)
		ret = twl_pg_pipe_send(pp, "r_fold_ins", &args, NULL);
	arrays_free(&a); /* libpq copied them when sending */
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_send(struct twl_pg_pipe *pp, struct twl_pg_fold *f)
{
	unsigned rounds = twl_pg_fold_rounds(f);
	int ret;

	if (rounds == UINT_MAX) {
		twl_pg_fold_written(f);
		return -ENOMEM;
	}
	ret = rounds ? twl_pg_pipe_send(pp, "r_generic", NULL, NULL) : 0;
	for (unsigned k = 0; !ret && k < rounds; k++)
		ret = round_send(pp, f, k);
	if (!ret && rounds)
		ret = twl_pg_pipe_send(pp, "r_generic_end", NULL, NULL);
	twl_pg_fold_written(f);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_write(struct twl_pg *p)
{
	struct twl_pg_pipe pp;
	int ret, sync;

	twl_pg_pipe_init(&pp, p->wconn);
	ret = twl_pg_rollup_send(&pp, &p->fold);
	sync = twl_pg_pipe_sync(&pp);
	return ret ? ret : sync;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_rollup_flush(struct twl_pg_report *r)
{
	int ret;

	for (size_t i = 0; i < r->ru.n; i++) {
		ret = twl_pg_fold_add(&r->p->fold, r->host_id, &r->ru.e[i]);
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
