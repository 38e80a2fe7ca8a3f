// SPDX-License-Identifier: GPL-2.0
/*
 * Stored data and the server's catalog on SQLite (store.h,
 * twl_store_catalog_rematch()): unknown texts matched to a feature once
 * the catalog learns their feature id or a message that matches their
 * text, and the check at open of whether the catalog changed since the
 * last time that was done (server_meta, "catalog_rematched").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>

#include "store/catalog_print.h"
#include "store/sqlite/migrate.h"
#include "store/sqlite/store_sqlite_internal.h"

/*
 * Each unmatched text's feature in the catalog as it is now, summed per
 * (feature, host) into feature_host as the writer would have at ingest:
 * warnings, never uses (8 = TWL_KIND_WARNING; the triggers keep
 * feature_day and feature_hour), then marked matched.
 * Both statements select the same rows: the second leaves none of them.
 */
static const char rematch_rollup[] =
	"INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
	" warnings, last_hour, kinds)"
	" SELECT f, host_id, min(first_time), max(first_time), sum(count),"
	" max(first_time) / 3600, 8 FROM (SELECT twl_rematch(feature_id, text)"
	" AS f, host_id, first_time, count FROM unknown_deprecations"
	" WHERE matched_feature_id IS NULL) WHERE f IS NOT NULL"
	" GROUP BY f, host_id"
	" ON CONFLICT(host_id, feature_id) DO UPDATE SET"
	" first_used = min(first_used, excluded.first_used),"
	" last_used = max(last_used, excluded.last_used),"
	" last_hour = max(last_hour, excluded.last_hour),"
	" warnings = warnings + excluded.warnings,"
	" kinds = kinds | excluded.kinds";

static const char rematch_mark[] =
	"UPDATE unknown_deprecations SET"
	" matched_feature_id = twl_rematch(feature_id, text)"
	" WHERE matched_feature_id IS NULL"
	" AND twl_rematch(feature_id, text) IS NOT NULL";

/*
 * twl_rematch(feature_id, text): the catalog feature an unknown text now
 * belongs to, or NULL. A text with a feature id (a warning the catalog
 * lacked) belongs to that id once the catalog holds it, and to nothing
 * else; one without is matched by its digit-normalised text.
 */
static void rematch_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *id = (const char *)sqlite3_value_text(argv[0]);
	const char *text = (const char *)sqlite3_value_text(argv[1]);
	const struct twl_feature *f = NULL;
	struct twl_match m;

	(void)argc;
	if (id)
		f = twl_catalog_find(id);
	else if (text && twl_match_normalized(text, strlen(text), &m) == 1)
		f = m.feature;
	if (f)
		sqlite3_result_text(ctx, f->id, -1, SQLITE_STATIC);
	else
		sqlite3_result_null(ctx);
}

static int exec_count(sqlite3 *db, const char *sql, int64_t *n)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return twl_sqlite_errno(rc);
	if (n)
		*n = sqlite3_changes(db);
	return 0;
}

/* Contract: see store.h. */
int twl_store_catalog_rematch(struct twl_store *s, int64_t *n)
{
	int ret;

	if (n)
		*n = 0;
	ret = twl_store_write_begin(s);
	if (ret)
		return ret;
	/* Direct only: no schema object (trigger, view) can call it. */
	if (sqlite3_create_function_v2(
		    s->wdb, "twl_rematch", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY,
		    NULL, rematch_fn, NULL, NULL, NULL) != SQLITE_OK)
		ret = -ENOMEM;
	if (!ret)
		ret = exec_count(s->wdb, rematch_rollup, NULL);
	if (!ret)
		ret = exec_count(s->wdb, rematch_mark, n);
	return ret ? (twl_store_write_end(s, false), ret) :
		     twl_store_write_end(s, true);
}

static const char meta_get[] =
	"SELECT value FROM server_meta WHERE key = 'catalog_rematched'";
static const char meta_set[] =
	"INSERT INTO server_meta(key, value) VALUES('catalog_rematched', ?1)"
	" ON CONFLICT(key) DO UPDATE SET value = excluded.value";

/* 1 when server_meta says the catalog @print was rematched, 0 if not. */
static int catalog_seen(sqlite3 *db, const char *print)
{
	sqlite3_stmt *st;
	int rc, seen = 0;

	rc = sqlite3_prepare_v2(db, meta_get, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return twl_sqlite_errno(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		seen = !strcmp((const char *)sqlite3_column_text(st, 0), print);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? seen :
						       twl_sqlite_errno(rc);
}

static int catalog_note(sqlite3 *db, const char *print)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db, meta_set, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return twl_sqlite_errno(rc);
	sqlite3_bind_text(st, 1, print, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : twl_sqlite_errno(rc);
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_catalog_check(struct twl_store *s)
{
	char print[64];
	int64_t n;
	int ret;

	twl_catalog_print(print, sizeof(print));
	ret = catalog_seen(s->wdb, print);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = twl_store_catalog_rematch(s, &n);
	if (!ret)
		ret = catalog_note(s->wdb, print); /* autocommit */
	if (ret)
		twl_log(LOG_ERR,
			"%s: matching unknown deprecation texts to catalog %s failed: %s (free disk space and start again; a damaged database: restore the last backup, operators guide, \"Backup and restore\")",
			s->path, print, strerror(-ret));
	else if (n)
		twl_log(LOG_NOTICE,
			"%s: catalog %s is new to this database: %" PRId64
			" unknown deprecation texts matched to its features",
			s->path, print, n);
	return ret;
}
