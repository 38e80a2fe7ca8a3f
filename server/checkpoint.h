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
 * At 16384 pages (64 MiB with 4 KiB pages) the writer copies the rest
 * itself right after its commit (as SQLite would by default), which lets
 * its next transaction restart the WAL; it tries after each commit until
 * that works (a try returns at once while the thread checkpoints). So the
 * WAL stays near that size at most.
 */
#ifndef TWL_SERVER_CHECKPOINT_H
#define TWL_SERVER_CHECKPOINT_H

#include <sqlite3.h>

struct twl_ckpt;

/* What the writer's WAL hook does after a commit. */
enum twl_ckpt_action {
	TWL_CKPT_NONE, /* nothing */
	TWL_CKPT_ASK, /* wake the checkpointer thread */
	TWL_CKPT_SELF, /* checkpoint on the writer's thread */
};

/*
 * twl_ckpt_step - the policy above, pure: pages is the WAL's size in
 * frames after a commit, *asked_at the size when the thread was last
 * asked (start at 0; updated here, and reset when the WAL restarted).
 */
enum twl_ckpt_action twl_ckpt_step(int pages, int *asked_at);

/*
 * twl_ckpt_start - take over automatic checkpoints of wdb (a connection to
 * path in WAL mode). Returns 0 or a negative errno (wdb keeps SQLite's own
 * automatic checkpoints then).
 */
int twl_ckpt_start(const char *path, sqlite3 *wdb, struct twl_ckpt **out);

/*
 * Stop the thread and give wdb back its default automatic checkpoints.
 * Call before closing wdb. NULL-safe.
 */
void twl_ckpt_stop(struct twl_ckpt *c);

#endif /* TWL_SERVER_CHECKPOINT_H */
