// SPDX-License-Identifier: GPL-2.0
/*
 * Migration status on SQLite (schema/migrations/018_usecases.sql): set and
 * forgotten on the admin writer (twl_store_migration_status_*(), store.h),
 * listed and checked for workloads seen using a feature again after they
 * were marked migrated on a read context (twl_read_migration_*(),
 * store_read.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_read.h"
#include "store/store_rules.h"
#include "store/sqlite/store_sqlite_internal.h"

/* Most rows a list answers with: the table's cap. */
#define LIST_CAP TWL_STORE_MAX_MIGRATION_STATUS

/*
 * Per migrated status, its feature's (and process's) uses after its date
 * and after ?1: writes and registrations only, a read is not a use. Of
 * those two ops, "ops" lists the ones seen in their sorted order (the
 * PostgreSQL store answers the same text).
 * usage_feature_comm finds the rows of one process.
 */
#define REUSE_CTE                                                        \
	"WITH reuse AS (SELECT m.feature_id, m.workload,"                \
	" COUNT(DISTINCT u.host_id) AS hosts, MAX(u.last_seen) AS last," \
	" CASE WHEN min(u.op) = max(u.op) THEN min(u.op)"                \
	" ELSE min(u.op) || ',' || max(u.op) END AS ops"                 \
	" FROM migration_status m JOIN usage u"                          \
	" ON u.feature_id = m.feature_id"                                \
	" AND (m.workload = '' OR u.comm = m.workload)"                  \
	" WHERE m.status = 'migrated' AND u.last_seen > m.date"          \
	" AND u.last_seen > ?1 AND u.op IN ('write', 'register_event')"  \
	" AND (?2 IS NULL OR m.feature_id = ?2)"                         \
	" GROUP BY m.feature_id, m.workload)"

static const char q_list[] = REUSE_CTE
	" SELECT m.feature_id, NULLIF(m.workload, ''), m.status, m.reason,"
	" m.owner, m.date, m.author, m.updated,"
	" CASE WHEN r.hosts IS NOT NULL THEN json_object('hosts', r.hosts,"
	" 'last_seen', r.last, 'ops', r.ops) END"
	" FROM migration_status m LEFT JOIN reuse r"
	" ON r.feature_id = m.feature_id AND r.workload = m.workload"
	" WHERE (?2 IS NULL OR m.feature_id = ?2)"
	" ORDER BY m.feature_id, m.workload LIMIT 10000"; /* LIST_CAP */

static const char q_reuse[] = REUSE_CTE
	" SELECT r.feature_id, NULLIF(r.workload, ''), m.owner,"
	" m.date, r.hosts, r.last, r.ops FROM reuse r"
	" JOIN migration_status m ON m.feature_id = r.feature_id"
	" AND m.workload = r.workload"
	" ORDER BY r.feature_id, r.workload LIMIT 10000"; /* LIST_CAP */

static const struct twl_col status_cols[] = {
	{ "feature", 0, TWL_COL_TEXT },	   { "workload", 1, TWL_COL_TEXT },
	{ "status", 2, TWL_COL_TEXT },	   { "reason", 3, TWL_COL_TEXT },
	{ "owner", 4, TWL_COL_TEXT },	   { "date", 5, TWL_COL_INT },
	{ "author", 6, TWL_COL_TEXT },	   { "updated", 7, TWL_COL_INT },
	{ "seen_again", 8, TWL_COL_JSON },
};
static const struct twl_col reuse_cols[] = {
	{ "feature", 0, TWL_COL_TEXT }, { "workload", 1, TWL_COL_TEXT },
	{ "owner", 2, TWL_COL_TEXT },	{ "date", 3, TWL_COL_INT },
	{ "hosts", 4, TWL_COL_INT },	{ "last_seen", 5, TWL_COL_INT },
	{ "ops", 6, TWL_COL_TEXT },
};

/* Run @sql (binding ?1 @after, ?2 @feature) into {"@key": [...]}. */
static int read_list(struct twl_store *s, const char *sql,
		     const struct twl_row *row, const char *key, int64_t after,
		     const char *feature, json_t **out)
{
	struct twl_rctx c;
	sqlite3_stmt *st;
	json_t *doc;
	int rc;

	*out = NULL;
	doc = json_pack("{s:[]}", key);
	if (!doc)
		return -ENOMEM;
	rc = twl_rctx_begin(&c, s, false);
	if (rc)
		goto fail;
	st = twl_rctx_stmt(&c, sql, &rc);
	if (st) {
		sqlite3_bind_int64(st, 1, after);
		if (feature)
			sqlite3_bind_text(st, 2, feature, -1, SQLITE_STATIC);
		rc = twl_rows_into(st, row, json_object_get(doc, key), SIZE_MAX,
				   NULL);
	}
	twl_rctx_end(&c);
	if (!rc) {
		*out = doc;
		return 0;
	}
fail:
	json_decref(doc);
	return rc;
}

/* Contract: see store_read.h. */
int twl_read_migration_status(struct twl_store *s, const char *feature,
			      json_t **out)
{
	static const struct twl_row row = TWL_ROW(status_cols);

	return read_list(s, q_list, &row, "statuses", 0, feature, out);
}

/* Contract: see store_read.h. */
int twl_read_migration_reuse(struct twl_store *s, int64_t after, json_t **out)
{
	static const struct twl_row row = TWL_ROW(reuse_cols);

	return read_list(s, q_reuse, &row, "reused", after, NULL, out);
}

static int bind_set(sqlite3_stmt *st, void *p)
{
	const struct twl_migration_status *m = p;
	int r;

	r = sqlite3_bind_text(st, 1, m->feature, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 2, m->workload ? m->workload : "", -1,
				      SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 3, m->status, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = m->reason ? sqlite3_bind_text(st, 4, m->reason, -1,
						  SQLITE_STATIC) :
				sqlite3_bind_null(st, 4);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 5, m->owner, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 6, m->date);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 7, m->author, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 8, m->now);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int(st, 9, TWL_STORE_MAX_MIGRATION_STATUS);
	return r;
}

/* Contract: see store.h. */
int twl_store_migration_status_set(struct twl_store *s,
				   const struct twl_migration_status *m)
{
	int64_t id = 0;

	if (!twl_migration_status_valid(m))
		return -EINVAL;
	/* A new pair only below the cap; replacing one always works. */
	return twl_admin_write(
		s,
		"INSERT INTO migration_status(feature_id, workload, status,"
		" reason, owner, date, author, updated)"
		" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8"
		" WHERE (SELECT count(*) FROM migration_status) < ?9"
		" OR EXISTS (SELECT 1 FROM migration_status"
		"  WHERE feature_id = ?1 AND workload = ?2)"
		" ON CONFLICT(feature_id, workload) DO UPDATE SET"
		" status = excluded.status, reason = excluded.reason,"
		" owner = excluded.owner, date = excluded.date,"
		" author = excluded.author, updated = excluded.updated",
		bind_set, (void *)m, &id, true);
}

struct del_args {
	const char *feature, *workload;
};

static int bind_del(sqlite3_stmt *st, void *p)
{
	const struct del_args *a = p;
	int r;

	r = sqlite3_bind_text(st, 1, a->feature, -1, SQLITE_STATIC);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 2, a->workload ? a->workload : "", -1,
				      SQLITE_STATIC);
	return r;
}

/* Contract: see store.h. */
int twl_store_migration_status_delete(struct twl_store *s, const char *feature,
				      const char *workload)
{
	struct del_args a = { feature, workload };
	int64_t changes = 0;
	int rc;

	if (!feature)
		return -EINVAL;
	rc = twl_admin_write(s,
			     "DELETE FROM migration_status"
			     " WHERE feature_id = ?1 AND workload = ?2",
			     bind_del, &a, &changes, false);
	if (!rc && !changes)
		rc = -ENOENT;
	return rc;
}
