// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness on SQLite: the queries TWL_RQ_READY_* (read_answers.h)
 * that store/read_readiness.c composes the answer of (twl_read_readiness(),
 * store_read.h): which hosts use a feature a target removes, seen by BPF
 * (usage), the census (knobs set, or the controller bound to a v1
 * hierarchy for a controller's whole v1 interface) or kernel warnings;
 * which are ready; which nobody measured. Lists in byte order where
 * counts tie, as PostgreSQL's (store_pg_readiness.c).
 */
#include "store/read_answers.h"
#include "store/read_readiness.h"
#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_read.h"

/*
 * Host h carries label ?k with value ?v, or ?k is NULL (no label filter):
 * every host set below passes through it, so a filtered answer counts only
 * the hosts carrying the label.
 */
#define LABELED_BY(k, v)                                                       \
	" (" k " IS NULL OR EXISTS (SELECT 1 FROM host_labels hl"              \
	"  WHERE hl.host_id = h.host_id AND hl.key = " k "  AND hl.value = " v \
	"))"
/* the evidence queries' label filter: ?6, ?7 */
#define LABELED LABELED_BY("?6", "?7")

/*
 * ?1 JSON array of removed feature ids, ?2 JSON object {interface feature
 * id: controller}, ?3 hosts (and evidence) seen since, ?6 ?7 the label
 * filter (LABELED). v2 hosts have no v1 hierarchy to use: they break on
 * nothing.
 */
#define EV_CTE                                                                   \
	"WITH lost(id) AS (SELECT value FROM json_each(?1)),"                    \
	" iface(id, ctl) AS (SELECT key, value FROM json_each(?2)),"             \
	" hs AS (SELECT host_id, census_json FROM hosts h"                       \
	"  WHERE last_seen >= ?3 AND cgroup_mode != 'v2' AND" LABELED "),"       \
	" ev(host_id, feature_id, src, op, n) AS ("                              \
	"  SELECT u.host_id, u.feature_id, 'bpf', u.op, u.count"                 \
	"  FROM usage u JOIN hs ON hs.host_id = u.host_id"                       \
	"  WHERE u.feature_id IN lost AND u.last_seen >= ?3"                     \
	"  UNION ALL SELECT k.host_id, k.feature_id, 'census', 'write', 0"       \
	"  FROM census_knobs k JOIN hs ON hs.host_id = k.host_id"                \
	"  WHERE k.feature_id IN lost"                                           \
	"  UNION ALL SELECT w.host_id, w.feature_id, 'kmsg', '', 0"              \
	"  FROM warnings w JOIN hs ON hs.host_id = w.host_id"                    \
	"  WHERE w.feature_id IN lost AND w.time >= ?3"                          \
	"  UNION ALL SELECT hs.host_id, iface.id, 'hierarchy', '', 0"            \
	"  FROM hs JOIN iface JOIN json_each(hs.census_json, '$.hierarchies') j" \
	"  WHERE hs.census_json IS NOT NULL"                                     \
	"  AND json_extract(j.value, '$.kind') = 'v1' AND EXISTS (SELECT 1"      \
	"  FROM json_each(j.value, '$.controllers') c WHERE c.value = iface.ctl))"

/* A migration status as readiness shows it (migration 018). */
#define MIGRATION_JSON                                                 \
	"json_object('status', m.status, 'reason', m.reason, 'owner'," \
	" m.owner, 'date', m.date)"

/*
 * The evidence, once per answer (read_readiness.c), into a temporary
 * table of the answer's private connection (opened read-only for the
 * answer and closed after it, so the table is new each time; SQLite
 * writes temporary tables on read-only connections): a row per host,
 * feature, source and op, its counts summed, which answers every
 * query below as the evidence rows themselves did.
 */
static const char q_ev_table[] =
	"CREATE TEMP TABLE ready_ev (host_id TEXT NOT NULL,"
	" feature_id TEXT NOT NULL, src TEXT NOT NULL, op TEXT NOT NULL,"
	" n REAL NOT NULL, PRIMARY KEY (host_id, feature_id, src, op))"
	" WITHOUT ROWID";

static const char q_ev_fill[] = "INSERT INTO ready_ev " EV_CTE
				" SELECT host_id, feature_id, src, op, TOTAL(n)"
				" FROM ev GROUP BY 1, 2, 3, 4";

static const char q_ev_index[] =
	"CREATE INDEX temp.ready_ev_feature ON ready_ev(feature_id, host_id)";

static const char q_features[] =
	"SELECT feature_id, COUNT(DISTINCT host_id),"
	" COUNT(DISTINCT CASE WHEN op = 'write' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN op = 'register_event' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN op IN ('read', 'open') THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'bpf' THEN host_id END),"
	" CAST(TOTAL(n) AS INT),"
	" COUNT(DISTINCT CASE WHEN src = 'census' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'hierarchy' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'kmsg' THEN host_id END),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = ev.feature_id AND m.workload = ''),"
	" (SELECT COUNT(*) FROM (SELECT 1 FROM ready_ev e2"
	"  WHERE e2.feature_id = ev.feature_id GROUP BY e2.host_id"
	"  HAVING MIN(e2.src = 'bpf' AND e2.op IN ('read', 'open'))))"
	" FROM ready_ev ev GROUP BY feature_id ORDER BY 2 DESC, 1";

static const char q_break_count[] =
	"SELECT COUNT(DISTINCT host_id) FROM ready_ev";

static const char q_break_hosts[] =
	"SELECT h.host_id, h.hostname, h.kernel, h.cgroup_mode,"
	" (SELECT json_group_array(feature_id) FROM (SELECT DISTINCT"
	"  feature_id FROM ready_ev e2 WHERE e2.host_id = h.host_id"
	"  ORDER BY 1)),"
	" (SELECT json_group_array(json_object('name', r.name, 'version',"
	"  r.version, 'cgroup_driver', r.cgroup_driver)) FROM (SELECT *"
	"  FROM host_runtimes r1 WHERE r1.host_id = h.host_id"
	"  ORDER BY r1.name, r1.version) r)"
	" FROM hosts h WHERE h.host_id IN (SELECT host_id FROM ready_ev)"
	" ORDER BY h.host_id LIMIT ?4";

/* the hosts that break on nothing: v2, measured, or neither */
#define REST_CTE                                                         \
	"WITH rest AS (SELECT h.host_id, h.hostname, h.kernel,"          \
	" h.cgroup_mode, h.cgroup_mode = 'v2' AS v2,"                    \
	" (h.census_json IS NOT NULL"                                    \
	" OR EXISTS (SELECT 1 FROM host_coverage c"                      \
	"  WHERE c.host_id = h.host_id AND c.facts & 31)"                \
	" OR EXISTS (SELECT 1 FROM usage u WHERE u.host_id = h.host_id)" \
	" OR (json_valid(h.health_json) AND EXISTS (SELECT 1"            \
	"  FROM json_each(h.health_json, '$.probes') p"                  \
	"  WHERE json_extract(p.value, '$.state') = 'attached')))"       \
	" AS measured FROM hosts h WHERE h.last_seen >= ?3 AND" LABELED  \
	" AND h.host_id NOT IN (SELECT host_id FROM ready_ev))"

static const char q_rest_count[] = REST_CTE
	" SELECT TOTAL(v2 OR measured), TOTAL(NOT v2 AND NOT measured)"
	" FROM rest";

static const char q_unmeasured[] = REST_CTE
	" SELECT host_id, hostname, kernel, cgroup_mode FROM rest"
	" WHERE NOT v2 AND NOT measured ORDER BY host_id LIMIT ?4";

/*
 * Hosts seen since ?3 by the value of their label ?5 (NULL: without it):
 * how many break, are ready, are not measured; ?4 groups at most.
 */
static const char q_groups[] = REST_CTE
	" SELECT l.value, COUNT(*),"
	" COUNT(*) FILTER (WHERE r.host_id IS NULL),"
	" COUNT(*) FILTER (WHERE r.v2 OR r.measured),"
	" COUNT(*) FILTER (WHERE NOT r.v2 AND NOT r.measured)"
	" FROM hosts h LEFT JOIN rest r ON r.host_id = h.host_id"
	" LEFT JOIN host_labels l ON l.host_id = h.host_id AND l.key = ?5"
	" WHERE h.last_seen >= ?3 AND" LABELED " GROUP BY l.value"
	" ORDER BY 3 DESC, 2 DESC, l.value IS NULL, 1 LIMIT ?4";

/*
 * The usage rows of feature ?1 seen since ?2 on hosts not v2 seen since,
 * of hosts labelled ?4 = ?5 (when ?4 is not NULL); @u the usage's alias.
 */
#define WORKLOAD_USES(u)                                                   \
	" FROM usage " u " JOIN hosts h ON h.host_id = " u ".host_id"      \
	" WHERE " u ".feature_id = ?1 AND " u ".last_seen >= ?2"           \
	" AND h.last_seen >= ?2 AND h.cgroup_mode != 'v2' AND" LABELED_BY( \
		"?4", "?5")

/*
 * Workload u's ops, distinct, in byte order ("open" < "read" <
 * "register_event" < "write"), in the group's own pass: the wire's ops
 * (common/src/wire_spec.c) and version 1's "open". SQLite 3.40's
 * group_concat() takes no ORDER BY, and a correlated subquery per group
 * read every row of the group's process again: on a fleet whose containers
 * are unique per host that is one pass per container over all of the
 * process's rows (2,000 hosts: readiness 16-18 s before, 11-12 s after;
 * bench/README.md).
 */
#define OP_IF(o) " CASE WHEN max(u.op = '" o "') THEN '," o "' ELSE '' END"
#define WORKLOAD_OPS                                              \
	" substr(" OP_IF("open") " ||" OP_IF("read") " ||" OP_IF( \
		"register_event") " ||" OP_IF("write") ", 2)"

/* ties in byte order of the group */
static const char q_workloads[] =
	"SELECT u.comm, u.container, COALESCE(u.target_kind, '')," WORKLOAD_OPS
	", COUNT(DISTINCT u.host_id), SUM(u.count),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = ?1 AND m.workload = u.comm)" WORKLOAD_USES(
		"u") " GROUP BY 1, 2, 3 ORDER BY 5 DESC, 6 DESC, 1, 2, 3 LIMIT ?3";

static const char q_runtime[] =
	"SELECT COUNT(DISTINCT r.host_id) FROM host_runtimes r"
	" JOIN hosts h ON h.host_id = r.host_id"
	" WHERE r.name = ?1 AND h.last_seen >= ?2"
	" AND h.cgroup_mode IN (SELECT value FROM json_each(?3))"
	" AND" LABELED_BY("?4", "?5");

/* Contract: see store_sqlite_internal.h (read_readiness.c). */
const char *const twl_sqlite_readiness_sql[TWL_RQ_N] = {
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

/* Contract: see store_read.h. */
int twl_read_readiness(struct twl_store *s, const struct twl_readiness_query *q,
		       json_t **out)
{
	return twl_answer_readiness(&twl_sqlite_rq_io, s, q, out);
}
