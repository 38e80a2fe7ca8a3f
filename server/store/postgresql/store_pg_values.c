// SPDX-License-Identifier: GPL-2.0
/*
 * The queries of the values written to a feature's control files on
 * PostgreSQL, which store/read_values.c sums up (twl_answer_values()):
 * the SQLite backend's (store/sqlite/store_sqlite_values.c) in
 * PostgreSQL's dialect, over the fleet and over one host. A census value
 * is a number when it is all digits; one past BIGINT's range reads as
 * its largest, as SQLite's CAST reads it.
 */
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"

/* A cgroup is counted per host: the path alone is not unique. */
#define CG " host_id || chr(31) || cgroup"

/* Over the fleet (ALL) and over one host (ONE: host_id $5). */
#define ALL ""
#define ONE " AND host_id = $5"

/* Usage rows of the feature in the range that carry a value summary. */
#define WRITES(H)                                                      \
	" FROM usage WHERE feature_id = $1"                            \
	" AND last_seen BETWEEN $2::bigint AND $3::bigint" H           \
	" AND op = 'write' AND value_unit IS NOT NULL" TWL_PG_LABELED( \
		"host_id")

#define UNLIMITED " FILTER (WHERE value_unlimited != 0)"
#define FINITE " FILTER (WHERE value_min IS NOT NULL)"

#define Q_WRITTEN(H)                                                        \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id),"            \
	" count(DISTINCT comm), count(DISTINCT" CG ")" FINITE               \
	", count(DISTINCT host_id)" FINITE ", count(DISTINCT comm)" FINITE  \
	", min(value_min), max(value_max), count(DISTINCT" CG ")" UNLIMITED \
	", count(DISTINCT host_id)" UNLIMITED                               \
	", count(DISTINCT comm)" UNLIMITED                                  \
	WRITES(H)

/* the values known (min, max, last) and per value the first 3 names */
#define Q_WRITTEN_VALUES(H)                                                                                    \
	"WITH v(x, host_id, cgroup, comm) AS ("                                                                \
	" SELECT value_min, host_id, cgroup, comm" WRITES(                                                     \
		H) " AND value_min IS NOT NULL"                                                                \
		   " UNION ALL SELECT value_max, host_id, cgroup, comm" WRITES(                                \
			   H) " AND value_max IS NOT NULL"                                                     \
			      " UNION ALL SELECT value_last, host_id, cgroup, comm" WRITES(                    \
				      H) " AND value_last >= 0)"                                               \
					 " SELECT x, count(DISTINCT" CG                                        \
					 "), count(DISTINCT host_id),"                                         \
					 " count(DISTINCT comm), (SELECT coalesce(json_agg(n.c ORDER BY n.c)," \
					 " '[]') FROM (SELECT DISTINCT w.comm" TWL_PG_C                        \
					 " AS c FROM v w"                                                      \
					 " WHERE w.x = v.x ORDER BY 1 LIMIT 3) n)"                             \
					 " FROM v GROUP BY x ORDER BY x LIMIT $4::bigint"

/* Census knobs of the feature seen in the range whose value is a number. */
#define KNOBS(H)                                        \
	" FROM census_knobs WHERE feature_id = $1"      \
	" AND time BETWEEN $2::bigint AND $3::bigint" H \
	" AND value != '' AND value !~ '[^0-9]'" TWL_PG_LABELED("host_id")

#define NUM " least(value::numeric, 9223372036854775807)::bigint"

#define Q_CONFIGURED(H)                                          \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id)," \
	" min(" NUM "), max(" NUM ")" KNOBS(H)

#define Q_CONFIGURED_VALUES(H)                                       \
	"SELECT" NUM " AS x, count(DISTINCT" CG "),"                 \
	" count(DISTINCT host_id)" KNOBS(H) " GROUP BY 1 ORDER BY 1" \
					    " LIMIT $4::bigint"

/* Processes that registered for the feature's notifications. */
#define Q_LISTENERS(H)                                            \
	"SELECT count(DISTINCT comm), count(DISTINCT host_id),"   \
	" count(DISTINCT" CG ") FROM usage WHERE feature_id = $1" \
	" AND last_seen BETWEEN $2::bigint AND $3::bigint" H      \
	" AND op = 'register_event'" TWL_PG_LABELED("host_id")

/* Contract: see store_pg_read.h (in read_answers.h's order). */
const char *const twl_pg_values_sql[TWL_RQ_N] = {
	TWL_RQ_VALUES_TABLE(ALL, ONE),
};
