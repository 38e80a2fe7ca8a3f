// SPDX-License-Identifier: GPL-2.0
/*
 * Feature detail and the alert detector's page on PostgreSQL: the
 * queries store/read_feature.c and read_alert_uses.c compose them from,
 * in PostgreSQL's dialect, each SQLite's of the same name
 * (store/sqlite/store_sqlite_read.c, _kinds.c, _alerts.c), so the
 * answers are the same JSON (store_pg_read.h: parameters as text, cast
 * where used; text in byte order).
 */
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"

#define RANGE "$2::bigint AND $3::bigint"

/* the top-N lists: uses are writes and registrations, reads apart */
#define TOP(name)                                                          \
	"SELECT " name ", CASE WHEN bool_or(op <> 'read')"                 \
	" THEN count(DISTINCT host_id) FILTER (WHERE op <> 'read')"        \
	" ELSE count(DISTINCT host_id) END,"                               \
	" coalesce(sum(count) FILTER (WHERE op <> 'read'), 0),"            \
	" coalesce(sum(count) FILTER (WHERE op = 'read'), 0),"             \
	" CASE WHEN bool_or(op = 'write') THEN 'configures'"               \
	" WHEN bool_or(op = 'register_event') THEN 'listens' ELSE 'reads'" \
	" END FROM usage WHERE feature_id = $1"                            \
	" AND last_seen BETWEEN " RANGE TWL_PG_LABELED(                    \
		"host_id") " GROUP BY " name                               \
			   " ORDER BY 3 DESC, 4 DESC, " name TWL_PG_C      \
			   " LIMIT $4::bigint"

/*
 * The hosts seen since $1 after the cursor ($2 last seen, $3 host id),
 * $4 of them, host ids in byte order.
 */
#define ALERT_PAGE                                                          \
	"WITH page AS (SELECT host_id, last_seen FROM hosts"                \
	" WHERE last_hour >= $1::bigint / 3600 AND last_seen >= $1::bigint" \
	" AND (last_seen, host_id" TWL_PG_C ") > ($2::bigint, $3::text)"    \
	" ORDER BY last_seen, host_id" TWL_PG_C " LIMIT $4::bigint) "

/* Contract: see store_pg_read.h. */
const char *const twl_pg_feature_sql[TWL_RQ_N] = {
	/* hosts using it (kinds & 27), then per kind apart */
	[TWL_RQ_FH_RANGE] =
		"SELECT count(*) FILTER (WHERE kinds & 27 <> 0),"
		" min(first_used) FILTER (WHERE kinds & 27 <> 0),"
		" max(last_used) FILTER (WHERE kinds & 27 <> 0),"
		" count(*) FILTER (WHERE kinds & 17 <> 0),"
		" count(*) FILTER (WHERE kinds & 2 <> 0),"
		" count(*) FILTER (WHERE kinds = 4) FROM feature_host"
		" WHERE feature_id = $1"
		" AND last_hour BETWEEN $2::bigint / 3600 AND $3::bigint / 3600"
		" AND last_used BETWEEN " RANGE TWL_PG_LABELED("host_id"),
	/* feature_day's reads, or under a label the labelled hosts' rows */
	[TWL_RQ_DAY_READS] =
		"SELECT CASE WHEN $20::text IS NULL"
		" THEN (SELECT coalesce(sum(reads), 0) FROM feature_day"
		" WHERE feature_id = $1 AND day BETWEEN " RANGE ")"
		" ELSE (SELECT coalesce(sum(count), 0) FROM usage"
		" WHERE feature_id = $1 AND op = 'read'"
		" AND last_seen / 86400 BETWEEN " RANGE TWL_PG_LABELED(
			"host_id") ") END",
	/* as feature_comm's triggers count them, of the labelled hosts */
	[TWL_RQ_COMM_KINDS_LABELED] =
		"SELECT count(*) FILTER (WHERE configures + listens > 0),"
		" count(*) FILTER (WHERE configures > 0),"
		" count(*) FILTER (WHERE listens > 0),"
		" count(*) FILTER (WHERE configures + listens = 0 AND reads > 0)"
		" FROM (SELECT count(*) FILTER (WHERE op = 'write') configures,"
		" count(*) FILTER (WHERE op = 'register_event') listens,"
		" count(*) FILTER (WHERE op NOT IN ('write', 'register_event'))"
		" reads FROM usage WHERE feature_id = $1" TWL_PG_LABELED(
			"host_id") " GROUP BY comm) k",
	[TWL_RQ_WARNINGS] =
		"SELECT count(*), count(DISTINCT host_id) FROM warnings"
		" WHERE feature_id = $1 AND time BETWEEN " RANGE TWL_PG_LABELED(
			"host_id"),
	[TWL_RQ_TOP_CGROUPS] = TOP("cgroup"),
	[TWL_RQ_TOP_CONTAINERS] = TOP("container"),
	[TWL_RQ_TOP_PROCESSES] = TOP("comm"),
	[TWL_RQ_KERNELS] =
		"SELECT h.kernel, count(*) FROM feature_host fh"
		" JOIN hosts h ON h.host_id = fh.host_id WHERE fh.feature_id = $1"
		" AND fh.last_hour BETWEEN $2::bigint / 3600 AND $3::bigint / 3600"
		" AND fh.last_used BETWEEN " RANGE
		" AND fh.kinds & 27 <> 0" TWL_PG_LABELED(
			"fh.host_id") " GROUP BY h.kernel"
				      " ORDER BY 2 DESC, h.kernel" TWL_PG_C
				      " LIMIT $4::bigint",
	[TWL_RQ_ALERT_PAGE] = ALERT_PAGE
	"SELECT host_id, last_seen FROM page"
	" ORDER BY last_seen, host_id" TWL_PG_C,
	[TWL_RQ_ALERT_HOSTS] = ALERT_PAGE
	"SELECT f.feature_id, f.host_id, f.last_used FROM page"
	" JOIN feature_host f ON f.host_id = page.host_id"
	" WHERE (f.kinds & 27) <> 0 ORDER BY"
	" f.feature_id" TWL_PG_C ", f.host_id" TWL_PG_C,
	[TWL_RQ_ALERT_COMMS] = ALERT_PAGE
	"SELECT u.feature_id, u.comm, max(u.last_seen) FROM page"
	" JOIN usage u ON u.host_id = page.host_id"
	" WHERE u.op <> 'read' AND u.comm <> ''"
	" GROUP BY u.feature_id, u.comm ORDER BY"
	" u.feature_id" TWL_PG_C ", u.comm" TWL_PG_C,
};
