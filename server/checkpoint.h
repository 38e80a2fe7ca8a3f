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
 * which runs PASSIVE checkpoints (they never block the writer). Bound: if
 * the WAL still reaches 16384 pages (64 MiB with 4 KiB pages) because the
 * checkpointer lags, the writer checkpoints itself, as SQLite would by
 * default, so the WAL cannot grow without bound.
 */
#ifndef TWL_SERVER_CHECKPOINT_H
#define TWL_SERVER_CHECKPOINT_H

#include <sqlite3.h>

struct twl_ckpt;

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
