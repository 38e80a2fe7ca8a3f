// SPDX-License-Identifier: GPL-2.0
/* A pass-through SQLite VFS with test hooks (shim_vfs.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shim_vfs.h"

struct shim_file {
	sqlite3_file base;
	sqlite3_file *real; /* the underlying VFS's file, stored right after */
	int flags;
};

static sqlite3_vfs *shim_real;
static sqlite3_vfs shim_vfs;
static const struct shim_hooks *shim_hooks;

#define SHIM(f) ((struct shim_file *)(f))
#define REAL(f) (SHIM(f)->real)

static int s_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int s_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}

static int s_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	int rc = SQLITE_OK;

	if (shim_hooks->write)
		rc = shim_hooks->write(SHIM(f)->flags, REAL(f), b, n, o);
	return rc != SQLITE_OK ? rc :
				 REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}

static int s_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int s_sync(sqlite3_file *f, int flags)
{
	int rc = SQLITE_OK;

	if (shim_hooks->sync)
		rc = shim_hooks->sync(SHIM(f)->flags, REAL(f), flags);
	return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int s_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int s_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int s_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int s_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int s_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int s_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int s_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int s_shm_map(sqlite3_file *f, int pg, int sz, int extend,
		     void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int s_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void s_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int s_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static const sqlite3_io_methods shim_methods = {
	.iVersion = 2, /* no memory-mapped I/O: every write is seen */
	.xClose = s_close,
	.xRead = s_read,
	.xWrite = s_write,
	.xTruncate = s_truncate,
	.xSync = s_sync,
	.xFileSize = s_size,
	.xLock = s_lock,
	.xUnlock = s_unlock,
	.xCheckReservedLock = s_reserved,
	.xFileControl = s_fcntl,
	.xSectorSize = s_sector,
	.xDeviceCharacteristics = s_devchar,
	.xShmMap = s_shm_map,
	.xShmLock = s_shm_lock,
	.xShmBarrier = s_shm_barrier,
	.xShmUnmap = s_shm_unmap,
};

static int s_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f,
		  int flags, int *out_flags)
{
	struct shim_file *s = SHIM(f);
	int rc;

	(void)vfs;
	s->real = (sqlite3_file *)(s + 1);
	s->flags = flags;
	rc = shim_real->xOpen(shim_real, name, s->real, flags, out_flags);
	/* SQLite closes what has methods, even after a failed open */
	s->base.pMethods = s->real->pMethods ? &shim_methods : NULL;
	return rc;
}

/* Contract: see shim_vfs.h. */
int shim_vfs_register(const char *name, const struct shim_hooks *hooks,
		      int make_default)
{
	shim_real = sqlite3_vfs_find(NULL);
	if (!shim_real)
		return SQLITE_ERROR;
	shim_hooks = hooks;
	shim_vfs = *shim_real;
	shim_vfs.pNext = NULL;
	shim_vfs.zName = name;
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + shim_real->szOsFile;
	shim_vfs.xOpen = s_open;
	return sqlite3_vfs_register(&shim_vfs, make_default);
}

/* Contract: see shim_vfs.h. */
void shim_vfs_unregister(void)
{
	sqlite3_vfs_unregister(&shim_vfs);
	if (shim_real)
		sqlite3_vfs_register(shim_real, 1);
}

/* Contract: see shim_vfs.h. */
unsigned char *shim_read_all(sqlite3_file *real, sqlite3_int64 *len)
{
	unsigned char *buf;

	if (real->pMethods->xFileSize(real, len) != SQLITE_OK || *len < 0)
		return NULL;
	buf = malloc((size_t)*len + 1);
	if (!buf)
		return NULL;
	if (*len &&
	    real->pMethods->xRead(real, buf, (int)*len, 0) != SQLITE_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_file(const char *name, const unsigned char *buf,
		      sqlite3_int64 len)
{
	FILE *f = fopen(name, "wb");
	int ok;

	if (!f)
		return -1;
	ok = !len || fwrite(buf, 1, (size_t)len, f) == (size_t)len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Contract: see shim_vfs.h. */
sqlite3 *shim_open_image(const char *img, const unsigned char *db,
			 sqlite3_int64 db_len, const unsigned char *wal,
			 sqlite3_int64 wal_len)
{
	char name[512];
	sqlite3 *c = NULL;

	if (write_file(img, db, db ? db_len : 0))
		return NULL;
	snprintf(name, sizeof(name), "%s-wal", img);
	if (write_file(name, wal, wal ? wal_len : 0))
		return NULL;
	snprintf(name, sizeof(name), "%s-shm", img);
	unlink(name);
	if (sqlite3_open_v2(img, &c, SQLITE_OPEN_READWRITE, "unix") !=
	    SQLITE_OK) {
		sqlite3_close(c);
		return NULL;
	}
	return c;
}
