/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writer's WAL synced off the writer thread.
 *
 * With synchronous=FULL, every COMMIT syncs the WAL before it returns, so
 * the writer thread, the server's bottleneck, waits for the disk once per
 * group commit and stores nothing meanwhile. The group writer instead
 * commits with synchronous=NORMAL (SQLite syncs the WAL only before a
 * checkpoint and its header when the WAL starts again) and a thread of its
 * own syncs the WAL through this handle before any batch of that commit
 * is acknowledged, while the writer stores the next group.
 *
 * Why that is FULL's durability: COMMIT returns only after every frame of
 * the transaction, the commit frame last, reached the file (the OS's page
 * cache; wal_buffer.h flushes in the barrier before COMMIT returns). A
 * sync of the file that starts after that makes all of them durable, as
 * FULL's sync inside COMMIT would. Frames are never overwritten before a
 * checkpoint copied them and synced the database (SQLite's own rule, the
 * same under NORMAL), so a sync can only add to what a power loss keeps.
 *
 * The handle is a second file object on the same WAL, opened through the
 * default VFS (a file object is not safe to share between threads; the
 * file is): syncing it syncs the file's data whoever wrote it.
 */
#ifndef TWL_SERVER_WAL_SYNC_H
#define TWL_SERVER_WAL_SYNC_H

#include <sqlite3.h>

struct twl_wal_sync;

/*
 * twl_wal_sync_open - a handle on @db's WAL (@db in WAL mode, the WAL
 * open, no other thread using @db). Syncs the WAL once through @db's own
 * file first, which also makes the WAL's directory entry durable. Returns
 * NULL + errno (ENOENT: no WAL open; EIO: open or sync failed).
 */
struct twl_wal_sync *twl_wal_sync_open(sqlite3 *db);

/* twl_wal_sync_free - close the handle; NULL-safe. */
void twl_wal_sync_free(struct twl_wal_sync *ws);

/*
 * twl_wal_sync - sync the WAL's data: what every commit that returned
 * before the call wrote is then durable. Thread-safe. 0 or -EIO.
 */
int twl_wal_sync(struct twl_wal_sync *ws);

#endif /* TWL_SERVER_WAL_SYNC_H */
