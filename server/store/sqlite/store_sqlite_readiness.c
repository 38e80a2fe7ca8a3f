// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (twl_read_readiness(), store_read.h): which hosts use
 * a feature a target removes, seen by BPF (usage), the census (knobs set,
 * or the controller bound to a v1 hierarchy for a controller's whole v1
 * interface) or kernel warnings; which are ready; which nobody measured.
 * One snapshot on a private connection: the evidence query scans.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_read.h"

/* Workloads listed per feature. */
#define WORKLOADS_TOP 10

/*
 * ?1 JSON array of removed feature ids, ?2 JSON object {interface feature
 * id: controller}, ?3 hosts (and evidence) seen since. v2 hosts have no v1
 * hierarchy to use: they break on nothing.
 */
#define EV_CTE                                                                   \
	"WITH lost(id) AS (SELECT value FROM json_each(?1)),"                    \
	" iface(id, ctl) AS (SELECT key, value FROM json_each(?2)),"             \
	" hs AS (SELECT host_id, census_json FROM hosts"                         \
	"  WHERE last_seen >= ?3 AND cgroup_mode != 'v2'),"                      \
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

static const char q_features[] = EV_CTE
	" SELECT feature_id, COUNT(DISTINCT host_id),"
	" COUNT(DISTINCT CASE WHEN op = 'write' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN op = 'register_event' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN op IN ('read', 'open') THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'bpf' THEN host_id END),"
	" CAST(TOTAL(n) AS INT),"
	" COUNT(DISTINCT CASE WHEN src = 'census' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'hierarchy' THEN host_id END),"
	" COUNT(DISTINCT CASE WHEN src = 'kmsg' THEN host_id END),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = ev.feature_id AND m.workload = '')"
	" FROM ev GROUP BY feature_id ORDER BY 2 DESC, 1";

static const char q_break_count[] = EV_CTE
	" SELECT COUNT(DISTINCT host_id) FROM ev";

static const char q_break_hosts[] = EV_CTE
	" SELECT h.host_id, h.hostname, h.kernel, h.cgroup_mode,"
	" (SELECT json_group_array(DISTINCT feature_id) FROM ev e2"
	"  WHERE e2.host_id = h.host_id),"
	" (SELECT json_group_array(json_object('name', r.name, 'version',"
	"  r.version, 'cgroup_driver', r.cgroup_driver)) FROM host_runtimes r"
	"  WHERE r.host_id = h.host_id)"
	" FROM hosts h WHERE h.host_id IN (SELECT host_id FROM ev)"
	" ORDER BY h.host_id LIMIT ?4";

/* the hosts that break on nothing: v2, measured, or neither */
#define REST_CTE                                                                \
	EV_CTE ", rest AS (SELECT h.host_id, h.hostname, h.kernel,"             \
	       " h.cgroup_mode, h.cgroup_mode = 'v2' AS v2,"                    \
	       " (h.census_json IS NOT NULL"                                    \
	       " OR EXISTS (SELECT 1 FROM host_coverage c"                      \
	       "  WHERE c.host_id = h.host_id AND c.facts & 31)"                \
	       " OR EXISTS (SELECT 1 FROM usage u WHERE u.host_id = h.host_id)" \
	       " OR (json_valid(h.health_json) AND EXISTS (SELECT 1"            \
	       "  FROM json_each(h.health_json, '$.probes') p"                  \
	       "  WHERE json_extract(p.value, '$.state') = 'attached')))"       \
	       " AS measured FROM hosts h WHERE h.last_seen >= ?3"              \
	       " AND h.host_id NOT IN (SELECT host_id FROM ev))"

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
	" WHERE h.last_seen >= ?3 GROUP BY l.value"
	" ORDER BY 3 DESC, 2 DESC, l.value IS NULL, 1 LIMIT ?4";

static const char q_workloads[] =
	"SELECT u.comm, u.container, COALESCE(u.target_kind, ''),"
	" group_concat(DISTINCT u.op), COUNT(DISTINCT u.host_id), SUM(u.count),"
	" (SELECT " MIGRATION_JSON " FROM migration_status m"
	"  WHERE m.feature_id = ?1 AND m.workload = u.comm)"
	" FROM usage u JOIN hosts h ON h.host_id = u.host_id"
	" WHERE u.feature_id = ?1 AND u.last_seen >= ?2"
	" AND h.last_seen >= ?2 AND h.cgroup_mode != 'v2'"
	" GROUP BY 1, 2, 3 ORDER BY 5 DESC, 6 DESC, 1 LIMIT ?3";

static const char q_runtime[] =
	"SELECT COUNT(DISTINCT r.host_id) FROM host_runtimes r"
	" JOIN hosts h ON h.host_id = r.host_id"
	" WHERE r.name = ?1 AND h.last_seen >= ?2"
	" AND h.cgroup_mode IN (SELECT value FROM json_each(?3))";

static const struct twl_col c_feature[] = {
	{ "id", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "migration", 10, TWL_COL_JSON },
};
static const struct twl_col c_kind[] = {
	{ "configures", 2, TWL_COL_INT },
	{ "listens", 3, TWL_COL_INT },
	{ "reads", 4, TWL_COL_INT },
};
static const struct twl_col c_evidence[] = {
	{ "bpf_hosts", 5, TWL_COL_INT },
	{ "bpf_count", 6, TWL_COL_INT },
	{ "census_knob_hosts", 7, TWL_COL_INT },
	{ "v1_hierarchy_hosts", 8, TWL_COL_INT },
	{ "kernel_warning_hosts", 9, TWL_COL_INT },
};
static const struct twl_col c_host[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "hostname", 1, TWL_COL_TEXT },
	{ "kernel", 2, TWL_COL_TEXT },
	{ "cgroup_mode", 3, TWL_COL_TEXT },
	{ "features", 4, TWL_COL_JSON_ARRAY },
	{ "runtimes", 5, TWL_COL_JSON_ARRAY },
};
static const struct twl_col c_host4[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "hostname", 1, TWL_COL_TEXT },
	{ "kernel", 2, TWL_COL_TEXT },
	{ "cgroup_mode", 3, TWL_COL_TEXT },
};
static const struct twl_col c_group[] = {
	{ "value", 0, TWL_COL_TEXT },	    { "hosts", 1, TWL_COL_INT },
	{ "breaks", 2, TWL_COL_INT },	    { "ready", 3, TWL_COL_INT },
	{ "not_measured", 4, TWL_COL_INT },
};
static const struct twl_col c_workload[] = {
	{ "comm", 0, TWL_COL_TEXT },	    { "container", 1, TWL_COL_TEXT },
	{ "target_kind", 2, TWL_COL_TEXT }, { "ops", 3, TWL_COL_TEXT },
	{ "hosts", 4, TWL_COL_INT },	    { "count", 5, TWL_COL_INT },
	{ "migration", 6, TWL_COL_JSON },
};

/* Bind the evidence CTE's parameters (and ?4, the page size). */
static void bind_ev(sqlite3_stmt *st, const struct twl_readiness_query *q)
{
	sqlite3_bind_text(st, 1, q->removed_json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, q->interfaces_json, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, q->since);
	if (sqlite3_bind_parameter_count(st) >= 4)
		sqlite3_bind_int64(st, 4, q->limit);
}

/* One feature row of q_features, with its workloads. */
static int feature_row(struct twl_rctx *c, sqlite3_stmt *st,
		       const struct twl_readiness_query *q, json_t *arr)
{
	static const struct twl_row rf = TWL_ROW(c_feature),
				    rk = TWL_ROW(c_kind),
				    re = TWL_ROW(c_evidence),
				    rw = TWL_ROW(c_workload);
	json_t *f = twl_row_json(st, &rf), *k = twl_row_json(st, &rk),
	       *e = twl_row_json(st, &re), *w = json_array();
	sqlite3_stmt *ws;
	int rc = -ENOMEM;

	if (!f || !k || !e || !w)
		goto out;
	ws = twl_rctx_stmt(c, q_workloads, &rc);
	if (!ws)
		goto out;
	sqlite3_bind_text(ws, 1, (const char *)sqlite3_column_text(st, 0), -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_int64(ws, 2, q->since);
	sqlite3_bind_int64(ws, 3, WORKLOADS_TOP);
	rc = twl_rows_into(ws, &rw, w, WORKLOADS_TOP, NULL);
	if (rc)
		goto out;
	if (twl_jset(f, "by_kind", json_incref(k)) ||
	    twl_jset(f, "evidence", json_incref(e)) ||
	    twl_jset(f, "workloads", json_incref(w)) ||
	    twl_jpush(arr, json_incref(f)))
		rc = -ENOMEM;
out:
	json_decref(f);
	json_decref(k);
	json_decref(e);
	json_decref(w);
	return rc;
}

/* "breaks": counts, features, one page of hosts. */
static int breaks(struct twl_rctx *c, const struct twl_readiness_query *q,
		  json_t *out)
{
	static const struct twl_row rh = TWL_ROW(c_host);
	json_t *features = json_array(), *hosts = json_array();
	sqlite3_stmt *st;
	int64_t n = 0;
	bool row;
	int rc = -ENOMEM;

	if (!features || !hosts)
		goto out;
	st = twl_rctx_stmt(c, q_features, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	while (!(rc = twl_step(st, &row)) && row)
		if ((rc = feature_row(c, st, q, features)))
			break;
	sqlite3_reset(st);
	if (rc)
		goto out;
	st = twl_rctx_stmt(c, q_break_count, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	if ((rc = twl_one_int(st, &n)))
		goto out;
	st = twl_rctx_stmt(c, q_break_hosts, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	rc = twl_rows_into(st, &rh, hosts, q->limit, NULL);
	if (!rc)
		rc = json_object_set_new(out, "breaks",
					 json_pack("{s:I, s:O, s:O}", "count",
						   (json_int_t)n, "features",
						   features, "hosts", hosts)) ?
			     -ENOMEM :
			     0;
out:
	json_decref(features);
	json_decref(hosts);
	return rc;
}

/* "ready" and "not_measured". */
static int rest(struct twl_rctx *c, const struct twl_readiness_query *q,
		json_t *out)
{
	static const struct twl_row rh = TWL_ROW(c_host4);
	json_t *hosts = json_array();
	sqlite3_stmt *st;
	int64_t ready = 0, unmeasured = 0;
	bool row;
	int rc = -ENOMEM;

	if (!hosts)
		goto out;
	st = twl_rctx_stmt(c, q_rest_count, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	rc = twl_step(st, &row);
	if (!rc && row) {
		ready = sqlite3_column_int64(st, 0);
		unmeasured = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc)
		goto out;
	st = twl_rctx_stmt(c, q_unmeasured, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	rc = twl_rows_into(st, &rh, hosts, q->limit, NULL);
	if (!rc && (json_object_set_new(out, "ready",
					json_pack("{s:I}", "count",
						  (json_int_t)ready)) ||
		    json_object_set_new(out, "not_measured",
					json_pack("{s:I, s:O}", "count",
						  (json_int_t)unmeasured,
						  "hosts", hosts))))
		rc = -ENOMEM;
out:
	json_decref(hosts);
	return rc;
}

/* "groups": the hosts by the value of q->group_label. */
static int groups(struct twl_rctx *c, const struct twl_readiness_query *q,
		  json_t *out)
{
	static const struct twl_row rg = TWL_ROW(c_group);
	json_t *arr = json_array();
	sqlite3_stmt *st;
	int rc = -ENOMEM;

	if (!arr)
		goto out;
	st = twl_rctx_stmt(c, q_groups, &rc);
	if (!st)
		goto out;
	bind_ev(st, q);
	sqlite3_bind_text(st, 5, q->group_label, -1, SQLITE_STATIC);
	rc = twl_rows_into(st, &rg, arr, q->limit, NULL);
	if (!rc &&
	    json_object_set_new(out, "groups",
				json_pack("{s:s, s:O}", "label", q->group_label,
					  "values", arr)))
		rc = -ENOMEM;
out:
	json_decref(arr);
	return rc;
}

/* Each deadline of q gets "hosts": hosts running its runtime on its modes. */
static int deadlines(struct twl_rctx *c, const struct twl_readiness_query *q)
{
	sqlite3_stmt *st;
	json_t *d;
	int64_t n;
	size_t i;
	int rc = 0;

	json_array_foreach(q->deadlines, i, d)
	{
		char *modes = json_dumps(json_object_get(d, "cgroup_modes"),
					 JSON_COMPACT);

		st = modes ? twl_rctx_stmt(c, q_runtime, &rc) : NULL;
		if (st) {
			sqlite3_bind_text(st, 1,
					  json_string_value(json_object_get(
						  d, "runtime")),
					  -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 2, q->since);
			sqlite3_bind_text(st, 3, modes, -1, SQLITE_TRANSIENT);
			rc = twl_one_int(st, &n);
		} else if (!rc) {
			rc = -ENOMEM;
		}
		free(modes);
		if (!rc && json_object_set_new(d, "hosts", json_integer(n)))
			rc = -ENOMEM;
		if (rc)
			break;
	}
	return rc;
}

/* Contract: see store_read.h. */
int twl_read_readiness(struct twl_store *s, const struct twl_readiness_query *q,
		       json_t **out)
{
	struct twl_rctx c;
	json_t *doc = json_object();
	int rc;

	*out = NULL;
	if (!doc)
		return -ENOMEM;
	if (!q->removed_json || !q->interfaces_json || q->limit < 1 ||
	    q->limit > TWL_READ_LIMIT_MAX) {
		json_decref(doc);
		return -EINVAL;
	}
	rc = twl_rctx_begin(&c, s, true);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	TRY(breaks(&c, q, doc));
	TRY(rest(&c, q, doc));
	TRY(deadlines(&c, q));
	if (q->group_label)
		TRY(groups(&c, q, doc));
out:
	twl_rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}
