/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Group commit: one writer thread takes every queued batch (up to
 * commit_max), stores each in a nested transaction of its own inside one
 * write transaction (store.h: a failing batch rolls back alone), commits,
 * and only then calls each batch's done callback. An acknowledgement
 * therefore always follows a durable commit: the COMMIT does not wait
 * for the disk (twl_store_write_begin_deferred()), a second thread syncs
 * (twl_store_sync()) and only then answers, while the writer stores the
 * next group.
 * Also runs retention once an hour.
 */
#ifndef TWL_SERVER_WRITER_H
#define TWL_SERVER_WRITER_H

#include <stdint.h>

#include "api/metrics.h"
#include "store/store.h"

struct twl_writer;

struct twl_ingest;

/*
 * result: 0 stored, 1 replay (already stored), negative errno when the
 * batch was not stored. Called from the writer's sync thread after the
 * COMMIT and a sync after it (from the writer thread when the group
 * failed); in is
 * handed back to the caller, who frees it (twl_ingest_free) on its own
 * thread: freeing the parsed report is work the writer thread, the
 * server's bottleneck, does not do.
 */
typedef void (*twl_writer_done_fn)(void *arg, int result,
				   struct twl_ingest *in);

/*
 * A group this small costs more per batch than one that waits a moment:
 * the COMMIT, its WAL frames and the sync cost the writer about what two
 * batches do (bench/README.md, thirtieth session). Under load groups are
 * far larger (125-220 batches per COMMIT in bench/server-load's closed
 * loop) and the writer never waits. (The help of commit-delay in
 * server/config.c names the number.)
 */
#define TWL_WRITER_GATHER_BELOW 16

struct twl_writer_opts {
	unsigned commit_max; /* most batches in one commit */
	/*
	 * When fewer than TWL_WRITER_GATHER_BELOW batches wait, wait this
	 * long for more before storing them (0: never).
	 */
	unsigned commit_delay_ms;
	unsigned queue_max; /* most batches waiting; more: -EAGAIN */
	unsigned batch_days, data_days; /* retention: twl_store_prune() */
};

/*
 * Start the writer thread on @s, counting into @m (both outlive the
 * writer). NULL with errno set when it cannot start.
 */
struct twl_writer *twl_writer_new(struct twl_store *s, struct twl_metrics *m,
				  const struct twl_writer_opts *o);

/*
 * Store everything queued and stop the thread; later submits get
 * -ESHUTDOWN. Idempotent, NULL-safe.
 */
void twl_writer_stop(struct twl_writer *w);

/* Stop (if not yet) and free. NULL-safe. */
void twl_writer_free(struct twl_writer *w);

/*
 * Queue the prepared report in for host_id. Returns 0 (done will be called
 * exactly once and hands in back), -EAGAIN when the queue is full,
 * -ESHUTDOWN when stopping (done is not called on error and in stays the
 * caller's).
 */
int twl_writer_submit(struct twl_writer *w, const char *host_id,
		      struct twl_ingest *in, int64_t now,
		      twl_writer_done_fn done, void *arg);

#endif /* TWL_SERVER_WRITER_H */
