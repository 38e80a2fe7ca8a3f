// SPDX-License-Identifier: GPL-2.0
/*
 * SQLite backend of the storage interface (store.h): its connections
 * (writer, reader, credentials), their pragmas, migrations and the
 * catalog seed at open, and the locks the other store_sqlite*.c files
 * take. Statements are prepared once, at open, by the file that runs them,
 * and kept; every value is bound, never formatted into SQL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "store/sqlite/checkpoint.h"
#include "store/sqlite/migrate.h"
#include "store/sqlite/store_sqlite_internal.h"
#include "store/sqlite/wal_buffer.h"
#include "store/sqlite/wal_sync.h"

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_INTERRUPT: /* twl_store_stop_reads() */
		return -ECANCELED;
	default:
		return -EIO;
	}
}

static int open_conn(const char *path, const char *vfs, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open_v2(path, &db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     vfs);
	if (rc != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(db, 5000);
	rc = sqlite3_exec(
		db,
		/*
		 * synchronous=FULL: every COMMIT syncs the WAL before it
		 * returns, so a batch is acknowledged only once a power loss
		 * cannot roll it back (the agent deletes it on the answer).
		 * Group commit pays one sync for up to commit-max batches.
		 */
		"PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
		" PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
		/*
		 * 32 MiB of page cache per connection (default 2 MiB): ingest
		 * touches index pages all over the usage table, and every
		 * cache miss is a pread() copy (~12% of the writer's CPU).
		 */
		" PRAGMA cache_size = -32768;",
		NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	*out = db;
	return 0;
fail:
	twl_log(LOG_DEBUG, "sqlite open %s: %s", path,
		db ? sqlite3_errmsg(db) : "no memory");
	sqlite3_close(db);
	return twl_sqlite_errno(rc);
}

/*
 * Process-wide SQLite settings. They only take before SQLite initialises,
 * so this runs before main() and before any other constructor that uses
 * SQLite (one at the default priority would initialise it; when this ran
 * from twl_store_open() it came too late and was refused). In a process that
 * initialised SQLite even earlier they are refused, and only speed
 * suffers.
 *
 * SQLite counts every allocation under one global mutex unless told not
 * to (SQLITE_CONFIG_MEMSTATUS). Nothing here reads those statistics, and
 * the mutex was 3% of the ingest writer's time (perf, bench/server-load).
 */
__attribute__((constructor(101))) static void sqlite_cfg(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_prepare_all(const char *path, sqlite3 *db,
			   const char *const *sql, int n, sqlite3_stmt **st,
			   const char *what)
{
	for (int i = 0; i < n; i++) {
		if (sqlite3_prepare_v3(db, sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &st[i],
				       NULL) != SQLITE_OK) {
			twl_log(LOG_ERR, "%s: preparing %s statement %d: %s",
				path, what, i, sqlite3_errmsg(db));
			return -EIO;
		}
	}
	return 0;
}

/* Contract: see store.h. */
int twl_store_open(const char *path, struct twl_store **out)
{
	struct twl_store *s;
	char err[256];
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = &twl_sqlite_ops;
	pthread_mutex_init(&s->wlock, NULL);
	pthread_mutex_init(&s->rlock, NULL);
	pthread_mutex_init(&s->alock, NULL);
	s->path = strdup(path);
	if (!s->path) {
		ret = -ENOMEM;
		goto fail;
	}
	/* the writer's WAL writes gathered (wal_buffer.h), if it registers */
	ret = open_conn(path, twl_walbuf_register() ? NULL : TWL_WALBUF_VFS,
			&s->wdb);
	if (ret)
		goto fail;
	ret = twl_migrate(s->wdb, err, sizeof(err));
	if (ret < 0) {
		twl_log(LOG_ERR, "%s: %s", path, err);
		goto fail;
	}
	ret = twl_catalog_seed(s->wdb, err, sizeof(err));
	if (ret) {
		twl_log(LOG_ERR, "%s: %s", path, err);
		goto fail;
	}
	ret = open_conn(path, NULL, &s->rdb);
	if (!ret)
		ret = open_conn(path, NULL, &s->adb);
	if (ret)
		goto fail;
	ret = twl_sqlite_ingest_prepare(s);
	if (!ret)
		ret = twl_sqlite_ingest_host_prepare(s);
	if (!ret)
		ret = twl_sqlite_ingest_usage_prepare(s);
	if (!ret)
		ret = twl_sqlite_rollup_prepare(s);
	if (!ret)
		ret = twl_sqlite_tokens_prepare(s);
	if (!ret)
		ret = twl_sqlite_maint_prepare(s);
	if (!ret)
		ret = twl_sqlite_catalog_check(s);
	if (ret)
		goto fail;
	s->wsync = twl_wal_sync_open(s->wdb);
	if (!s->wsync)
		twl_log(LOG_WARNING,
			"%s: cannot sync the WAL apart (%s); every group commit waits for its own sync",
			path, strerror(errno));
	ret = twl_ckpt_start(path, s->wdb, &s->ckpt);
	if (ret)
		twl_log(LOG_WARNING,
			"%s: no checkpoint thread (%s); the writer checkpoints the WAL itself",
			path, strerror(-ret));
	*out = s;
	return 0;
fail:
	twl_store_close(s);
	return ret;
}

/* Finalize every statement still prepared on db, then close it. */
static void close_conn(sqlite3 *db)
{
	sqlite3_stmt *st;

	while (db && (st = sqlite3_next_stmt(db, NULL)))
		sqlite3_finalize(st);
	sqlite3_close(db);
}

/*
 * Contract: see store_sqlite_internal.h. Why it stops when this fails: every other write on wdb (admin, tokens,
 * retention, autocommit statements) syncs in its own COMMIT again. SQLite
 * fails this only without memory; a connection left at NORMAL would make
 * those writes' answers promise what a power loss can take back, so the
 * server stops instead (restarted, it recovers from the WAL as after a
 * crash; nothing acknowledged is lost).
 */
void twl_sqlite_full_sync_again(struct twl_store *s)
{
	if (!s->deferred)
		return;
	s->deferred = false;
	if (sqlite3_exec(s->wdb, "PRAGMA synchronous = FULL", NULL, NULL,
			 NULL) == SQLITE_OK)
		return;
	twl_log(LOG_CRIT,
		"%s: cannot set synchronous = FULL again after a group commit (%s): stopping so that no later write is acknowledged before it is durable; restart the server",
		s->path, sqlite3_errmsg(s->wdb));
	abort();
}

/*
 * Contract: see store.h. The safety level cannot change inside a
 * transaction, so it is set before BEGIN and set back after the end.
 */
int twl_store_write_begin_deferred(struct twl_store *s)
{
	int rc;

	if (!s->wsync)
		return twl_store_write_begin(s);
	pthread_mutex_lock(&s->wlock);
	rc = sqlite3_exec(s->wdb, "PRAGMA synchronous = NORMAL", NULL, NULL,
			  NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	s->deferred = true;
	if (rc != SQLITE_OK) {
		twl_sqlite_full_sync_again(s);
		pthread_mutex_unlock(&s->wlock);
		return twl_sqlite_errno(rc);
	}
	return 0;
}

/* Contract: see store.h. */
int twl_store_sync(struct twl_store *s)
{
	return s->wsync ? twl_wal_sync(s->wsync) : 0;
}

/* Contract: see store.h. */
void twl_store_close(struct twl_store *s)
{
	if (!s)
		return;
	twl_ckpt_stop(s->ckpt);
	twl_wal_sync_free(s->wsync);
	close_conn(s->adb);
	close_conn(s->rdb);
	close_conn(s->wdb);
	pthread_mutex_destroy(&s->wlock);
	pthread_mutex_destroy(&s->rlock);
	pthread_mutex_destroy(&s->alock);
	free(s->path);
	free(s);
}

/* Contract: see store.h. */
int twl_store_schema_version(struct twl_store *s)
{
	sqlite3_stmt *st;
	int v = -EIO;

	pthread_mutex_lock(&s->rlock);
	if (sqlite3_prepare_v2(s->rdb, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	pthread_mutex_unlock(&s->rlock);
	return v;
}

/* Contract: see store_sqlite_internal.h. */
sqlite3 *twl_store_read_lock(struct twl_store *s)
{
	pthread_mutex_lock(&s->rlock);
	return s->rdb;
}

/* Contract: see store_sqlite_internal.h. */
void twl_store_read_unlock(struct twl_store *s)
{
	pthread_mutex_unlock(&s->rlock);
}

/* Contract: see store_sqlite_internal.h. */
sqlite3 *twl_store_admin_write_lock(struct twl_store *s)
{
	pthread_mutex_lock(&s->wlock);
	return s->wdb;
}

/* Contract: see store_sqlite_internal.h. */
void twl_store_admin_write_unlock(struct twl_store *s)
{
	pthread_mutex_unlock(&s->wlock);
}
