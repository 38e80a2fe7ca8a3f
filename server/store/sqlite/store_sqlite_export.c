// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's data on SQLite (twl_read_export_data(), see
 * store_read.h and api/export.h): composed for both backends
 * (store/read_export.c) from this file's queries (twl_sqlite_export_sql),
 * the coverage counts among them (also the summary's). Workloads are
 * grouped in C (read_export_workloads.c) from the usage rows these give.
 */
#include <errno.h>
#include <stdint.h>

#include "store/read_answers.h"
#include "store/read_export.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/* ---- queries ------------------------------------------------------ */

/*
 * The hosts' indexes hold last_hour, not last_seen (migration 008).
 * A count "last_seen >= T" is the whole hours after T's from the
 * index alone, plus T's own hour filtered exactly in the rows: a
 * look-up per host of that hour only. INDEXED BY, as for
 * feature_host (q_fh_range, store_sqlite_read.c).
 */
static const char q_hosts_since[] =
	"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
	" WHERE last_hour > ?1 / 3600" TWL_SQL_LABELED(
		"host_id") ") +"
			   " (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
			   " WHERE last_hour = ?1 / 3600 AND last_seen >= ?1" TWL_SQL_LABELED(
				   "host_id") ")";

static const char q_hosts_mode[] =
	"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
	" WHERE cgroup_mode = ?1 AND last_hour > ?2 / 3600" TWL_SQL_LABELED(
		"host_id") ") +"
			   " (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
			   " WHERE cgroup_mode = ?1 AND last_hour = ?2 / 3600"
			   " AND last_seen >= ?2" TWL_SQL_LABELED(
				   "host_id") ")";

/*
 * The rows of the workloads that use the feature (read_export_workloads.c
 * groups them as docs/workloads.md defines a workload): writes and event
 * registrations (configures, listens); a read is monitoring, not a use,
 * and never makes a workload row (docs/api.md, "Kinds of use"). Summed
 * per host and workload's columns, host by host.
 */
static const char q_exp_uses[] =
	"SELECT host_id, comm, writer_cgroup, container,"
	" coalesce(target_kind, ''), cgroup, coalesce(image, ''), sum(count)"
	" FROM usage WHERE feature_id = ?1 AND last_seen >= ?2"
	" AND op != 'read'" TWL_SQL_LABELED(
		"host_id") " GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1";

/*
 * The hosts using the feature (as hosts_using counts them, q_fh_range)
 * by the value of host label ?4 (NULL: hosts without it).
 */
static const char q_exp_by_label[] =
	"SELECT l.value, count(*) FROM feature_host fh"
	" INDEXED BY feature_host_last_hour"
	" LEFT JOIN host_labels l ON l.host_id = fh.host_id AND l.key = ?4"
	" WHERE fh.feature_id = ?1 AND fh.last_hour >= ?2 / 3600"
	" AND fh.last_used >= ?2 AND fh.kinds & 27" TWL_SQL_LABELED(
		"fh.host_id") " GROUP BY l.value ORDER BY 2 DESC, l.value IS NULL, 1 LIMIT ?3";

/* the hosts using it, as hosts_using counts them: no read-only host */
static const char q_exp_hostnames[] =
	"SELECT h.hostname FROM feature_host fh"
	" INDEXED BY feature_host_last_hour"
	" JOIN hosts h ON h.host_id = fh.host_id"
	" WHERE fh.feature_id = ?1 AND fh.last_hour >= ?2 / 3600"
	" AND fh.last_used >= ?2 AND fh.kinds & 27" TWL_SQL_LABELED(
		"fh.host_id") " ORDER BY fh.uses DESC, h.hostname LIMIT ?3";

/*
 * The processes that only read the feature on a host (monitoring): per
 * process, the hosts where it read and never wrote or registered, and
 * its reads there. A process that configures or listens on a host is
 * not a reader on that host.
 */
static const char q_exp_readers[] =
	"SELECT comm, count(*), sum(r) FROM (SELECT host_id, comm,"
	"  sum(count) FILTER (WHERE op = 'read') AS r FROM usage"
	"  WHERE feature_id = ?1 AND last_seen >= ?2" TWL_SQL_LABELED(
		"host_id") "  GROUP BY host_id, comm HAVING max(op != 'read') = 0)"
			   " GROUP BY comm ORDER BY 2 DESC, 3 DESC, 1 LIMIT ?3";

/*
 * The kernel warnings of the feature since ?2 (and the unknown texts the
 * catalog matched to it since), each with the kernel that printed it: the
 * record's own (wire version 2), else the host's.
 */
#define WARN_ROWS                                                                   \
	"SELECT w.host_id AS host_id, coalesce(w.kernel, h.kernel, '')"             \
	"  AS kernel, 1 AS n FROM warnings w INDEXED BY warnings_feature_time"      \
	"  LEFT JOIN hosts h ON h.host_id = w.host_id"                              \
	"  WHERE w.feature_id = ?1 AND w.time >= ?2" TWL_SQL_LABELED(               \
		"w.host_id") " UNION ALL SELECT u.host_id, coalesce(h.kernel, '')," \
			     " u.count FROM unknown_deprecations u"                 \
			     "  LEFT JOIN hosts h ON h.host_id = u.host_id"         \
			     "  WHERE u.matched_feature_id = ?1"                    \
			     "  AND u.first_time >= ?2" TWL_SQL_LABELED(            \
				     "u.host_id")

static const char q_exp_warn_total[] =
	"SELECT count(DISTINCT host_id), coalesce(sum(n), 0)"
	" FROM (" WARN_ROWS ")";
static const char q_exp_warn_kernels[] =
	"SELECT kernel, count(DISTINCT host_id), sum(n) FROM (" WARN_ROWS ")"
	" GROUP BY kernel ORDER BY 2 DESC, 3 DESC, 1 LIMIT ?3";

/*
 * The hosts with coverage facts, and the fleet counts of some facts
 * (kept by migration 014's triggers: a few rows, nothing summed); under
 * a label filter, counted in the labelled hosts' rows instead.
 */
static const char q_cov_hosts[] =
	"SELECT count(*) FROM host_coverage WHERE 1" TWL_SQL_LABELED("host_id");
static const char q_cov_bit[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT hosts FROM coverage_count WHERE bit = ?1)"
	" ELSE (SELECT count(*) FROM host_coverage WHERE facts & (1 << ?1)" TWL_SQL_LABELED(
		"host_id") ") END";
/*
 * Hosts without BPF on the memory controller whose current boot's kernel
 * log the agent did not read (TWL_FACT_NO_LOG_SOURCE): all of them
 * (?1 0), or those of them that sent a census and have BPF on no
 * controller at all (?1 1): the census is their only evidence.
 */
static const char q_cov_blind[] =
	"SELECT count(*) FROM host_coverage c"
	" WHERE (c.facts & 1) = 0 AND (c.facts >> 27) & 1"
	" AND (?1 = 0 OR ((c.facts & 31) = 0 AND EXISTS (SELECT 1 FROM hosts h"
	"  WHERE h.host_id = c.host_id AND h.census_json IS NOT NULL)))" TWL_SQL_LABELED(
		"c.host_id");

/* ---- export data ---------------------------------------------------- */

static const char q_exp_annotations[] =
	"SELECT id, feature_id, workload, text, fits, author, created, intent,"
	" set_by, v2_tried, shortfall, team FROM annotations"
	" WHERE feature_id = ?1 ORDER BY created, id LIMIT 10000"; /* the cap */

/* Contract: see store_sqlite_internal.h. */
const char *const twl_sqlite_export_sql[TWL_RQ_N] = {
	[TWL_RQ_COV_HOSTS] = q_cov_hosts,
	[TWL_RQ_COV_BIT] = q_cov_bit,
	[TWL_RQ_COV_BLIND] = q_cov_blind,
	[TWL_RQ_EXP_HOSTS] = q_hosts_since,
	[TWL_RQ_EXP_HOSTS_MODE] = q_hosts_mode,
	[TWL_RQ_EXP_USES] = q_exp_uses,
	[TWL_RQ_EXP_BY_LABEL] = q_exp_by_label,
	[TWL_RQ_EXP_HOSTNAMES] = q_exp_hostnames,
	[TWL_RQ_EXP_READERS] = q_exp_readers,
	[TWL_RQ_EXP_WARN_TOTAL] = q_exp_warn_total,
	[TWL_RQ_EXP_WARN_KERNELS] = q_exp_warn_kernels,
	[TWL_RQ_EXP_ANNOTATIONS] = q_exp_annotations,
};

/* Contract: see store_read.h. */
int twl_read_export_data(struct twl_store *s, int64_t now, unsigned window_days,
			 const char *feature,
			 const struct twl_export_opts *opts, json_t **out)
{
	return twl_answer_export(&twl_sqlite_rq_io, s, now, window_days,
				 feature, opts, out);
}
