// SPDX-License-Identifier: GPL-2.0
/* Numbered schema migrations tracked with PRAGMA user_version. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "store/sqlite/migrate.h"
#include "store/sqlite/rollup_rebuild.h"

/*
 * Migrations after whose SQL every rollup is rebuilt from the raw rows by
 * twl_rollup_rebuild(), in the same transaction: their SQL changes what a
 * rollup holds, and the one rebuild says how (the seed of bench/server-seed
 * runs it too).
 */
static const int rebuild_after[] = { 19 };

static bool rebuilds(int version)
{
	for (size_t i = 0; i < sizeof(rebuild_after) / sizeof(*rebuild_after);
	     i++)
		if (rebuild_after[i] == version)
			return true;
	return false;
}

static int migration_number(const char *name)
{
	return atoi(
		name); /* "001_init.sql" -> 1; names are checked by the glob */
}

/* Contract: see migrate.h. */
int twl_migrate_latest(void)
{
	int latest = 0;

	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (migration_number(m->name) > latest)
			latest = migration_number(m->name);
	return latest;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int v = -EIO;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int exec_tx(sqlite3 *db, const char *sql, int version, char *err,
		   size_t err_cap, const char *what)
{
	char *msg = NULL;
	char pragma[64];

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK)
		goto fail;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		goto fail_rollback;
	if (version > 0 && rebuilds(version) &&
	    twl_rollup_rebuild(db, true, NULL, 0)) {
		/* the message, before ROLLBACK replaces it */
		msg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		goto fail_rollback;
	}
	if (version > 0) {
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 version);
		if (sqlite3_exec(db, pragma, NULL, NULL, &msg) != SQLITE_OK)
			goto fail_rollback;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
		goto fail_rollback;
	return 0;
fail_rollback:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
fail:
	if (err_cap)
		snprintf(
			err, err_cap,
			"%s failed and was rolled back: %s (fix the cause, e.g. free disk space, and start again)",
			what, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

/* Contract: see migrate.h. */
int twl_migrate(sqlite3 *db, char *err, size_t err_cap)
{
	int cur = user_version(db);
	int latest = twl_migrate_latest();
	/* Migrations of an empty database take no time: no notice. */
	bool fresh = cur == 0;
	int ret;

	if (cur < 0) {
		if (err_cap)
			snprintf(err, err_cap, "cannot read user_version: %s",
				 sqlite3_errmsg(db));
		return cur;
	}
	if (cur > latest) {
		if (err_cap)
			snprintf(
				err, err_cap,
				"database schema version %d is newer than this binary's %d; run a newer twilight-server",
				cur, latest);
		return -EPROTO;
	}
	for (const struct twl_migration *m = twl_migrations; m->name; m++) {
		int n = migration_number(m->name);

		if (n <= cur)
			continue;
		if (!fresh)
			twl_log(LOG_NOTICE,
				"applying schema migration %s (%d -> %d) in one transaction; on a large database this can take minutes and needs free disk of about the database's size",
				m->name, cur, n);
		ret = exec_tx(db, m->sql, n, err, err_cap, m->name);
		if (ret)
			return ret;
		cur = n;
	}
	return cur;
}

/* Contract: see migrate.h. */
int twl_catalog_seed(sqlite3 *db, char *err, size_t err_cap)
{
	const char *sql = twl_catalog_seed_text();

	if (!sql[0])
		return 0;
	return exec_tx(db, sql, 0, err, err_cap, "catalog seed");
}

/* Contract: see migrate.h. */
const char *twl_catalog_seed_text(void)
{
	const char *loaded = twl_catalog_current()->seed_sql;

	return loaded ? loaded : twl_catalog_seed_sql;
}
