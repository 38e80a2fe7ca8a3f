/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Alert events waiting for delivery: a bounded FIFO that never blocks
 * the thread raising an event (full: the event is dropped and counted),
 * with a bounded memory of the dedup keys raised lately (the same key
 * within the window is raised once). Thread-safe; no I/O.
 */
#ifndef TWL_SERVER_ALERTS_QUEUE_H
#define TWL_SERVER_ALERTS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TWL_ALERT_KIND_CAP 32
#define TWL_ALERT_ID_CAP 33 /* 32 hex digits + NUL */

/* One event: its JSON body as sent (docs/api.md "Webhooks"). */
struct twl_alert_event {
	char id[TWL_ALERT_ID_CAP]; /* from the dedup key and the time */
	char kind[TWL_ALERT_KIND_CAP];
	char *body; /* malloc'd, NUL-terminated */
	size_t len;
	int64_t at; /* Unix seconds raised */
};

struct twl_alert_queue;

/* What the queue counted since it was made. */
struct twl_alert_queue_stats {
	uint64_t queued, deduplicated, dropped;
	size_t waiting;
};

/*
 * twl_alert_queue_new - a queue of @cap events at most, remembering
 * @dedup_cap keys (rounded up to a power of two) for @window seconds.
 * NULL with errno.
 */
struct twl_alert_queue *twl_alert_queue_new(size_t cap, size_t dedup_cap,
					    int64_t window);
/* NULL-safe; frees the events still waiting. */
void twl_alert_queue_free(struct twl_alert_queue *q);

/*
 * twl_alert_queue_push - queue event @kind with dedup key @key at @now
 * whose body is made by @make(@arg, id) (an event id is made from @key
 * and @now; @make returns a malloc'd JSON text or NULL). 0 when queued,
 * -EALREADY when @key was raised within the window, -ENOBUFS when the
 * queue is full (counted as dropped; the key is not remembered, so a
 * later raise may get through), -ENOMEM, -EINVAL (empty kind or key,
 * kind too long). Never waits for a consumer; the key's hash is compared
 * (64 bits) and the oldest of a full set of 8 slots is forgotten first.
 */
int twl_alert_queue_push(struct twl_alert_queue *q, const char *kind,
			 const char *key, int64_t now,
			 char *(*make)(void *arg, const char *id), void *arg);

/*
 * twl_alert_queue_pop - take the oldest event into *@ev (the caller
 * frees ev->body), waiting up to @wait_ms for one (0: no wait). true when
 * one was taken; false on time-out or once twl_alert_queue_close() was
 * called and the queue is empty.
 */
bool twl_alert_queue_pop(struct twl_alert_queue *q, struct twl_alert_event *ev,
			 int wait_ms);

/* Wake every waiter; later pops do not wait. */
void twl_alert_queue_close(struct twl_alert_queue *q);

void twl_alert_queue_stats(struct twl_alert_queue *q,
			   struct twl_alert_queue_stats *out);

#endif /* TWL_SERVER_ALERTS_QUEUE_H */
