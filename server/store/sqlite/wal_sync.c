// SPDX-License-Identifier: GPL-2.0
/* The writer's WAL synced through a handle of its own (wal_sync.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <twilight/util.h>

#include "store/sqlite/wal_sync.h"

struct twl_wal_sync {
	pthread_mutex_t lock; /* one sync at a time on the file object */
	sqlite3_vfs *vfs;
	sqlite3_file *f; /* vfs->szOsFile bytes, stored right after */
};

/* Contract: see wal_sync.h. */
struct twl_wal_sync *twl_wal_sync_open(sqlite3 *db)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	sqlite3_file *own = NULL;
	struct twl_wal_sync *ws;
	const char *wal;
	int rc, out = 0;

	if (!vfs ||
	    sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
				 &own) != SQLITE_OK ||
	    !own || !own->pMethods) {
		errno = ENOENT;
		return NULL;
	}
	/* also the directory entry of a WAL created since its last sync */
	if (own->pMethods->xSync(own, SQLITE_SYNC_NORMAL) != SQLITE_OK) {
		errno = EIO;
		return NULL;
	}
	ws = calloc(1, sizeof(*ws) + (size_t)vfs->szOsFile);
	if (!ws)
		return NULL;
	pthread_mutex_init(&ws->lock, NULL);
	ws->vfs = vfs;
	ws->f = (sqlite3_file *)(ws + 1);
	wal = sqlite3_filename_wal(sqlite3_db_filename(db, "main"));
	rc = vfs->xOpen(vfs, wal, ws->f,
			SQLITE_OPEN_READWRITE | SQLITE_OPEN_WAL, &out);
	if (rc != SQLITE_OK) {
		twl_log(LOG_DEBUG, "opening %s to sync it: %s", wal,
			sqlite3_errstr(rc));
		twl_wal_sync_free(ws);
		errno = EIO;
		return NULL;
	}
	return ws;
}

/* Contract: see wal_sync.h. */
void twl_wal_sync_free(struct twl_wal_sync *ws)
{
	if (!ws)
		return;
	/* SQLite closes what has methods, even after a failed open */
	if (ws->f->pMethods)
		ws->f->pMethods->xClose(ws->f);
	pthread_mutex_destroy(&ws->lock);
	free(ws);
}

/* Contract: see wal_sync.h. */
int twl_wal_sync(struct twl_wal_sync *ws)
{
	int rc;

	pthread_mutex_lock(&ws->lock);
	rc = ws->f->pMethods->xSync(ws->f, SQLITE_SYNC_NORMAL);
	pthread_mutex_unlock(&ws->lock);
	return rc == SQLITE_OK ? 0 : -EIO;
}
