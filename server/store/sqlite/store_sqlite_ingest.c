// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest write path on SQLite (store.h: twl_store_write_begin() ..
 * twl_store_write_end(), twl_store_ingest*()): one report per SAVEPOINT,
 * its rows bound into statements prepared once on the writer connection,
 * and the rollups (feature_host, feature_day) kept as it goes: BPF
 * counts per kind of use, kernel warnings apart (migration 015). Only the
 * group-commit writer, or a short admin write, holds this path (wlock);
 * its statements and their order are what bench/server-load measures.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/ingest.h"
#include "store/sqlite/store_sqlite_internal.h"

enum {
	W_BATCH_INS,
	W_BATCH_HASH,
	W_HOST_CLAMPED,
	W_WARN_INS,
	W_UNK_SEEN,
	W_UNK_SEEN_PUT,
	W_UNK_UPSERT,
	W_CENSUS_DEL,
	W_CENSUS_INS,
	W_SAVEPOINT,
	W_SP_ROLLBACK,
	W_SP_RELEASE,
	W_N,
};
_Static_assert(W_N <= sizeof(((struct twl_store *)0)->ws) / sizeof(void *),
	       "struct twl_store.ws[] has a slot per writer statement");

static const char *const wsql[W_N] = {
	/*
	 * batch ids per host, with the body's hash (migration 016), the
	 * host by its number (023)
	 */
	[W_BATCH_INS] =
		"INSERT INTO batch_ids(batch_id, host_ref, seq, received,"
		" body_sha256) VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
	/* times clamped at ingest (ingest.h), rare: a statement of its own */
	[W_HOST_CLAMPED] =
		"UPDATE hosts SET times_clamped = times_clamped + ?2,"
		" time_sent_max = max(time_sent_max, ?3) WHERE host_id = ?1",
	[W_BATCH_HASH] = "SELECT body_sha256 FROM batch_ids"
			 " WHERE host_ref = ?1 AND batch_id = ?2",
	/* ?2, ?12: the record's boot and kernel (the host's when not sent) */
	[W_WARN_INS] =
		"INSERT INTO warnings(host_id, boot_id, feature_id, kmsg_seq, mono_us,"
		" time, level, text, fields_json, origin, received, kernel, source)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		" ON CONFLICT DO NOTHING",
	/*
	 * A batch's count of an unknown text, under the kmsg_seq of its first
	 * occurrence in the batch (migration 016): what it added before.
	 */
	[W_UNK_SEEN] = "SELECT count FROM unknown_counts WHERE host_id = ?1"
		       " AND boot_id = ?2 AND text = ?3 AND kmsg_seq = ?4",
	[W_UNK_SEEN_PUT] =
		"INSERT INTO unknown_counts(host_id, boot_id, text, kmsg_seq,"
		" count, received) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
		" ON CONFLICT DO UPDATE SET count = max(count, excluded.count),"
		" received = excluded.received",
	/*
	 * An unknown[] text, or a warning of a feature the server's catalog
	 * lacks (?9, its id; migration 013); ?6 what its count grew by
	 * (unknown_growth()).
	 */
	[W_UNK_UPSERT] =
		"INSERT INTO unknown_deprecations(host_id, boot_id, text, first_kmsg_seq,"
		" first_time, count, matched_feature_id, received, feature_id,"
		" kernel, origin, source)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
		" ON CONFLICT DO UPDATE SET count = count + excluded.count,"
		" first_kmsg_seq = min(first_kmsg_seq, excluded.first_kmsg_seq),"
		" first_time = min(first_time, excluded.first_time),"
		" matched_feature_id = coalesce(excluded.matched_feature_id,"
		" matched_feature_id),"
		" feature_id = coalesce(excluded.feature_id, feature_id),"
		" kernel = excluded.kernel, origin = excluded.origin,"
		" source = excluded.source, received = excluded.received",
	[W_CENSUS_DEL] = "DELETE FROM census_knobs WHERE host_id = ?1",
	[W_CENSUS_INS] =
		"INSERT INTO census_knobs(host_id, feature_id, file, cgroup, value, time,"
		" target_kind)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO UPDATE SET"
		" feature_id = excluded.feature_id, value = excluded.value,"
		" time = excluded.time, target_kind = excluded.target_kind",
	/* Per-batch savepoint, prepared once like the rest (not re-parsed). */
	[W_SAVEPOINT] = "SAVEPOINT batch",
	[W_SP_ROLLBACK] = "ROLLBACK TO batch",
	[W_SP_RELEASE] = "RELEASE batch",
};

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_ingest_prepare(struct twl_store *s)
{
	return twl_sqlite_prepare_all(s->path, s->wdb, wsql, W_N, s->ws,
				      "writer");
}

/* Contract: see store.h. */
int twl_store_write_begin(struct twl_store *s)
{
	int rc;

	pthread_mutex_lock(&s->wlock);
	rc = sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		pthread_mutex_unlock(&s->wlock);
		return twl_sqlite_errno(rc);
	}
	return 0;
}

/* Contract: see store.h. */
int twl_store_write_end(struct twl_store *s, bool commit)
{
	int ret = commit ? twl_sqlite_day_flush(s) : 0;

	s->n_day_tx = 0;
	s->n_day_batch = 0;
	if (commit && !ret)
		ret = twl_sqlite_errno(
			sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL));
	if (!commit || ret)
		sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
	twl_sqlite_full_sync_again(s);
	pthread_mutex_unlock(&s->wlock);
	return ret;
}

/* Bind (host_id, u's boot, text, kmsg_seq) to ?1 .. ?4. */
static void bind_unknown_key(sqlite3_stmt *st, const char *host_id,
			     const struct twl_ingest_unknown *u)
{
	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, u->boot_id);
	twl_bind_static(st, 3, u->text);
	sqlite3_bind_int64(st, 4, u->kmsg_seq);
}

/*
 * How much u's count (a batch's occurrences of a text from its first,
 * u->kmsg_seq, on) adds, into *grew: max-merged per (host, boot, text,
 * first kmsg_seq), so a batch stored again adds nothing. 0 or -errno.
 */
static int unknown_growth(struct twl_store *s, const char *host_id,
			  const struct twl_ingest_unknown *u, int64_t now,
			  int64_t *grew)
{
	sqlite3_stmt *st = s->ws[W_UNK_SEEN];
	int64_t old = 0;
	int rc;

	bind_unknown_key(st, host_id, u);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		old = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	*grew = u->count > old ? u->count - old : 0;
	/* kept as long as the last batch that carried it (retention) */
	st = s->ws[W_UNK_SEEN_PUT];
	bind_unknown_key(st, host_id, u);
	sqlite3_bind_int64(st, 5, u->count);
	sqlite3_bind_int64(st, 6, now);
	return twl_step_done(st);
}

/*
 * Bind W_UNK_UPSERT: an unknown text of @boot_id, @kernel (with @feature,
 * the id of a warning the server's catalog lacks, or NULL) whose count
 * grew by @grew, then step.
 */
static int unknown_step(struct twl_store *s, const char *host_id,
			const struct twl_ingest_unknown *u, const char *feature,
			int64_t grew, int64_t now)
{
	sqlite3_stmt *st = s->ws[W_UNK_UPSERT];

	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, u->boot_id);
	twl_bind_static(st, 3, u->text);
	sqlite3_bind_int64(st, 4, u->kmsg_seq);
	sqlite3_bind_int64(st, 5, u->time);
	sqlite3_bind_int64(st, 6, grew);
	twl_bind_static(st, 7, u->matched);
	sqlite3_bind_int64(st, 8, now);
	twl_bind_static(st, 9, feature);
	twl_bind_static(st, 10, u->kernel);
	twl_bind_static(st, 11, u->origin);
	twl_bind_static(st, 12, u->source);
	return twl_step_done(st);
}

/*
 * A warning of a feature the server's catalog lacks (catalog skew): kept
 * as an unknown text with its feature id, matched to the feature when the
 * catalog learns it (twl_store_catalog_rematch()); no rollup until then.
 */
static int skewed_warning(struct twl_store *s, const char *host_id,
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

	ret = unknown_growth(s, host_id, &u, now, &grew);
	return ret || !grew ?
		       ret :
		       unknown_step(s, host_id, &u, w->feature, grew, now);
}

static int warning_step(struct twl_store *s, const char *host_id,
			const struct twl_ingest_warning *w, int64_t now)
{
	sqlite3_stmt *st = s->ws[W_WARN_INS];

	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, w->boot_id);
	twl_bind_static(st, 3, w->feature);
	sqlite3_bind_int64(st, 4, w->kmsg_seq);
	sqlite3_bind_int64(st, 5, w->mono_us);
	sqlite3_bind_int64(st, 6, w->time);
	sqlite3_bind_int64(st, 7, w->level);
	twl_bind_static(st, 8, w->text);
	twl_bind_static(st, 9, w->fields_json);
	twl_bind_static(st, 10, w->origin);
	sqlite3_bind_int64(st, 11, now);
	twl_bind_static(st, 12, w->kernel);
	twl_bind_static(st, 13, w->source);
	return twl_step_done(st);
}

static int ingest_warnings(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now,
			   struct twl_rollup *ru)
{
	int ret;

	for (size_t i = 0; i < in->n_warnings; i++) {
		const struct twl_ingest_warning *w = &in->warnings[i];

		if (w->unknown_text) {
			ret = skewed_warning(s, host_id, w, now);
			if (ret)
				return ret;
			continue;
		}
		ret = warning_step(s, host_id, w, now);
		if (ret)
			return ret;
		if (sqlite3_changes(s->wdb) == 0)
			continue; /* stored before */
		/* evidence apart from BPF's counts, never a use (015) */
		ret = twl_sqlite_rollup(s, w->feature, host_id, w->time,
					w->time, TWL_KIND_WARNING, 1, ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_unknown(struct twl_store *s, const char *host_id,
			  const struct twl_ingest *in, int64_t now,
			  struct twl_rollup *ru)
{
	int ret;

	for (size_t i = 0; i < in->n_unknown; i++) {
		const struct twl_ingest_unknown *u = &in->unknown[i];
		int64_t grew;

		ret = unknown_growth(s, host_id, u, now, &grew);
		if (ret)
			return ret;
		if (!grew)
			continue; /* counted before */
		ret = unknown_step(s, host_id, u, NULL, grew, now);
		if (!ret && u->matched)
			ret = twl_sqlite_rollup(s, u->matched, host_id, u->time,
						u->time, TWL_KIND_WARNING, grew,
						ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_census(struct twl_store *s, const char *host_id,
			 const struct twl_ingest *in, struct twl_rollup *ru)
{
	sqlite3_stmt *st = s->ws[W_CENSUS_INS];
	int64_t t = in->census_time;
	int ret;

	if (!in->has_census)
		return 0;
	twl_bind_static(s->ws[W_CENSUS_DEL], 1, host_id);
	ret = twl_step_done(s->ws[W_CENSUS_DEL]);
	if (ret)
		return ret;
	for (size_t i = 0; i < in->n_knobs; i++) {
		const struct twl_ingest_knob *k = &in->knobs[i];

		twl_bind_static(st, 1, host_id);
		twl_bind_static(st, 2, k->feature);
		twl_bind_static(st, 3, k->file);
		twl_bind_static(st, 4, k->cgroup);
		twl_bind_static(st, 5, k->value);
		sqlite3_bind_int64(st, 6, t);
		twl_bind_static(st, 7, k->target_kind);
		ret = twl_step_done(st);
		if (!ret)
			ret = twl_sqlite_rollup(s, k->feature, host_id, t, t,
						TWL_KIND_CENSUS, 0, ru);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Host number ref sent in's batch id before: TWL_STORE_CONFLICT when both
 * bodies were hashed and the hashes differ, else TWL_STORE_DUPLICATE.
 */
static int batch_seen(struct twl_store *s, int64_t ref,
		      const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->ws[W_BATCH_HASH];
	int rc, ret = TWL_STORE_DUPLICATE;
	const void *h;

	sqlite3_bind_int64(st, 1, ref);
	twl_bind_static(st, 2, in->batch_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && in->has_body_sha256) {
		h = sqlite3_column_blob(st, 0);
		if (h &&
		    sqlite3_column_bytes(st, 0) == sizeof(in->body_sha256) &&
		    memcmp(h, in->body_sha256, sizeof(in->body_sha256)))
			ret = TWL_STORE_CONFLICT;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	return ret;
}

/*
 * Note the batch id of the host numbered ref: 0 when new, else
 * batch_seen()'s answer.
 */
static int batch_note(struct twl_store *s, int64_t ref,
		      const struct twl_ingest *in, int64_t now)
{
	sqlite3_stmt *st = s->ws[W_BATCH_INS];
	int ret;

	twl_bind_static(st, 1, in->batch_id);
	sqlite3_bind_int64(st, 2, ref);
	sqlite3_bind_int64(st, 3, in->seq);
	sqlite3_bind_int64(st, 4, now);
	if (in->has_body_sha256)
		sqlite3_bind_blob(st, 5, in->body_sha256,
				  sizeof(in->body_sha256), SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 5);
	ret = twl_step_done(st);
	if (ret)
		return ret;
	return sqlite3_changes(s->wdb) ? 0 : batch_seen(s, ref, in);
}

/* The host sent times from the future (twl_ingest_bound_times()). */
static int host_clamped(struct twl_store *s, const char *host_id,
			const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->ws[W_HOST_CLAMPED];

	twl_bind_static(st, 1, host_id);
	sqlite3_bind_int64(st, 2, in->times_clamped);
	sqlite3_bind_int64(st, 3, in->time_sent_max);
	return twl_step_done(st);
}

static int ingest_body(struct twl_store *s, const char *host_id,
		       const struct twl_ingest *in, int64_t now)
{
	struct twl_rollup ru;
	int64_t ref = 0;
	int ret;

	ru.n = 0;
	ret = twl_sqlite_host_ref(s, host_id, &ref);
	if (!ret)
		ret = batch_note(s, ref, in, now);
	if (ret)
		return ret; /* a replay, a conflict, or an error */
	ret = twl_sqlite_ingest_host(s, host_id, in, now);
	if (!ret && in->times_clamped)
		ret = host_clamped(s, host_id, in);
	if (!ret && in->key_hash[0])
		ret = twl_sqlite_key_seen(s, in->key_hash, in->boot_id, now);
	if (!ret)
		ret = ingest_warnings(s, host_id, in, now, &ru);
	if (!ret)
		ret = ingest_unknown(s, host_id, in, now, &ru);
	if (!ret)
		ret = twl_sqlite_ingest_usage(s, host_id, ref, in, &ru);
	if (!ret)
		ret = ingest_census(s, host_id, in, &ru);
	if (!ret)
		ret = twl_sqlite_rollup_flush(s, host_id, &ru);
	return ret;
}

/* Contract: see store.h. */
int twl_store_ingest_prepared(struct twl_store *s, const char *host_id,
			      const struct twl_ingest *in, int64_t now)
{
	int ret, rc;

	ret = twl_step_done(s->ws[W_SAVEPOINT]);
	if (ret)
		return ret;
	s->n_day_batch = 0;
	ret = ingest_body(s, host_id, in, now);
	rc = ret >= 0 ? twl_sqlite_day_batch_fit(s) : 0;
	if (rc)
		ret = rc;
	if (ret < 0)
		twl_step_done(s->ws[W_SP_ROLLBACK]);
	rc = twl_step_done(s->ws[W_SP_RELEASE]);
	if (ret >= 0 && rc)
		ret = rc;
	twl_sqlite_day_batch_end(s, ret >= 0);
	return ret;
}

/* Contract: see store.h. SQLite answers each report at once. */
void twl_store_ingest_deferred(struct twl_store *s, const char *host_id,
			       const struct twl_ingest *in, int64_t now,
			       int *result)
{
	*result = twl_store_ingest_prepared(s, host_id, in, now);
}

/* Contract: see store.h. */
int twl_store_ingest(struct twl_store *s, const char *host_id,
		     const json_t *report, int64_t now)
{
	struct twl_ingest *in;
	int ret;

	ret = twl_ingest_prepare((json_t *)report, host_id, &in);
	if (ret)
		return ret;
	ret = twl_store_ingest_prepared(s, host_id, in, now);
	twl_ingest_free(in);
	return ret;
}
