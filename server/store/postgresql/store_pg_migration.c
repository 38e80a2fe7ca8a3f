// SPDX-License-Identifier: GPL-2.0
/*
 * Migration status on PostgreSQL (store.h, store_read.h): set and
 * forgotten in short statements of their own, listed with the uses seen
 * after a workload was marked migrated, in the SQLite backend's JSON
 * (store/sqlite/store_sqlite_migration.c holds the meaning of each
 * query). The cap of rows is counted under a lock on the table that only
 * its writers take, so two servers cannot both take its last place.
 */
#include <errno.h>
#include <stdint.h>

#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"
#include "store/store.h"
#include "store/store_rules.h"

/*
 * Per migrated status, its uses after its date and after $1 (writes and
 * registrations only: "ops" is one or both, sorted, as SQLite answers);
 * $2: one feature, or NULL for all.
 */
#define REUSE_CTE                                                        \
	"WITH reuse AS (SELECT m.feature_id, m.workload,"                \
	" count(DISTINCT u.host_id) AS hosts, max(u.last_seen) AS last," \
	" CASE WHEN min(u.op) = max(u.op) THEN min(u.op)"                \
	" ELSE min(u.op) || ',' || max(u.op) END AS ops"                 \
	" FROM migration_status m JOIN usage u"                          \
	" ON u.feature_id = m.feature_id"                                \
	" AND (m.workload = '' OR u.comm = m.workload)"                  \
	" WHERE m.status = 'migrated' AND u.last_seen > m.date"          \
	" AND u.last_seen > $1::bigint"                                  \
	" AND u.op IN ('write', 'register_event')"                       \
	" AND ($2::text IS NULL OR m.feature_id = $2)"                   \
	" GROUP BY m.feature_id, m.workload)"

static const char q_list[] = REUSE_CTE
	" SELECT m.feature_id, NULLIF(m.workload, ''), m.status, m.reason,"
	" m.owner, m.date, m.author, m.updated,"
	" CASE WHEN r.hosts IS NOT NULL THEN json_build_object('hosts',"
	" r.hosts, 'last_seen', r.last, 'ops', r.ops)::text END"
	" FROM migration_status m LEFT JOIN reuse r"
	" ON r.feature_id = m.feature_id AND r.workload = m.workload"
	" WHERE $2::text IS NULL OR m.feature_id = $2"
	" ORDER BY m.feature_id COLLATE \"C\", m.workload COLLATE \"C\""
	" LIMIT 10000";

static const char q_reuse[] = REUSE_CTE
	" SELECT r.feature_id, NULLIF(r.workload, ''), m.owner,"
	" m.date, r.hosts, r.last, r.ops FROM reuse r"
	" JOIN migration_status m ON m.feature_id = r.feature_id"
	" AND m.workload = r.workload"
	" ORDER BY r.feature_id COLLATE \"C\", r.workload COLLATE \"C\""
	" LIMIT 10000";

static const struct twl_pg_col status_cols[] = {
	{ "feature", TWL_PG_TEXT },    { "workload", TWL_PG_TEXT },
	{ "status", TWL_PG_TEXT },     { "reason", TWL_PG_TEXT },
	{ "owner", TWL_PG_TEXT },      { "date", TWL_PG_INT },
	{ "author", TWL_PG_TEXT },     { "updated", TWL_PG_INT },
	{ "seen_again", TWL_PG_JSON },
};
static const struct twl_pg_col reuse_cols[] = {
	{ "feature", TWL_PG_TEXT }, { "workload", TWL_PG_TEXT },
	{ "owner", TWL_PG_TEXT },   { "date", TWL_PG_INT },
	{ "hosts", TWL_PG_INT },    { "last_seen", TWL_PG_INT },
	{ "ops", TWL_PG_TEXT },
};

/* Contract: see store_pg_admin.h. */
int twl_pg_read_migration_status(struct twl_store *s, const char *feature,
				 json_t **out)
{
	const char *v[2] = { "0", feature };

	return twl_pg_list(s, q_list, 2, v, status_cols,
			   sizeof(status_cols) / sizeof(status_cols[0]),
			   "statuses", out);
}

/* Contract: see store_pg_admin.h. */
int twl_pg_read_migration_reuse(struct twl_store *s, int64_t after,
				json_t **out)
{
	char a[21];
	const char *v[2] = { twl_pg_i64(a, after), NULL };

	return twl_pg_list(s, q_reuse, 2, v, reuse_cols,
			   sizeof(reuse_cols) / sizeof(reuse_cols[0]), "reused",
			   out);
}

/* A new pair only below the cap; replacing one always works. */
static const char q_set[] =
	"INSERT INTO migration_status(feature_id, workload, status, reason,"
	" owner, date, author, updated)"
	" SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint"
	" WHERE (SELECT count(*) FROM migration_status) < $9::bigint"
	" OR EXISTS (SELECT 1 FROM migration_status"
	"  WHERE feature_id = $1 AND workload = $2)"
	" ON CONFLICT (feature_id, workload) DO UPDATE SET"
	" status = excluded.status, reason = excluded.reason,"
	" owner = excluded.owner, date = excluded.date,"
	" author = excluded.author, updated = excluded.updated";

static int tx_set(PGconn *conn, void *arg)
{
	const struct twl_migration_status *m = arg;
	char date[21], now[21], cap[21];
	const char *v[9] = { m->feature,
			     m->workload ? m->workload : "",
			     m->status,
			     m->reason,
			     m->owner,
			     twl_pg_i64(date, m->date),
			     m->author,
			     twl_pg_i64(now, m->now),
			     twl_pg_i64(cap, TWL_STORE_MAX_MIGRATION_STATUS) };
	PGresult *r;
	int ret;

	ret = twl_pg_exec(
		conn, "LOCK TABLE migration_status IN SHARE ROW EXCLUSIVE MODE",
		0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(conn, q_set, 9, v, &r);
	if (ret)
		return ret;
	ret = twl_pg_changed(r) ? 0 : -EDQUOT;
	PQclear(r);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_migration_status_set(struct twl_store *s,
				const struct twl_migration_status *m)
{
	if (!twl_migration_status_valid(m))
		return -EINVAL;
	return twl_pg_tx(s, tx_set, (void *)m);
}

/* Contract: see store_pg_admin.h. */
int twl_pg_migration_status_delete(struct twl_store *s, const char *feature,
				   const char *workload)
{
	const char *v[2] = { feature, workload ? workload : "" };

	if (!feature)
		return -EINVAL;
	return twl_pg_change(s,
			     "DELETE FROM migration_status"
			     " WHERE feature_id = $1 AND workload = $2",
			     2, v);
}
