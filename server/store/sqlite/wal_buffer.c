// SPDX-License-Identifier: GPL-2.0
/* The writer's WAL writes gathered into large ones (wal_buffer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include <twilight/util.h>

#include "store/sqlite/wal_buffer.h"

#define WALBUF_CAP (1u << 20)
#define WALBUF_CHUNK (64u << 10)

struct wb_file {
	sqlite3_file base;
	sqlite3_file *real; /* the default VFS's file, stored right after */
	struct wb_file *wal; /* a main database: its open WAL */
	struct wb_file *db; /* a WAL: its main database */
	char *buf; /* a WAL: bytes [off, off + len) not written yet */
	size_t len;
	sqlite3_int64 off;
	sqlite3_int64 size; /* a WAL: the file's size as written */
};

static sqlite3_vfs *base_vfs;
static sqlite3_vfs wb_vfs;
static const sqlite3_io_methods wb_methods;

#define WB(f) ((struct wb_file *)(f))
#define REAL(f) (WB(f)->real)

/*
 * Write what the buffer holds, in writes of at most WALBUF_CHUNK (the unix
 * VFS writes at most 128 KiB - 1 at once: its seekAndWriteFd() masks the
 * size with 0x1ffff); on failure the rest is dropped (SQLite rolls back).
 */
static int flush(struct wb_file *w)
{
	int rc = SQLITE_OK;

	for (size_t done = 0; done < w->len && rc == SQLITE_OK;) {
		size_t n = w->len - done;

		if (n > WALBUF_CHUNK)
			n = WALBUF_CHUNK;
		rc = w->real->pMethods->xWrite(w->real, w->buf + done, (int)n,
					       w->off + (sqlite3_int64)done);
		done += n;
	}
	if (rc == SQLITE_OK && w->off + (sqlite3_int64)w->len > w->size)
		w->size = w->off + (sqlite3_int64)w->len;
	w->len = 0;
	return rc;
}

static int wb_close(sqlite3_file *f)
{
	struct wb_file *w = WB(f);
	int rc = flush(w), rc2;

	if (w->db)
		w->db->wal = NULL;
	if (w->wal)
		w->wal->db = NULL;
	free(w->buf);
	w->buf = NULL;
	rc2 = w->real->pMethods->xClose(w->real);
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *f, void *p, int n, sqlite3_int64 o)
{
	int rc = flush(WB(f));

	return rc != SQLITE_OK ? rc :
				 REAL(f)->pMethods->xRead(REAL(f), p, n, o);
}

static int wb_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 o)
{
	struct wb_file *w = WB(f);
	sqlite3_int64 end = w->off + (sqlite3_int64)w->len;
	int rc;

	if (!w->buf) /* not a WAL, or one this layer does not hold back */
		return w->real->pMethods->xWrite(w->real, p, n, o);
	if (w->len && o >= w->off && o + n <= end) {
		memcpy(w->buf + (o - w->off), p, (size_t)n); /* a rewrite */
		return SQLITE_OK;
	}
	if (w->len && o == end && w->len + (size_t)n <= WALBUF_CAP &&
	    o + n <= w->size) {
		memcpy(w->buf + w->len, p, (size_t)n);
		w->len += (size_t)n;
		return SQLITE_OK;
	}
	rc = flush(w);
	if (rc != SQLITE_OK)
		return rc;
	if ((size_t)n <= WALBUF_CAP && o + n <= w->size) {
		memcpy(w->buf, p, (size_t)n);
		w->off = o;
		w->len = (size_t)n;
		return SQLITE_OK;
	}
	/* extends the file: now, so that a full disk fails this write */
	rc = w->real->pMethods->xWrite(w->real, p, n, o);
	if (rc == SQLITE_OK && o + n > w->size)
		w->size = o + n;
	return rc;
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wb_file *w = WB(f);
	int rc = flush(w);

	if (rc == SQLITE_OK)
		rc = w->real->pMethods->xTruncate(w->real, size);
	if (rc == SQLITE_OK)
		w->size = size;
	return rc;
}

static int wb_sync(sqlite3_file *f, int flags)
{
	int rc = flush(WB(f));

	return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int wb_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int rc = flush(WB(f));

	return rc != SQLITE_OK ? rc :
				 REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int wb_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int wb_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int wb_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int wb_fcntl(sqlite3_file *f, int op, void *arg)
{
	int rc = flush(WB(f));

	return rc != SQLITE_OK ?
		       rc :
		       REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int wb_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int wb_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int wb_shm_map(sqlite3_file *f, int pg, int sz, int extend,
		      void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int wb_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

/*
 * Between the two copies of a new WAL index header (wal_buffer.h): the
 * WAL's frames reach the file before any reader can take that header.
 */
static void wb_shm_barrier(sqlite3_file *f)
{
	struct wb_file *w = WB(f);
	int rc;

	if (w->wal && w->wal->len) {
		rc = flush(w->wal);
		if (rc != SQLITE_OK) {
			twl_log(LOG_CRIT,
				"cannot write the database's WAL (%s): stopping before SQLite publishes a commit that is not in the file; restart the server after checking the disk",
				sqlite3_errstr(rc));
			abort();
		}
	}
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int wb_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp)
{
	if (REAL(f)->pMethods->iVersion < 3) {
		*pp = NULL;
		return SQLITE_OK;
	}
	return REAL(f)->pMethods->xFetch(REAL(f), o, n, pp);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
	if (REAL(f)->pMethods->iVersion < 3)
		return SQLITE_OK;
	return REAL(f)->pMethods->xUnfetch(REAL(f), o, p);
}

static const sqlite3_io_methods wb_methods = {
	.iVersion = 3,
	.xClose = wb_close,
	.xRead = wb_read,
	.xWrite = wb_write,
	.xTruncate = wb_truncate,
	.xSync = wb_sync,
	.xFileSize = wb_size,
	.xLock = wb_lock,
	.xUnlock = wb_unlock,
	.xCheckReservedLock = wb_reserved,
	.xFileControl = wb_fcntl,
	.xSectorSize = wb_sector,
	.xDeviceCharacteristics = wb_devchar,
	.xShmMap = wb_shm_map,
	.xShmLock = wb_shm_lock,
	.xShmBarrier = wb_shm_barrier,
	.xShmUnmap = wb_shm_unmap,
	.xFetch = wb_fetch,
	.xUnfetch = wb_unfetch,
};

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f,
		   int flags, int *out_flags)
{
	struct wb_file *w = WB(f);
	struct wb_file *db;
	int rc;

	(void)vfs;
	memset(w, 0, sizeof(*w));
	w->real = (sqlite3_file *)(w + 1);
	rc = base_vfs->xOpen(base_vfs, name, w->real, flags, out_flags);
	/* SQLite closes what has methods, even after a failed open */
	w->base.pMethods = w->real->pMethods ? &wb_methods : NULL;
	if (rc != SQLITE_OK || !(flags & SQLITE_OPEN_WAL))
		return rc;
	/* held back only with a main database whose barrier can flush them */
	db = (struct wb_file *)sqlite3_database_file_object(name);
	if (!db || db->base.pMethods != &wb_methods || db->wal)
		return SQLITE_OK;
	if (w->real->pMethods->xFileSize(w->real, &w->size) != SQLITE_OK)
		w->size = 0;
	w->buf = malloc(WALBUF_CAP);
	if (w->buf) {
		w->db = db;
		db->wal = w;
	}
	return SQLITE_OK;
}

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static int reg_result;

static void do_register(void)
{
	base_vfs = sqlite3_vfs_find(NULL);
	if (!base_vfs) {
		reg_result = -ENOSYS;
		return;
	}
	wb_vfs = *base_vfs;
	wb_vfs.pNext = NULL;
	wb_vfs.zName = TWL_WALBUF_VFS;
	wb_vfs.szOsFile = (int)sizeof(struct wb_file) + base_vfs->szOsFile;
	wb_vfs.xOpen = wb_open;
	reg_result = sqlite3_vfs_register(&wb_vfs, 0) == SQLITE_OK ? 0 :
								     -ENOMEM;
}

/* Contract: see wal_buffer.h. */
int twl_walbuf_register(void)
{
	pthread_once(&reg_once, do_register);
	return reg_result;
}
