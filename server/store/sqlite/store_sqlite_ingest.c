// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest write path on SQLite (store.h: twl_store_write_begin() ..
 * twl_store_write_end(), twl_store_ingest*()): one report per SAVEPOINT,
 * its rows bound into statements prepared once on the writer connection,
 * and the rollups (feature_host, feature_day) kept as it goes. Only the
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
	W_HOST_TOUCH,
	W_HOST_UPSERT,
	W_WARN_INS,
	W_UNK_UPSERT,
	W_USAGE_BUMP,
	W_USAGE_AT,
	W_USAGE_GET,
	W_USAGE_INS,
	W_USAGE_UPD,
	W_USAGE_ANY,
	W_WARN_COUNT,
	W_CENSUS_DEL,
	W_CENSUS_INS,
	W_ROLLUP,
	W_ROLLUP_UPD,
	W_DAY_ADD,
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

static const char *const wsql[W_N] = {
	[W_BATCH_INS] = "INSERT INTO batches(batch_id, host_id, seq, received) "
			"VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
	/*
	 * The common case of W_HOST_UPSERT: the host exists, its name,
	 * kernel and cgroup mode did not change and its last report is in
	 * this one's hour. Not naming them (nor last_hour) spares the
	 * rewrite of their index entries (hosts_hostname, hosts_kernel,
	 * hosts_cgroup_mode, hosts_last_hour) that any SET of a column
	 * costs, even to the same value, and the host_hour trigger:
	 * max(last_seen, ?8) stays in the row's last_hour (schema/
	 * migrations/008_hosts_hour.sql). Same parameters and the same
	 * values stored.
	 */
	[W_HOST_TOUCH] =
		"UPDATE hosts SET agent_version = ?5, catalog_version = ?6,"
		" boot_id = ?7, last_seen = max(last_seen, ?8),"
		" last_seq = max(last_seq, ?9), health_json = ?10,"
		" records_lost = ?11, key_rejected = ?12, probe_missing = ?13,"
		" census_json = coalesce(?14, census_json)"
		" WHERE host_id = ?1 AND hostname = ?2 AND kernel = ?3"
		" AND cgroup_mode = ?4 AND last_hour = ?8 / 3600",
	[W_HOST_UPSERT] =
		"INSERT INTO hosts(host_id, hostname, kernel, cgroup_mode, agent_version,"
		" catalog_version, boot_id, first_seen, last_seen, last_seq, health_json,"
		" records_lost, key_rejected, probe_missing, census_json, last_hour)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?8 / 3600)"
		" ON CONFLICT(host_id) DO UPDATE SET"
		" hostname = excluded.hostname, kernel = excluded.kernel,"
		" cgroup_mode = excluded.cgroup_mode, agent_version = excluded.agent_version,"
		" catalog_version = excluded.catalog_version, boot_id = excluded.boot_id,"
		" last_seen = max(last_seen, excluded.last_seen),"
		" last_hour = max(last_hour, excluded.last_hour),"
		" last_seq = max(last_seq, excluded.last_seq),"
		" health_json = excluded.health_json, records_lost = excluded.records_lost,"
		" key_rejected = excluded.key_rejected, probe_missing = excluded.probe_missing,"
		" census_json = coalesce(excluded.census_json, census_json)",
	[W_WARN_INS] =
		"INSERT INTO warnings(host_id, boot_id, feature_id, kmsg_seq, mono_us,"
		" time, level, text, fields_json, origin, received)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
		" ON CONFLICT DO NOTHING",
	[W_UNK_UPSERT] =
		"INSERT INTO unknown_deprecations(host_id, boot_id, text, first_kmsg_seq,"
		" first_time, count, matched_feature_id, received)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
		" ON CONFLICT DO UPDATE SET count = count + excluded.count,"
		" first_kmsg_seq = min(first_kmsg_seq, excluded.first_kmsg_seq),"
		" first_time = min(first_time, excluded.first_time),"
		" matched_feature_id = excluded.matched_feature_id,"
		" received = excluded.received",
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
	/* The row at a key's hash (schema/migrations/004_usage_id.sql). */
	[W_USAGE_AT] =
		"SELECT host_id, boot_id, feature_id, file, op, cgroup, comm, uid,"
		" writer_cgroup, count FROM usage WHERE id = ?1",
	/* The row of a key stored under another id (unique index). */
	[W_USAGE_GET] =
		"SELECT id, count FROM usage WHERE host_id = ?1 AND boot_id = ?2 AND"
		" feature_id = ?3 AND file = ?4 AND op = ?5 AND cgroup = ?6 AND"
		" comm = ?7 AND uid = ?8 AND writer_cgroup = ?9",
	/* ?17: the key's hash, or NULL for an id SQLite picks; ?18 its check */
	[W_USAGE_INS] =
		"INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup, comm,"
		" uid, writer_cgroup, container, last_pid, count, failed,"
		" condition_met, first_seen, last_seen, id, key_check)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?15, ?16, ?17, ?18)",
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
		" key_check = ?9 WHERE id = ?8",
	/* Whether BPF counted a feature on a boot (the unique key's prefix). */
	[W_USAGE_ANY] =
		"SELECT 1 FROM usage WHERE host_id = ?1 AND boot_id = ?2"
		" AND feature_id = ?3 LIMIT 1",
	[W_WARN_COUNT] = "SELECT count(*) FROM warnings WHERE host_id = ?1"
			 " AND boot_id = ?2 AND feature_id = ?3",
	[W_CENSUS_DEL] = "DELETE FROM census_knobs WHERE host_id = ?1",
	[W_CENSUS_INS] =
		"INSERT INTO census_knobs(host_id, feature_id, file, cgroup, value, time)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO UPDATE SET"
		" feature_id = excluded.feature_id, value = excluded.value,"
		" time = excluded.time",
	/*
	 * The common case of W_ROLLUP: the row exists, its first use is not
	 * later than this batch's and its last use is in this batch's last
	 * hour. Naming neither first_used nor last_hour spares the rewrite
	 * of their index entries (feature_host_first, feature_host_last_hour)
	 * that any SET of a column costs, even to the same value: max(
	 * last_used, ?4) stays in the row's last_hour (schema/migrations/
	 * 006_feature_host_hour.sql). It fires no trigger: the writer keeps
	 * feature_day for it (day_add(), migration 007).
	 */
	[W_ROLLUP_UPD] =
		"UPDATE feature_host SET last_used = max(last_used, ?4),"
		" uses = uses + ?5"
		" WHERE feature_id = ?1 AND host_id = ?2 AND first_used <= ?3"
		" AND last_hour = ?4 / 3600",
	[W_ROLLUP] =
		"INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
		" uses, last_hour)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?4 / 3600) ON CONFLICT DO UPDATE SET"
		" first_used = min(first_used, excluded.first_used),"
		" last_used = max(last_used, excluded.last_used),"
		" last_hour = max(last_hour, excluded.last_hour),"
		" uses = uses + excluded.uses",
	/* feature_host_day's upsert, for sums of W_ROLLUP_UPD's updates */
	[W_DAY_ADD] =
		"INSERT INTO feature_day(feature_id, day, hosts, uses, last_used)"
		" VALUES(?1, ?2, 0, ?3, ?4) ON CONFLICT(feature_id, day) DO UPDATE SET"
		" uses = uses + excluded.uses,"
		" last_used = max(coalesce(last_used, excluded.last_used),"
		" excluded.last_used)",
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

static int day_write(struct twl_store *s, const struct twl_day_delta *d)
{
	sqlite3_stmt *st = s->ws[W_DAY_ADD];

	twl_bind_static(st, 1, d->feature);
	sqlite3_bind_int64(st, 2, d->day);
	sqlite3_bind_int64(st, 3, d->uses);
	sqlite3_bind_int64(st, 4, d->last);
	return twl_step_done(st);
}

/*
 * Add d to list (n entries of cap): summed into the entry of the same
 * feature and day, else appended; a full list has d written at once. For
 * day_batch that takes more than TWL_DAY_BATCH_MAX features in one batch
 * (the catalog has 21, one day each), and the write is then inside the
 * batch's savepoint; day_tx is given room by twl_store_ingest_prepared().
 */
static int day_add(struct twl_store *s, struct twl_day_delta *list, size_t *n,
		   size_t cap, const struct twl_day_delta *d)
{
	for (size_t i = 0; i < *n; i++) {
		struct twl_day_delta *e = &list[i];

		if (e->day == d->day && !strcmp(e->feature, d->feature)) {
			e->uses += d->uses;
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

/* Write the transaction's feature_day sums (before COMMIT). */
static int day_flush(struct twl_store *s)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < s->n_day_tx; i++)
		ret = day_write(s, &s->day_tx[i]);
	return ret;
}

/* Contract: see store.h. */
int twl_store_write_end(struct twl_store *s, bool commit)
{
	int ret = commit ? day_flush(s) : 0;

	s->n_day_tx = 0;
	s->n_day_batch = 0;
	if (commit && !ret)
		ret = twl_sqlite_errno(
			sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL));
	if (!commit || ret)
		sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&s->wlock);
	return ret;
}

/*
 * Per-batch rollup of feature_host: rows of one batch are summed per
 * feature in memory and written once per feature at the end, instead of
 * one feature_host upsert per row.
 */
#define ROLLUP_MAX 64

struct rollup_entry {
	char feature[65];
	int64_t first, last, uses;
};

struct rollup {
	size_t n;
	struct rollup_entry e[ROLLUP_MAX];
};

static int rollup_step(sqlite3_stmt *st, const char *host_id,
		       const struct rollup_entry *e)
{
	twl_bind_static(st, 1, e->feature);
	twl_bind_static(st, 2, host_id);
	sqlite3_bind_int64(st, 3, e->first);
	sqlite3_bind_int64(st, 4, e->last);
	sqlite3_bind_int64(st, 5, e->uses);
	return twl_step_done(st);
}

static int rollup_flush(struct twl_store *s, const char *host_id,
			struct rollup *r)
{
	int ret;

	for (size_t i = 0; i < r->n; i++) {
		const struct rollup_entry *e = &r->e[i];

		ret = rollup_step(s->ws[W_ROLLUP_UPD], host_id, e);
		/* sqlite3_changes() counts the UPDATE's rows, not its triggers' */
		if (!ret && sqlite3_changes(s->wdb) == 0) {
			ret = rollup_step(s->ws[W_ROLLUP], host_id, e);
		} else if (!ret) {
			struct twl_day_delta d = { .day = e->last / 86400,
						   .uses = e->uses,
						   .last = e->last };

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

static int rollup(struct twl_store *s, const char *feature, const char *host_id,
		  int64_t first, int64_t last, int64_t uses, struct rollup *r)
{
	size_t i;
	int ret;

	if (!feature[0])
		return 0;
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->e[i].feature, feature))
			break;
	if (i == r->n) {
		if (r->n == ROLLUP_MAX) {
			ret = rollup_flush(s, host_id, r);
			if (ret)
				return ret;
			i = 0;
		}
		snprintf(r->e[i].feature, sizeof(r->e[i].feature), "%s",
			 feature);
		r->e[i].first = first;
		r->e[i].last = last;
		r->e[i].uses = 0;
		r->n = i + 1;
	}
	if (first < r->e[i].first)
		r->e[i].first = first;
	if (last > r->e[i].last)
		r->e[i].last = last;
	r->e[i].uses += uses;
	return 0;
}

static int host_step(sqlite3_stmt *st, const char *host_id,
		     const struct twl_ingest *in, int64_t now)
{
	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, in->hostname);
	twl_bind_static(st, 3, in->kernel);
	twl_bind_static(st, 4, in->cgroup_mode);
	twl_bind_static(st, 5, in->agent_version);
	sqlite3_bind_int64(st, 6, in->catalog_version);
	twl_bind_static(st, 7, in->boot_id);
	sqlite3_bind_int64(st, 8, now);
	sqlite3_bind_int64(st, 9, in->seq);
	twl_bind_static(st, 10, in->health_json);
	sqlite3_bind_int64(st, 11, in->records_lost);
	sqlite3_bind_int(st, 12, in->key_rejected);
	twl_bind_static(st, 13, in->probe_missing_json);
	twl_bind_static(st, 14, in->census_json);
	return twl_step_done(st);
}

static int ingest_host(struct twl_store *s, const char *host_id,
		       const struct twl_ingest *in, int64_t now)
{
	int ret = host_step(s->ws[W_HOST_TOUCH], host_id, in, now);

	if (!ret && sqlite3_changes(s->wdb) == 0)
		ret = host_step(s->ws[W_HOST_UPSERT], host_id, in, now);
	return ret;
}

/*
 * Uses credit kernel warnings only where BPF does not count the feature:
 * the write that makes the kernel warn is also counted by the agent's
 * probe. So a warning adds one use unless usage rows exist for its
 * (host, boot, feature), and the first usage row of a (host, boot,
 * feature) takes back the warnings credited before it (ingest_usage).
 * Sets *n to the number of usage rows (0 or 1: "any") or warnings.
 */
static int count_for(struct twl_store *s, int which, const char *host_id,
		     const char *boot_id, const char *feature, int64_t *n)
{
	sqlite3_stmt *st = s->ws[which];
	int rc;

	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, boot_id);
	twl_bind_static(st, 3, feature);
	rc = sqlite3_step(st);
	*n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : twl_sqlite_errno(rc);
}

static int ingest_warnings(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now,
			   struct rollup *ru)
{
	sqlite3_stmt *st = s->ws[W_WARN_INS];
	int ret;

	for (size_t i = 0; i < in->n_warnings; i++) {
		const struct twl_ingest_warning *w = &in->warnings[i];

		twl_bind_static(st, 1, host_id);
		twl_bind_static(st, 2, in->boot_id);
		twl_bind_static(st, 3, w->feature);
		sqlite3_bind_int64(st, 4, w->kmsg_seq);
		sqlite3_bind_int64(st, 5, w->mono_us);
		sqlite3_bind_int64(st, 6, w->time);
		sqlite3_bind_int64(st, 7, w->level);
		twl_bind_static(st, 8, w->text);
		twl_bind_static(st, 9, w->fields_json);
		twl_bind_static(st, 10, w->origin);
		sqlite3_bind_int64(st, 11, now);
		ret = twl_step_done(st);
		if (ret)
			return ret;
		if (sqlite3_changes(s->wdb) > 0) {
			int64_t counted;

			ret = count_for(s, W_USAGE_ANY, host_id, in->boot_id,
					w->feature, &counted);
			if (!ret)
				ret = rollup(s, w->feature, host_id, w->time,
					     w->time, counted ? 0 : 1, ru);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int ingest_unknown(struct twl_store *s, const char *host_id,
			  const struct twl_ingest *in, int64_t now,
			  struct rollup *ru)
{
	sqlite3_stmt *st = s->ws[W_UNK_UPSERT];
	int ret;

	for (size_t i = 0; i < in->n_unknown; i++) {
		const struct twl_ingest_unknown *u = &in->unknown[i];

		twl_bind_static(st, 1, host_id);
		twl_bind_static(st, 2, in->boot_id);
		twl_bind_static(st, 3, u->text);
		sqlite3_bind_int64(st, 4, u->kmsg_seq);
		sqlite3_bind_int64(st, 5, u->time);
		sqlite3_bind_int64(st, 6, u->count);
		twl_bind_static(st, 7, u->matched);
		sqlite3_bind_int64(st, 8, now);
		ret = twl_step_done(st);
		if (ret)
			return ret;
		if (u->matched) {
			ret = rollup(s, u->matched, host_id, u->time, u->time,
				     u->count, ru);
			if (ret)
				return ret;
		}
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
	sqlite3_stmt *st = s->ws[W_USAGE_BUMP];
	int ret;

	bind_usage_values(st, u);
	sqlite3_bind_int64(st, 8, hash);
	sqlite3_bind_int64(st, 9, check);
	twl_bind_static(st, 10, host_id);
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
	return twl_step_done(st);
}

/*
 * Before a new usage row: when it is the first of its (host, boot,
 * feature), *taken_back = the warnings credited so far (count_for()), to
 * be taken back from the rollup's uses; else 0.
 */
static int usage_first(struct twl_store *s, const char *host_id,
		       const struct twl_wire_usage *u, int64_t *taken_back)
{
	int64_t any;
	int ret;

	*taken_back = 0;
	ret = count_for(s, W_USAGE_ANY, host_id, u->boot_id, u->feature, &any);
	if (ret || any)
		return ret;
	return count_for(s, W_WARN_COUNT, host_id, u->boot_id, u->feature,
			 taken_back);
}

/*
 * The two-step path, for an entry W_USAGE_BUMP did not match: find the
 * row and update it if its counter grew, or insert it. Returns 1 with
 * *old set (the count replaced, or the warnings taken back) when a row
 * was written, 0 when the counter did not grow, or a negative errno.
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
		if (u->count <= *old)
			return 0; /* cumulative counter: nothing new */
		ret = usage_update(s, u, id, check);
	} else {
		ret = usage_first(s, host_id, u, old);
		if (!ret)
			ret = usage_insert(s, host_id, u, hash, check,
					   slot_free);
	}
	return ret ? ret : 1;
}

static int ingest_usage(struct twl_store *s, const char *host_id,
			const struct twl_ingest *in, struct rollup *ru)
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
		ret = rollup(s, u->feature, host_id, u->first_seen,
			     u->last_seen, u->count - old, ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_census(struct twl_store *s, const char *host_id,
			 const struct twl_ingest *in, struct rollup *ru)
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
		ret = twl_step_done(st);
		if (!ret)
			ret = rollup(s, k->feature, host_id, t, t, 0, ru);
		if (ret)
			return ret;
	}
	return 0;
}

static int ingest_body(struct twl_store *s, const char *host_id,
		       const struct twl_ingest *in, int64_t now)
{
	sqlite3_stmt *st = s->ws[W_BATCH_INS];
	struct rollup ru;
	int ret;

	ru.n = 0;
	twl_bind_static(st, 1, in->batch_id);
	twl_bind_static(st, 2, host_id);
	sqlite3_bind_int64(st, 3, in->seq);
	sqlite3_bind_int64(st, 4, now);
	ret = twl_step_done(st);
	if (ret)
		return ret;
	if (sqlite3_changes(s->wdb) == 0)
		return 1; /* replay */
	ret = ingest_host(s, host_id, in, now);
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
		ret = rollup_flush(s, host_id, &ru);
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
	/* no room to sum this batch's feature_day upkeep: write it now */
	if (ret >= 0 && s->n_day_tx + s->n_day_batch > TWL_DAY_TX_MAX) {
		for (size_t i = 0; ret >= 0 && i < s->n_day_batch; i++)
			ret = day_write(s, &s->day_batch[i]);
		s->n_day_batch = 0;
	}
	if (ret < 0)
		twl_step_done(s->ws[W_SP_ROLLBACK]);
	rc = twl_step_done(s->ws[W_SP_RELEASE]);
	if (ret >= 0 && rc)
		ret = rc;
	/* stored: its sums join the transaction's (room checked above) */
	for (size_t i = 0; ret >= 0 && i < s->n_day_batch; i++)
		day_add(s, s->day_tx, &s->n_day_tx, TWL_DAY_TX_MAX,
			&s->day_batch[i]);
	s->n_day_batch = 0;
	return ret;
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
