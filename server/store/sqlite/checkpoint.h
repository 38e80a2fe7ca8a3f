/* SPDX-License-Identifier: GPL-2.0 */
/*
 * WAL checkpoints off the writer thread.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT of the connection
 * that crosses the threshold: the group-commit writer, the server's
 * bottleneck, spent about 12% of its time copying WAL pages into the
 * database and in fdatasync (bench/server-load, perf). The checkpointer
 * takes that over: a WAL hook on the writer connection wakes a thread with
 * its own connection once the WAL holds 4000 pages (16 MiB with 4 KiB
 * pages; SQLite's default is 1000: a larger window lets one checkpoint copy
 * the last version of a hot page instead of several, which cut the
 * checkpointer's CPU per report at 1,000 reports/s from 302 to 222 us),
 * which runs PASSIVE checkpoints (they never block the writer).
 *
 * The WAL starts again from its beginning only when the writer begins a
 * transaction with every frame already copied. Under steady load the
 * writer has committed again before the thread's checkpoint ends, so the
 * WAL grows on past 4000 pages. The thread is therefore asked once per
 * 4000 new pages, not after every commit from there on: that made it
 * checkpoint, with two fdatasync()s each, after every commit (180 times a
 * second at 5,000 reports/s offered, a quarter of a CPU; bench/README.md).
 * While the writer is saturated (large groups, twl_ckpt_busy()) it is
 * asked once per 16000 (TWL_CKPT_ASK_PAGES_BUSY below).
 *
 * At a limit (the server's `wal-max`, 256 MiB by default) the writer copies
 * the rest itself right after its commit (as SQLite would by default),
 * which lets its next transaction restart the WAL; it tries after each
 * commit until that works (a try returns at once while the thread
 * checkpoints). So the WAL stays near that size at most. That catch-up
 * stalls every batch waiting for the writer: it syncs the WAL, copies the
 * frames the thread has not, and syncs the database file. To keep it
 * short, in the last stretch before the limit (8000 pages):
 * - the thread is asked after every commit, so that it runs one pass after
 *   another and leaves the writer only what was committed during its last
 *   pass (not up to 4000 pages and more);
 * - the thread syncs the database file after each pass. SQLite syncs it
 *   only in a checkpoint that reaches the end of the WAL, under load only
 *   ever the writer's, and then everything copied since the WAL started;
 *   now the writer's sync covers little more than its own tail. (Syncing
 *   after every pass of the cycle cost the thread ~40% more CPU for no
 *   better latency.)
 * Measured at 5,000 reports/s (bench/README.md): the stall took 20-27 ms
 * (median) with a 64 MiB limit, 14-23 ms with the thread's syncs, 3-7 ms
 * with its passes back to back; a 256 MiB limit makes it four times rarer.
 *
 * The kernel holds what a pass copied as dirty pages until a sync asks for
 * it (with 24 GiB of memory, no background writeback starts for gigabytes),
 * so the first sync of the last stretch wrote out everything copied since
 * the WAL started: up to ~50 ms, during which the WAL's own syncs, and so
 * every acknowledgement, queued behind it on the disk. After each pass
 * before the last stretch (whose passes sync) the thread therefore starts
 * the writeback of the database file without waiting for it
 * (sync_file_range(SYNC_FILE_RANGE_WRITE)): the disk writes it while the
 * thread sleeps, and the syncs find little left. At 5,000
 * reports/s offered on the machine of 2026-12-06 (three interleaved pairs
 * of builds; bench/README.md) that took the writer's catch-ups from 26-40
 * to 11-18 ms on average and p99 from 88-230 to 30-43 ms.
 */
#ifndef TWL_SERVER_CHECKPOINT_H
#define TWL_SERVER_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

struct twl_ckpt;

/* What the writer's WAL hook does after a commit. */
enum twl_ckpt_action {
	TWL_CKPT_NONE, /* nothing */
	TWL_CKPT_ASK, /* wake the checkpointer thread */
	TWL_CKPT_SELF, /* checkpoint on the writer's thread */
};

/*
 * The thread is asked once per this many new WAL pages, and after every
 * commit in the last twice this many before the limit.
 */
#define TWL_CKPT_ASK_PAGES 4000
/*
 * While the writer is saturated (twl_ckpt_busy()), once per this many:
 * its groups are then large, every batch waits in its queue anyway, and a
 * pass copies the last version of a hot page once instead of four times.
 * That halved the thread's CPU per report in the closed loop (29-31 to
 * 13-16 us, bench/README.md); in the open loop at 5,000 reports/s, where
 * groups are small, the larger window made p99 worse (its passes start
 * four times as much writeback at once), so it applies to large groups
 * only.
 */
#define TWL_CKPT_ASK_PAGES_BUSY 16000
/* Saturated: commits add this many WAL frames on average (see below). */
#define TWL_CKPT_BUSY_FRAMES 512
/* The writer's limit until twl_ckpt_set_limit(): 256 MiB of 4 KiB pages. */
#define TWL_CKPT_LIMIT_PAGES 65536

/*
 * twl_ckpt_step - the policy above, pure: pages is the WAL's size in
 * frames after a commit, limit the size at which the writer checkpoints
 * itself, busy twl_ckpt_busy()'s answer, *asked_at the size when the
 * thread was last asked (start at 0; updated here, and reset when the WAL
 * restarted).
 */
enum twl_ckpt_action twl_ckpt_step(int pages, int limit, bool busy,
				   int *asked_at);

/*
 * twl_ckpt_busy - whether the writer is saturated, pure: @frames is what
 * a commit added to the WAL, *avg a moving average of that (start at 0;
 * updated here, each commit weighing 1/8). True when the average is at
 * least TWL_CKPT_BUSY_FRAMES: about 100 batches of 20 usage entries per
 * commit. bench/server-load's closed loop commits 500-1,100 frames at a
 * time, its open loop at 5,000 reports/s 25-250.
 */
bool twl_ckpt_busy(int frames, int *avg);

/*
 * twl_ckpt_near_limit - the policy above, pure: whether a WAL of pages
 * frames is in the last stretch before limit (the thread is asked after
 * every commit, and syncs the database file after each checkpoint).
 */
bool twl_ckpt_near_limit(int pages, int limit);

/*
 * twl_ckpt_sync_db - fdatasync() db's main database file through its VFS
 * (what a checkpoint that reaches the end of the WAL does last). Returns
 * an SQLite result code.
 */
int twl_ckpt_sync_db(sqlite3 *db);

/*
 * twl_ckpt_start - take over automatic checkpoints of wdb (a connection to
 * path in WAL mode). Returns 0 or a negative errno (wdb keeps SQLite's own
 * automatic checkpoints then).
 */
int twl_ckpt_start(const char *path, sqlite3 *wdb, struct twl_ckpt **out);

/*
 * twl_ckpt_set_limit - the WAL size in pages at which the writer
 * checkpoints itself (default TWL_CKPT_LIMIT_PAGES; at least twice
 * TWL_CKPT_ASK_PAGES, raised to that). Safe while the writer commits.
 * Returns the limit set.
 */
int twl_ckpt_set_limit(struct twl_ckpt *c, int pages);

/*
 * twl_ckpt_stats - how often the writer checkpointed the WAL itself (at
 * the limit; tries refused while the thread checkpointed not counted) and
 * the nanoseconds it spent on it. Safe from any thread.
 */
void twl_ckpt_stats(struct twl_ckpt *c, uint64_t *catchups, uint64_t *ns);

/*
 * twl_ckpt_writebacks - how many times the thread started the writeback of
 * the database file after a pass before the last stretch (0 if it could
 * not open the file). Safe from any thread.
 */
uint64_t twl_ckpt_writebacks(struct twl_ckpt *c);

/*
 * Stop the thread and give wdb back its default automatic checkpoints.
 * Call before closing wdb. NULL-safe.
 */
void twl_ckpt_stop(struct twl_ckpt *c);

#endif /* TWL_SERVER_CHECKPOINT_H */
