// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest write path on PostgreSQL (store_pg_ingest.h): the same
 * rules as SQLite's (store/sqlite/store_sqlite_ingest.c) with the same
 * statements in PostgreSQL's dialect, prepared once on the writer
 * connection. One transaction per group commit, holding the ingest lock
 * of all servers (TWL_PG_INGEST_LOCK); one SAVEPOINT per report, so a
 * failing report rolls back alone; its batch id per host with the body's
 * hash; warnings and unknown texts (a batch's count of a text max-merged
 * under its first kmsg_seq, so replays add nothing); census knobs. The
 * host part is store_pg_ingest_host.c, usage rows store_pg_usage.c, the
 * rollups store_pg_rollup.c and the migration's triggers. A report's
 * statements go in few round trips, on a pipe (store_pg_ingest.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "store/ingest.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/rollup_sum.h"
#include "store/store.h"

static const struct twl_pg_stmt wsql[] = {
	/* batch ids per host, with the body's hash (SQLite 016) */
	{ "w_batch_ins",
	  "INSERT INTO batches(batch_id, host_id, seq, received, body_sha256)"
	  " VALUES($1, $2, $3::bigint, $4::bigint, $5::bytea)"
	  " ON CONFLICT DO NOTHING" },
	{ "w_batch_hash",
	  "SELECT body_sha256 IS NOT NULL AND $3::bytea IS NOT NULL"
	  " AND body_sha256 != $3::bytea FROM batches"
	  " WHERE host_id = $1 AND batch_id = $2" },
	/* times clamped at ingest (ingest.h), rare */
	{ "w_host_clamped",
	  "UPDATE hosts SET times_clamped = times_clamped + $2::bigint,"
	  " time_sent_max = greatest(time_sent_max, $3::bigint)"
	  " WHERE host_id = $1" },
	/* $2, $12: the record's boot and kernel (the host's when not sent) */
	{ "w_warn_ins",
	  "INSERT INTO warnings(host_id, boot_id, feature_id, kmsg_seq, mono_us,"
	  " time, level, text, fields_json, origin, received, kernel, source)"
	  " VALUES($1, $2, $3, $4::bigint, $5::bigint, $6::bigint, $7::bigint,"
	  " $8, $9, $10, $11::bigint, $12, $13) ON CONFLICT DO NOTHING" },
	/*
	 * A batch's count of an unknown text under the kmsg_seq of its
	 * first occurrence in the batch, max-merged (SQLite 016); answers
	 * what it was before (0: none). Both parts see the same snapshot.
	 */
	{ "w_unk_seen",
	  "WITH old AS (SELECT count FROM unknown_counts WHERE host_id = $1"
	  " AND boot_id = $2 AND text = $3 AND kmsg_seq = $4::bigint),"
	  " put AS (INSERT INTO unknown_counts(host_id, boot_id, text,"
	  " kmsg_seq, count, received)"
	  " VALUES($1, $2, $3, $4::bigint, $5::bigint, $6::bigint)"
	  " ON CONFLICT (host_id, boot_id, text, kmsg_seq) DO UPDATE SET"
	  " count = greatest(unknown_counts.count, excluded.count),"
	  " received = excluded.received)"
	  " SELECT coalesce((SELECT count FROM old), 0)" },
	/*
	 * An unknown[] text, or a warning of a feature the server's catalog
	 * lacks ($9, its id; SQLite 013); $6 what its count grew by.
	 */
	{ "w_unk_upsert",
	  "INSERT INTO unknown_deprecations(host_id, boot_id, text,"
	  " first_kmsg_seq, first_time, count, matched_feature_id, received,"
	  " feature_id, kernel, origin, source)"
	  " VALUES($1, $2, $3, $4::bigint, $5::bigint, $6::bigint, $7,"
	  " $8::bigint, $9, $10, $11, $12)"
	  " ON CONFLICT (host_id, boot_id, text) DO UPDATE SET"
	  " count = unknown_deprecations.count + excluded.count,"
	  " first_kmsg_seq = least(unknown_deprecations.first_kmsg_seq,"
	  " excluded.first_kmsg_seq),"
	  " first_time = least(unknown_deprecations.first_time,"
	  " excluded.first_time),"
	  " matched_feature_id = coalesce(excluded.matched_feature_id,"
	  " unknown_deprecations.matched_feature_id),"
	  " feature_id = coalesce(excluded.feature_id,"
	  " unknown_deprecations.feature_id),"
	  " kernel = excluded.kernel, origin = excluded.origin,"
	  " source = excluded.source, received = excluded.received" },
	{ "w_census_del", "DELETE FROM census_knobs WHERE host_id = $1" },
	{ "w_census_ins",
	  "INSERT INTO census_knobs(host_id, feature_id, file, cgroup, value,"
	  " time, target_kind) VALUES($1, $2, $3, $4, $5, $6::bigint, $7)"
	  " ON CONFLICT (host_id, file, cgroup) DO UPDATE SET"
	  " feature_id = excluded.feature_id, value = excluded.value,"
	  " time = excluded.time, target_kind = excluded.target_kind" },
	/* the boots each key reports (store_pg_tokens.c's host_keys) */
	{ "w_key_seen",
	  "UPDATE host_keys SET boot_id = $2, last_seen = $3::bigint,"
	  " boot_seen = CASE WHEN boot_id IS NOT DISTINCT FROM $2"
	  " THEN boot_seen ELSE $3::bigint END,"
	  " prev_boot_id = CASE WHEN boot_id IS NOT DISTINCT FROM $2"
	  " THEN prev_boot_id ELSE boot_id END,"
	  " clone_seen = CASE WHEN boot_id IS DISTINCT FROM $2"
	  " AND prev_boot_id IS NOT DISTINCT FROM $2"
	  " THEN $3::bigint ELSE clone_seen END"
	  " WHERE key_hash = $1 AND (boot_id IS DISTINCT FROM $2"
	  " OR last_seen IS NULL OR last_seen <= $3::bigint - 60)" },
	{ "w_lock", "SELECT pg_advisory_xact_lock(1953983593)" },
	{ "w_savepoint", "SAVEPOINT batch" },
	{ "w_sp_rollback", "ROLLBACK TO SAVEPOINT batch" },
	{ "w_sp_release", "RELEASE SAVEPOINT batch" },
};
_Static_assert(TWL_PG_INGEST_LOCK == 1953983593LL, "w_lock's key");

/* Contract: see store_pg_internal.h. */
int twl_pg_ingest_prepare(struct twl_pg *p)
{
	return twl_pg_prepare(p->wconn, p->where, wsql,
			      sizeof(wsql) / sizeof(*wsql));
}

/* Run @name on the writer connection: twl_pg_run(). */
static int run(struct twl_pg *p, const char *name, const struct twl_pg_args *a,
	       PGresult **res)
{
	return twl_pg_run(p->wconn, name, a, res);
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_write_begin(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret;

	pthread_mutex_lock(&p->wlock);
	ret = twl_pg_exec(p->wconn, "BEGIN", 0, NULL, NULL);
	/* a connection lost since the last transaction: once more */
	if (ret == -ECONNRESET) {
		ret = twl_pg_writer_reconnect(p);
		if (!ret)
			ret = twl_pg_exec(p->wconn, "BEGIN", 0, NULL, NULL);
	}
	/* waits while another server's ingest transaction is open */
	if (!ret)
		ret = run(p, "w_lock", NULL, NULL);
	if (ret) {
		twl_pg_exec(p->wconn, "ROLLBACK", 0, NULL, NULL);
		pthread_mutex_unlock(&p->wlock);
	}
	return ret;
}

/*
 * Undo the report whose statements failed on @pp: a fresh pipe on @conn,
 * ROLLBACK TO its savepoint and RELEASE it (one round trip).
 */
static void savepoint_undo(struct twl_pg_pipe *pp, PGconn *conn)
{
	twl_pg_pipe_init(pp, conn);
	twl_pg_pipe_send(pp, "w_sp_rollback", NULL, NULL);
	twl_pg_pipe_run(pp, "w_sp_release", NULL, NULL);
}

/*
 * Sync the last report's tail, if one is waiting: when it failed, its
 * result is that failure and it rolls back to its savepoint (no later
 * report was sent after it).
 */
static void tail_settle(struct twl_pg *p)
{
	struct twl_pg_pipe *pp = &p->wpipe;
	int ret;

	if (!p->wpend_result)
		return;
	ret = twl_pg_pipe_sync(pp);
	if (ret) {
		*p->wpend_result = ret;
		savepoint_undo(pp, p->wconn);
	}
	p->wpend_result = NULL;
	p->wpend = 0;
}

/*
 * Between two reports: every report's result made final, and the sums
 * kept so far written. A failure is the group's (twl_pg_write_end()
 * stores its reports again, each alone): its transaction is aborted.
 */
static void group_flush_now(struct twl_pg *p)
{
	int ret;

	if (p->fold_err)
		return;
	tail_settle(p);
	ret = twl_pg_rollup_write(p);
	if (ret)
		p->fold_err = ret;
}

/* group_flush_now() when the group kept TWL_PG_FOLD_MAX sums. */
static void group_flush(struct twl_pg *p)
{
	if (twl_pg_fold_full(&p->fold))
		group_flush_now(p);
}

static void report_run(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest *in, int64_t now, int *result);

/* Whether every report of @f can be stored again (none was stored alone). */
static bool retriable(const struct twl_pg_fold *f)
{
	for (size_t i = 0; i < f->nr; i++)
		if (!f->r[i].in) /* twl_pg_ingest_prepared(): may be freed */
			return false;
	return true;
}

/*
 * The group's sums could not be written (@err): its transaction rolled
 * back and begun again, and each of its reports stored again alone, its
 * sums inside its own savepoint, so that one whose sums fail (a trigger,
 * a value out of range) fails alone, as it would have without the fold.
 * 0, or the failure to begin again (every report then fails); @err when
 * a report of the group was stored alone and cannot be stored again.
 */
static int group_again(struct twl_pg *p, int err)
{
	struct twl_pg_fold_report *rs = p->fold.r; /* taken from the fold */
	size_t n = p->fold.nr;
	int ret;

	if (!retriable(&p->fold)) {
		twl_log(LOG_WARNING,
			"%s: writing the rollups of %zu reports failed (%s); the group fails whole (one was stored alone)",
			p->where, n, strerror(-err));
		return err;
	}
	twl_log(LOG_WARNING,
		"%s: writing the rollups of %zu reports failed (%s); storing each again alone",
		p->where, n, strerror(-err));
	p->fold.r = NULL;
	p->fold.rcap = 0;
	twl_pg_fold_empty(&p->fold);
	p->fold_err = 0;
	twl_pg_exec(p->wconn, "ROLLBACK", 0, NULL, NULL);
	ret = twl_pg_exec(p->wconn, "BEGIN", 0, NULL, NULL);
	if (!ret)
		ret = run(p, "w_lock", NULL, NULL);
	p->fold_alone = true;
	for (size_t i = 0; !ret && i < n; i++)
		report_run(p, rs[i].host, rs[i].in, rs[i].now, rs[i].result);
	tail_settle(p);
	p->fold_alone = false;
	free(rs);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_write_end(struct twl_store *s, bool commit)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret = 0;

	tail_settle(p);
	if (commit)
		ret = p->fold_err ? p->fold_err : twl_pg_rollup_write(p);
	if (commit && ret)
		ret = group_again(p, ret);
	twl_pg_fold_empty(&p->fold);
	p->fold_err = 0;
	if (commit && !ret)
		ret = twl_pg_exec(p->wconn, "COMMIT", 0, NULL, NULL);
	if (!commit || ret)
		twl_pg_exec(p->wconn, "ROLLBACK", 0, NULL, NULL);
	pthread_mutex_unlock(&p->wlock);
	return ret;
}

/* Send w_unk_seen for @u: its count max-merged, the old one in *@res. */
static int unknown_seen_send(struct twl_pg_report *r,
			     const struct twl_ingest_unknown *u, PGresult **res)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_text(&a, u->boot_id);
	twl_pg_arg_text(&a, u->text);
	twl_pg_arg_i64(&a, u->kmsg_seq);
	twl_pg_arg_i64(&a, u->count);
	twl_pg_arg_i64(&a, r->now); /* kept as long as the last batch with it */
	return twl_pg_pipe_send(&r->pipe, "w_unk_seen", &a, res);
}

/*
 * How much u's count (a batch's occurrences of a text from its first,
 * u->kmsg_seq, on) adds, from its w_unk_seen answer @seen: max-merged
 * per (host, boot, text, first kmsg_seq), so a batch stored again adds
 * nothing.
 */
static int64_t unknown_growth(const struct twl_ingest_unknown *u,
			      const PGresult *seen)
{
	int64_t old = twl_pg_int(seen, 0, 0);

	return u->count > old ? u->count - old : 0;
}

/* Send: an unknown text (@feature: a warning's id the catalog lacks) grew. */
static int unknown_put(struct twl_pg_report *r,
		       const struct twl_ingest_unknown *u, const char *feature,
		       int64_t grew)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_text(&a, u->boot_id);
	twl_pg_arg_text(&a, u->text);
	twl_pg_arg_i64(&a, u->kmsg_seq);
	twl_pg_arg_i64(&a, u->time);
	twl_pg_arg_i64(&a, grew);
	twl_pg_arg_text(&a, u->matched);
	twl_pg_arg_i64(&a, r->now);
	twl_pg_arg_text(&a, feature);
	twl_pg_arg_text(&a, u->kernel);
	twl_pg_arg_text(&a, u->origin);
	twl_pg_arg_text(&a, u->source);
	return twl_pg_pipe_send(&r->pipe, "w_unk_upsert", &a, NULL);
}

/*
 * A warning of a feature the server's catalog lacks (catalog skew): kept
 * as an unknown text with its feature id, matched once the catalog
 * learns it (twl_store_catalog_rematch()); no rollup until then.
 */
static struct twl_ingest_unknown skewed(const struct twl_ingest_warning *w)
{
	const struct twl_ingest_unknown u = {
		.text = w->unknown_text,
		.origin = w->origin,
		.boot_id = w->boot_id,
		.kernel = w->kernel,
		.source = w->source,
		.kmsg_seq = w->kmsg_seq,
		.time = w->time,
		.count = 1,
	};

	return u;
}

/* Send warning @w, whether it is new (1) or stored before (0) in *@res. */
static int warning_send(struct twl_pg_report *r,
			const struct twl_ingest_warning *w, PGresult **res)
{
	struct twl_pg_args a = { 0 };
	struct twl_ingest_unknown u;

	if (w->unknown_text) {
		u = skewed(w);
		return unknown_seen_send(r, &u, res);
	}
	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_text(&a, w->boot_id);
	twl_pg_arg_text(&a, w->feature);
	twl_pg_arg_i64(&a, w->kmsg_seq);
	twl_pg_arg_i64(&a, w->mono_us);
	twl_pg_arg_i64(&a, w->time);
	twl_pg_arg_i64(&a, w->level);
	twl_pg_arg_text(&a, w->text);
	twl_pg_arg_text(&a, w->fields_json);
	twl_pg_arg_text(&a, w->origin);
	twl_pg_arg_i64(&a, r->now);
	twl_pg_arg_text(&a, w->kernel);
	twl_pg_arg_text(&a, w->source);
	return twl_pg_pipe_send(&r->pipe, "w_warn_ins", &a, res);
}

/* The warnings' answers: skewed ones' texts, new ones' rollups. */
static int warnings_finish(struct twl_pg_report *r)
{
	int64_t grew;
	int ret = 0;

	for (size_t i = 0; !ret && i < r->in->n_warnings; i++) {
		const struct twl_ingest_warning *w = &r->in->warnings[i];
		struct twl_ingest_unknown u;

		if (w->unknown_text) {
			u = skewed(w);
			grew = unknown_growth(&u, r->warn[i]);
			if (grew)
				ret = unknown_put(r, &u, w->feature, grew);
		} else if (twl_pg_changed(r->warn[i]) > 0) {
			/* evidence apart from BPF's counts, never a use */
			ret = twl_pg_rollup(r, w->feature, w->time, w->time,
					    TWL_KIND_WARNING, 1);
		}
	}
	return ret;
}

/* The unknown texts' answers: those that grew, and their rollups. */
static int unknown_finish(struct twl_pg_report *r)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < r->in->n_unknown; i++) {
		const struct twl_ingest_unknown *u = &r->in->unknown[i];
		int64_t grew = unknown_growth(u, r->unk[i]);

		if (!grew)
			continue; /* counted before */
		ret = unknown_put(r, u, NULL, grew);
		if (!ret && u->matched)
			ret = twl_pg_rollup(r, u->matched, u->time, u->time,
					    TWL_KIND_WARNING, grew);
	}
	return ret;
}

static int census_send(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };
	int ret;

	if (!in->has_census)
		return 0;
	twl_pg_arg_text(&a, r->host_id);
	ret = twl_pg_pipe_send(&r->pipe, "w_census_del", &a, NULL);
	for (size_t i = 0; !ret && i < in->n_knobs; i++) {
		const struct twl_ingest_knob *k = &in->knobs[i];

		a.n = 1;
		twl_pg_arg_text(&a, k->feature);
		twl_pg_arg_text(&a, k->file);
		twl_pg_arg_text(&a, k->cgroup);
		twl_pg_arg_text(&a, k->value);
		twl_pg_arg_i64(&a, in->census_time);
		twl_pg_arg_text(&a, k->target_kind);
		ret = twl_pg_pipe_send(&r->pipe, "w_census_ins", &a, NULL);
	}
	return ret;
}

static int census_finish(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	int64_t t = in->census_time;
	int ret = 0;

	for (size_t i = 0; !ret && in->has_census && i < in->n_knobs; i++)
		ret = twl_pg_rollup(r, in->knobs[i].feature, t, t,
				    TWL_KIND_CENSUS, 0);
	return ret;
}

/* Send the batch id's note: whether it was new in r->batch. */
static int batch_send(struct twl_pg_report *r, char *hex, size_t cap)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };
	const char *hash = NULL;

	if (in->has_body_sha256) {
		twl_pg_arg_hex(&a, in->body_sha256, sizeof(in->body_sha256),
			       hex, cap);
		hash = a.v[0];
		a.n = 0;
	}
	twl_pg_arg_text(&a, in->batch_id);
	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_i64(&a, in->seq);
	twl_pg_arg_i64(&a, r->now);
	twl_pg_arg_text(&a, hash);
	return twl_pg_pipe_send(&r->pipe, "w_batch_ins", &a, &r->batch);
}

/*
 * The batch id was there: what was sent after it rolled back, then
 * TWL_STORE_CONFLICT if both bodies were hashed and the hashes differ,
 * else TWL_STORE_DUPLICATE. Or a negative errno.
 */
static int batch_known(struct twl_pg_report *r, const char *hash)
{
	struct twl_pg_args a = { 0 };
	PGresult *res;
	int ret;

	twl_pg_pipe_init(&r->pipe, r->p->wconn);
	twl_pg_pipe_send(&r->pipe, "w_sp_rollback", NULL, NULL);
	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_text(&a, r->in->batch_id);
	twl_pg_arg_text(&a, hash);
	ret = twl_pg_pipe_run(&r->pipe, "w_batch_hash", &a, &res);
	if (ret)
		return ret;
	ret = PQntuples(res) == 1 && !strcmp(PQgetvalue(res, 0, 0), "t") ?
		      TWL_STORE_CONFLICT :
		      TWL_STORE_DUPLICATE;
	PQclear(res);
	return ret;
}

/* The boots the report's key reports (store_pg_tokens.c's host_keys). */
static int key_send(struct twl_pg_report *r)
{
	struct twl_pg_args a = { 0 };

	if (!r->in->key_hash[0])
		return 0;
	twl_pg_arg_text(&a, r->in->key_hash);
	twl_pg_arg_text(&a, r->in->boot_id);
	twl_pg_arg_i64(&a, r->now);
	return twl_pg_pipe_send(&r->pipe, "w_key_seen", &a, NULL);
}

/*
 * The first round trip: the savepoint, the batch id and every statement
 * whose answer no other needs first. Sent before the batch id is known
 * new: a repeated one rolls them back (batch_known()).
 */
static int first_send(struct twl_pg_report *r, char *hex, size_t cap)
{
	const struct twl_ingest *in = r->in;
	int ret = twl_pg_pipe_send(&r->pipe, "w_savepoint", NULL, NULL);

	if (!ret)
		ret = batch_send(r, hex, cap);
	if (!ret)
		ret = twl_pg_ingest_host_send(r);
	if (!ret)
		ret = key_send(r);
	for (size_t i = 0; !ret && i < in->n_warnings; i++)
		ret = warning_send(r, &in->warnings[i], &r->warn[i]);
	for (size_t i = 0; !ret && i < in->n_unknown; i++)
		ret = unknown_seen_send(r, &in->unknown[i], &r->unk[i]);
	if (!ret)
		ret = twl_pg_usage_send(r);
	if (!ret)
		ret = census_send(r);
	return ret;
}

/*
 * The last report's tail went with @r's first round trip: its result.
 * When it failed (its statement came first), PostgreSQL skipped the rest,
 * @r's SAVEPOINT too: the last report rolls back to its own and @r is to
 * be sent again (r->redo, 1). A lost connection fails both. Else 0.
 */
static int prev_settle(struct twl_pg_report *r)
{
	int *res = r->prev_result;

	r->prev_result = NULL;
	if (!r->pipe.err || r->pipe.failed_at == SIZE_MAX) {
		*res = r->pipe.err;
		return 0;
	}
	if (r->pipe.failed_at >= r->prev_n)
		return 0; /* the tail and its RELEASE ran: @r failed */
	*res = r->pipe.err;
	savepoint_undo(&r->pipe, r->p->wconn);
	r->redo = true;
	return 1;
}

/*
 * The report inside its savepoint: 0 with its last statements sent (not
 * synced), a replay or a conflict (> 0), or a negative errno.
 */
static int ingest_body(struct twl_pg_report *r)
{
	char hex[2 * sizeof(r->in->body_sha256) + 3];
	int ret;

	first_send(r, hex, sizeof(hex));
	ret = twl_pg_pipe_sync(&r->pipe);
	if (r->prev_result && prev_settle(r))
		return ret; /* r->redo: nothing of @r ran */
	if (r->batch && !twl_pg_changed(r->batch))
		return batch_known(r, r->in->has_body_sha256 ? hex : NULL);
	if (!ret)
		ret = twl_pg_ingest_host_finish(r);
	if (!ret)
		ret = warnings_finish(r);
	if (!ret)
		ret = unknown_finish(r);
	if (!ret)
		ret = twl_pg_usage_finish(r);
	if (!ret)
		ret = census_finish(r);
	if (!ret)
		ret = twl_pg_rollup_flush(r);
	if (!ret && r->p->fold_alone)
		ret = twl_pg_rollup_send(&r->pipe, &r->p->fold);
	return ret;
}

/* @r for one report: its answers' places; 0 or -ENOMEM. */
static int report_init(struct twl_pg_report *r, struct twl_pg *p,
		       const char *host_id, const struct twl_ingest *in,
		       int64_t now)
{
	size_t nu = in->n_usage + 1;

	memset(r, 0, sizeof(*r));
	r->p = p;
	twl_pg_pipe_init(&r->pipe, p->wconn);
	r->host_id = host_id;
	r->in = in;
	r->now = now;
	r->warn = calloc(in->n_warnings + 1, sizeof(*r->warn));
	r->unk = calloc(in->n_unknown + 1, sizeof(*r->unk));
	r->use = calloc(nu, sizeof(*r->use));
	r->old = calloc(nu, sizeof(*r->old));
	r->step = calloc(nu, sizeof(*r->step));
	if (!r->warn || !r->unk || !r->use || !r->old || !r->step)
		return -ENOMEM;
	/* the last report's tail, synced with this one's first statements */
	if (p->wpend_result) {
		r->pipe = p->wpipe;
		r->pipe.taken = 0;
		r->pipe.failed_at = SIZE_MAX;
		r->prev_n = p->wpend;
		r->prev_result = p->wpend_result;
		p->wpend_result = NULL;
		p->wpend = 0;
	}
	return 0;
}

static void clear_all(PGresult **res, size_t n)
{
	for (size_t i = 0; res && i < n; i++)
		PQclear(res[i]);
	free(res);
}

static void report_free(struct twl_pg_report *r)
{
	PQclear(r->batch);
	PQclear(r->touch);
	PQclear(r->labels);
	clear_all(r->warn, r->in->n_warnings);
	clear_all(r->unk, r->in->n_unknown);
	clear_all(r->use, r->in->n_usage);
	free(r->old);
	free(r->step);
}

/*
 * The report's end on its pipe: RELEASE of its savepoint sent after its
 * last statements, synced with the next report's first ones or at
 * twl_pg_write_end() (its result in *@result then, if they fail); or on
 * a failure ROLLBACK TO it first.
 */
static int report_end(struct twl_pg_report *r, int ret, int *result)
{
	struct twl_pg *p = r->p;
	int rc;

	if (ret >= 0) {
		rc = twl_pg_pipe_send(&r->pipe, "w_sp_release", NULL, NULL);
		if (!rc) {
			p->wpipe = r->pipe;
			p->wpend = r->pipe.n;
			p->wpend_result = result;
			return ret;
		}
		ret = rc;
	}
	twl_pg_pipe_sync(&r->pipe); /* what was sent before the failure */
	savepoint_undo(&r->pipe, r->p->wconn);
	return ret;
}

/*
 * One report, its tail not synced (twl_pg_ingest_deferred()'s contract).
 * In the group (!@p->fold_alone) its sums are kept for the group's end;
 * alone, it writes them itself before its RELEASE, and what a failure
 * left of them is forgotten.
 */
static void report_run(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest *in, int64_t now, int *result)
{
	struct twl_pg_report *r = malloc(sizeof(*r));
	bool again;
	int ret;

	*result = -ENOMEM;
	if (!p->fold_alone)
		group_flush(p);
	else if (p->fold.n)
		group_flush_now(p); /* the group's before this one */
	/* alone: nothing to retry (its caller may free @in on return) */
	if (!r ||
	    (p->fold_alone ?
		     twl_pg_fold_begin(&p->fold, NULL, NULL, NULL, 0) :
		     twl_pg_fold_begin(&p->fold, result, host_id, in, now))) {
		free(r);
		return;
	}
	do {
		ret = report_init(r, p, host_id, in, now);
		if (!ret) {
			ret = ingest_body(r);
			if (!r->redo)
				ret = report_end(r, ret, result);
		}
		again = r->redo;
		report_free(r);
	} while (again);
	free(r);
	if (p->fold_alone)
		twl_pg_fold_written(&p->fold);
	*result = ret; /* a failure of its tail: put there when synced */
}

/* Contract: see store_pg_ingest.h. */
void twl_pg_ingest_deferred(struct twl_store *s, const char *host_id,
			    const struct twl_ingest *in, int64_t now,
			    int *result)
{
	report_run(twl_pg_of(s), host_id, in, now, result);
}

/*
 * Contract: see store_pg_ingest.h. Stored alone: its result is known
 * when this returns, so its sums are written inside its savepoint.
 */
int twl_pg_ingest_prepared(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now)
{
	struct twl_pg *p = twl_pg_of(s);
	bool alone = p->fold_alone;
	int ret;

	p->fold_alone = true;
	report_run(p, host_id, in, now, &ret);
	tail_settle(p);
	p->fold_alone = alone;
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_ingest(struct twl_store *s, const char *host_id,
		  const json_t *report, int64_t now)
{
	struct twl_ingest *in;
	int ret;

	ret = twl_ingest_prepare((json_t *)report, host_id, &in);
	if (ret)
		return ret;
	ret = twl_pg_ingest_prepared(s, host_id, in, now);
	twl_ingest_free(in);
	return ret;
}
