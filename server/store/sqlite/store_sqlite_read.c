// SPDX-License-Identifier: GPL-2.0
/*
 * Read API queries on SQLite (store_read.h): the fleet summary, host
 * lists, one host and feature detail are composed for both backends
 * (store/read_answers.c, read_feature.c) from this file's queries
 * (twl_sqlite_read_sql; fleet health: store_sqlite_health.c). Each answer is one read
 * transaction (store_sqlite_rctx.c), so one consistent snapshot while the
 * writer keeps writing (WAL); its rows become JSON through the column
 * tables beside the queries and in store/read_rows.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include <twilight/catalog.h>

#include "store/ingest.h"
#include "store/read_answers.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/*
 * Windows "since the start of T's hour" from the triggers' hour
 * buckets (migrations 002, 006): see window_count().
 */
static const char q_hosthour_sum[] =
	"SELECT coalesce(sum(hosts), 0) FROM host_hour WHERE hour >= ?1";

static const char q_hosthour_mode_sum[] =
	"SELECT coalesce(sum(hosts), 0) FROM host_hour"
	" WHERE cgroup_mode = ?1 AND hour >= ?2";

/*
 * A feature's summary in one row (TWL_RQ_FEATURE_SUMMARY): its hour
 * buckets since ?4 (the 30-day hour; ?2, ?3 the 1- and 7-day ones), its
 * days ?5..?6, its last use from feature_day, its processes from
 * feature_comm, its first use from feature_host (a read-only host is no
 * first use, migration 015). Each part is an aggregate without GROUP BY,
 * so one row.
 */
static const char q_feature_summary[] =
	"SELECT h.h1, h.h7, h.h30, d.uses, h.conf, h.listen, h.ro, d.reads,"
	" d.warnings, c.*,"
	" nullif((SELECT first_used FROM feature_host"
	"  INDEXED BY feature_host_first WHERE feature_id = ?1 AND kinds & 27"
	"  ORDER BY first_used LIMIT 1), 0),"
	" d.last FROM"
	" (SELECT coalesce(sum(hosts) FILTER (WHERE hour >= ?2), 0) h1,"
	"  coalesce(sum(hosts) FILTER (WHERE hour >= ?3), 0) h7,"
	"  coalesce(sum(hosts), 0) h30, coalesce(sum(configuring), 0) conf,"
	"  coalesce(sum(listening), 0) listen,"
	"  coalesce(sum(reading_only), 0) ro FROM feature_hour"
	"  WHERE feature_id = ?1 AND hour >= ?4) h,"
	" (SELECT coalesce(sum(uses) FILTER (WHERE day BETWEEN ?5 AND ?6), 0)"
	"  uses, coalesce(sum(reads) FILTER (WHERE day BETWEEN ?5 AND ?6), 0)"
	"  reads,"
	"  coalesce(sum(warnings) FILTER (WHERE day BETWEEN ?5 AND ?6), 0)"
	"  warnings, nullif(max(last_used), 0) last FROM feature_day"
	"  WHERE feature_id = ?1) d,"
	" (SELECT count(*) FILTER (WHERE configures + listens > 0),"
	"  count(*) FILTER (WHERE configures > 0),"
	"  count(*) FILTER (WHERE listens > 0),"
	"  count(*) FILTER (WHERE configures + listens = 0 AND reads > 0)"
	"  FROM feature_comm WHERE feature_id = ?1) c";

/* hosts using it: a read-only host is no first use (migration 015) */
static const char q_fh_first[] =
	"SELECT first_used FROM feature_host INDEXED BY feature_host_first"
	" WHERE feature_id = ?1 AND kinds & 27" TWL_SQL_LABELED(
		"host_id") " ORDER BY first_used LIMIT 1";

/*
 * A feature's last use, kept per day by feature_host's triggers; under a
 * label filter the labelled hosts' own.
 */
static const char q_fh_last[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT max(last_used) FROM feature_day WHERE feature_id = ?1)"
	" ELSE (SELECT max(last_used) FROM feature_host WHERE feature_id = ?1" TWL_SQL_LABELED(
		"host_id") ") END";

/*
 * Uses from ?2 to ?3 (days): feature_day's. The days are the fleet's, so
 * under a label filter the uses are the labelled hosts' usage rows (BPF
 * counts of writes and registrations, as the workloads sum them) last
 * seen in those days.
 */
static const char q_day_uses[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT coalesce(sum(uses), 0) FROM feature_day"
	" WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3)"
	" ELSE (SELECT coalesce(sum(count), 0) FROM usage"
	" WHERE feature_id = ?1 AND op != 'read'"
	" AND last_seen / 86400 BETWEEN ?2 AND ?3" TWL_SQL_LABELED(
		"host_id") ") END";

/*
 * feature_host's index holds last_hour, not last_used (migration
 * 006): a time range is narrowed by hour through it and filtered
 * exactly in the row. INDEXED BY: without ANALYZE statistics the
 * planner took the primary key, then (feature_id, host_id), for
 * cheaper and read all of a feature's rows; the hint keeps the plan
 * whatever the planner's guess (the key is host first since 010).
 * Hosts using the feature (kinds & 27: migration 015) and their first
 * and last use, then the hosts that configure, listen or only read it.
 */
static const char q_fh_range[] =
	"SELECT count(*) FILTER (WHERE kinds & 27),"
	" min(first_used) FILTER (WHERE kinds & 27),"
	" max(last_used) FILTER (WHERE kinds & 27),"
	" count(*) FILTER (WHERE kinds & 17), count(*) FILTER (WHERE kinds & 2),"
	" count(*) FILTER (WHERE kinds = 4) FROM feature_host"
	" INDEXED BY feature_host_last_hour"
	" WHERE feature_id = ?1 AND last_hour BETWEEN ?2 / 3600 AND ?3 / 3600"
	" AND last_used BETWEEN ?2 AND ?3" TWL_SQL_LABELED("host_id");

/*
 * The top-N lists: uses are BPF counts of writes and registrations,
 * reads apart (migration 015). A process's use is the first it has of
 * configures, listens, reads; a process that configures or listens
 * counts the hosts where it does, one that only reads those it reads on.
 */
#define TOP_KINDS                                                                            \
	" coalesce(sum(count) FILTER (WHERE op != 'read'), 0),"                              \
	" coalesce(sum(count) FILTER (WHERE op = 'read'), 0),"                               \
	" CASE WHEN max(op = 'write') THEN 'configures'"                                     \
	" WHEN max(op = 'register_event') THEN 'listens' ELSE 'reads' END"                   \
	" FROM usage WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3" TWL_SQL_LABELED( \
		"host_id")
#define TOP_HOSTS                                                          \
	" CASE WHEN max(op != 'read') THEN count(DISTINCT host_id) FILTER" \
	" (WHERE op != 'read') ELSE count(DISTINCT host_id) END,"
#define TOP_ORDER " ORDER BY 3 DESC, 4 DESC, 1 LIMIT ?4"

static const char q_top_cgroups[] = "SELECT cgroup," TOP_HOSTS TOP_KINDS
				    " GROUP BY cgroup" TOP_ORDER;

static const char q_top_containers[] = "SELECT container," TOP_HOSTS TOP_KINDS
				       " GROUP BY container" TOP_ORDER;

static const char q_top_processes[] = "SELECT comm," TOP_HOSTS TOP_KINDS
				      " GROUP BY comm" TOP_ORDER;

static const char q_kernels[] =
	"SELECT h.kernel, count(*) FROM feature_host fh"
	" INDEXED BY feature_host_last_hour"
	" JOIN hosts h ON h.host_id = fh.host_id"
	" WHERE fh.feature_id = ?1"
	" AND fh.last_hour BETWEEN ?2 / 3600 AND ?3 / 3600"
	" AND fh.last_used BETWEEN ?2 AND ?3 AND fh.kinds & 27" TWL_SQL_LABELED(
		"fh.host_id") " GROUP BY h.kernel ORDER BY 2 DESC, 1 LIMIT ?4";

static const char q_timeline[] =
	"SELECT day, hosts, uses FROM feature_day"
	" WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3 ORDER BY day";

static const char q_warn_count[] =
	"SELECT count(*), count(DISTINCT host_id) FROM warnings"
	" WHERE feature_id = ?1 AND time BETWEEN ?2 AND ?3" TWL_SQL_LABELED(
		"host_id");

static const char q_host_list[] =
	"SELECT " HOST_COLS " FROM hosts h WHERE host_id > ?1"
	" AND (?2 IS NULL OR last_seen >= ?2) AND (?3 IS NULL OR last_seen <= ?3)"
	" AND (?4 IS NULL OR hostname LIKE ?4 ESCAPE '\\')"
	" AND (?5 IS NULL OR kernel LIKE ?5 ESCAPE '\\')"
	" AND (?6 IS NULL OR cgroup_mode = ?6)"
	" AND (?7 IS NULL OR EXISTS (SELECT 1 FROM feature_host fh"
	"  WHERE fh.feature_id = ?7 AND fh.host_id = h.host_id"
	"  AND (fh.kinds & 27 OR ?9 = 1) AND (fh.kinds = 4 OR ?9 IS NOT 1)"
	"  AND (?2 IS NULL OR fh.last_used >= ?2)"
	"  AND (?3 IS NULL OR fh.last_used <= ?3)))"
	" AND (?10 IS NULL OR EXISTS (SELECT 1 FROM host_labels l"
	"  WHERE l.host_id = h.host_id AND l.key = ?10 AND l.value = ?11))"
	" ORDER BY host_id LIMIT ?8";

static const char q_host_one[] =
	"SELECT " HOST_COLS ", boot_id, catalog_version, last_seq,"
	" health_json, census_json, times_clamped, time_sent_max"
	" FROM hosts WHERE host_id = ?1";

static const char q_host_features[] =
	"SELECT feature_id, first_used, last_used, uses, reads, warnings,"
	" kinds & 17, kinds & 2, kinds = 4, kinds & 8 FROM feature_host"
	" WHERE host_id = ?1 ORDER BY feature_id";

static const char q_host_unknown[] =
	"SELECT text, sum(count), min(first_time), matched_feature_id"
	" FROM unknown_deprecations WHERE host_id = ?1"
	" GROUP BY text ORDER BY 3, 1 LIMIT ?2";

/* the operator's labels, as the host's last report carrying them set */
static const char q_host_labels[] =
	"SELECT json_group_object(key, value) FROM (SELECT key, value"
	" FROM host_labels WHERE host_id = ?1 ORDER BY key)";

static const char q_host_keys[] =
	"SELECT count(*), sum(revoked IS NOT NULL), max(created)"
	" FROM host_keys WHERE host_id = ?1";

/* ---- summary, hosts, one host, feature detail (read_answers.c) ------ */

/* Contract: see store_sqlite_internal.h. */
const char *const twl_sqlite_read_sql[TWL_RQ_N] = {
	[TWL_RQ_HOSTHOUR_SUM] = q_hosthour_sum,
	[TWL_RQ_HOSTHOUR_MODE_SUM] = q_hosthour_mode_sum,
	[TWL_RQ_FEATURE_SUMMARY] = q_feature_summary,
	[TWL_RQ_DAY_USES] = q_day_uses,
	[TWL_RQ_FH_FIRST] = q_fh_first,
	[TWL_RQ_FH_LAST] = q_fh_last,
	[TWL_RQ_TIMELINE] = q_timeline,
	[TWL_RQ_HOST_LIST] = q_host_list,
	[TWL_RQ_HOST_ONE] = q_host_one,
	[TWL_RQ_HOST_FEATURES] = q_host_features,
	[TWL_RQ_HOST_UNKNOWN] = q_host_unknown,
	[TWL_RQ_HOST_LABELS] = q_host_labels,
	[TWL_RQ_HOST_KEYS] = q_host_keys,
	[TWL_RQ_FH_RANGE] = q_fh_range,
	[TWL_RQ_WARNINGS] = q_warn_count,
	[TWL_RQ_TOP_CGROUPS] = q_top_cgroups,
	[TWL_RQ_TOP_CONTAINERS] = q_top_containers,
	[TWL_RQ_TOP_PROCESSES] = q_top_processes,
	[TWL_RQ_KERNELS] = q_kernels,
};
