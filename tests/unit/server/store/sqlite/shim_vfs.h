/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A SQLite VFS for tests: it passes every call to the VFS that was the
 * default when it was registered, and lets a test see or fail writes and
 * syncs (count them, simulate a full disk, keep what a sync made durable).
 */
#ifndef TWL_TEST_SHIM_VFS_H
#define TWL_TEST_SHIM_VFS_H

#include <sqlite3.h>

/*
 * Hooks, each optional, called before the real method. @flags are the
 * file's open flags (SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_WAL, ...), @real the
 * underlying file (a hook may read it). A hook returns SQLITE_OK to let the
 * call through or an error code that the call then returns instead.
 */
struct shim_hooks {
	int (*write)(int flags, sqlite3_file *real, const void *buf, int n,
		     sqlite3_int64 off);
	int (*sync)(int flags, sqlite3_file *real, int sync_flags);
};

/*
 * shim_vfs_register - register the VFS @name over the current default,
 * with @hooks (kept by pointer, so a test may change them later); as the
 * default when @make_default. One shim at a time per process. Returns a
 * SQLite result code.
 */
int shim_vfs_register(const char *name, const struct shim_hooks *hooks,
		      int make_default);

/* shim_vfs_unregister - undo shim_vfs_register() (no open files left). */
void shim_vfs_unregister(void);

/*
 * shim_read_all - the whole of @real, as the OS has it now, into a new
 * buffer (*@len bytes; free() it). Returns NULL when it cannot.
 */
unsigned char *shim_read_all(sqlite3_file *real, sqlite3_int64 *len);

/*
 * shim_open_image - write a database @img from files as a power loss
 * would leave them (@db and @wal, each as last synced; NULL: empty), no
 * -shm, and open it with the real "unix" VFS, so that SQLite's recovery
 * reads the WAL as after a reboot and the test disk sees none of it.
 * Returns the connection or NULL.
 */
sqlite3 *shim_open_image(const char *img, const unsigned char *db,
			 sqlite3_int64 db_len, const unsigned char *wal,
			 sqlite3_int64 wal_len);

#endif /* TWL_TEST_SHIM_VFS_H */
