/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every rollup the ingest path and its triggers keep, rebuilt from the raw
 * rows (feature_day, a history, kept or restarted): the one definition of what they hold, run by the schema migrations
 * that rebuild them (migrate.c) and by the fleet database seed
 * (bench/server-seed), so that neither writes rollups of its own.
 */
#ifndef TWL_SERVER_ROLLUP_REBUILD_H
#define TWL_SERVER_ROLLUP_REBUILD_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

/*
 * twl_rollup_rebuild - replace feature_host, feature_hour, feature_day,
 * feature_comm, host_hour and coverage_count with a GROUP BY recount of
 * the raw rows (usage, warnings, matched unknown texts, census values,
 * hosts, host_coverage) on @db, inside the caller's transaction (the
 * schema of the latest migration). feature_day is a history that
 * retention never lowers, not a recount: with @keep_history it stays as
 * it was (a migration must not lose a timeline), else it restarts from
 * each (feature, host)'s last day, as in migration 015 (a seed with no
 * history). 0, or -EIO with SQLite's message in @err (@err_cap bytes, may
 * be 0).
 */
int twl_rollup_rebuild(sqlite3 *db, bool keep_history, char *err,
		       size_t err_cap);

#endif /* TWL_SERVER_ROLLUP_REBUILD_H */
