// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness on PostgreSQL: the queries TWL_RQ_READY_*
 * (read_answers.h) that store/read_readiness.c composes the answer of,
 * each SQLite's of the same name (store/sqlite/store_sqlite_readiness.c)
 * in PostgreSQL's dialect, so the answers are the same JSON
 * (store_pg_read.h: parameters as text, cast where used; text in byte
 * order). census_json and health_json are text (migration 001) holding
 * the JSON ingest wrote; they are read as jsonb.
 */
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/read_readiness.h"
#include "store/store_read.h"

/*
 * Host h carries label k with value v, or k is NULL (no label filter):
 * every host set below passes through it, so a filtered answer counts only
 * the hosts carrying the label.
 */
#define LABELED_BY(k, v)                                                       \
	" (" k "::text IS NULL OR EXISTS (SELECT 1 FROM host_labels hl"        \
	"  WHERE hl.host_id = h.host_id AND hl.key = " k "  AND hl.value = " v \
	"))"
/* the evidence queries' label filter: $6, $7 */
#define LABELED LABELED_BY("$6", "$7")

/*
 * $1 JSON array of removed feature ids, $2 JSON object {interface feature
 * id: controller}, $3 hosts (and evidence) seen since, $6 $7 the label
 * filter (LABELED). v2 hosts have no v1 hierarchy to use: they break on
 * nothing.
 */
#define EV_CTE                                                                \
	"WITH lost(id) AS (SELECT jsonb_array_elements_text($1::jsonb)),"     \
	" iface(id, ctl) AS (SELECT key, value"                               \
	"  FROM jsonb_each_text($2::jsonb)),"                                 \
	" hs AS (SELECT host_id, census_json FROM hosts h"                    \
	"  WHERE last_seen >= $3::bigint AND cgroup_mode <> 'v2'"             \
	"  AND" LABELED "),"                                                  \
	" ev(host_id, feature_id, src, op, n) AS ("                           \
	"  SELECT u.host_id, u.feature_id, 'bpf', u.op, u.count"              \
	"  FROM usage u JOIN hs ON hs.host_id = u.host_id"                    \
	"  WHERE u.feature_id IN (SELECT id FROM lost)"                       \
	"  AND u.last_seen >= $3::bigint"                                     \
	"  UNION ALL SELECT k.host_id, k.feature_id, 'census', 'write', 0"    \
	"  FROM census_knobs k JOIN hs ON hs.host_id = k.host_id"             \
	"  WHERE k.feature_id IN (SELECT id FROM lost)"                       \
	"  UNION ALL SELECT w.host_id, w.feature_id, 'kmsg', '', 0"           \
	"  FROM warnings w JOIN hs ON hs.host_id = w.host_id"                 \
	"  WHERE w.feature_id IN (SELECT id FROM lost)"                       \
	"  AND w.time >= $3::bigint"                                          \
	"  UNION ALL SELECT hs.host_id, iface.id, 'hierarchy', '', 0"         \
	"  FROM hs CROSS JOIN iface CROSS JOIN LATERAL"                       \
	"  jsonb_array_elements(hs.census_json::jsonb -> 'hierarchies') j(v)" \
	"  WHERE j.v ->> 'kind' = 'v1' AND EXISTS (SELECT 1"                  \
	"  FROM jsonb_array_elements_text(j.v -> 'controllers') c(ctl)"       \
	"  WHERE c.ctl = iface.ctl))"

/* A migration status as readiness shows it (migration 003). */
#define MIGRATION_JSON                                                       \
	"json_build_object('status', m.status, 'reason', m.reason, 'owner'," \
	" m.owner, 'date', m.date)"

/*
 * The evidence, once per answer (read_readiness.c), into the temporary
 * table ready_ev of the answer's private connection: a row per host,
 * feature, source and op, its counts summed, which answers every query
 * below as the evidence rows themselves did. A read-only transaction
 * may write a temporary table but not create one, so the table is made
 * when the connection is (twl_pg_ready_setup()), and every COMMIT or
 * ROLLBACK empties it. Its statistics are taken before it is read: the
 * planner has no other idea of its size.
 */
static const char q_ev_table[] = "DELETE FROM ready_ev";

static const char q_ev_fill[] = "INSERT INTO ready_ev " EV_CTE
				" SELECT host_id, feature_id, src, op, sum(n)"
				" FROM ev GROUP BY 1, 2, 3, 4";

static const char q_ev_index[] = "ANALYZE ready_ev";

static const char *const ev_setup[] = {
	"CREATE TEMP TABLE IF NOT EXISTS ready_ev (host_id text NOT NULL,"
	" feature_id text NOT NULL, src text NOT NULL, op text NOT NULL,"
	" n numeric NOT NULL, PRIMARY KEY (host_id, feature_id, src, op))"
	" ON COMMIT DELETE ROWS",
	"CREATE INDEX IF NOT EXISTS ready_ev_feature"
	" ON ready_ev(feature_id, host_id)",
};

/* Contract: see store_pg_read.h. */
int twl_pg_ready_setup(PGconn *conn)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(ev_setup) / sizeof(*ev_setup); i++)
		rc = twl_pg_exec(conn, ev_setup[i], 0, NULL, NULL);
	return rc;
}

static const char q_features[] =
	"SELECT feature_id, count(DISTINCT host_id),"
	" count(DISTINCT CASE WHEN op = 'write' THEN host_id END),"
	" count(DISTINCT CASE WHEN op = 'register_event' THEN host_id END),"
	" count(DISTINCT CASE WHEN op IN ('read', 'open') THEN host_id END),"
	" count(DISTINCT CASE WHEN src = 'bpf' THEN host_id END),"
	" coalesce(sum(n), 0)::bigint,"
	" count(DISTINCT CASE WHEN src = 'census' THEN host_id END),"
	" count(DISTINCT CASE WHEN src = 'hierarchy' THEN host_id END),"
	" count(DISTINCT CASE WHEN src = 'kmsg' THEN host_id END),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = ev.feature_id AND m.workload = ''),"
	" (SELECT count(*) FROM (SELECT 1 FROM ready_ev e2"
	"  WHERE e2.feature_id = ev.feature_id GROUP BY e2.host_id"
	"  HAVING bool_and(e2.src = 'bpf' AND e2.op IN ('read', 'open'))) ro)"
	" FROM ready_ev ev GROUP BY feature_id"
	" ORDER BY 2 DESC, feature_id" TWL_PG_C;

static const char q_break_count[] =
	"SELECT count(DISTINCT host_id) FROM ready_ev";

static const char q_break_hosts[] =
	"SELECT h.host_id, h.hostname, h.kernel, h.cgroup_mode,"
	" (SELECT json_agg(f ORDER BY f" TWL_PG_C ") FROM (SELECT DISTINCT"
	"  feature_id AS f FROM ready_ev e2 WHERE e2.host_id = h.host_id) x),"
	" (SELECT json_agg(json_build_object('name', r.name, 'version',"
	"  r.version, 'cgroup_driver', r.cgroup_driver)"
	"  ORDER BY r.name" TWL_PG_C ", r.version" TWL_PG_C ")"
	"  FROM host_runtimes r WHERE r.host_id = h.host_id)"
	" FROM hosts h WHERE h.host_id IN (SELECT host_id FROM ready_ev)"
	" ORDER BY h.host_id" TWL_PG_C " LIMIT $4::bigint";

/* the hosts that break on nothing: v2, measured, or neither */
#define REST_CTE                                                    \
	"WITH rest AS (SELECT h.host_id, h.hostname, h.kernel,"     \
	" h.cgroup_mode, h.cgroup_mode = 'v2' AS v2,"               \
	" (h.census_json IS NOT NULL"                               \
	" OR EXISTS (SELECT 1 FROM host_coverage c"                 \
	"  WHERE c.host_id = h.host_id AND c.facts & 31 <> 0)"      \
	" OR EXISTS (SELECT 1 FROM usage u"                         \
	"  WHERE u.host_id = h.host_id)"                            \
	" OR EXISTS (SELECT 1 FROM jsonb_array_elements("           \
	"  h.health_json::jsonb -> 'probes') p(v)"                  \
	"  WHERE p.v ->> 'state' = 'attached'))"                    \
	" AS measured FROM hosts h WHERE h.last_seen >= $3::bigint" \
	" AND" LABELED " AND NOT EXISTS (SELECT 1 FROM ready_ev e"  \
	"  WHERE e.host_id = h.host_id))"

static const char q_rest_count[] = REST_CTE
	" SELECT count(*) FILTER (WHERE v2 OR measured),"
	" count(*) FILTER (WHERE NOT v2 AND NOT measured) FROM rest";

static const char q_unmeasured[] = REST_CTE
	" SELECT host_id, hostname, kernel, cgroup_mode FROM rest"
	" WHERE NOT v2 AND NOT measured ORDER BY host_id" TWL_PG_C
	" LIMIT $4::bigint";

/*
 * Hosts seen since $3 by the value of their label $5 (NULL: without it):
 * how many break, are ready, are not measured; $4 groups at most.
 */
static const char q_groups[] = REST_CTE
	" SELECT l.value, count(*),"
	" count(*) FILTER (WHERE r.host_id IS NULL),"
	" count(*) FILTER (WHERE r.v2 OR r.measured),"
	" count(*) FILTER (WHERE NOT r.v2 AND NOT r.measured)"
	" FROM hosts h LEFT JOIN rest r ON r.host_id = h.host_id"
	" LEFT JOIN host_labels l ON l.host_id = h.host_id AND l.key = $5"
	" WHERE h.last_seen >= $3::bigint AND" LABELED " GROUP BY l.value"
	" ORDER BY 3 DESC, 2 DESC, l.value IS NULL, l.value" TWL_PG_C
	" LIMIT $4::bigint";

/* Feature $1's processes seen since $2 on hosts not v2, labelled $4 = $5. */
static const char q_workloads[] =
	"SELECT u.comm, u.container, coalesce(u.target_kind, ''),"
	" string_agg(DISTINCT u.op" TWL_PG_C ", ','"
	"  ORDER BY u.op" TWL_PG_C "),"
	" count(DISTINCT u.host_id), sum(u.count),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = $1 AND m.workload = u.comm)"
	" FROM usage u JOIN hosts h ON h.host_id = u.host_id"
	" WHERE u.feature_id = $1 AND u.last_seen >= $2::bigint"
	" AND h.last_seen >= $2::bigint AND h.cgroup_mode <> 'v2'"
	" AND" LABELED_BY("$4",
			  "$5") " GROUP BY 1, 2, 3"
				" ORDER BY 5 DESC, 6 DESC, u.comm" TWL_PG_C
				", u.container" TWL_PG_C
				", coalesce(u.target_kind, '')" TWL_PG_C
				" LIMIT $3::bigint";

static const char q_runtime[] =
	"SELECT count(DISTINCT r.host_id) FROM host_runtimes r"
	" JOIN hosts h ON h.host_id = r.host_id"
	" WHERE r.name = $1 AND h.last_seen >= $2::bigint"
	" AND h.cgroup_mode IN (SELECT jsonb_array_elements_text($3::jsonb))"
	" AND" LABELED_BY("$4", "$5");

/* Contract: see store_pg_read.h. */
const char *const twl_pg_readiness_sql[TWL_RQ_N] = {
	[TWL_RQ_READY_EV_TABLE] = q_ev_table,
	[TWL_RQ_READY_EV_FILL] = q_ev_fill,
	[TWL_RQ_READY_EV_INDEX] = q_ev_index,
	[TWL_RQ_READY_FEATURES] = q_features,
	[TWL_RQ_READY_BREAK_COUNT] = q_break_count,
	[TWL_RQ_READY_BREAK_HOSTS] = q_break_hosts,
	[TWL_RQ_READY_REST_COUNT] = q_rest_count,
	[TWL_RQ_READY_UNMEASURED] = q_unmeasured,
	[TWL_RQ_READY_GROUPS] = q_groups,
	[TWL_RQ_READY_WORKLOADS] = q_workloads,
	[TWL_RQ_READY_RUNTIME] = q_runtime,
};

/* Contract: see store_pg_read.h. */
int twl_pg_read_readiness(struct twl_store *s,
			  const struct twl_readiness_query *q, json_t **out)
{
	return twl_answer_readiness(&twl_pg_rq_io, s, q, out);
}
