// SPDX-License-Identifier: GPL-2.0
/*
 * Upkeep of the SQLite store (store.h): retention, the WAL's size limit,
 * the statistics of both (database size, the writer's own WAL
 * checkpoints) that /metrics shows, and the start-up integrity check.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* Contract: see store.h. */
int twl_store_prune(struct twl_store *s, int64_t now, int batch_days,
		    int data_days, int64_t *deleted)
{
	int64_t total = 0;
	int ret;

	ret = twl_store_write_begin(s);
	if (ret)
		return ret;
	ret = exec_del(s->wdb, "DELETE FROM batches WHERE received < ?1",
		       now - (int64_t)batch_days * 86400, &total);
	/* what replays of those batches would add again (migration 016) */
	if (!ret)
		ret = exec_del(s->wdb,
			       "DELETE FROM unknown_counts WHERE received < ?1",
			       now - (int64_t)batch_days * 86400, &total);
	if (!ret && data_days > 0) {
		int64_t cut = now - (int64_t)data_days * 86400;

		ret = exec_del(s->wdb,
			       "DELETE FROM warnings WHERE received < ?1", cut,
			       &total);
		if (!ret)
			ret = exec_del(s->wdb,
				       "DELETE FROM usage WHERE last_seen < ?1",
				       cut, &total);
		if (!ret)
			ret = exec_del(
				s->wdb,
				"DELETE FROM unknown_deprecations WHERE received < ?1",
				cut, &total);
		if (!ret)
			ret = exec_del(
				s->wdb,
				"DELETE FROM feature_host WHERE last_used < ?1",
				cut, &total);
	}
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
