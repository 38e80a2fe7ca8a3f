/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Alerts by webhook: events raised (by the detector, detect.h, or by any
 * other code through twl_alert_raise()) are queued, deduplicated and
 * delivered to every configured webhook by one thread of their own, with
 * retries and a per-webhook rate; each attempt is written to the
 * delivery log (store/store_alerts.h). Nothing here is on the ingest
 * path: raising an event never waits for a delivery or the database.
 */
#ifndef TWL_SERVER_ALERTS_ALERTS_H
#define TWL_SERVER_ALERTS_ALERTS_H

#include <stdint.h>

#include <jansson.h>

#include "alerts/deliver.h"

struct twl_store;
struct twl_alerts;

struct twl_alerts_opts {
	unsigned interval_s; /* detector scans; 0: no detector thread */
	unsigned new_days; /* a use after this many quiet days is new */
	int64_t silent_after; /* seconds without a report: silent */
	double rate_per_min; /* deliveries per webhook per minute */
	unsigned retry_base_s; /* the first retry's wait (sign.h) */
	size_t queue_max; /* events waiting at most */
	const char *data_dir; /* operators' upgrade targets; NULL: none */
	struct twl_deliver_opts deliver;
	/*
	 * The readiness step's count of a target, from an answer already
	 * kept (the readiness page's): 0 with *@count, or -ENOENT when none
	 * is kept (the detector then counts itself). NULL: it always does.
	 */
	int (*kept_breaks)(void *ctx, const char *target, int64_t *count);
	void *kept_ctx;
};

/* The detector's kinds of event, then any other kind raised. */
enum twl_alert_kind {
	TWL_ALERT_NEW_USE,
	TWL_ALERT_HOST_SILENT,
	TWL_ALERT_RECORDS_LOST,
	TWL_ALERT_PROBE_LOST,
	TWL_ALERT_READINESS_WORSE,
	TWL_ALERT_MIGRATED_USED_AGAIN,
	TWL_ALERT_OTHER,
	TWL_ALERT_KINDS
};

/* The name of @k ("new_use", ..., "other"). */
const char *twl_alert_kind_name(enum twl_alert_kind k);

/* Upgrade targets whose last scan's count is kept (shipped and dropped). */
#define TWL_ALERTS_READY_MAX 80

/* One target's hosts that would break, as the detector's last scan found. */
struct twl_alerts_ready {
	char target[65]; /* TWL_TARGET_MAX_NAME + 1 */
	int64_t breaks;
};

/* What the alerts counted since they started. */
struct twl_alerts_stats {
	/* events: queued, deduplicated, dropped (the queue was full) */
	uint64_t raised, deduplicated, dropped;
	uint64_t raised_by_kind[TWL_ALERT_KINDS]; /* queued, by kind */
	/* delivery attempts: delivered, given up, to be retried; deliveries
	 * dropped (too many pending, webhook deleted, server stopped) */
	uint64_t delivered, failed, retried, deliveries_dropped;
	/* per upgrade target, the hosts breaking at the last scan (none yet:
	 * n_ready 0); at most TWL_ALERTS_READY_MAX, the rest left out */
	size_t n_ready;
	struct twl_alerts_ready ready[TWL_ALERTS_READY_MAX];
};

/*
 * twl_alerts_set_ready - the detector's readiness step: the @n targets'
 * counts of its scan replace the last scan's (twl_alerts_stats()); past
 * TWL_ALERTS_READY_MAX they are left out.
 */
void twl_alerts_set_ready(struct twl_alerts *a,
			  const struct twl_alerts_ready *r, size_t n);

/*
 * twl_alerts_new - start the delivery thread (and the detector's, with
 * @o->interval_s) on @s (borrowed until twl_alerts_free()). NULL with
 * errno.
 */
struct twl_alerts *twl_alerts_new(struct twl_store *s,
				  const struct twl_alerts_opts *o);

/*
 * twl_alerts_free - stop both threads (an attempt under way is cut off),
 * log the deliveries still pending as "dropped", free. NULL-safe.
 */
void twl_alerts_free(struct twl_alerts *a);

/*
 * twl_alert_raise - raise event @kind (at most 31 bytes: "new_use",
 * "host_silent", ... docs/api.md "Webhooks") at @now with @detail (a JSON
 * object, borrowed; NULL for none), deduplicated by @key: the same key
 * within 24 hours is delivered once. Every webhook configured when the
 * delivery thread takes the event gets it. Safe from any thread; never
 * waits for a delivery or the database. 0 when queued, -EALREADY (a
 * duplicate), -ENOBUFS (queue full: dropped and counted), -EINVAL,
 * -ENOMEM. Code outside server/alerts/ (say, a workload marked migrated
 * seen using its feature again) calls this with a kind of its own and a
 * key that names the fact once (feature, workload, the day).
 */
int twl_alert_raise(struct twl_alerts *a, const char *kind, const char *key,
		    int64_t now, const json_t *detail);

/*
 * twl_alerts_webhooks_changed - the webhooks were added or deleted: the
 * delivery thread reads them again before its next event.
 */
void twl_alerts_webhooks_changed(struct twl_alerts *a);

void twl_alerts_stats(struct twl_alerts *a, struct twl_alerts_stats *out);

#endif /* TWL_SERVER_ALERTS_ALERTS_H */
