// SPDX-License-Identifier: GPL-2.0
/*
 * The read API's figures per kind of use (migration 015): hosts and
 * processes that configure, listen or only read a feature, and the reads
 * and kernel warnings counted apart from uses. From the rollups ingest
 * keeps (feature_hour, feature_day, feature_comm), or one index range of
 * feature_host for a time range of feature detail.
 */
#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"

/*
 * Feature detail's reads on days ?2..?3: feature_day's, whose days are
 * the fleet's; under a label filter the labelled hosts' read rows last
 * seen in those days (as q_day_uses has their uses).
 */
static const char q_day_reads[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT coalesce(sum(reads), 0) FROM feature_day"
	" WHERE feature_id = ?1 AND day BETWEEN ?2 AND ?3)"
	" ELSE (SELECT coalesce(sum(count), 0) FROM usage"
	" WHERE feature_id = ?1 AND op = 'read'"
	" AND last_seen / 86400 BETWEEN ?2 AND ?3" TWL_SQL_LABELED(
		"host_id") ") END";

/*
 * Processes per kind of use (migration 015): feature_comm's, kept for
 * the fleet; under a label filter counted from the labelled hosts' usage
 * rows as feature_comm's triggers count them.
 */
#define COMM_KINDS(from)                                           \
	"SELECT count(*) FILTER (WHERE configures + listens > 0)," \
	" count(*) FILTER (WHERE configures > 0),"                 \
	" count(*) FILTER (WHERE listens > 0),"                    \
	" count(*) FILTER (WHERE configures + listens = 0 AND reads > 0)" from

/* a process that configures or listens is never a read-only one */
static const char q_comm_kinds[] =
	COMM_KINDS(" FROM feature_comm WHERE feature_id = ?1");

static const char q_comm_kinds_labeled[] =
	COMM_KINDS(" FROM (SELECT sum(op = 'write') configures,"
		   " sum(op = 'register_event') listens,"
		   " sum(op NOT IN ('write', 'register_event')) reads"
		   " FROM usage WHERE feature_id = ?1" TWL_SQL_LABELED(
			   "host_id") " GROUP BY comm)");

/* Contract: see store_sqlite_internal.h (read_answers.c, read_feature.c). */
const char *const twl_sqlite_kinds_sql[TWL_RQ_N] = {
	[TWL_RQ_COMM_KINDS] = q_comm_kinds,
	[TWL_RQ_DAY_READS] = q_day_reads,
	[TWL_RQ_COMM_KINDS_LABELED] = q_comm_kinds_labeled,
};
