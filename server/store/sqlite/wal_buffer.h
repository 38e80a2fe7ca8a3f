/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writer's WAL writes, gathered into large ones.
 *
 * SQLite writes each WAL frame with two pwrite()s (its 24-byte header and
 * the page): 12.5 system calls per report at 5,000 reports/s, on the
 * writer thread, the server's bottleneck (bench/README.md). A VFS over
 * the default one, used by the writer's connection only, keeps those
 * writes in a buffer (1 MiB) while they extend what it holds, and writes
 * it out in 64 KiB pwrite()s:
 * - when it is full, or a write does not follow on;
 * - before any read, sync, size query, truncate or file control of the
 *   WAL, and when it is closed;
 * - and, what makes this safe, in xShmBarrier() of the main database file.
 *   SQLite publishes a commit by writing the new WAL index header twice,
 *   the second copy first, with that barrier between them; a reader takes
 *   a header only when both copies agree (wal.c, walIndexWriteHdr() and
 *   walIndexTryHdr()). So every frame is in the file (the OS's page cache)
 *   before any other connection can see the commit that holds it, and
 *   before COMMIT returns: a kill -9 loses nothing acknowledged, as before.
 *   Durability on power loss is SQLite's own (synchronous=FULL: the WAL
 *   is synced at each commit, and a sync flushes this buffer first).
 * Only writes inside the file's current size are held back: a write that
 * extends the WAL (its first growth to wal-max) goes straight through, so
 * that a full disk fails the statement that wrote, as without this layer.
 * A write the barrier cannot complete (an I/O error over blocks the file
 * already has) cannot be reported from there: the process logs it and
 * aborts, which SQLite's recovery treats as a crash before that commit.
 */
#ifndef TWL_SERVER_WAL_BUFFER_H
#define TWL_SERVER_WAL_BUFFER_H

/* The VFS's name, for sqlite3_open_v2(). */
#define TWL_WALBUF_VFS "twl-walbuf"

/*
 * twl_walbuf_register - register the VFS over the default one (once per
 * process; later calls return the first result). Returns 0 or a negative
 * errno; without it, open the writer with the default VFS.
 */
int twl_walbuf_register(void);

#endif /* TWL_SERVER_WAL_BUFFER_H */
