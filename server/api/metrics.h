/* SPDX-License-Identifier: GPL-2.0 */
/* Counters behind GET /metrics (Prometheus text format). Thread-safe. */
#ifndef TWL_SERVER_METRICS_H
#define TWL_SERVER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <twilight/util.h>

struct twl_metrics;

struct twl_metrics *twl_metrics_new(void);
void twl_metrics_free(struct twl_metrics *m);

/* A batch stored (dup=0) or replayed (dup=1) with rows rows. */
void twl_metrics_ingest(struct twl_metrics *m, int dup, uint64_t rows);
/* A rejection with reason (validator code, "rate_limited", "unauthorized", ...). */
void twl_metrics_reject(struct twl_metrics *m, const char *reason);
/*
 * A finished request: HTTP status and seconds from first byte to response;
 * timed requests (twl_request_timed(): report ingest) also go into the
 * latency histogram.
 */
void twl_metrics_request(struct twl_metrics *m, int status, double seconds,
			 bool timed);
/* A group commit of n batches. */
void twl_metrics_commit(struct twl_metrics *m, unsigned n);
/*
 * twl_metrics_sync - a sync that made group commits durable
 * (twl_store_sync()) took @seconds: every answer of those commits waited
 * for it, so a slow disk shows here before anywhere else.
 */
void twl_metrics_sync(struct twl_metrics *m, double seconds);

/*
 * Reports in a row the store failed to store before the server calls
 * itself failing (/healthz 503): one failure is a bad moment, this many
 * with no success between is a store that does not work.
 */
#define TWL_STORE_FAILING_AFTER 5

/*
 * twl_metrics_store_result - the store's answer for one report (the
 * writer's result: >= 0 stored or replayed, < 0 a negative errno, not
 * stored). A success ends a run of failures.
 */
void twl_metrics_store_result(struct twl_metrics *m, int result);

/*
 * twl_metrics_store_failing - the failures in a row now, and *@err the
 * last one's errno (positive). Failing when >= TWL_STORE_FAILING_AFTER.
 */
unsigned twl_metrics_store_failing(struct twl_metrics *m, int *err);

/* What the store adds to the counters; a negative field is unknown. */
struct twl_metrics_store {
	int64_t db_bytes; /* database file size */
	int64_t wal_catchups; /* the writer's own WAL checkpoints at wal-max */
	double wal_catchup_seconds; /* and the time they took */
};

/* Append the Prometheus text to b. 0 or -errno. */
int twl_metrics_render(struct twl_metrics *m,
		       const struct twl_metrics_store *st, struct twl_buf *b);

/*
 * twl_metrics_render_cert - append the server certificate's expiry
 * @not_after (Unix s; 0: unknown, then nothing) to b, and whether at @now
 * it is less than @warn_days away. 0 or -errno.
 */
int twl_metrics_render_cert(struct twl_buf *b, int64_t not_after, int64_t now,
			    unsigned warn_days);

struct twl_alerts_stats;

/*
 * twl_metrics_render_alerts - append the alert counters of @st to @b:
 * events queued by type (the bounded set of twl_alert_kind_name()),
 * deduplicated and dropped, and webhook delivery attempts by outcome
 * (delivered, retrying, failed, dropped). 0 or -errno.
 */
int twl_metrics_render_alerts(struct twl_buf *b,
			      const struct twl_alerts_stats *st);

#endif /* TWL_SERVER_METRICS_H */
