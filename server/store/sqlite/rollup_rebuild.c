// SPDX-License-Identifier: GPL-2.0
/*
 * The rollups rebuilt from the raw rows (rollup_rebuild.h). The
 * statements are those of migration 015's rebuild, extended to the host
 * buckets and coverage counts; the tests' check_recount() compares the
 * same definitions with what ingest and retention keep.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "store/sqlite/rollup_rebuild.h"

/* feature_day as it was, put back by keep_sql */
static const char save_sql[] =
	"DROP TABLE IF EXISTS temp.feature_day_kept;"
	"CREATE TEMP TABLE feature_day_kept AS SELECT * FROM feature_day;";

static const char keep_sql[] =
	"DELETE FROM feature_day;"
	"INSERT INTO feature_day SELECT * FROM temp.feature_day_kept;"
	"DROP TABLE temp.feature_day_kept;";

/* the history restarted from the rows, on each (feature, host)'s last day */
static const char restart_sql[] =
	"DELETE FROM feature_day;"
	"INSERT INTO feature_day(feature_id, day, hosts, uses, last_used, reads,"
	" warnings)"
	" SELECT feature_id, last_used / 86400, sum((kinds & 27) != 0),"
	" sum(uses), max(last_used) FILTER (WHERE kinds & 27), sum(reads),"
	" sum(warnings) FROM feature_host GROUP BY 1, 2;";

static const char rebuild_sql[] =
	/* feature_host's triggers change the buckets rebuilt after it */
	"DELETE FROM feature_host;"
	"INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
	" uses, last_hour, reads, warnings, kinds)"
	" SELECT feature_id, host_id, first_used, last_used, uses,"
	" last_used / 3600, reads, warnings, kinds FROM feature_host_recount;"
	"DELETE FROM feature_hour;"
	"INSERT INTO feature_hour(feature_id, hour, hosts, configuring,"
	" listening, reading_only)"
	" SELECT feature_id, last_hour, sum((kinds & 27) != 0),"
	" sum((kinds & 17) != 0), sum((kinds & 2) != 0), sum(kinds = 4)"
	" FROM feature_host GROUP BY 1, 2;"
	"DELETE FROM feature_comm;"
	"INSERT INTO feature_comm(feature_id, comm, configures, listens, reads)"
	" SELECT feature_id, comm, sum(op = 'write'),"
	" sum(op = 'register_event'),"
	" sum(op NOT IN ('write', 'register_event'))"
	" FROM usage GROUP BY 1, 2;"
	"DELETE FROM host_hour;"
	"INSERT INTO host_hour(cgroup_mode, hour, hosts)"
	" SELECT cgroup_mode, last_hour, count(*) FROM hosts GROUP BY 1, 2;"
	"UPDATE coverage_count SET hosts = (SELECT count(*) FROM host_coverage"
	" WHERE (facts >> coverage_count.bit) & 1);";

/* Contract: see rollup_rebuild.h. */
int twl_rollup_rebuild(sqlite3 *db, bool keep_history, char *err,
		       size_t err_cap)
{
	const char *const steps[] = { keep_history ? save_sql : "", rebuild_sql,
				      keep_history ? keep_sql : restart_sql };
	char *msg = NULL;
	size_t i;

	for (i = 0; i < 3; i++)
		if (sqlite3_exec(db, steps[i], NULL, NULL, &msg) != SQLITE_OK)
			break;
	if (i == 3)
		return 0;
	if (err_cap)
		snprintf(err, err_cap, "rebuilding the rollups: %s",
			 msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}
