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
	W_USAGE_BUMP,
	W_USAGE_BUMP_V,
	W_USAGE_MERGE,
	W_USAGE_AT,
	W_USAGE_GET,
	W_USAGE_INS,
	W_USAGE_UPD,
	W_CENSUS_DEL,
	W_CENSUS_INS,
	W_SAVEPOINT,
	W_SP_ROLLBACK,
	W_SP_RELEASE,
	W_N,
};
_Static_assert(W_N <= sizeof(((struct twl_store *)0)->ws) / sizeof(void *),
	       "struct twl_store.ws[] has a slot per writer statement");

/*
 * A usage row upserted the plain SQL way: cumulative counters keep their
 * maximum per key, so replays and resends change nothing. This is the
 * ceiling peer of bench/server-load ("the same rows upserted straight
 * into SQLite"). The writer stores the same values with the same rules,
 * but addresses rows by the hash of their key (ingest_usage() below).
 */
const char twl_sql_usage_upsert[] =
	"INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup, comm, uid,"
	" writer_cgroup, container, last_pid, count, failed, condition_met,"
	" first_seen, last_seen)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
	" ON CONFLICT DO UPDATE SET"
	" container = CASE WHEN excluded.count >= count THEN excluded.container ELSE container END,"
	" last_pid = CASE WHEN excluded.count >= count THEN excluded.last_pid ELSE last_pid END,"
	" count = max(count, excluded.count), failed = max(failed, excluded.failed),"
	" condition_met = max(condition_met, excluded.condition_met),"
	" first_seen = min(first_seen, excluded.first_seen),"
	" last_seen = max(last_seen, excluded.last_seen)";

/*
 * A key's value summary merged with an entry's (?11 last, ?12 min, ?13
 * max, ?14 unlimited, ?15 unit, ?16 source; NULL when the entry has
 * none): min of mins, max of maxes (min() and max() of a NULL are NULL,
 * hence the coalesce), OR of unlimited.
 */
#define VALUE_RANGE                                                   \
	" value_min = coalesce(min(value_min, ?12), value_min, ?12)," \
	" value_max = coalesce(max(value_max, ?13), value_max, ?13)," \
	" value_unlimited = coalesce(max(value_unlimited, ?14),"      \
	" value_unlimited, ?14)"
/*
 * The merge when the entry's count grew: its last is the last (the entry
 * with the greater count), its image (?17) replaces none.
 */
#define VALUE_GREW                                                 \
	" value_last = coalesce(?11, value_last)," VALUE_RANGE "," \
	" value_unit = coalesce(?15, value_unit),"                 \
	" value_source = coalesce(?16, value_source),"             \
	" image = coalesce(?17, image)"

static const char *const wsql[W_N] = {
	/* batch ids per host, with the body's hash (migration 016) */
	[W_BATCH_INS] =
		"INSERT INTO batches(batch_id, host_id, seq, received, body_sha256)"
		" VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
	/* times clamped at ingest (ingest.h), rare: a statement of its own */
	[W_HOST_CLAMPED] =
		"UPDATE hosts SET times_clamped = times_clamped + ?2,"
		" time_sent_max = max(time_sent_max, ?3) WHERE host_id = ?1",
	[W_BATCH_HASH] = "SELECT body_sha256 FROM batches"
			 " WHERE host_id = ?1 AND batch_id = ?2",
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
	/*
	 * The common case in one statement instead of W_USAGE_AT then
	 * W_USAGE_UPD: the row at the key's hash id (004) is the key's and
	 * its counter grew. twl_old_count() passes the count through and
	 * keeps it for usage_bump() (RETURNING sees only new values, and
	 * its ephemeral table cost more than the second statement).
	 * W_USAGE_UPD's rules, for ?3 > count. The row is the key's when
	 * its key_check and host_id are the key's (migration 009).
	 */
	[W_USAGE_BUMP] =
		"UPDATE usage SET container = ?1, last_pid = ?2,"
		" count = max(twl_old_count(count), ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7)"
		" WHERE id = ?8 AND key_check = ?9 AND count < ?3 AND host_id = ?10",
	/*
	 * W_USAGE_BUMP for an entry with a value summary or an image (wire
	 * v2): the same, and the value merged (VALUE_GREW). Entries without
	 * either, all of version 1, keep W_USAGE_BUMP's cost.
	 */
	[W_USAGE_BUMP_V] =
		"UPDATE usage SET container = ?1, last_pid = ?2,"
		" count = max(twl_old_count(count), ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7)," VALUE_GREW
		" WHERE id = ?8 AND key_check = ?9 AND count < ?3"
		" AND host_id = ?10",
	/*
	 * An entry whose counter did not grow (an agent restarted within a
	 * boot, a resend) still merges its value summary: min of mins, max
	 * of maxes, OR of unlimited; last stays the stored entry's unless
	 * the counts are equal and this one was seen later.
	 */
	[W_USAGE_MERGE] =
		"UPDATE usage SET"
		" value_last = CASE WHEN value_last IS NULL OR (?3 = count AND"
		" ?7 > last_seen) THEN coalesce(?11, value_last) ELSE value_last END," VALUE_RANGE
		", value_unit = coalesce(value_unit, ?15),"
		" value_source = coalesce(value_source, ?16),"
		" image = coalesce(image, ?17) WHERE id = ?8",
	/* The row at a key's hash (schema/migrations/004_usage_id.sql). */
	[W_USAGE_AT] =
		"SELECT host_id, boot_id, feature_id, file, op, cgroup, comm, uid,"
		" writer_cgroup, count FROM usage WHERE id = ?1",
	/* The row of a key stored under another id (unique index). */
	[W_USAGE_GET] =
		"SELECT id, count FROM usage WHERE host_id = ?1 AND boot_id = ?2 AND"
		" feature_id = ?3 AND file = ?4 AND op = ?5 AND cgroup = ?6 AND"
		" comm = ?7 AND uid = ?8 AND writer_cgroup = ?9",
	/*
	 * ?17: the key's hash, or NULL for an id SQLite picks; ?18 its check;
	 * ?19 target_kind, ?20 .. ?25 the value summary, ?26 the image.
	 */
	[W_USAGE_INS] =
		"INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup, comm,"
		" uid, writer_cgroup, container, last_pid, count, failed,"
		" condition_met, first_seen, last_seen, id, key_check, target_kind,"
		" value_last, value_min, value_max, value_unlimited, value_unit,"
		" value_source, image)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
	/*
	 * The rules of twl_sql_usage_upsert's DO UPDATE (SET sees old
	 * values), for a row found by its whole key; ?9 sets its check, which
	 * a row stored before migration 009 lacks.
	 */
	[W_USAGE_UPD] =
		"UPDATE usage SET"
		" container = CASE WHEN ?3 >= count THEN ?1 ELSE container END,"
		" last_pid = CASE WHEN ?3 >= count THEN ?2 ELSE last_pid END,"
		" count = max(count, ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7),"
		" key_check = ?9," VALUE_GREW " WHERE id = ?8",
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

/* twl_old_count(x): x, kept in the store for usage_bump(). */
static void old_count_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct twl_store *s = sqlite3_user_data(ctx);

	(void)argc;
	s->bumped_from = sqlite3_value_int64(argv[0]);
	sqlite3_result_value(ctx, argv[0]);
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_ingest_prepare(struct twl_store *s)
{
	/* Direct only: no schema object (trigger, view) can call it. */
	if (sqlite3_create_function_v2(
		    s->wdb, "twl_old_count", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
		    s, old_count_fn, NULL, NULL, NULL) != SQLITE_OK)
		return -ENOMEM;
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

/* Bind (host_id, u's key) to ?first .. ?first+8. */
static void bind_usage_key(sqlite3_stmt *st, int first, const char *host_id,
			   const struct twl_wire_usage *u)
{
	twl_bind_static(st, first, host_id);
	twl_bind_static(st, first + 1, u->boot_id);
	twl_bind_static(st, first + 2, u->feature);
	twl_bind_static(st, first + 3, u->file);
	twl_bind_static(st, first + 4, u->op);
	twl_bind_static(st, first + 5, u->cgroup);
	twl_bind_static(st, first + 6, u->comm);
	sqlite3_bind_int64(st, first + 7, u->uid);
	twl_bind_static(st, first + 8, u->writer_cgroup);
}

static bool col_is(sqlite3_stmt *st, int i, const char *want)
{
	const char *got = (const char *)sqlite3_column_text(st, i);

	return got && !strcmp(got, want);
}

/* Whether the W_USAGE_AT row is the row of (host_id, u's key). */
static bool usage_key_is(sqlite3_stmt *at, const char *host_id,
			 const struct twl_wire_usage *u)
{
	return col_is(at, 0, host_id) && col_is(at, 1, u->boot_id) &&
	       col_is(at, 2, u->feature) && col_is(at, 3, u->file) &&
	       col_is(at, 4, u->op) && col_is(at, 5, u->cgroup) &&
	       col_is(at, 6, u->comm) &&
	       sqlite3_column_int64(at, 7) == u->uid &&
	       col_is(at, 8, u->writer_cgroup);
}

/*
 * Find the row of (host_id, u's key), whose hash is hash: *id and *old
 * set when it exists (returns 1), else 0 with *slot_free telling whether
 * hash is free as an id. Negative errno on failure.
 */
static int usage_find(struct twl_store *s, const char *host_id,
		      const struct twl_wire_usage *u, int64_t hash, int64_t *id,
		      int64_t *old, bool *slot_free)
{
	sqlite3_stmt *at = s->ws[W_USAGE_AT], *get = s->ws[W_USAGE_GET];
	int rc, found = 0;

	sqlite3_bind_int64(at, 1, hash);
	rc = sqlite3_step(at);
	*slot_free = rc == SQLITE_DONE;
	if (rc == SQLITE_ROW && usage_key_is(at, host_id, u)) {
		*id = hash;
		*old = sqlite3_column_int64(at, 9);
		found = 1;
	}
	sqlite3_reset(at);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	if (found)
		return 1;
	/* stored under another id: a collision, or a row older than 004 */
	bind_usage_key(get, 1, host_id, u);
	rc = sqlite3_step(get);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(get, 0);
		*old = sqlite3_column_int64(get, 1);
		found = 1;
	}
	sqlite3_reset(get);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	return found;
}

/*
 * Bind u's value summary to ?first .. ?first+5 (last, min, max,
 * unlimited, unit, source; NULLs without one) and its image to
 * ?first+6 (NULL without one).
 */
static void bind_usage_value(sqlite3_stmt *st, int first,
			     const struct twl_wire_usage *u)
{
	const struct twl_wire_value *v = &u->value;

	if (v->present) {
		sqlite3_bind_int64(st, first, v->last);
		if (v->has_min)
			sqlite3_bind_int64(st, first + 1, v->min);
		if (v->has_max)
			sqlite3_bind_int64(st, first + 2, v->max);
		sqlite3_bind_int(st, first + 3, v->unlimited);
		twl_bind_static(st, first + 4, v->unit);
		twl_bind_static(st, first + 5, v->source);
	}
	if (u->image[0])
		twl_bind_static(st, first + 6, u->image);
}

/* Whether u carries what only W_USAGE_BUMP_V and W_USAGE_MERGE store. */
static bool usage_has_value(const struct twl_wire_usage *u)
{
	return u->value.present || u->image[0];
}

/* Insert u's row under id hash, or one SQLite picks if !slot_free. */
static int usage_insert(struct twl_store *s, const char *host_id,
			const struct twl_wire_usage *u, int64_t hash,
			int64_t check, bool slot_free)
{
	sqlite3_stmt *st = s->ws[W_USAGE_INS];

	bind_usage_key(st, 1, host_id, u);
	twl_bind_static(st, 10, u->container);
	sqlite3_bind_int64(st, 11, u->last_pid);
	sqlite3_bind_int64(st, 12, u->count);
	sqlite3_bind_int64(st, 13, u->failed);
	sqlite3_bind_int64(st, 14, u->condition_met);
	sqlite3_bind_int64(st, 15, u->first_seen);
	sqlite3_bind_int64(st, 16, u->last_seen);
	if (slot_free)
		sqlite3_bind_int64(st, 17, hash);
	else
		sqlite3_bind_null(st, 17);
	sqlite3_bind_int64(st, 18, check);
	twl_bind_static(st, 19, u->target_kind);
	bind_usage_value(st, 20, u);
	return twl_step_done(st);
}

/* Bind W_USAGE_UPD's ?1..?7 (also W_USAGE_BUMP's): the new values. */
static void bind_usage_values(sqlite3_stmt *st, const struct twl_wire_usage *u)
{
	twl_bind_static(st, 1, u->container);
	sqlite3_bind_int64(st, 2, u->last_pid);
	sqlite3_bind_int64(st, 3, u->count);
	sqlite3_bind_int64(st, 4, u->failed);
	sqlite3_bind_int64(st, 5, u->condition_met);
	sqlite3_bind_int64(st, 6, u->first_seen);
	sqlite3_bind_int64(st, 7, u->last_seen);
}

/*
 * W_USAGE_BUMP: 1 with *old set when the row at id hash is u's row (its
 * check and host) and its counter grew (now updated), 0 when no row
 * matched (nothing written), or a negative errno.
 */
static int usage_bump(struct twl_store *s, const char *host_id,
		      const struct twl_wire_usage *u, int64_t hash,
		      int64_t check, int64_t *old)
{
	bool v2 = usage_has_value(u);
	sqlite3_stmt *st = s->ws[v2 ? W_USAGE_BUMP_V : W_USAGE_BUMP];
	int ret;

	bind_usage_values(st, u);
	sqlite3_bind_int64(st, 8, hash);
	sqlite3_bind_int64(st, 9, check);
	twl_bind_static(st, 10, host_id);
	if (v2)
		bind_usage_value(st, 11, u);
	ret = twl_step_done(st);
	if (ret)
		return ret;
	/* sqlite3_changes() counts the UPDATE's rows, not its triggers' */
	if (sqlite3_changes(s->wdb) == 0)
		return 0;
	*old = s->bumped_from;
	return 1;
}

static int usage_update(struct twl_store *s, const struct twl_wire_usage *u,
			int64_t id, int64_t check)
{
	sqlite3_stmt *st = s->ws[W_USAGE_UPD];

	bind_usage_values(st, u);
	sqlite3_bind_int64(st, 8, id);
	sqlite3_bind_int64(st, 9, check);
	bind_usage_value(st, 11, u);
	return twl_step_done(st);
}

/* W_USAGE_MERGE: u's value summary and image into row id, count as is. */
static int usage_merge(struct twl_store *s, const struct twl_wire_usage *u,
		       int64_t id)
{
	sqlite3_stmt *st = s->ws[W_USAGE_MERGE];

	sqlite3_bind_int64(st, 3, u->count);
	sqlite3_bind_int64(st, 7, u->last_seen);
	sqlite3_bind_int64(st, 8, id);
	bind_usage_value(st, 11, u);
	return twl_step_done(st);
}

/*
 * The two-step path, for an entry W_USAGE_BUMP did not match: find the
 * row and update it if its counter grew, or insert it. Returns 1 with
 * *old set (the count replaced, 0 for a new row) when a row was
 * written, 0 when the counter did not grow, or a negative errno.
 */
static int usage_store(struct twl_store *s, const char *host_id,
		       const struct twl_wire_usage *u, int64_t hash,
		       int64_t check, int64_t *old)
{
	bool slot_free = false;
	int64_t id = 0;
	int ret;

	ret = usage_find(s, host_id, u, hash, &id, old, &slot_free);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (u->count <= *old) /* cumulative counter: no new use */
			return usage_has_value(u) ? usage_merge(s, u, id) : 0;
		ret = usage_update(s, u, id, check);
	} else {
		*old = 0;
		ret = usage_insert(s, host_id, u, hash, check, slot_free);
	}
	return ret ? ret : 1;
}

static int ingest_usage(struct twl_store *s, const char *host_id,
			const struct twl_ingest *in, struct twl_rollup *ru)
{
	int ret;

	for (size_t i = 0; i < in->n_usage; i++) {
		const struct twl_wire_usage *u = &in->usage[i];
		int64_t old = 0;

		ret = usage_bump(s, host_id, u, in->usage_id[i],
				 in->usage_check[i], &old);
		if (ret == 0)
			ret = usage_store(s, host_id, u, in->usage_id[i],
					  in->usage_check[i], &old);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		ret = twl_sqlite_rollup(s, u->feature, host_id, u->first_seen,
					u->last_seen, twl_kind_of_op(u->op),
					u->count - old, ru);
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
 * host_id sent in's batch id before: TWL_STORE_CONFLICT when both bodies
 * were hashed and the hashes differ, else TWL_STORE_DUPLICATE.
 */
static int batch_seen(struct twl_store *s, const char *host_id,
		      const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->ws[W_BATCH_HASH];
	int rc, ret = TWL_STORE_DUPLICATE;
	const void *h;

	twl_bind_static(st, 1, host_id);
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

/* Note the batch id: 0 when new, else batch_seen()'s answer. */
static int batch_note(struct twl_store *s, const char *host_id,
		      const struct twl_ingest *in, int64_t now)
{
	sqlite3_stmt *st = s->ws[W_BATCH_INS];
	int ret;

	twl_bind_static(st, 1, in->batch_id);
	twl_bind_static(st, 2, host_id);
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
	return sqlite3_changes(s->wdb) ? 0 : batch_seen(s, host_id, in);
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
	int ret;

	ru.n = 0;
	ret = batch_note(s, host_id, in, now);
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
		ret = ingest_usage(s, host_id, in, &ru);
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
