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
 * rollups store_pg_rollup.c and the migration's triggers.
 */
#include <errno.h>
#include <stdio.h>
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

/* Run @name: its rows changed (>= 0), or a negative errno. */
static int64_t run_changed(struct twl_pg *p, const char *name,
			   const struct twl_pg_args *a)
{
	PGresult *r;
	int64_t n;
	int ret = run(p, name, a, &r);

	if (ret)
		return ret;
	n = twl_pg_changed(r);
	PQclear(r);
	return n;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_write_begin(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret;

	pthread_mutex_lock(&p->wlock);
	ret = twl_pg_exec(p->wconn, "BEGIN", 0, NULL, NULL);
	/* waits while another server's ingest transaction is open */
	if (!ret)
		ret = run(p, "w_lock", NULL, NULL);
	if (ret) {
		twl_pg_exec(p->wconn, "ROLLBACK", 0, NULL, NULL);
		pthread_mutex_unlock(&p->wlock);
	}
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_write_end(struct twl_store *s, bool commit)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret = 0;

	if (commit)
		ret = twl_pg_exec(p->wconn, "COMMIT", 0, NULL, NULL);
	if (!commit || ret)
		twl_pg_exec(p->wconn, "ROLLBACK", 0, NULL, NULL);
	pthread_mutex_unlock(&p->wlock);
	return ret;
}

/* (host_id, u's boot, text, kmsg_seq): $1 .. $4. */
static void unknown_key(struct twl_pg_args *a, const char *host_id,
			const struct twl_ingest_unknown *u)
{
	twl_pg_arg_text(a, host_id);
	twl_pg_arg_text(a, u->boot_id);
	twl_pg_arg_text(a, u->text);
	twl_pg_arg_i64(a, u->kmsg_seq);
}

/*
 * How much u's count (a batch's occurrences of a text from its first,
 * u->kmsg_seq, on) adds, into *grew: max-merged per (host, boot, text,
 * first kmsg_seq), so a batch stored again adds nothing. 0 or -errno.
 */
static int unknown_growth(struct twl_pg *p, const char *host_id,
			  const struct twl_ingest_unknown *u, int64_t now,
			  int64_t *grew)
{
	struct twl_pg_args a = { 0 };
	PGresult *r;
	int64_t old;
	int ret;

	unknown_key(&a, host_id, u);
	twl_pg_arg_i64(&a, u->count);
	twl_pg_arg_i64(&a, now); /* kept as long as the last batch with it */
	ret = run(p, "w_unk_seen", &a, &r);
	if (ret)
		return ret;
	old = twl_pg_int(r, 0, 0);
	PQclear(r);
	*grew = u->count > old ? u->count - old : 0;
	return 0;
}

/* An unknown text (@feature: a warning's id the catalog lacks) grew. */
static int unknown_put(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest_unknown *u, const char *feature,
		       int64_t grew, int64_t now)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, host_id);
	twl_pg_arg_text(&a, u->boot_id);
	twl_pg_arg_text(&a, u->text);
	twl_pg_arg_i64(&a, u->kmsg_seq);
	twl_pg_arg_i64(&a, u->time);
	twl_pg_arg_i64(&a, grew);
	twl_pg_arg_text(&a, u->matched);
	twl_pg_arg_i64(&a, now);
	twl_pg_arg_text(&a, feature);
	twl_pg_arg_text(&a, u->kernel);
	twl_pg_arg_text(&a, u->origin);
	twl_pg_arg_text(&a, u->source);
	return run(p, "w_unk_upsert", &a, NULL);
}

/*
 * A warning of a feature the server's catalog lacks (catalog skew): kept
 * as an unknown text with its feature id, matched once the catalog
 * learns it (twl_store_catalog_rematch()); no rollup until then.
 */
static int skewed_warning(struct twl_pg *p, const char *host_id,
			  const struct twl_ingest_warning *w, int64_t now)
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
	int64_t grew;
	int ret;

	ret = unknown_growth(p, host_id, &u, now, &grew);
	return ret || !grew ?
		       ret :
		       unknown_put(p, host_id, &u, w->feature, grew, now);
}

/* Store warning @w: 1 when new, 0 when stored before, or -errno. */
static int64_t warning_put(struct twl_pg *p, const char *host_id,
			   const struct twl_ingest_warning *w, int64_t now)
{
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, host_id);
	twl_pg_arg_text(&a, w->boot_id);
	twl_pg_arg_text(&a, w->feature);
	twl_pg_arg_i64(&a, w->kmsg_seq);
	twl_pg_arg_i64(&a, w->mono_us);
	twl_pg_arg_i64(&a, w->time);
	twl_pg_arg_i64(&a, w->level);
	twl_pg_arg_text(&a, w->text);
	twl_pg_arg_text(&a, w->fields_json);
	twl_pg_arg_text(&a, w->origin);
	twl_pg_arg_i64(&a, now);
	twl_pg_arg_text(&a, w->kernel);
	twl_pg_arg_text(&a, w->source);
	return run_changed(p, "w_warn_ins", &a);
}

static int ingest_warnings(struct twl_pg *p, const char *host_id,
			   const struct twl_ingest *in, int64_t now,
			   struct twl_rollup *ru)
{
	int64_t n;
	int ret;

	for (size_t i = 0; i < in->n_warnings; i++) {
		const struct twl_ingest_warning *w = &in->warnings[i];

		if (w->unknown_text) {
			ret = skewed_warning(p, host_id, w, now);
			if (ret)
				return ret;
			continue;
		}
		n = warning_put(p, host_id, w, now);
		if (n <= 0) {
			if (n < 0)
				return (int)n;
			continue; /* stored before */
		}
		/* evidence apart from BPF's counts, never a use */
		ret = twl_pg_rollup(p, w->feature, host_id, w->time, w->time,
				    TWL_KIND_WARNING, 1, ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_unknown(struct twl_pg *p, const char *host_id,
			  const struct twl_ingest *in, int64_t now,
			  struct twl_rollup *ru)
{
	int ret;

	for (size_t i = 0; i < in->n_unknown; i++) {
		const struct twl_ingest_unknown *u = &in->unknown[i];
		int64_t grew;

		ret = unknown_growth(p, host_id, u, now, &grew);
		if (ret)
			return ret;
		if (!grew)
			continue; /* counted before */
		ret = unknown_put(p, host_id, u, NULL, grew, now);
		if (!ret && u->matched)
			ret = twl_pg_rollup(p, u->matched, host_id, u->time,
					    u->time, TWL_KIND_WARNING, grew,
					    ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_census(struct twl_pg *p, const char *host_id,
			 const struct twl_ingest *in, struct twl_rollup *ru)
{
	struct twl_pg_args a = { 0 };
	int64_t t = in->census_time;
	int ret;

	if (!in->has_census)
		return 0;
	twl_pg_arg_text(&a, host_id);
	ret = run(p, "w_census_del", &a, NULL);
	for (size_t i = 0; !ret && i < in->n_knobs; i++) {
		const struct twl_ingest_knob *k = &in->knobs[i];

		a.n = 1;
		twl_pg_arg_text(&a, k->feature);
		twl_pg_arg_text(&a, k->file);
		twl_pg_arg_text(&a, k->cgroup);
		twl_pg_arg_text(&a, k->value);
		twl_pg_arg_i64(&a, t);
		twl_pg_arg_text(&a, k->target_kind);
		ret = run(p, "w_census_ins", &a, NULL);
		if (!ret)
			ret = twl_pg_rollup(p, k->feature, host_id, t, t,
					    TWL_KIND_CENSUS, 0, ru);
	}
	return ret;
}

/*
 * Note the batch id: 0 when new; when host_id sent it before,
 * TWL_STORE_CONFLICT if both bodies were hashed and the hashes differ,
 * else TWL_STORE_DUPLICATE. Or a negative errno.
 */
static int batch_note(struct twl_pg *p, const char *host_id,
		      const struct twl_ingest *in, int64_t now)
{
	struct twl_pg_args a = { 0 };
	char hex[2 * sizeof(in->body_sha256) + 3];
	const char *hash = NULL;
	PGresult *r;
	int64_t n;
	int ret;

	if (in->has_body_sha256) {
		twl_pg_arg_hex(&a, in->body_sha256, sizeof(in->body_sha256),
			       hex, sizeof(hex));
		hash = a.v[0];
		a.n = 0;
	}
	twl_pg_arg_text(&a, in->batch_id);
	twl_pg_arg_text(&a, host_id);
	twl_pg_arg_i64(&a, in->seq);
	twl_pg_arg_i64(&a, now);
	twl_pg_arg_text(&a, hash);
	n = run_changed(p, "w_batch_ins", &a);
	if (n)
		return n < 0 ? (int)n : 0;
	a.n = 0;
	twl_pg_arg_text(&a, host_id);
	twl_pg_arg_text(&a, in->batch_id);
	twl_pg_arg_text(&a, hash);
	ret = run(p, "w_batch_hash", &a, &r);
	if (ret)
		return ret;
	ret = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t") ?
		      TWL_STORE_CONFLICT :
		      TWL_STORE_DUPLICATE;
	PQclear(r);
	return ret;
}

/* The host sent times from the future; the boots its key reports. */
static int host_extras(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest *in, int64_t now)
{
	struct twl_pg_args a = { 0 };
	int ret = 0;

	if (in->times_clamped) {
		twl_pg_arg_text(&a, host_id);
		twl_pg_arg_i64(&a, in->times_clamped);
		twl_pg_arg_i64(&a, in->time_sent_max);
		ret = run(p, "w_host_clamped", &a, NULL);
	}
	if (!ret && in->key_hash[0]) {
		a.n = 0;
		twl_pg_arg_text(&a, in->key_hash);
		twl_pg_arg_text(&a, in->boot_id);
		twl_pg_arg_i64(&a, now);
		ret = run(p, "w_key_seen", &a, NULL);
	}
	return ret;
}

static int ingest_body(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest *in, int64_t now)
{
	struct twl_rollup ru;
	int ret;

	ru.n = 0;
	ret = batch_note(p, host_id, in, now);
	if (ret)
		return ret; /* a replay, a conflict, or an error */
	ret = twl_pg_ingest_host(p, host_id, in, now);
	if (!ret)
		ret = host_extras(p, host_id, in, now);
	if (!ret)
		ret = ingest_warnings(p, host_id, in, now, &ru);
	if (!ret)
		ret = ingest_unknown(p, host_id, in, now, &ru);
	if (!ret)
		ret = twl_pg_ingest_usage(p, host_id, in, &ru);
	if (!ret)
		ret = ingest_census(p, host_id, in, &ru);
	if (!ret)
		ret = twl_pg_rollup_flush(p, host_id, &ru);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_ingest_prepared(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret, rc;

	ret = run(p, "w_savepoint", NULL, NULL);
	if (ret)
		return ret;
	ret = ingest_body(p, host_id, in, now);
	if (ret < 0)
		run(p, "w_sp_rollback", NULL, NULL);
	rc = run(p, "w_sp_release", NULL, NULL);
	if (ret >= 0 && rc)
		ret = rc;
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
