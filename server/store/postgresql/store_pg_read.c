// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet summary, host lists and one host on PostgreSQL (store_read.h):
 * the queries store/read_answers.c composes them from, in PostgreSQL's
 * dialect, each the SQLite backend's of the same name
 * (store/sqlite/store_sqlite_read.c, _kinds.c) over the same tables of
 * migration 002, so the answers are the same JSON. The dialect's
 * differences: a bit test is compared with 0, a boolean is cast to an
 * integer, a text orders and compares as bytes (TWL_PG_C), LIKE folds
 * ASCII case as SQLite's does, and a bare column of an aggregate is
 * taken from the row SQLite takes it from.
 */
#include <stdint.h>

#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/store_read.h"

/* SQLite's LIKE folds ASCII letters only; lower() in "C" does the same */
#define LIKE(col, n)                                        \
	" AND ($" n "::text IS NULL OR lower(" col TWL_PG_C \
	") LIKE lower($" n TWL_PG_C ") ESCAPE '\\')"

/* Contract: see store_pg_read.h. */
const char *const twl_pg_read_sql[TWL_RQ_N] = {
	/* Windows since the start of an hour, from the triggers' hour buckets. */
	[TWL_RQ_HOSTHOUR_SUM] =
		"SELECT coalesce(sum(hosts), 0) FROM host_hour WHERE hour >= $1::bigint",
	[TWL_RQ_HOSTHOUR_MODE_SUM] =
		"SELECT coalesce(sum(hosts), 0) FROM host_hour"
		" WHERE cgroup_mode = $1 AND hour >= $2::bigint",
	/*
	 * A feature's summary in one row, SQLite's q_feature_summary: one
	 * round trip a feature instead of ten.
	 */
	[TWL_RQ_FEATURE_SUMMARY] =
		"SELECT h.h1, h.h7, h.h30, d.uses, h.conf, h.listen, h.ro,"
		" d.reads, d.warnings, c.*,"
		" nullif((SELECT first_used FROM feature_host"
		"  WHERE feature_id = $1 AND (kinds & 27) != 0"
		"  ORDER BY first_used LIMIT 1), 0),"
		" d.last FROM"
		" (SELECT coalesce(sum(hosts) FILTER (WHERE hour >= $2::bigint),"
		"  0) h1,"
		"  coalesce(sum(hosts) FILTER (WHERE hour >= $3::bigint), 0) h7,"
		"  coalesce(sum(hosts), 0) h30,"
		"  coalesce(sum(configuring), 0) conf,"
		"  coalesce(sum(listening), 0) listen,"
		"  coalesce(sum(reading_only), 0) ro FROM feature_hour"
		"  WHERE feature_id = $1 AND hour >= $4::bigint) h,"
		" (SELECT coalesce(sum(uses) FILTER (WHERE day BETWEEN"
		"  $5::bigint AND $6::bigint), 0) uses,"
		"  coalesce(sum(reads) FILTER (WHERE day BETWEEN $5::bigint"
		"  AND $6::bigint), 0) reads,"
		"  coalesce(sum(warnings) FILTER (WHERE day BETWEEN $5::bigint"
		"  AND $6::bigint), 0) warnings,"
		"  nullif(max(last_used), 0) last FROM feature_day"
		"  WHERE feature_id = $1) d,"
		" (SELECT count(*) FILTER (WHERE configures + listens > 0),"
		"  count(*) FILTER (WHERE configures > 0),"
		"  count(*) FILTER (WHERE listens > 0),"
		"  count(*) FILTER (WHERE configures + listens = 0"
		"  AND reads > 0) FROM feature_comm WHERE feature_id = $1) c",
	/*
	 * Uses from $2 to $3 (days): feature_day's; under a label filter the
	 * labelled hosts' usage rows last seen in those days.
	 */
	[TWL_RQ_DAY_USES] =
		"SELECT CASE WHEN $20::text IS NULL"
		" THEN (SELECT coalesce(sum(uses), 0) FROM feature_day"
		" WHERE feature_id = $1 AND day BETWEEN $2::bigint AND $3::bigint)"
		" ELSE (SELECT coalesce(sum(count), 0) FROM usage"
		" WHERE feature_id = $1 AND op != 'read' AND last_seen / 86400"
		" BETWEEN $2::bigint AND $3::bigint" TWL_PG_LABELED(
			"host_id") ") END",
	/* a process that configures or listens is never a read-only one */
	[TWL_RQ_COMM_KINDS] =
		"SELECT count(*) FILTER (WHERE configures + listens > 0),"
		" count(*) FILTER (WHERE configures > 0),"
		" count(*) FILTER (WHERE listens > 0),"
		" count(*) FILTER (WHERE configures + listens = 0 AND reads > 0)"
		" FROM feature_comm WHERE feature_id = $1",
	/* hosts using it: a read-only host is no first use (kinds & 27) */
	[TWL_RQ_FH_FIRST] =
		"SELECT first_used FROM feature_host"
		" WHERE feature_id = $1 AND (kinds & 27) != 0" TWL_PG_LABELED(
			"host_id") " ORDER BY first_used LIMIT 1",
	[TWL_RQ_FH_LAST] =
		"SELECT CASE WHEN $20::text IS NULL"
		" THEN (SELECT max(last_used) FROM feature_day WHERE feature_id = $1)"
		" ELSE (SELECT max(last_used) FROM feature_host"
		" WHERE feature_id = $1" TWL_PG_LABELED("host_id") ") END",
	[TWL_RQ_TIMELINE] =
		"SELECT day, hosts, uses FROM feature_day WHERE feature_id = $1"
		" AND day BETWEEN $2::bigint AND $3::bigint ORDER BY day",
	[TWL_RQ_HOST_LIST] =
		"SELECT " HOST_COLS " FROM hosts h WHERE host_id" TWL_PG_C
		" > $1"
		" AND ($2::bigint IS NULL OR last_seen >= $2::bigint)"
		" AND ($3::bigint IS NULL OR last_seen <= $3::bigint)" LIKE(
			"hostname", "4")
			LIKE("kernel",
			     "5") " AND ($6::text IS NULL OR cgroup_mode = $6)"
				  " AND ($7::text IS NULL OR EXISTS (SELECT 1 FROM feature_host fh"
				  "  WHERE fh.feature_id = $7 AND fh.host_id = h.host_id"
				  "  AND ((fh.kinds & 27) != 0 OR $9::int = 1)"
				  "  AND (fh.kinds = 4 OR $9::int != 1)"
				  "  AND ($2::bigint IS NULL OR fh.last_used >= $2::bigint)"
				  "  AND ($3::bigint IS NULL OR fh.last_used <= $3::bigint)))"
				  " AND ($10::text IS NULL OR EXISTS (SELECT 1 FROM host_labels l"
				  "  WHERE l.host_id = h.host_id AND l.key = $10 AND l.value = $11))"
				  " ORDER BY host_id" TWL_PG_C
				  " LIMIT $8::bigint",
	[TWL_RQ_HOST_ONE] =
		"SELECT " HOST_COLS ", boot_id, catalog_version, last_seq,"
		" health_json, census_json, times_clamped, time_sent_max"
		" FROM hosts WHERE host_id = $1",
	[TWL_RQ_HOST_FEATURES] =
		"SELECT feature_id, first_used, last_used, uses, reads, warnings,"
		" kinds & 17, kinds & 2, (kinds = 4)::int, kinds & 8 FROM feature_host"
		" WHERE host_id = $1 ORDER BY feature_id" TWL_PG_C,
	/*
	 * A text's match from its first row, as SQLite's bare column next to
	 * the one min() takes it.
	 */
	[TWL_RQ_HOST_UNKNOWN] =
		"SELECT text, sum(count), min(first_time),"
		" (array_agg(matched_feature_id ORDER BY first_time))[1]"
		" FROM unknown_deprecations WHERE host_id = $1"
		" GROUP BY text ORDER BY 3, text" TWL_PG_C " LIMIT $2::bigint",
	/* the operator's labels, as the host's last report carrying them set */
	[TWL_RQ_HOST_LABELS] =
		"SELECT coalesce(json_object_agg(key, value ORDER BY key" TWL_PG_C
		"), '{}') FROM host_labels WHERE host_id = $1",
	[TWL_RQ_HOST_KEYS] =
		"SELECT count(*), count(*) FILTER (WHERE revoked IS NOT NULL),"
		" max(created) FROM host_keys WHERE host_id = $1",
	/*
	 * Coverage: the hosts with facts, the fleet count of a fact bit
	 * (migration 002's triggers keep coverage_count; under a label
	 * filter counted in the labelled hosts' rows), and the hosts without
	 * BPF on the memory controller whose boot no log source read (bit
	 * 27), all ($1 0) or those whose census is their only evidence ($1
	 * 1): no BPF on any controller (bits 0-4), a census sent.
	 */
	[TWL_RQ_COV_HOSTS] =
		"SELECT count(*) FROM host_coverage WHERE true" TWL_PG_LABELED(
			"host_id"),
	[TWL_RQ_COV_BIT] =
		"SELECT CASE WHEN $20::text IS NULL"
		" THEN (SELECT hosts FROM coverage_count WHERE bit = $1::bigint)"
		" ELSE (SELECT count(*) FROM host_coverage"
		" WHERE (facts & (1::bigint << $1::int)) != 0" TWL_PG_LABELED(
			"host_id") ") END",
	[TWL_RQ_COV_BLIND] =
		"SELECT count(*) FROM host_coverage c"
		" WHERE (c.facts & 1) = 0 AND ((c.facts >> 27) & 1) = 1"
		" AND ($1::int = 0 OR ((c.facts & 31) = 0 AND EXISTS (SELECT 1"
		" FROM hosts h WHERE h.host_id = c.host_id"
		" AND h.census_json IS NOT NULL)))" TWL_PG_LABELED("c.host_id"),
};
