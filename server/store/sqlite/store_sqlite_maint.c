// SPDX-License-Identifier: GPL-2.0
/*
 * Upkeep of the SQLite store (store.h): retention, the WAL's size limit,
 * the statistics of both (database size, the writer's own WAL
 * checkpoints) that /metrics shows, the start-up integrity check and
 * /healthz's look at the file.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store/sqlite/checkpoint.h"
#include "store/sqlite/store_sqlite_internal.h"

/* on the reader connection */
static const char pages_sql[] =
	"SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()";

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_maint_prepare(struct twl_store *s)
{
	const char *const sql[] = { pages_sql };

	return twl_sqlite_prepare_all(s->path, s->rdb, sql, 1, &s->pages,
				      "database size");
}

static int exec_del(sqlite3 *db, const char *sql, int64_t cutoff,
		    int64_t *total)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return twl_sqlite_errno(rc);
	sqlite3_bind_int64(st, 1, cutoff);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	*total += sqlite3_changes(db);
	return 0;
}

/*
 * Retention keeps the rollups a recount of the rows it keeps (migration
 * 015): the (feature, host) pairs whose rows it deletes are noted first,
 * then recounted from feature_host_recount, and dropped when nothing of
 * them is left. The triggers move each recounted host between
 * feature_hour's per-kind counts; feature_day, a history, only grows.
 */
static const char *const prune_note[] = {
	"INSERT OR IGNORE INTO temp.pruned SELECT feature_id, host_id"
	" FROM usage WHERE last_seen < ?1",
	"INSERT OR IGNORE INTO temp.pruned SELECT feature_id, host_id"
	" FROM warnings WHERE received < ?1",
	"INSERT OR IGNORE INTO temp.pruned SELECT matched_feature_id, host_id"
	" FROM unknown_deprecations WHERE received < ?1"
	" AND matched_feature_id IS NOT NULL",
	"INSERT OR IGNORE INTO temp.pruned SELECT feature_id, host_id"
	" FROM census_knobs WHERE time < ?1",
	"INSERT OR IGNORE INTO temp.pruned SELECT feature_id, host_id"
	" FROM feature_host WHERE last_used < ?1",
};

static const char *const prune_del[] = {
	"DELETE FROM warnings WHERE received < ?1",
	/* a key's counts go with it (trigger usage_key_del, migration 021) */
	("DELETE FROM usage_key WHERE id IN"
	 " (SELECT id FROM usage_count WHERE last_seen < ?1)"),
	"DELETE FROM unknown_deprecations WHERE received < ?1",
	"DELETE FROM census_knobs WHERE time < ?1",
};

/* ?1 unused: exec_del() binds it to every statement */
static const char *const prune_recount[] = {
	"UPDATE feature_host SET (first_used, last_used, last_hour, uses, reads,"
	" warnings, kinds) = (SELECT r.first_used, r.last_used,"
	" r.last_used / 3600, r.uses, r.reads, r.warnings, r.kinds"
	" FROM feature_host_recount r WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)"
	" WHERE ?1 IS NOT NULL AND (feature_id, host_id) IN"
	" (SELECT feature_id, host_id FROM temp.pruned) AND EXISTS"
	" (SELECT 1 FROM feature_host_recount r"
	" WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)",
	"DELETE FROM feature_host WHERE ?1 IS NOT NULL AND (feature_id, host_id)"
	" IN (SELECT feature_id, host_id FROM temp.pruned) AND NOT EXISTS"
	" (SELECT 1 FROM feature_host_recount r"
	" WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)",
};

/* Delete the data rows older than @cut, the rollups recounted. */
static int prune_data(sqlite3 *db, int64_t cut, int64_t *total)
{
	int64_t ignored = 0;
	size_t i;
	int ret;

	ret = twl_sqlite_errno(sqlite3_exec(
		db,
		"CREATE TEMP TABLE IF NOT EXISTS pruned(feature_id TEXT,"
		" host_id TEXT, PRIMARY KEY (feature_id, host_id)) WITHOUT ROWID;"
		"DELETE FROM temp.pruned",
		NULL, NULL, NULL));
	for (i = 0; !ret && i < sizeof(prune_note) / sizeof(*prune_note); i++)
		ret = exec_del(db, prune_note[i], cut, &ignored);
	for (i = 0; !ret && i < sizeof(prune_del) / sizeof(*prune_del); i++)
		ret = exec_del(db, prune_del[i], cut, total);
	/* a recounted row is not a deleted one: the deletions only count */
	if (!ret)
		ret = exec_del(db, prune_recount[0], cut, &ignored);
	if (!ret)
		ret = exec_del(db, prune_recount[1], cut, total);
	if (!ret)
		ret = twl_sqlite_errno(sqlite3_exec(
			db, "DELETE FROM temp.pruned", NULL, NULL, NULL));
	return ret;
}

/* Contract: see store.h. */
int twl_store_prune(struct twl_store *s, int64_t now, int batch_days,
		    int data_days, int64_t *deleted)
{
	int64_t total = 0;
	int ret;

	ret = twl_store_write_begin(s);
	if (ret)
		return ret;
	ret = exec_del(s->wdb, "DELETE FROM batch_ids WHERE received < ?1",
		       now - (int64_t)batch_days * 86400, &total);
	/* what replays of those batches would add again (migration 016) */
	if (!ret)
		ret = exec_del(s->wdb,
			       "DELETE FROM unknown_counts WHERE received < ?1",
			       now - (int64_t)batch_days * 86400, &total);
	if (!ret && data_days > 0)
		ret = prune_data(s->wdb, now - (int64_t)data_days * 86400,
				 &total);
	ret = ret ? (twl_store_write_end(s, false), ret) :
		    twl_store_write_end(s, true);
	if (!ret && deleted)
		*deleted = total;
	return ret;
}

/* Contract: see store.h. */
int twl_store_set_wal_max(struct twl_store *s, uint64_t bytes)
{
	sqlite3_stmt *st = NULL;
	int64_t psize = 0;
	uint64_t pages;
	int rc;

	if (!s->ckpt)
		return -ENOTSUP;
	pthread_mutex_lock(&s->rlock);
	rc = sqlite3_prepare_v2(s->rdb, "PRAGMA page_size", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		psize = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->rlock);
	if (psize <= 0)
		return rc == SQLITE_OK ? -EIO : twl_sqlite_errno(rc);
	pages = bytes / (uint64_t)psize;
	return twl_ckpt_set_limit(s->ckpt,
				  pages > INT_MAX ? INT_MAX : (int)pages);
}

/* Contract: see store.h. */
int twl_store_wal_catchups(struct twl_store *s, uint64_t *n, double *seconds)
{
	uint64_t ns;

	if (!s->ckpt)
		return -ENOTSUP;
	twl_ckpt_stats(s->ckpt, n, &ns);
	*seconds = (double)ns / 1e9;
	return 0;
}

/* Contract: see store.h. */
int twl_store_db_size(struct twl_store *s, int64_t *bytes)
{
	sqlite3_stmt *st = s->pages;
	int rc;

	pthread_mutex_lock(&s->rlock);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*bytes = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	pthread_mutex_unlock(&s->rlock);
	return rc == SQLITE_ROW ? 0 : twl_sqlite_errno(rc);
}

/* Contract: see store.h. */
int twl_store_check(struct twl_store *s, char *problem, size_t cap)
{
	sqlite3 *db = twl_store_read_lock(s);
	const unsigned char *row;
	sqlite3_stmt *st;
	int rc, ret;

	problem[0] = '\0';
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		snprintf(problem, cap, "%s", sqlite3_errmsg(db));
		twl_store_read_unlock(s);
		return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ?
			       -EUCLEAN :
			       twl_sqlite_errno(rc);
	}
	rc = sqlite3_step(st);
	row = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	if (row && !strcmp((const char *)row, "ok")) {
		ret = 0;
	} else {
		snprintf(problem, cap, "%s",
			 row ? (const char *)row : sqlite3_errmsg(db));
		ret = row || (rc & 0xff) == SQLITE_CORRUPT ?
			      -EUCLEAN :
			      twl_sqlite_errno(rc);
		if (!ret)
			ret = -EIO; /* no answer at all */
	}
	sqlite3_finalize(st);
	twl_store_read_unlock(s);
	return ret;
}

/*
 * Contract: see store.h. The file open, and still where it was: a
 * database deleted or moved away under the server takes every write
 * with it.
 */
int twl_store_ping(struct twl_store *s, const char **backend, char *problem,
		   size_t cap)
{
	*backend = "sqlite";
	struct stat st;

	if (!s->wdb) {
		snprintf(problem, cap, "the database is not open");
		return -EBADF;
	}
	if (stat(s->path, &st)) {
		snprintf(problem, cap, "database file %s: %s", s->path,
			 strerror(errno));
		return -errno;
	}
	return 0;
}
