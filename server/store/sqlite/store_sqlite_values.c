// SPDX-License-Identifier: GPL-2.0
/*
 * The queries of the values written to a feature's control files on
 * SQLite, which store/read_values.c sums up for the read API and the
 * export (twl_answer_values()): from the BPF usage rows' value summaries
 * (migration 013) and from the census's knobs.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <twilight/catalog.h>

#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"

/* A cgroup is counted per host: the path alone is not unique. */
#define CG " host_id || char(31) || cgroup"

/*
 * Every query comes twice: over the fleet (H is ALL) and over one host
 * (ONE: host_id ?5, for the host page), so each keeps a plan of its own.
 */
#define ALL ""
#define ONE " AND host_id = ?5"

/* Usage rows of the feature in the range that carry a value summary. */
#define WRITES(H)                                                             \
	" FROM usage WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3" H \
	" AND op = 'write' AND value_unit IS NOT NULL" TWL_SQL_LABELED(       \
		"host_id")

/*
 * What was written: every cgroup with a value, those set to a finite
 * value (min and max of those), those reset to unlimited.
 */
#define Q_WRITTEN(H)                                                     \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id),"         \
	" count(DISTINCT comm),"                                         \
	" count(DISTINCT" CG ") FILTER (WHERE value_min IS NOT NULL),"   \
	" count(DISTINCT host_id) FILTER (WHERE value_min IS NOT NULL)," \
	" count(DISTINCT comm) FILTER (WHERE value_min IS NOT NULL),"    \
	" min(value_min), max(value_max),"                               \
	" count(DISTINCT" CG ") FILTER (WHERE value_unlimited),"         \
	" count(DISTINCT host_id) FILTER (WHERE value_unlimited),"       \
	" count(DISTINCT comm) FILTER (WHERE value_unlimited)" WRITES(H)

/*
 * The distinct finite values written: a key's summary holds its min, max
 * and last, so those are the values known (others between min and max
 * may have been written too). Per value its cgroups, hosts, processes and
 * the first three process names.
 */
/* clang-format off */
#define Q_WRITTEN_VALUES(H)                                                  \
	"WITH v(x, host_id, cgroup, comm) AS ("                              \
	" SELECT value_min, host_id, cgroup, comm" WRITES(H)                 \
	" AND value_min IS NOT NULL"                                         \
	" UNION ALL SELECT value_max, host_id, cgroup, comm" WRITES(H)       \
	" AND value_max IS NOT NULL"                                         \
	" UNION ALL SELECT value_last, host_id, cgroup, comm" WRITES(H)      \
	" AND value_last >= 0)"                                              \
	" SELECT x, count(DISTINCT" CG "), count(DISTINCT host_id),"         \
	" count(DISTINCT comm), (SELECT json_group_array(comm) FROM"         \
	" (SELECT DISTINCT comm FROM v w WHERE w.x = v.x ORDER BY comm"      \
	" LIMIT 3))"                                                         \
	" FROM v GROUP BY x ORDER BY x LIMIT ?4"
/* clang-format on */

/* Census knobs of the feature seen in the range whose value is a number. */
#define KNOBS(H)                                                                \
	" FROM census_knobs WHERE feature_id = ?1 AND time BETWEEN ?2 AND ?3" H \
	" AND value != '' AND value NOT GLOB '*[^0-9]*'" TWL_SQL_LABELED(       \
		"host_id")

#define Q_CONFIGURED(H)                                          \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id)," \
	" min(CAST(value AS INTEGER)), max(CAST(value AS INTEGER))" KNOBS(H)

#define Q_CONFIGURED_VALUES(H)                                    \
	"SELECT CAST(value AS INTEGER) x, count(DISTINCT" CG ")," \
	" count(DISTINCT host_id)" KNOBS(H) " GROUP BY x ORDER BY x LIMIT ?4"

/* Processes that registered for the feature's notifications. */
#define Q_LISTENERS(H)                                            \
	"SELECT count(DISTINCT comm), count(DISTINCT host_id),"   \
	" count(DISTINCT" CG ") FROM usage WHERE feature_id = ?1" \
	" AND last_seen BETWEEN ?2 AND ?3" H                      \
	" AND op = 'register_event'" TWL_SQL_LABELED("host_id")

/* Contract: see store_sqlite_internal.h (read_values.c composes them). */
const char *const twl_sqlite_values_sql[TWL_RQ_N] = {
	TWL_RQ_VALUES_TABLE(ALL, ONE),
};

/* Contract: see store_sqlite_internal.h. */
int twl_rq_values_into(struct twl_rctx *c, const struct twl_feature *f,
		       int64_t since, int64_t until, json_t *obj)
{
	struct twl_rq_on on = { &twl_sqlite_rq_io, c };

	return twl_answer_values(&on, f, NULL, since, until, obj);
}
