// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's data on PostgreSQL (twl_read_export_data(),
 * store_read.h): the queries store/read_export.c composes it from, in
 * PostgreSQL's dialect, each SQLite's of the same name
 * (store/sqlite/store_sqlite_export.c) over the same tables of migrations
 * 001 and 002, so the export is the same JSON, byte for byte
 * (store_pg_read.h: parameters as text, cast where used; text in byte
 * order). Workloads are grouped in C (read_export_workloads.c) from the
 * usage rows TWL_RQ_EXP_USES gives.
 */
#include <stdint.h>

#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/read_export.h"
#include "store/store_read.h"

/* since: a time, and the start of its hour */
#define SINCE "$2::bigint"
#define SINCE_HOUR "$2::bigint / 3600"

/* the hosts using it since, as hosts_using counts them (TWL_RQ_FH_RANGE) */
#define FH_USING                                                    \
	" WHERE fh.feature_id = $1 AND fh.last_hour >= " SINCE_HOUR \
	" AND fh.last_used >= " SINCE                               \
	" AND (fh.kinds & 27) <> 0" TWL_PG_LABELED("fh.host_id")

/*
 * The kernel warnings of the feature since, and the unknown texts the
 * catalog matched to it since, each with the kernel that printed it: the
 * record's own (wire version 2), else the host's.
 */
#define WARN_ROWS                                                              \
	"SELECT w.host_id AS host_id, coalesce(w.kernel, h.kernel, '')"        \
	" AS kernel, 1::bigint AS n FROM warnings w"                           \
	" LEFT JOIN hosts h ON h.host_id = w.host_id"                          \
	" WHERE w.feature_id = $1 AND w.time >= " SINCE TWL_PG_LABELED(        \
		"w.host_id") " UNION ALL SELECT u.host_id, coalesce(h.kernel," \
			     " ''), u.count FROM unknown_deprecations u"       \
			     " LEFT JOIN hosts h ON h.host_id = u.host_id"     \
			     " WHERE u.matched_feature_id = $1"                \
			     " AND u.first_time >= " SINCE TWL_PG_LABELED(     \
				     "u.host_id")

/* Contract: see store_pg_read.h. */
const char *const twl_pg_export_sql[TWL_RQ_N] = {
	[TWL_RQ_EXP_HOSTS] =
		"SELECT count(*) FROM hosts"
		" WHERE last_hour >= $1::bigint / 3600"
		" AND last_seen >= $1::bigint" TWL_PG_LABELED("host_id"),
	[TWL_RQ_EXP_HOSTS_MODE] =
		"SELECT count(*) FROM hosts WHERE cgroup_mode = $1"
		" AND last_hour >= " SINCE_HOUR
		" AND last_seen >= " SINCE TWL_PG_LABELED("host_id"),
	/* writes and registrations per host and workload's columns */
	[TWL_RQ_EXP_USES] =
		"SELECT host_id, comm, writer_cgroup, container,"
		" coalesce(target_kind, ''), cgroup, coalesce(image, ''),"
		" sum(count) FROM usage WHERE feature_id = $1"
		" AND last_seen >= " SINCE " AND op <> 'read'" TWL_PG_LABELED(
			"host_id") " GROUP BY 1, 2, 3, 4, 5, 6, 7"
				   " ORDER BY host_id" TWL_PG_C,
	/* a host without the label is the group of NULL, last of its ties */
	[TWL_RQ_EXP_BY_LABEL] =
		"SELECT l.value, count(*) FROM feature_host fh"
		" LEFT JOIN host_labels l ON l.host_id = fh.host_id"
		" AND l.key = $4" FH_USING " GROUP BY l.value"
		" ORDER BY 2 DESC, l.value IS NULL, l.value" TWL_PG_C
		" LIMIT $3::bigint",
	[TWL_RQ_EXP_HOSTNAMES] =
		"SELECT h.hostname FROM feature_host fh"
		" JOIN hosts h ON h.host_id = fh.host_id" FH_USING
		" ORDER BY fh.uses DESC, h.hostname" TWL_PG_C
		" LIMIT $3::bigint",
	/* a process that configures or listens on a host reads on none */
	[TWL_RQ_EXP_READERS] =
		"SELECT comm, count(*), sum(r) FROM (SELECT host_id, comm,"
		" sum(count) FILTER (WHERE op = 'read') AS r FROM usage"
		" WHERE feature_id = $1 AND last_seen >= " SINCE TWL_PG_LABELED(
			"host_id") " GROUP BY host_id, comm"
				   " HAVING bool_and(op = 'read')) k"
				   " GROUP BY comm ORDER BY 2 DESC, 3 DESC,"
				   " comm" TWL_PG_C " LIMIT $3::bigint",
	[TWL_RQ_EXP_WARN_TOTAL] =
		"SELECT count(DISTINCT host_id), coalesce(sum(n), 0)"
		" FROM (" WARN_ROWS ") k",
	[TWL_RQ_EXP_WARN_KERNELS] =
		"SELECT kernel, count(DISTINCT host_id), sum(n)"
		" FROM (" WARN_ROWS ") k GROUP BY kernel"
		" ORDER BY 2 DESC, 3 DESC, kernel" TWL_PG_C " LIMIT $3::bigint",
	[TWL_RQ_EXP_ANNOTATIONS] =
		"SELECT id, feature_id, workload, text, fits, author, created,"
		" intent, set_by, v2_tried, shortfall, team FROM annotations"
		" WHERE feature_id = $1 ORDER BY created, id LIMIT 10000",
};

/* Contract: see store_pg_read.h. */
int twl_pg_read_export_data(struct twl_store *s, int64_t now,
			    unsigned window_days, const char *feature,
			    const struct twl_export_opts *opts, json_t **out)
{
	return twl_answer_export(&twl_pg_rq_io, s, now, window_days, feature,
				 opts, out);
}
