// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest path's rollups on SQLite: a batch's uses summed per feature
 * and written once per feature into feature_host, and the feature_day
 * upkeep of the common feature_host update summed over a group commit
 * (migration 007) and written before its COMMIT. On the writer
 * connection, wlock held (store_sqlite_ingest.c calls these).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/sqlite/store_sqlite_internal.h"

enum {
	R_ROLLUP,
	R_ROLLUP_UPD,
	R_DAY_ADD,
	R_N,
};
_Static_assert(R_N <= sizeof(((struct twl_store *)0)->rs) / sizeof(void *),
	       "struct twl_store.rs[] has a slot per rollup statement");

static const char *const rsql[R_N] = {
	/*
	 * The common case of R_ROLLUP: the row exists, its first use is not
	 * later than this batch's and its last use is in this batch's last
	 * hour. Naming neither first_used nor last_hour spares the rewrite
	 * of their index entries (feature_host_first, feature_host_last_hour)
	 * that any SET of a column costs, even to the same value: max(
	 * last_used, ?4) stays in the row's last_hour (schema/migrations/
	 * 006_feature_host_hour.sql). It fires no trigger: the writer keeps
	 * feature_day for it (day_add(), migration 007). A batch that adds
	 * a kind of use (migration 015) takes R_ROLLUP, whose triggers move
	 * the host between feature_hour's per-kind counts.
	 */
	[R_ROLLUP_UPD] =
		"UPDATE feature_host SET last_used = max(last_used, ?4),"
		" uses = uses + ?5, reads = reads + ?6, warnings = warnings + ?7"
		" WHERE feature_id = ?1 AND host_id = ?2 AND first_used <= ?3"
		" AND last_hour = ?4 / 3600 AND kinds | ?8 = kinds",
	[R_ROLLUP] =
		"INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
		" uses, last_hour, reads, warnings, kinds)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?4 / 3600, ?6, ?7, ?8)"
		" ON CONFLICT DO UPDATE SET"
		" first_used = min(first_used, excluded.first_used),"
		" last_used = max(last_used, excluded.last_used),"
		" last_hour = max(last_hour, excluded.last_hour),"
		" uses = uses + excluded.uses, reads = reads + excluded.reads,"
		" warnings = warnings + excluded.warnings,"
		" kinds = kinds | excluded.kinds",
	/* feature_host_day's upsert, for sums of R_ROLLUP_UPD's updates */
	[R_DAY_ADD] =
		"INSERT INTO feature_day(feature_id, day, hosts, uses, last_used,"
		" reads, warnings)"
		" VALUES(?1, ?2, 0, ?3, ?4, ?5, ?6)"
		" ON CONFLICT(feature_id, day) DO UPDATE SET"
		" uses = uses + excluded.uses, reads = reads + excluded.reads,"
		" warnings = warnings + excluded.warnings,"
		" last_used = max(coalesce(last_used, excluded.last_used),"
		" coalesce(excluded.last_used, last_used))",
};

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_rollup_prepare(struct twl_store *s)
{
	return twl_sqlite_prepare_all(s->path, s->wdb, rsql, R_N, s->rs,
				      "rollup");
}

static int day_write(struct twl_store *s, const struct twl_day_delta *d)
{
	sqlite3_stmt *st = s->rs[R_DAY_ADD];

	twl_bind_static(st, 1, d->feature);
	sqlite3_bind_int64(st, 2, d->day);
	sqlite3_bind_int64(st, 3, d->uses);
	if (d->last) /* else NULL: no use moved the feature's last use */
		sqlite3_bind_int64(st, 4, d->last);
	sqlite3_bind_int64(st, 5, d->reads);
	sqlite3_bind_int64(st, 6, d->warnings);
	return twl_step_done(st);
}

/*
 * Add d to list (n entries of cap): summed into the entry of the same
 * feature and day, else appended; a full list has d written at once. For
 * day_batch that takes more than TWL_DAY_BATCH_MAX features in one batch
 * (the catalog has 21, one day each), and the write is then inside the
 * batch's savepoint; day_tx is given room by twl_sqlite_day_batch_fit().
 */
static int day_add(struct twl_store *s, struct twl_day_delta *list, size_t *n,
		   size_t cap, const struct twl_day_delta *d)
{
	for (size_t i = 0; i < *n; i++) {
		struct twl_day_delta *e = &list[i];

		if (e->day == d->day && !strcmp(e->feature, d->feature)) {
			e->uses += d->uses;
			e->reads += d->reads;
			e->warnings += d->warnings;
			if (d->last > e->last)
				e->last = d->last;
			return 0;
		}
	}
	if (*n == cap)
		return day_write(s, d);
	list[(*n)++] = *d;
	return 0;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_day_flush(struct twl_store *s)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < s->n_day_tx; i++)
		ret = day_write(s, &s->day_tx[i]);
	return ret;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_day_batch_fit(struct twl_store *s)
{
	int ret = 0;

	if (s->n_day_tx + s->n_day_batch <= TWL_DAY_TX_MAX)
		return 0;
	for (size_t i = 0; !ret && i < s->n_day_batch; i++)
		ret = day_write(s, &s->day_batch[i]);
	s->n_day_batch = 0;
	return ret;
}

/* Contract: see store_sqlite_internal.h. */
void twl_sqlite_day_batch_end(struct twl_store *s, bool stored)
{
	/* stored: its sums join the transaction's (room made by _fit) */
	for (size_t i = 0; stored && i < s->n_day_batch; i++)
		day_add(s, s->day_tx, &s->n_day_tx, TWL_DAY_TX_MAX,
			&s->day_batch[i]);
	s->n_day_batch = 0;
}

static int rollup_step(sqlite3_stmt *st, const char *host_id,
		       const struct twl_rollup_entry *e)
{
	twl_bind_static(st, 1, e->feature);
	twl_bind_static(st, 2, host_id);
	sqlite3_bind_int64(st, 3, e->first);
	sqlite3_bind_int64(st, 4, e->last);
	sqlite3_bind_int64(st, 5, e->uses);
	sqlite3_bind_int64(st, 6, e->reads);
	sqlite3_bind_int64(st, 7, e->warnings);
	sqlite3_bind_int64(st, 8, e->kinds);
	return twl_step_done(st);
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_rollup_flush(struct twl_store *s, const char *host_id,
			    struct twl_rollup *r)
{
	int ret;

	for (size_t i = 0; i < r->n; i++) {
		const struct twl_rollup_entry *e = &r->e[i];

		ret = rollup_step(s->rs[R_ROLLUP_UPD], host_id, e);
		/* sqlite3_changes() counts the UPDATE's rows, not its triggers' */
		if (!ret && sqlite3_changes(s->wdb) == 0) {
			ret = rollup_step(s->rs[R_ROLLUP], host_id, e);
		} else if (!ret) {
			struct twl_day_delta d = {
				.day = e->last / 86400,
				.uses = e->uses,
				.reads = e->reads,
				.warnings = e->warnings,
				.last = e->kinds & TWL_KIND_USING ? e->last : 0
			};

			memcpy(d.feature, e->feature, sizeof(d.feature));
			ret = day_add(s, s->day_batch, &s->n_day_batch,
				      TWL_DAY_BATCH_MAX, &d);
		}
		if (ret)
			return ret;
	}
	r->n = 0;
	return 0;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_rollup(struct twl_store *s, const char *feature,
		      const char *host_id, int64_t first, int64_t last,
		      int kind, int64_t n, struct twl_rollup *r)
{
	int ret = twl_rollup_add(r, feature, first, last, kind, n);

	if (ret != -ENOSPC)
		return ret;
	ret = twl_sqlite_rollup_flush(s, host_id, r);
	return ret ? ret : twl_rollup_add(r, feature, first, last, kind, n);
}
