// SPDX-License-Identifier: GPL-2.0
/*
 * Read API queries on SQLite (see store_read.h). Statements are prepared
 * once on the store's reader connection and kept in s->read_api[]; every
 * query runs under the reader lock inside one read transaction, so a
 * response is one consistent snapshot while the writer keeps writing (WAL).
 * Annotation writes use the admin writer connection.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include <twilight/catalog.h>

#include "api/export.h"
#include "store/store.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

#define DAY 86400

enum {
	Q_HOSTS_SINCE,
	Q_HOSTS_MODE,
	Q_FH_FIRST,
	Q_FH_LAST,
	Q_DAY_USES,
	Q_WORKLOADS,
	Q_FH_RANGE,
	Q_TOP_CGROUPS,
	Q_TOP_CONTAINERS,
	Q_TOP_PROCESSES,
	Q_KERNELS,
	Q_TIMELINE,
	Q_WARN_COUNT,
	Q_HOST_LIST,
	Q_HOST_ONE,
	Q_HOST_FEATURES,
	Q_HOST_UNKNOWN,
	Q_HOST_KEYS,
	Q_SILENT_COUNT,
	Q_SILENT_LIST,
	Q_LOST_COUNT,
	Q_LOST_LIST,
	Q_REJ_COUNT,
	Q_REJ_LIST,
	Q_PROBE_COUNT,
	Q_PROBE_LIST,
	Q_ANN_LIST,
	Q_EXP_WORKLOADS_KIND,
	Q_EXP_WORKLOADS_FULL,
	Q_EXP_HOSTNAMES,
	Q_HOSTHOUR_SUM,
	Q_HOSTHOUR_MODE_SUM,
	Q_FHOUR_SUM,
	Q_COUNT
};

/* Columns shown for a host in lists. */
#define HOST_COLS                                                             \
	"host_id, hostname, kernel, cgroup_mode, agent_version, first_seen, " \
	"last_seen, records_lost, key_rejected, probe_missing"

static const char *const sql_text[Q_COUNT] = {
	/*
	 * Windows "since the start of T's hour" from the triggers' hour
	 * buckets (migrations 002, 006): see window_count().
	 */
	[Q_HOSTHOUR_SUM] =
		"SELECT coalesce(sum(hosts), 0) FROM host_hour WHERE hour >= ?1",
	[Q_HOSTHOUR_MODE_SUM] = "SELECT coalesce(sum(hosts), 0) FROM host_hour"
				" WHERE cgroup_mode = ?1 AND hour >= ?2",
	[Q_FHOUR_SUM] = "SELECT coalesce(sum(hosts), 0) FROM feature_hour"
			" WHERE feature_id = ?1 AND hour >= ?2",
	/*
	 * The hosts' indexes hold last_hour, not last_seen (migration 008).
	 * A count "last_seen >= T" is the whole hours after T's from the
	 * index alone, plus T's own hour filtered exactly in the rows: a
	 * look-up per host of that hour only. INDEXED BY, as for
	 * feature_host (Q_FH_RANGE).
	 */
	[Q_HOSTS_SINCE] =
		"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
		" WHERE last_hour > ?1 / 3600) +"
		" (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
		" WHERE last_hour = ?1 / 3600 AND last_seen >= ?1)",
	[Q_HOSTS_MODE] =
		"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
		" WHERE cgroup_mode = ?1 AND last_hour > ?2 / 3600) +"
		" (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
		" WHERE cgroup_mode = ?1 AND last_hour = ?2 / 3600"
		" AND last_seen >= ?2)",
	[Q_FH_FIRST] =
		"SELECT min(first_used) FROM feature_host WHERE feature_id = ?1",
	/* A feature's last use, kept per day by feature_host's triggers. */
	[Q_FH_LAST] =
		"SELECT max(last_used) FROM feature_day WHERE feature_id = ?1",
	[Q_DAY_USES] = "SELECT coalesce(sum(uses), 0) FROM feature_day"
		       " WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3",
	/* Distinct process names, kept by a trigger on usage. */
	[Q_WORKLOADS] =
		"SELECT count(*) FROM feature_comm WHERE feature_id = ?1",
	/*
	 * feature_host's index holds last_hour, not last_used (migration
	 * 006): a time range is narrowed by hour through it and filtered
	 * exactly in the row. INDEXED BY: without ANALYZE statistics the
	 * planner took the primary key, then (feature_id, host_id), for
	 * cheaper and read all of a feature's rows; the hint keeps the plan
	 * whatever the planner's guess (the key is host first since 010).
	 */
	[Q_FH_RANGE] =
		"SELECT count(*), min(first_used), max(last_used) FROM feature_host"
		" INDEXED BY feature_host_last_hour"
		" WHERE feature_id = ?1 AND last_hour BETWEEN ?2 / 3600 AND ?3 / 3600"
		" AND last_used BETWEEN ?2 AND ?3",
	[Q_TOP_CGROUPS] =
		"SELECT cgroup, count(DISTINCT host_id), sum(count) FROM usage"
		" WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3"
		" GROUP BY cgroup ORDER BY 3 DESC, 1 LIMIT ?4",
	[Q_TOP_CONTAINERS] =
		"SELECT container, count(DISTINCT host_id), sum(count) FROM usage"
		" WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3"
		" GROUP BY container ORDER BY 3 DESC, 1 LIMIT ?4",
	[Q_TOP_PROCESSES] =
		"SELECT comm, count(DISTINCT host_id), sum(count) FROM usage"
		" WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3"
		" GROUP BY comm ORDER BY 3 DESC, 1 LIMIT ?4",
	[Q_KERNELS] = "SELECT h.kernel, count(*) FROM feature_host fh"
		      " INDEXED BY feature_host_last_hour"
		      " JOIN hosts h ON h.host_id = fh.host_id"
		      " WHERE fh.feature_id = ?1"
		      " AND fh.last_hour BETWEEN ?2 / 3600 AND ?3 / 3600"
		      " AND fh.last_used BETWEEN ?2 AND ?3"
		      " GROUP BY h.kernel ORDER BY 2 DESC, 1 LIMIT ?4",
	[Q_TIMELINE] =
		"SELECT day, hosts, uses FROM feature_day"
		" WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3 ORDER BY day",
	[Q_WARN_COUNT] =
		"SELECT count(*), count(DISTINCT host_id) FROM warnings"
		" WHERE feature_id = ?1 AND time BETWEEN ?2 AND ?3",
	[Q_HOST_LIST] =
		"SELECT " HOST_COLS " FROM hosts h WHERE host_id > ?1"
		" AND (?2 IS NULL OR last_seen >= ?2) AND (?3 IS NULL OR last_seen <= ?3)"
		" AND (?4 IS NULL OR hostname LIKE ?4 ESCAPE '\\')"
		" AND (?5 IS NULL OR kernel LIKE ?5 ESCAPE '\\')"
		" AND (?6 IS NULL OR cgroup_mode = ?6)"
		" AND (?7 IS NULL OR EXISTS (SELECT 1 FROM feature_host fh"
		"  WHERE fh.feature_id = ?7 AND fh.host_id = h.host_id"
		"  AND (?2 IS NULL OR fh.last_used >= ?2)"
		"  AND (?3 IS NULL OR fh.last_used <= ?3)))"
		" ORDER BY host_id LIMIT ?8",
	[Q_HOST_ONE] =
		"SELECT " HOST_COLS ", boot_id, catalog_version, last_seq,"
		" health_json, census_json FROM hosts WHERE host_id = ?1",
	[Q_HOST_FEATURES] =
		"SELECT feature_id, first_used, last_used, uses FROM feature_host"
		" WHERE host_id = ?1 ORDER BY feature_id",
	[Q_HOST_UNKNOWN] =
		"SELECT text, sum(count), min(first_time), matched_feature_id"
		" FROM unknown_deprecations WHERE host_id = ?1"
		" GROUP BY text ORDER BY 3 LIMIT ?2",
	[Q_HOST_KEYS] =
		"SELECT count(*), sum(revoked IS NOT NULL), max(created)"
		" FROM host_keys WHERE host_id = ?1",
	/* as Q_HOSTS_SINCE: the whole hours before ?1's, then its hour */
	[Q_SILENT_COUNT] =
		"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
		" WHERE last_hour < ?1 / 3600) +"
		" (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
		" WHERE last_hour = ?1 / 3600 AND last_seen < ?1)",
	/* last_hour first: the index's order, the same as last_seen's */
	[Q_SILENT_LIST] = "SELECT " HOST_COLS
			  " FROM hosts INDEXED BY hosts_last_hour"
			  " WHERE last_hour <= ?1 / 3600 AND last_seen < ?1"
			  " ORDER BY last_hour, last_seen, host_id LIMIT ?2",
	[Q_LOST_COUNT] = "SELECT count(*) FROM hosts WHERE records_lost > 0",
	[Q_LOST_LIST] = "SELECT " HOST_COLS " FROM hosts WHERE records_lost > 0"
			" ORDER BY records_lost DESC, host_id LIMIT ?1",
	[Q_REJ_COUNT] = "SELECT count(*) FROM hosts WHERE key_rejected > 0",
	[Q_REJ_LIST] = "SELECT " HOST_COLS " FROM hosts WHERE key_rejected > 0"
		       " ORDER BY last_seen DESC, host_id LIMIT ?1",
	[Q_PROBE_COUNT] =
		"SELECT count(*) FROM hosts WHERE probe_missing IS NOT NULL"
		" AND probe_missing NOT IN ('', '[]')",
	[Q_PROBE_LIST] = "SELECT " HOST_COLS
			 " FROM hosts WHERE probe_missing IS NOT NULL"
			 " AND probe_missing NOT IN ('', '[]')"
			 " ORDER BY last_seen DESC, host_id LIMIT ?1",
	[Q_ANN_LIST] =
		"SELECT id, feature_id, workload, text, fits, author, created"
		" FROM annotations WHERE (?1 IS NULL OR feature_id = ?1)"
		" ORDER BY feature_id, created, id LIMIT 10000", /* the cap */
	[Q_EXP_WORKLOADS_KIND] =
		"SELECT comm, twl_cgroup_kind(writer_cgroup) AS k,"
		" twl_container_kind(container) AS c,"
		" count(DISTINCT host_id), sum(count) FROM usage"
		" WHERE feature_id = ?1 AND last_seen >= ?2"
		" GROUP BY comm, k, c ORDER BY 5 DESC, 1, 2, 3 LIMIT ?3",
	[Q_EXP_WORKLOADS_FULL] =
		"SELECT comm, writer_cgroup, container,"
		" count(DISTINCT host_id), sum(count) FROM usage"
		" WHERE feature_id = ?1 AND last_seen >= ?2"
		" GROUP BY comm, writer_cgroup, container"
		" ORDER BY 5 DESC, 1, 2, 3 LIMIT ?3",
	[Q_EXP_HOSTNAMES] =
		"SELECT h.hostname FROM feature_host fh"
		" INDEXED BY feature_host_last_hour"
		" JOIN hosts h ON h.host_id = fh.host_id"
		" WHERE fh.feature_id = ?1 AND fh.last_hour >= ?2 / 3600"
		" AND fh.last_used >= ?2"
		" ORDER BY fh.uses DESC, h.hostname LIMIT ?3",
};

/* ---- SQL functions for kind grouping, on every connection ----------- */

static void sql_cgroup_kind(sqlite3_context *ctx, int argc,
			    sqlite3_value **argv)
{
	const char *p = (const char *)sqlite3_value_text(argv[0]);

	sqlite3_result_text(ctx, twl_cgroup_kind(p), -1, SQLITE_STATIC);
}

static void sql_container_kind(sqlite3_context *ctx, int argc,
			       sqlite3_value **argv)
{
	const char *p = (const char *)sqlite3_value_text(argv[0]);
	char out[64];

	twl_container_kind(p, out, sizeof(out));
	sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

static int register_functions(sqlite3 *db, char **err,
			      const struct sqlite3_api_routines *api)
{
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	int rc;

	rc = sqlite3_create_function(db, "twl_cgroup_kind", 1, flags, NULL,
				     sql_cgroup_kind, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "twl_container_kind", 1, flags,
					     NULL, sql_container_kind, NULL,
					     NULL);
	return rc;
}

/*
 * Registered before main() so that every connection opened afterwards
 * (the store's reader included) has the functions.
 */
__attribute__((constructor)) static void register_auto_extension(void)
{
	sqlite3_auto_extension((void (*)(void))register_functions);
}

/* ---- helpers ---------------------------------------------------------- */

_Static_assert(Q_COUNT <= sizeof(((struct twl_store *)0)->read_api) /
				  sizeof(sqlite3_stmt *),
	       "more read statements than twl_store.read_api slots");

/*
 * A read context: either the store's shared reader connection (under its
 * lock, statements kept in s->read_api) for short queries, or a private
 * read-only connection for queries that scan (feature detail, host lists,
 * health, export), so that they never hold the lock that token and key
 * lookups of every request need.
 */
struct rctx {
	struct twl_store *s;
	sqlite3 *db;
	bool in_txn;
	bool priv;
	sqlite3_stmt *own[Q_COUNT];
};

static int rctx_open(struct rctx *c, struct twl_store *s, bool priv)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->priv = priv;
	if (priv) {
		rc = sqlite3_open_v2(s->path, &c->db,
				     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
				     NULL);
		if (rc != SQLITE_OK) {
			sqlite3_close(c->db);
			c->db = NULL;
			return twl_sqlite_errno(rc);
		}
		sqlite3_busy_timeout(c->db, 5000);
	} else {
		c->db = twl_store_read_lock(s);
		if (!c->db)
			return -EIO;
	}
	rc = sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		if (priv)
			sqlite3_close(c->db);
		else
			twl_store_read_unlock(s);
		c->db = NULL;
		return twl_sqlite_errno(rc);
	}
	c->in_txn = true;
	return 0;
}

/* Short queries on the shared reader. */
static int rctx_begin(struct rctx *c, struct twl_store *s)
{
	return rctx_open(c, s, false);
}

/* Scanning queries on a private connection. */
static int rctx_begin_private(struct rctx *c, struct twl_store *s)
{
	return rctx_open(c, s, true);
}

static void rctx_end(struct rctx *c)
{
	size_t i;

	if (!c->db)
		return;
	if (c->in_txn)
		sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
	if (c->priv) {
		for (i = 0; i < Q_COUNT; i++)
			sqlite3_finalize(c->own[i]);
		sqlite3_close(c->db);
	} else {
		twl_store_read_unlock(c->s);
	}
	c->db = NULL;
}

/* The prepared statement for @q, reset and unbound; NULL on error (*rc set). */
static sqlite3_stmt *stmt(struct rctx *c, int q, int *rc)
{
	sqlite3_stmt **slot = c->priv ? &c->own[q] : &c->s->read_api[q];
	int r;

	if (!*slot) {
		r = sqlite3_prepare_v3(c->db, sql_text[q], -1,
				       c->priv ? 0 : SQLITE_PREPARE_PERSISTENT,
				       slot, NULL);
		if (r != SQLITE_OK) {
			*slot = NULL;
			*rc = twl_sqlite_errno(r);
			return NULL;
		}
	}
	sqlite3_reset(*slot);
	sqlite3_clear_bindings(*slot);
	return *slot;
}

/* Run @st expecting one row; integer column 0 into *v (0 if NULL). */
static int one_int(sqlite3_stmt *st, int64_t *v)
{
	bool row;
	int rc = twl_step(st, &row);

	*v = (!rc && row) ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc;
}

/* Append a JSON value; returns -ENOMEM when @v is NULL or append fails. */
static int push(json_t *arr, json_t *v)
{
	return (v && !json_array_append_new(arr, v)) ? 0 : -ENOMEM;
}

static int set(json_t *obj, const char *k, json_t *v)
{
	return (v && !json_object_set_new(obj, k, v)) ? 0 : -ENOMEM;
}

#define TRY(x)                    \
	do {                      \
		rc = (x);         \
		if (rc)           \
			goto out; \
	} while (0)

#define STMT(var, q)                      \
	do {                              \
		var = stmt(&c, (q), &rc); \
		if (!var)                 \
			goto out;         \
	} while (0)

int twl_glob_to_like(const char *glob, bool prefix, char *out, size_t cap)
{
	size_t o = 0;
	bool wild = false;

	for (; *glob; glob++) {
		char ch = *glob;

		if (o + 3 > cap)
			return -ENAMETOOLONG;
		if (ch == '*') {
			out[o++] = '%';
			wild = true;
		} else if (ch == '?') {
			out[o++] = '_';
			wild = true;
		} else {
			if (ch == '%' || ch == '_' || ch == '\\')
				out[o++] = '\\';
			out[o++] = ch;
		}
	}
	if (!wild && prefix) {
		if (o + 2 > cap)
			return -ENAMETOOLONG;
		out[o++] = '%';
	}
	if (o + 1 > cap)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

/*
 * A host: its first ten members (HOST_COLS) in lists, all of them (the
 * columns of Q_HOST_ONE) for one host.
 */
static const struct twl_col host_cols[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "hostname", 1, TWL_COL_TEXT },
	{ "kernel", 2, TWL_COL_TEXT },
	{ "cgroup_mode", 3, TWL_COL_TEXT },
	{ "agent_version", 4, TWL_COL_TEXT },
	{ "first_seen", 5, TWL_COL_INT_NULL },
	{ "last_seen", 6, TWL_COL_INT_NULL },
	{ "records_lost", 7, TWL_COL_INT },
	{ "key_rejected", 8, TWL_COL_BOOL },
	{ "probe_missing", 9, TWL_COL_JSON_ARRAY },
	{ "boot_id", 10, TWL_COL_TEXT },
	{ "catalog_version", 11, TWL_COL_INT },
	{ "last_seq", 12, TWL_COL_INT },
	{ "health", 13, TWL_COL_JSON },
	{ "census", 14, TWL_COL_JSON },
};
static const struct twl_row host_row = { host_cols, 10 };
static const struct twl_row host_one_row = TWL_ROW(host_cols);

#define HOUR 3600

/*
 * Count rows whose last use (feature_host) or report (hosts) is at or
 * after the start of @since's hour, for one of three sources: hosts (@key
 * NULL), hosts of cgroup mode @key (@feature false), or hosts using
 * feature @key (@feature true). From the hour bucket tables alone: the
 * summary counts whole hours (docs/api.md). Until schema 6 the rest of
 * @since's own hour was counted exactly from an index on last_used; that
 * index is by hour now (006), and the exact count cost a row look-up per
 * host in that hour, 90 times per summary.
 */
static int window_count(struct rctx *c, const char *key, bool feature,
			int64_t since, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = 0, i = 1;

	st = stmt(c,
		  feature ? Q_FHOUR_SUM :
		  key	  ? Q_HOSTHOUR_MODE_SUM :
			    Q_HOSTHOUR_SUM,
		  &rc);
	if (!st)
		return rc;
	if (key)
		sqlite3_bind_text(st, i++, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i, since / HOUR);
	return one_int(st, out);
}

static const struct twl_col timeline_cols[] = {
	{ "day", 0, TWL_COL_DAY },
	{ "hosts", 1, TWL_COL_INT },
	{ "uses", 2, TWL_COL_INT },
};
static const struct twl_row timeline_row = TWL_ROW(timeline_cols);

/* Days @from..@to (day numbers) of @id's timeline into @arr. */
static int timeline_into(struct rctx *c, const char *id, int64_t from,
			 int64_t to, json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = stmt(c, Q_TIMELINE, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, from);
	sqlite3_bind_int64(st, 3, to);
	return twl_rows_into(st, &timeline_row, arr, SIZE_MAX, NULL);
}

static const struct twl_col kernel_cols[] = {
	{ "kernel", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
};
static const struct twl_row kernel_row = TWL_ROW(kernel_cols);

/* Kernel releases of the hosts using feature @id in [@since, @until], top N. */
static int kernels_into(struct rctx *c, const char *id, int64_t since,
			int64_t until, json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = stmt(c, Q_KERNELS, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, until);
	sqlite3_bind_int(st, 4, TWL_READ_TOP_N);
	return twl_rows_into(st, &kernel_row, arr, SIZE_MAX, NULL);
}

/* ---- summary -------------------------------------------------------- */

int twl_read_summary(struct twl_store *s, int64_t now, json_t **out)
{
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	struct rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *hosts, *bymode, *feats, *trend;
	int64_t total, r1, r7, r30, known = 0, v1hosts = 0, v;
	size_t i;
	int rc;

	*out = NULL;
	rc = rctx_begin(&c, s);
	if (rc)
		return rc;
	doc = json_pack("{s:I, s:{}, s:[]}", "generated", (json_int_t)now,
			"hosts", "features");
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	hosts = json_object_get(doc, "hosts");
	feats = json_object_get(doc, "features");

	STMT(st, Q_HOSTHOUR_SUM);
	sqlite3_bind_int64(st, 1, INT64_MIN);
	TRY(one_int(st, &total));
	TRY(window_count(&c, NULL, false, now - DAY, &r1));
	TRY(window_count(&c, NULL, false, now - 7 * DAY, &r7));
	TRY(window_count(&c, NULL, false, now - 30 * DAY, &r30));
	TRY(set(hosts, "total", json_integer(total)));
	TRY(set(hosts, "reporting_1d", json_integer(r1)));
	TRY(set(hosts, "reporting_7d", json_integer(r7)));
	TRY(set(hosts, "reporting_30d", json_integer(r30)));
	bymode = json_object();
	TRY(set(hosts, "by_cgroup_mode", bymode));
	for (i = 0; i < 3; i++) {
		TRY(window_count(&c, modes[i], false, now - 30 * DAY, &v));
		TRY(set(bymode, modes[i], json_integer(v)));
		known += v;
		if (i < 2)
			v1hosts += v;
	}
	TRY(set(bymode, "unknown", json_integer(r30 - known)));

	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);
		int64_t h30, h7, h1, uses, wl, first, last;
		json_t *o;

		TRY(window_count(&c, f->id, true, now - DAY, &h1));
		TRY(window_count(&c, f->id, true, now - 7 * DAY, &h7));
		TRY(window_count(&c, f->id, true, now - 30 * DAY, &h30));
		STMT(st, Q_DAY_USES);
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, 0);
		sqlite3_bind_int64(st, 3, INT64_MAX / DAY);
		TRY(one_int(st, &uses));
		STMT(st, Q_WORKLOADS);
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		TRY(one_int(st, &wl));
		STMT(st, Q_FH_FIRST);
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		TRY(one_int(st, &first));
		STMT(st, Q_FH_LAST);
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		TRY(one_int(st, &last));

		o = json_pack("{s:s, s:s, s:s, s:s?, s:I, s:I, s:I, s:I, s:I}",
			      "id", f->id, "title", f->title, "status",
			      f->status, "replacement", f->replacement,
			      "hosts_1d", (json_int_t)h1, "hosts_7d",
			      (json_int_t)h7, "hosts_30d", (json_int_t)h30,
			      "uses", (json_int_t)uses, "workloads",
			      (json_int_t)wl);
		TRY(push(feats, o));
		TRY(set(o, "share_v1_30d",
			v1hosts ? json_real((double)h30 / (double)v1hosts) :
				  json_null()));
		TRY(set(o, "first_seen",
			first ? json_integer(first) : json_null()));
		TRY(set(o, "last_seen",
			last ? json_integer(last) : json_null()));
		TRY(set(o, "trend", trend = json_array()));
		TRY(timeline_into(&c, f->id, now / DAY - 29, now / DAY, trend));
	}
	TRY(set(hosts, "v1_or_hybrid_30d", json_integer(v1hosts)));
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* ---- feature detail ------------------------------------------------- */

static void range_of(const struct twl_read_filter *f, int64_t *since,
		     int64_t *until)
{
	*since = (f && f->since > 0) ? f->since : 0;
	*until = (f && f->until > 0) ? f->until : INT64_MAX;
}

/* the top-N lists: (name, hosts, uses) rows, named by their list */
static const struct twl_col top_cgroup_cols[] = {
	{ "cgroup", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "uses", 2, TWL_COL_INT },
};
static const struct twl_col top_container_cols[] = {
	{ "container", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "uses", 2, TWL_COL_INT },
};
static const struct twl_col top_process_cols[] = {
	{ "process", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "uses", 2, TWL_COL_INT },
};
static const struct twl_row top_cgroup_row = TWL_ROW(top_cgroup_cols);
static const struct twl_row top_container_row = TWL_ROW(top_container_cols);
static const struct twl_row top_process_row = TWL_ROW(top_process_cols);

/* Top-N list from a (name, hosts, uses) query. */
static int top_list(struct rctx *c, int q, const char *id, int64_t since,
		    int64_t until, const struct twl_row *row, json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = stmt(c, q, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, until);
	sqlite3_bind_int(st, 4, TWL_READ_TOP_N);
	return twl_rows_into(st, row, arr, SIZE_MAX, NULL);
}

/* hosts using the feature in a range, and their first and last use */
static const struct twl_col range_cols[] = {
	{ "hosts", 0, TWL_COL_INT },
	{ "first_seen", 1, TWL_COL_INT_NULL },
	{ "last_seen", 2, TWL_COL_INT_NULL },
};
static const struct twl_row range_row = TWL_ROW(range_cols);

static const struct twl_col warn_cols[] = {
	{ "count", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
};
static const struct twl_row warn_row = TWL_ROW(warn_cols);

int twl_read_feature(struct twl_store *s, const char *id,
		     const struct twl_read_filter *flt, json_t **out)
{
	const struct twl_feature *f = twl_catalog_find(id);
	struct rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *arr, *obj;
	int64_t since, until, uses;
	int rc;

	*out = NULL;
	if (!f)
		return -ENOENT;
	range_of(flt, &since, &until);
	rc = rctx_begin_private(&c, s);
	if (rc)
		return rc;
	doc = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:{s:o, s:o}}",
			"id", f->id, "title", f->title, "status", f->status,
			"kernel_version", f->kernel_version, "commit",
			f->commit, "replacement", f->replacement,
			"replacement_note", f->replacement_note, "range",
			"since", since ? json_integer(since) : json_null(),
			"until",
			until != INT64_MAX ? json_integer(until) : json_null());
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	STMT(st, Q_FH_RANGE);
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, until);
	TRY(twl_row_into(st, &range_row, doc));

	STMT(st, Q_DAY_USES);
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since / DAY);
	sqlite3_bind_int64(st, 3, until / DAY);
	TRY(one_int(st, &uses));
	TRY(set(doc, "uses", json_integer(uses)));

	STMT(st, Q_WARN_COUNT);
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, until);
	TRY(set(doc, "warnings", obj = json_object()));
	TRY(twl_row_into(st, &warn_row, obj));

	TRY(set(doc, "top_cgroups", arr = json_array()));
	TRY(top_list(&c, Q_TOP_CGROUPS, f->id, since, until, &top_cgroup_row,
		     arr));
	TRY(set(doc, "containers", arr = json_array()));
	TRY(top_list(&c, Q_TOP_CONTAINERS, f->id, since, until,
		     &top_container_row, arr));
	TRY(set(doc, "processes", arr = json_array()));
	TRY(top_list(&c, Q_TOP_PROCESSES, f->id, since, until, &top_process_row,
		     arr));

	TRY(set(doc, "kernels", arr = json_array()));
	TRY(kernels_into(&c, f->id, since, until, arr));

	TRY(set(doc, "timeline", arr = json_array()));
	TRY(timeline_into(&c, f->id, since / DAY, until / DAY, arr));
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* ---- hosts ---------------------------------------------------------- */

static unsigned limit_of(const struct twl_read_filter *f)
{
	if (!f || !f->limit)
		return TWL_READ_LIMIT_DEFAULT;
	return f->limit > TWL_READ_LIMIT_MAX ? TWL_READ_LIMIT_MAX : f->limit;
}

int twl_read_hosts(struct twl_store *s, const struct twl_read_filter *f,
		   json_t **out)
{
	char pat[2 * TWL_READ_MAX_FILTER + 2],
		kpat[2 * TWL_READ_MAX_FILTER + 2];
	unsigned limit = limit_of(f);
	struct rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *arr;
	bool more;
	int rc;

	*out = NULL;
	if (f->host_pattern &&
	    (strlen(f->host_pattern) > TWL_READ_MAX_FILTER ||
	     twl_glob_to_like(f->host_pattern, true, pat, sizeof(pat))))
		return -EINVAL;
	if (f->kernel &&
	    (strlen(f->kernel) > TWL_READ_MAX_FILTER ||
	     twl_glob_to_like(f->kernel, false, kpat, sizeof(kpat))))
		return -EINVAL;
	if (f->cursor && strlen(f->cursor) > TWL_READ_MAX_FILTER)
		return -EINVAL;
	if (f->feature && !twl_catalog_find(f->feature))
		return -ENOENT;
	rc = rctx_begin_private(&c, s);
	if (rc)
		return rc;
	doc = json_pack("{s:[], s:n}", "hosts", "next_cursor");
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	arr = json_object_get(doc, "hosts");
	STMT(st, Q_HOST_LIST);
	sqlite3_bind_text(st, 1, f->cursor ? f->cursor : "", -1, SQLITE_STATIC);
	if (f->since > 0)
		sqlite3_bind_int64(st, 2, f->since);
	if (f->until > 0)
		sqlite3_bind_int64(st, 3, f->until);
	if (f->host_pattern)
		sqlite3_bind_text(st, 4, pat, -1, SQLITE_STATIC);
	if (f->kernel)
		sqlite3_bind_text(st, 5, kpat, -1, SQLITE_STATIC);
	if (f->cgroup_mode)
		sqlite3_bind_text(st, 6, f->cgroup_mode, -1, SQLITE_STATIC);
	if (f->feature)
		sqlite3_bind_text(st, 7, f->feature, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 8, (int)limit + 1);
	TRY(twl_rows_into(st, &host_row, arr, limit, &more));
	/* One more row exists: the page ends at the last one kept. */
	if (more)
		TRY(set(doc, "next_cursor",
			json_copy(json_object_get(
				json_array_get(arr, json_array_size(arr) - 1),
				"host_id"))));
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* a feature the host used, from the rollup */
static const struct twl_col host_feature_cols[] = {
	{ "id", 0, TWL_COL_TEXT },	  { "title", 0, TWL_COL_TITLE },
	{ "first_used", 1, TWL_COL_INT }, { "last_used", 2, TWL_COL_INT },
	{ "uses", 3, TWL_COL_INT },
};
static const struct twl_row host_feature_row = TWL_ROW(host_feature_cols);

static const struct twl_col host_unknown_cols[] = {
	{ "text", 0, TWL_COL_TEXT },
	{ "count", 1, TWL_COL_INT },
	{ "first_time", 2, TWL_COL_INT },
	{ "matched_feature", 3, TWL_COL_TEXT },
};
static const struct twl_row host_unknown_row = TWL_ROW(host_unknown_cols);

static const struct twl_col host_keys_cols[] = {
	{ "total", 0, TWL_COL_INT },
	{ "revoked", 1, TWL_COL_INT },
	{ "last_enrolled", 2, TWL_COL_INT_NULL },
};
static const struct twl_row host_keys_row = TWL_ROW(host_keys_cols);

int twl_read_host(struct twl_store *s, const char *host_id, json_t **out)
{
	struct rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *arr, *census;
	bool row;
	int rc;

	*out = NULL;
	if (!host_id || strlen(host_id) > 64)
		return -ENOENT;
	rc = rctx_begin(&c, s);
	if (rc)
		return rc;
	STMT(st, Q_HOST_ONE);
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	TRY(twl_step(st, &row));
	if (!row) {
		rc = -ENOENT;
		goto out;
	}
	doc = twl_row_json(st, &host_one_row);
	sqlite3_reset(st);
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	/* The census can hold thousands of knobs; keep the summary. */
	census = json_object_get(doc, "census");
	json_object_del(census, "knobs");
	json_object_del(census, "hierarchies");

	TRY(set(doc, "features", arr = json_array()));
	STMT(st, Q_HOST_FEATURES);
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	TRY(twl_rows_into(st, &host_feature_row, arr, SIZE_MAX, NULL));

	TRY(set(doc, "unknown_deprecations", arr = json_array()));
	STMT(st, Q_HOST_UNKNOWN);
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, TWL_READ_TOP_N);
	TRY(twl_rows_into(st, &host_unknown_row, arr, SIZE_MAX, NULL));

	STMT(st, Q_HOST_KEYS);
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	TRY(set(doc, "keys", arr = json_object()));
	TRY(twl_row_into(st, &host_keys_row, arr));
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* ---- health --------------------------------------------------------- */

static int health_part(struct rctx *c, int qcount, int qlist, int64_t arg,
		       bool has_arg, unsigned limit, json_t *doc,
		       const char *key)
{
	sqlite3_stmt *st;
	json_t *part, *arr;
	int64_t n;
	int rc = 0;

	st = stmt(c, qcount, &rc);
	if (!st)
		return rc;
	if (has_arg)
		sqlite3_bind_int64(st, 1, arg);
	rc = one_int(st, &n);
	if (rc)
		return rc;
	part = json_pack("{s:I, s:[]}", "count", (json_int_t)n, "hosts");
	if ((rc = set(doc, key, part)))
		return rc;
	arr = json_object_get(part, "hosts");
	st = stmt(c, qlist, &rc);
	if (!st)
		return rc;
	if (has_arg) {
		sqlite3_bind_int64(st, 1, arg);
		sqlite3_bind_int(st, 2, (int)limit);
	} else {
		sqlite3_bind_int(st, 1, (int)limit);
	}
	return twl_rows_into(st, &host_row, arr, SIZE_MAX, NULL);
}

int twl_read_health(struct twl_store *s, int64_t now, int64_t silent_after,
		    const struct twl_read_filter *f, json_t **out)
{
	unsigned limit = limit_of(f);
	struct rctx c;
	json_t *doc;
	int rc;

	*out = NULL;
	if (silent_after <= 0)
		return -EINVAL;
	doc = json_pack("{s:I, s:I}", "generated", (json_int_t)now,
			"silent_after", (json_int_t)silent_after);
	if (!doc)
		return -ENOMEM;
	rc = rctx_begin_private(&c, s);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	TRY(health_part(&c, Q_SILENT_COUNT, Q_SILENT_LIST, now - silent_after,
			true, limit, doc, "silent"));
	TRY(health_part(&c, Q_LOST_COUNT, Q_LOST_LIST, 0, false, limit, doc,
			"records_lost"));
	TRY(health_part(&c, Q_REJ_COUNT, Q_REJ_LIST, 0, false, limit, doc,
			"key_rejected"));
	TRY(health_part(&c, Q_PROBE_COUNT, Q_PROBE_LIST, 0, false, limit, doc,
			"probe_missing"));
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

static const struct twl_col annotation_cols[] = {
	{ "id", 0, TWL_COL_INT },	 { "feature", 1, TWL_COL_TEXT },
	{ "workload", 2, TWL_COL_TEXT }, { "text", 3, TWL_COL_TEXT },
	{ "fits", 4, TWL_COL_TEXT },	 { "author", 5, TWL_COL_TEXT },
	{ "created", 6, TWL_COL_INT },
};
static const struct twl_row annotation_row = TWL_ROW(annotation_cols);

static int annotations_into(struct rctx *c, const char *feature, json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = stmt(c, Q_ANN_LIST, &rc);
	if (!st)
		return rc;
	if (feature)
		sqlite3_bind_text(st, 1, feature, -1, SQLITE_STATIC);
	return twl_rows_into(st, &annotation_row, arr, SIZE_MAX, NULL);
}

int twl_read_annotations(struct twl_store *s, const char *feature, json_t **out)
{
	struct rctx c;
	json_t *doc;
	int rc;

	*out = NULL;
	doc = json_pack("{s:[]}", "annotations");
	if (!doc)
		return -ENOMEM;
	rc = rctx_begin(&c, s);
	if (!rc) {
		rc = annotations_into(&c, feature,
				      json_object_get(doc, "annotations"));
		rctx_end(&c);
	}
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* Run one write statement on the admin writer in its own transaction. */
static int admin_write(struct twl_store *s, const char *sql,
		       int (*bind)(sqlite3_stmt *, void *), void *arg,
		       int64_t *changes_or_id, bool want_id)
{
	sqlite3 *db = twl_store_admin_write_lock(s);
	sqlite3_stmt *st = NULL;
	int r, rc = 0;

	if (!db)
		return -EIO;
	r = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (r != SQLITE_OK) {
		rc = twl_sqlite_errno(r);
		goto unlock;
	}
	r = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (r == SQLITE_OK)
		r = bind(st, arg);
	if (r == SQLITE_OK)
		r = sqlite3_step(st);
	if (r != SQLITE_DONE) {
		rc = twl_sqlite_errno(r);
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto unlock;
	}
	if (want_id && !sqlite3_changes(db)) {
		/* The insert's WHERE refused it: the cap is reached. */
		rc = -EDQUOT;
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto unlock;
	}
	*changes_or_id = want_id ? sqlite3_last_insert_rowid(db) :
				   sqlite3_changes(db);
	sqlite3_finalize(st);
	r = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (r != SQLITE_OK) {
		rc = twl_sqlite_errno(r);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
unlock:
	twl_store_admin_write_unlock(s);
	return rc;
}

struct ann_args {
	const char *feature, *workload, *text, *fits, *author;
	int64_t now, id;
};

static int bind_ann_add(sqlite3_stmt *st, void *p)
{
	struct ann_args *a = p;
	int r;

	r = sqlite3_bind_text(st, 1, a->feature, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = a->workload ? sqlite3_bind_text(st, 2, a->workload, -1,
						    SQLITE_STATIC) :
				  sqlite3_bind_null(st, 2);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 3, a->text, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = a->fits ? sqlite3_bind_text(st, 4, a->fits, -1,
						SQLITE_STATIC) :
			      sqlite3_bind_null(st, 4);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 5, a->author, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 6, a->now);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int(st, 7, TWL_STORE_MAX_ANNOTATIONS);
	return r;
}

int twl_store_annotation_add(struct twl_store *s, const char *feature,
			     const char *workload, const char *text,
			     const char *fits, const char *author, int64_t now,
			     int64_t *id)
{
	struct ann_args a = { feature, workload, text, fits, author, now, 0 };
	int64_t newid = 0;
	int rc;

	if (!feature || !text || !author)
		return -EINVAL;
	if (fits && strcmp(fits, "yes") && strcmp(fits, "no") &&
	    strcmp(fits, "partial"))
		return -EINVAL;
	rc = admin_write(
		s,
		"INSERT INTO annotations(feature_id, workload, text, fits, author,"
		" created) SELECT ?1, ?2, ?3, ?4, ?5, ?6"
		" WHERE (SELECT count(*) FROM annotations) < ?7",
		bind_ann_add, &a, &newid, true);
	if (!rc && id)
		*id = newid;
	return rc;
}

static int bind_ann_del(sqlite3_stmt *st, void *p)
{
	return sqlite3_bind_int64(st, 1, *(int64_t *)p);
}

int twl_store_annotation_delete(struct twl_store *s, int64_t id)
{
	int64_t changes = 0;
	int rc;

	rc = admin_write(s, "DELETE FROM annotations WHERE id = ?1",
			 bind_ann_del, &id, &changes, false);
	if (!rc && !changes)
		rc = -ENOENT;
	return rc;
}

/* ---- export data ---------------------------------------------------- */

static const struct twl_col using_cols[] = {
	{ "hosts_using", 0, TWL_COL_INT },
};
static const struct twl_row using_row = TWL_ROW(using_cols);

static const struct twl_col workload_cols[] = {
	{ "process", 0, TWL_COL_TEXT },	  { "cgroup", 1, TWL_COL_TEXT },
	{ "container", 2, TWL_COL_TEXT }, { "hosts", 3, TWL_COL_INT },
	{ "uses", 4, TWL_COL_INT },
};
static const struct twl_row workload_row = TWL_ROW(workload_cols);

static const struct twl_col hostname_cols[] = { { NULL, 0, TWL_COL_TEXT } };
static const struct twl_row hostname_row = TWL_ROW(hostname_cols);

static int export_feature(struct rctx *c, const struct twl_feature *f,
			  int64_t since, bool full_cgroups, bool with_hosts,
			  json_t *fleet, json_t *feats)
{
	sqlite3_stmt *st;
	json_t *o, *arr;
	int64_t uses, first, last;
	int rc = 0;

	o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "id", f->id,
		      "title", f->title, "status", f->status, "kernel_version",
		      f->kernel_version, "commit", f->commit, "replacement",
		      f->replacement, "replacement_note", f->replacement_note);
	if ((rc = push(feats, o)))
		return rc;
	st = stmt(c, Q_FH_RANGE, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, INT64_MAX);
	TRY(twl_row_into(st, &using_row, o));
	TRY(set(o, "hosts_v1",
		json_copy(json_object_get(fleet, "v1_or_hybrid"))));
	TRY(set(o, "hosts_all", json_copy(json_object_get(fleet, "hosts"))));
	st = stmt(c, Q_DAY_USES, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since / DAY);
	sqlite3_bind_int64(st, 3, INT64_MAX / DAY);
	TRY(one_int(st, &uses));
	TRY(set(o, "uses", json_integer(uses)));
	st = stmt(c, Q_FH_FIRST, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	TRY(one_int(st, &first));
	st = stmt(c, Q_FH_LAST, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	TRY(one_int(st, &last));
	TRY(set(o, "first_seen", first ? json_integer(first) : json_null()));
	TRY(set(o, "last_seen", last ? json_integer(last) : json_null()));

	TRY(set(o, "kernels", arr = json_array()));
	TRY(kernels_into(c, f->id, since, INT64_MAX, arr));

	TRY(set(o, "workloads", arr = json_array()));
	st = stmt(c, full_cgroups ? Q_EXP_WORKLOADS_FULL : Q_EXP_WORKLOADS_KIND,
		  &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
	TRY(twl_rows_into(st, &workload_row, arr, SIZE_MAX, NULL));

	if (with_hosts) {
		TRY(set(o, "hosts", arr = json_array()));
		st = stmt(c, Q_EXP_HOSTNAMES, &rc);
		if (!st)
			return rc;
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, since);
		sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
		TRY(twl_rows_into(st, &hostname_row, arr, SIZE_MAX, NULL));
	}
	TRY(set(o, "annotations", arr = json_array()));
	rc = annotations_into(c, f->id, arr);
	return rc;
out:
	if (st)
		sqlite3_reset(st);
	return rc;
}

int twl_read_export_data(struct twl_store *s, int64_t now, unsigned window_days,
			 const char *feature, bool full_cgroups,
			 bool with_hosts, json_t **out)
{
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	const struct twl_feature *only = NULL;
	int64_t since, all, v, known = 0, v1 = 0;
	struct rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *fleet, *feats;
	size_t i;
	int rc;

	*out = NULL;
	if (!window_days || window_days > 3660)
		return -EINVAL;
	if (feature) {
		only = twl_catalog_find(feature);
		if (!only)
			return -ENOENT;
	}
	since = now - (int64_t)window_days * DAY;
	rc = rctx_begin_private(&c, s);
	if (rc)
		return rc;
	doc = json_pack("{s:I, s:I, s:I, s:{}, s:[]}", "generated",
			(json_int_t)now, "window_days", (json_int_t)window_days,
			"catalog_version", (json_int_t)twl_catalog_version(),
			"fleet", "features");
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	fleet = json_object_get(doc, "fleet");
	feats = json_object_get(doc, "features");
	STMT(st, Q_HOSTS_SINCE);
	sqlite3_bind_int64(st, 1, since);
	TRY(one_int(st, &all));
	TRY(set(fleet, "hosts", json_integer(all)));
	STMT(st, Q_HOSTS_MODE);
	for (i = 0; i < 3; i++) {
		char key[32];

		sqlite3_bind_text(st, 1, modes[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, since);
		TRY(one_int(st, &v));
		snprintf(key, sizeof(key), "hosts_%s", modes[i]);
		TRY(set(fleet, key, json_integer(v)));
		known += v;
		if (i < 2)
			v1 += v;
	}
	TRY(set(fleet, "hosts_unknown", json_integer(all - known)));
	TRY(set(fleet, "v1_or_hybrid", json_integer(v1)));
	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		if (only && f != only)
			continue;
		TRY(export_feature(&c, f, since, full_cgroups, with_hosts,
				   fleet, feats));
	}
out:
	rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}
