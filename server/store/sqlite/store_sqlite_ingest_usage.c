// SPDX-License-Identifier: GPL-2.0
/*
 * The usage part of the ingest write path on SQLite
 * (store_sqlite_ingest.c stores the rest of a report): each usage[] entry
 * merged into its row, a row's key in usage_key and its counts in
 * usage_count (schema/migrations/021_usage_split.sql), found at the id
 * its key hashes to (004) and matched by its check (009). Agents report
 * cumulative counters, so nearly every entry of every report updates a
 * row: the common case is one UPDATE of usage_count (U_BUMP), and
 * bench/server-load measures this path.
 */
#include <errno.h>
#include <string.h>

#include "store/ingest.h"
#include "store/sqlite/store_sqlite_internal.h"

enum {
	U_BUMP,
	U_BUMP_V,
	U_MERGE,
	U_TEXT,
	U_FILL,
	U_AT,
	U_GET,
	U_INS,
	U_CNT_INS,
	U_UPD,
	U_N,
};
_Static_assert(U_N <= sizeof(((struct twl_store *)0)->us) / sizeof(void *),
	       "struct twl_store.us[] has a slot per usage statement");

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
 * The merge when the entry's count grew, of the columns in usage_count
 * (migration 021): its last is the last (the entry with the greater
 * count). Its unit, source and image (?15 .. ?17) go to usage_key
 * (U_TEXT).
 */
#define VALUE_GREW " value_last = coalesce(?11, value_last)," VALUE_RANGE

static const char *const usql[U_N] = {
	/*
	 * The common case in one statement instead of U_AT then U_UPD: the
	 * row at the key's hash id (004) is the key's and its counter grew.
	 * twl_old_count() passes the count through and keeps it for
	 * usage_bump() (RETURNING sees only new values, and its ephemeral
	 * table cost more than the second statement). U_UPD's rules, for
	 * ?3 > count. The row is the key's when its key_check and host
	 * are the key's (migration 009); both are in usage_count (021), the
	 * host as its number (022), so this statement writes one narrow row
	 * and reads nothing else.
	 */
	[U_BUMP] =
		"UPDATE usage_count SET container = ?1, last_pid = ?2,"
		" count = max(twl_old_count(count), ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7)"
		" WHERE id = ?8 AND key_check = ?9 AND count < ?3 AND host_ref = ?10",
	/*
	 * U_BUMP for an entry with a value summary or an image (wire v2):
	 * the same, and the value merged (VALUE_GREW; then U_TEXT).
	 * Entries without either, all of version 1, keep U_BUMP's cost.
	 */
	[U_BUMP_V] =
		"UPDATE usage_count SET container = ?1, last_pid = ?2,"
		" count = max(twl_old_count(count), ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7)," VALUE_GREW
		" WHERE id = ?8 AND key_check = ?9 AND count < ?3"
		" AND host_ref = ?10",
	/*
	 * An entry whose counter did not grow (an agent restarted within a
	 * boot, a resend) still merges its value summary: min of mins, max
	 * of maxes, OR of unlimited; last stays the stored entry's unless
	 * the counts are equal and this one was seen later (then
	 * U_FILL).
	 */
	[U_MERGE] =
		"UPDATE usage_count SET"
		" value_last = CASE WHEN value_last IS NULL OR (?3 = count AND"
		" ?7 > last_seen) THEN coalesce(?11, value_last) ELSE value_last END," VALUE_RANGE
		" WHERE id = ?8",
	/*
	 * The columns of row ?8 set once, in usage_key: an entry's unit,
	 * source and image (?15 .. ?17) replace the stored ones (the entry's
	 * count grew), or (U_FILL) fill those still NULL. The WHERE
	 * skips the write when nothing would change, as it does for every
	 * report after the first.
	 */
	[U_TEXT] =
		"UPDATE usage_key SET value_unit = coalesce(?15, value_unit),"
		" value_source = coalesce(?16, value_source),"
		" image = coalesce(?17, image) WHERE id = ?8 AND"
		" (value_unit IS NOT coalesce(?15, value_unit) OR"
		" value_source IS NOT coalesce(?16, value_source) OR"
		" image IS NOT coalesce(?17, image))",
	[U_FILL] =
		"UPDATE usage_key SET value_unit = coalesce(value_unit, ?15),"
		" value_source = coalesce(value_source, ?16),"
		" image = coalesce(image, ?17) WHERE id = ?8 AND"
		" ((value_unit IS NULL AND ?15 IS NOT NULL) OR"
		" (value_source IS NULL AND ?16 IS NOT NULL) OR"
		" (image IS NULL AND ?17 IS NOT NULL))",
	/*
	 * The row at a key's hash (schema/migrations/004_usage_id.sql),
	 * through the view usage (021).
	 */
	[U_AT] =
		"SELECT host_id, boot_id, feature_id, file, op, cgroup, comm, uid,"
		" writer_cgroup, count FROM usage WHERE id = ?1",
	/* The row of a key stored under another id (unique index). */
	[U_GET] =
		"SELECT id, count FROM usage WHERE host_id = ?1 AND boot_id = ?2 AND"
		" feature_id = ?3 AND file = ?4 AND op = ?5 AND cgroup = ?6 AND"
		" comm = ?7 AND uid = ?8 AND writer_cgroup = ?9",
	/*
	 * A new row, in its two tables (021), both statements bound alike:
	 * ?1 .. ?9 the key, ?10 .. ?16 the counts, ?17 the key's hash, or
	 * NULL for an id SQLite picks, ?18 its check, ?19 target_kind, ?20 ..
	 * ?25 the value summary, ?26 the image; ?27 the id usage_key got.
	 */
	[U_INS] =
		"INSERT INTO usage_key(host_id, boot_id, feature_id, file, op, cgroup,"
		" comm, uid, writer_cgroup, id, target_kind, value_unit,"
		" value_source, image)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?17, ?19, ?24, ?25, ?26)",
	[U_CNT_INS] =
		"INSERT INTO usage_count(id, host_ref, key_check, container, last_pid,"
		" count, failed, condition_met, first_seen, last_seen, value_last,"
		" value_min, value_max, value_unlimited)"
		" VALUES(?27, ?28, ?18, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?20, ?21,"
		" ?22, ?23)",
	/*
	 * The rules of the raw peer's upsert (bench/server-load/
	 * sqlite_ceiling.c; SET sees old values), for a row found by its
	 * whole key; ?9 sets its check, which a row stored before migration
	 * 009 lacks. Then U_TEXT.
	 */
	[U_UPD] =
		"UPDATE usage_count SET"
		" container = CASE WHEN ?3 >= count THEN ?1 ELSE container END,"
		" last_pid = CASE WHEN ?3 >= count THEN ?2 ELSE last_pid END,"
		" count = max(count, ?3), failed = max(failed, ?4),"
		" condition_met = max(condition_met, ?5),"
		" first_seen = min(first_seen, ?6), last_seen = max(last_seen, ?7),"
		" key_check = ?9," VALUE_GREW " WHERE id = ?8",
};

/*
 * The reporting host: its id, which usage_key keys by, and its number in
 * host_refs, which usage_count keeps instead (migration 022).
 */
struct usage_host {
	const char *id;
	int64_t ref;
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
int twl_sqlite_ingest_usage_prepare(struct twl_store *s)
{
	/* Direct only: no schema object (trigger, view) can call it. */
	if (sqlite3_create_function_v2(
		    s->wdb, "twl_old_count", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
		    s, old_count_fn, NULL, NULL, NULL) != SQLITE_OK)
		return -ENOMEM;
	return twl_sqlite_prepare_all(s->path, s->wdb, usql, U_N, s->us,
				      "usage writer");
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

/* Whether the U_AT row is the row of (host_id, u's key). */
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
	sqlite3_stmt *at = s->us[U_AT], *get = s->us[U_GET];
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

/* Whether u carries what only U_BUMP_V and U_MERGE store. */
static bool usage_has_value(const struct twl_wire_usage *u)
{
	return u->value.present || u->image[0];
}

/* Bind U_INS's and U_CNT_INS's ?1 .. ?26: u's row. */
static void bind_usage_row(sqlite3_stmt *st, const char *host_id,
			   const struct twl_wire_usage *u, int64_t hash,
			   int64_t check, bool slot_free)
{
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
}

/*
 * Insert u's row under id hash, or one SQLite picks if !slot_free: its
 * key in usage_key, then its counts in usage_count under the same id.
 */
static int usage_insert(struct twl_store *s, const struct usage_host *h,
			const struct twl_wire_usage *u, int64_t hash,
			int64_t check, bool slot_free)
{
	sqlite3_stmt *key = s->us[U_INS], *cnt = s->us[U_CNT_INS];
	int ret;

	bind_usage_row(key, h->id, u, hash, check, slot_free);
	ret = twl_step_done(key);
	if (ret)
		return ret;
	bind_usage_row(cnt, h->id, u, hash, check, slot_free);
	/* the top statement's rowid: its trigger's inserts do not count */
	sqlite3_bind_int64(cnt, 27, sqlite3_last_insert_rowid(s->wdb));
	sqlite3_bind_int64(cnt, 28, h->ref);
	return twl_step_done(cnt);
}

/*
 * u's unit, source and image into row id's usage_key (U_TEXT, or
 * U_FILL when fill: only where none is stored); nothing without
 * them.
 */
static int usage_text(struct twl_store *s, const struct twl_wire_usage *u,
		      int64_t id, bool fill)
{
	sqlite3_stmt *st = s->us[fill ? U_FILL : U_TEXT];
	const struct twl_wire_value *v = &u->value;

	if (!(v->present && (v->unit || v->source)) && !u->image[0])
		return 0;
	sqlite3_bind_int64(st, 8, id);
	bind_usage_value(st, 11, u);
	return twl_step_done(st);
}

/* Bind U_UPD's ?1..?7 (also U_BUMP's): the new values. */
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
 * U_BUMP: 1 with *old set when the row at id hash is u's row (its
 * check and host) and its counter grew (now updated), 0 when no row
 * matched (nothing written), or a negative errno.
 */
static int usage_bump(struct twl_store *s, const struct usage_host *h,
		      const struct twl_wire_usage *u, int64_t hash,
		      int64_t check, int64_t *old)
{
	bool v2 = usage_has_value(u);
	sqlite3_stmt *st = s->us[v2 ? U_BUMP_V : U_BUMP];
	int ret;

	bind_usage_values(st, u);
	sqlite3_bind_int64(st, 8, hash);
	sqlite3_bind_int64(st, 9, check);
	sqlite3_bind_int64(st, 10, h->ref);
	if (v2)
		bind_usage_value(st, 11, u);
	ret = twl_step_done(st);
	if (ret)
		return ret;
	/* sqlite3_changes() counts the UPDATE's rows, not its triggers' */
	if (sqlite3_changes(s->wdb) == 0)
		return 0;
	*old = s->bumped_from;
	ret = v2 ? usage_text(s, u, hash, false) : 0;
	return ret ? ret : 1;
}

static int usage_update(struct twl_store *s, const struct twl_wire_usage *u,
			int64_t id, int64_t check)
{
	sqlite3_stmt *st = s->us[U_UPD];
	int ret;

	bind_usage_values(st, u);
	sqlite3_bind_int64(st, 8, id);
	sqlite3_bind_int64(st, 9, check);
	bind_usage_value(st, 11, u);
	ret = twl_step_done(st);
	return ret ? ret : usage_text(s, u, id, false);
}

/*
 * U_MERGE then U_FILL: u's value summary and image into row
 * id, count as is.
 */
static int usage_merge(struct twl_store *s, const struct twl_wire_usage *u,
		       int64_t id)
{
	sqlite3_stmt *st = s->us[U_MERGE];
	int ret;

	sqlite3_bind_int64(st, 3, u->count);
	sqlite3_bind_int64(st, 7, u->last_seen);
	sqlite3_bind_int64(st, 8, id);
	bind_usage_value(st, 11, u);
	ret = twl_step_done(st);
	return ret ? ret : usage_text(s, u, id, true);
}

/*
 * The two-step path, for an entry U_BUMP did not match: find the
 * row and update it if its counter grew, or insert it. Returns 1 with
 * *old set (the count replaced, 0 for a new row) when a row was
 * written, 0 when the counter did not grow, or a negative errno.
 */
static int usage_store(struct twl_store *s, const struct usage_host *h,
		       const struct twl_wire_usage *u, int64_t hash,
		       int64_t check, int64_t *old)
{
	bool slot_free = false;
	int64_t id = 0;
	int ret;

	ret = usage_find(s, h->id, u, hash, &id, old, &slot_free);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (u->count <= *old) /* cumulative counter: no new use */
			return usage_has_value(u) ? usage_merge(s, u, id) : 0;
		ret = usage_update(s, u, id, check);
	} else {
		*old = 0;
		ret = usage_insert(s, h, u, hash, check, slot_free);
	}
	return ret ? ret : 1;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_ingest_usage(struct twl_store *s, const char *host_id,
			    int64_t host_ref, const struct twl_ingest *in,
			    struct twl_rollup *ru)
{
	const struct usage_host h = { host_id, host_ref };
	int ret;

	for (size_t i = 0; i < in->n_usage; i++) {
		const struct twl_wire_usage *u = &in->usage[i];
		int64_t old = 0;

		ret = usage_bump(s, &h, u, in->usage_id[i], in->usage_check[i],
				 &old);
		if (ret == 0)
			ret = usage_store(s, &h, u, in->usage_id[i],
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
