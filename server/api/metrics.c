// SPDX-License-Identifier: GPL-2.0
/* Prometheus counters (metrics.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alerts/alerts.h"
#include "api/metrics.h"

/* Append to @b unless an earlier append failed (ret). */
#define P(...)                                                \
	do {                                                  \
		if (!ret)                                     \
			ret = twl_buf_printf(b, __VA_ARGS__); \
	} while (0)

static const double buckets[] = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
				  0.1,	 0.25,	0.5,   1,    2.5,  5 };
#define NB (sizeof(buckets) / sizeof(buckets[0]))

/* A histogram of seconds over buckets[] (the last slot: above them all). */
struct hist {
	uint64_t n[NB + 1];
	double sum;
	uint64_t count;
};

/* Rejection reasons are a fixed set: labels stay bounded. */
static const char *const reasons[] = {
	"invalid_json",	 "wrong_type",	    "missing_field",
	"unknown_field", "unknown_feature", "too_long",
	"invalid_utf8",	 "too_many",	    "out_of_range",
	"bad_value",	 "too_deep",	    "unsupported_version",
	"rate_limited",	 "unauthorized",    "forbidden",
	"too_large",	 "bad_encoding",    "overloaded",
	"host_mismatch", "shutting_down",   "bad_request",
	"too_slow",	 "enrolment_cap",   "batch_conflict",
	"other",
};
#define NR (sizeof(reasons) / sizeof(reasons[0]))

struct twl_metrics {
	pthread_mutex_t lock;
	uint64_t stored, replayed, rows, commits, committed_batches;
	uint64_t rejects[NR];
	uint64_t status[6]; /* 1xx..5xx by hundreds */
	struct hist ingest; /* timed requests */
	struct hist sync; /* twl_store_sync() calls */
	uint64_t store_failures; /* reports not stored, all told */
	unsigned failing; /* ... in a row, until one is stored */
	int last_err;
};

/* Contract: see metrics.h. */
struct twl_metrics *twl_metrics_new(void)
{
	struct twl_metrics *m = calloc(1, sizeof(*m));

	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

/* Contract: see metrics.h. */
void twl_metrics_free(struct twl_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Contract: see metrics.h. */
void twl_metrics_ingest(struct twl_metrics *m, int dup, uint64_t rows)
{
	pthread_mutex_lock(&m->lock);
	if (dup) {
		m->replayed++;
	} else {
		m->stored++;
		m->rows += rows;
	}
	pthread_mutex_unlock(&m->lock);
}

/* Contract: see metrics.h. */
void twl_metrics_reject(struct twl_metrics *m, const char *reason)
{
	size_t i;

	for (i = 0; i < NR - 1; i++)
		if (!strcmp(reasons[i], reason))
			break;
	pthread_mutex_lock(&m->lock);
	m->rejects[i]++;
	pthread_mutex_unlock(&m->lock);
}

static void hist_add(struct hist *h, double seconds)
{
	size_t b = 0;

	while (b < NB && seconds > buckets[b])
		b++;
	h->n[b]++;
	h->sum += seconds;
	h->count++;
}

/* Append histogram @h as the series @name, with its HELP and TYPE lines. */
static int hist_render(struct twl_buf *b, const char *name, const char *help,
		       const struct hist *h)
{
	uint64_t cum = 0;
	int ret = 0;

	P("# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (size_t i = 0; i < NB; i++) {
		cum += h->n[i];
		P("%s_bucket{le=\"%g\"} %llu\n", name, buckets[i],
		  (unsigned long long)cum);
	}
	cum += h->n[NB];
	P("%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
	  (unsigned long long)cum, name, h->sum, name,
	  (unsigned long long)h->count);
	return ret;
}

/* Contract: see metrics.h. */
void twl_metrics_request(struct twl_metrics *m, int status, double seconds,
			 bool timed)
{
	int cls = status / 100;

	pthread_mutex_lock(&m->lock);
	if (cls >= 1 && cls <= 5)
		m->status[cls]++;
	if (timed)
		hist_add(&m->ingest, seconds);
	pthread_mutex_unlock(&m->lock);
}

/* Contract: see metrics.h. */
void twl_metrics_sync(struct twl_metrics *m, double seconds)
{
	pthread_mutex_lock(&m->lock);
	hist_add(&m->sync, seconds);
	pthread_mutex_unlock(&m->lock);
}

/* Contract: see metrics.h. */
void twl_metrics_commit(struct twl_metrics *m, unsigned n)
{
	pthread_mutex_lock(&m->lock);
	m->commits++;
	m->committed_batches += n;
	pthread_mutex_unlock(&m->lock);
}

/* Contract: see metrics.h. */
void twl_metrics_store_result(struct twl_metrics *m, int result)
{
	pthread_mutex_lock(&m->lock);
	if (result >= 0) {
		m->failing = 0;
	} else {
		m->store_failures++;
		m->failing++;
		m->last_err = -result;
	}
	pthread_mutex_unlock(&m->lock);
}

/* Contract: see metrics.h. */
unsigned twl_metrics_store_failing(struct twl_metrics *m, int *err)
{
	unsigned n;

	pthread_mutex_lock(&m->lock);
	n = m->failing;
	*err = m->last_err;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* Contract: see metrics.h. */
int twl_metrics_render(struct twl_metrics *m,
		       const struct twl_metrics_store *st, struct twl_buf *b)
{
	struct twl_metrics c;
	int ret = 0;

	pthread_mutex_lock(&m->lock);
	c = *m;
	pthread_mutex_unlock(&m->lock);

	P("# HELP twilight_ingest_batches_total Report batches accepted, by result.\n"
	  "# TYPE twilight_ingest_batches_total counter\n"
	  "twilight_ingest_batches_total{result=\"stored\"} %llu\n"
	  "twilight_ingest_batches_total{result=\"replayed\"} %llu\n",
	  (unsigned long long)c.stored, (unsigned long long)c.replayed);
	P("# HELP twilight_ingest_rows_total Warning, unknown, usage and knob entries in stored batches.\n"
	  "# TYPE twilight_ingest_rows_total counter\ntwilight_ingest_rows_total %llu\n",
	  (unsigned long long)c.rows);
	P("# HELP twilight_commits_total Group commits and the batches they carried.\n"
	  "# TYPE twilight_commits_total counter\ntwilight_commits_total %llu\n"
	  "# TYPE twilight_committed_batches_total counter\ntwilight_committed_batches_total %llu\n",
	  (unsigned long long)c.commits,
	  (unsigned long long)c.committed_batches);
	P("# HELP twilight_rejections_total Requests rejected, by reason.\n"
	  "# TYPE twilight_rejections_total counter\n");
	for (size_t i = 0; i < NR; i++)
		P("twilight_rejections_total{reason=\"%s\"} %llu\n", reasons[i],
		  (unsigned long long)c.rejects[i]);
	P("# HELP twilight_http_responses_total Responses by status class.\n"
	  "# TYPE twilight_http_responses_total counter\n");
	for (int i = 1; i <= 5; i++)
		P("twilight_http_responses_total{code=\"%dxx\"} %llu\n", i,
		  (unsigned long long)c.status[i]);
	if (!ret)
		ret = hist_render(
			b, "twilight_ingest_seconds",
			"Report request latency, first byte to acknowledgement.",
			&c.ingest);
	if (!ret)
		ret = hist_render(
			b, "twilight_store_sync_seconds",
			"Syncs that made group commits durable before their answers (SQLite: the WAL's fsync), and how long each took.",
			&c.sync);
	P("# HELP twilight_store_failures_total Reports the database failed to store.\n"
	  "# TYPE twilight_store_failures_total counter\ntwilight_store_failures_total %llu\n"
	  "# HELP twilight_store_failing 1 while the last %d reports or more all failed to be stored (/healthz 503).\n"
	  "# TYPE twilight_store_failing gauge\ntwilight_store_failing %d\n",
	  (unsigned long long)c.store_failures, TWL_STORE_FAILING_AFTER,
	  c.failing >= TWL_STORE_FAILING_AFTER);
	if (st->db_bytes >= 0)
		P("# HELP twilight_db_bytes SQLite database size.\n# TYPE twilight_db_bytes gauge\n"
		  "twilight_db_bytes %lld\n",
		  (long long)st->db_bytes);
	if (st->wal_catchups >= 0)
		P("# HELP twilight_wal_catchups_total Times the writer checkpointed the WAL itself at wal-max, every waiting batch waiting.\n"
		  "# TYPE twilight_wal_catchups_total counter\ntwilight_wal_catchups_total %lld\n"
		  "# HELP twilight_wal_catchup_seconds_total Time those checkpoints took.\n"
		  "# TYPE twilight_wal_catchup_seconds_total counter\ntwilight_wal_catchup_seconds_total %.6f\n",
		  (long long)st->wal_catchups, st->wal_catchup_seconds);
	return ret;
}

/* Contract: see metrics.h. */
int twl_metrics_render_alerts(struct twl_buf *b,
			      const struct twl_alerts_stats *st)
{
	static const char *const outcomes[] = { "delivered", "retrying",
						"failed", "dropped" };
	const uint64_t by_outcome[] = { st->delivered, st->retried, st->failed,
					st->deliveries_dropped };
	int ret = 0, k;
	size_t i;

	P("# HELP twilight_alert_events_total Alert events queued for the webhooks, by type.\n"
	  "# TYPE twilight_alert_events_total counter\n");
	for (k = 0; k < TWL_ALERT_KINDS; k++)
		P("twilight_alert_events_total{type=\"%s\"} %llu\n",
		  twl_alert_kind_name((enum twl_alert_kind)k),
		  (unsigned long long)st->raised_by_kind[k]);
	P("# HELP twilight_alert_events_deduplicated_total Alert events not queued: the same event within 24 hours.\n"
	  "# TYPE twilight_alert_events_deduplicated_total counter\n"
	  "twilight_alert_events_deduplicated_total %llu\n"
	  "# HELP twilight_alert_events_dropped_total Alert events dropped: the queue was full.\n"
	  "# TYPE twilight_alert_events_dropped_total counter\n"
	  "twilight_alert_events_dropped_total %llu\n",
	  (unsigned long long)st->deduplicated,
	  (unsigned long long)st->dropped);
	P("# HELP twilight_webhook_deliveries_total Webhook delivery attempts by outcome (retrying: failed, to be retried; failed: given up; dropped: never attempted).\n"
	  "# TYPE twilight_webhook_deliveries_total counter\n");
	for (i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
		P("twilight_webhook_deliveries_total{outcome=\"%s\"} %llu\n",
		  outcomes[i], (unsigned long long)by_outcome[i]);
	if (!st->n_ready)
		return ret;
	P("# HELP twilight_readiness_hosts_breaking Hosts seen in 30 days that would break on each upgrade target, at the alert detector's last scan.\n"
	  "# TYPE twilight_readiness_hosts_breaking gauge\n");
	for (i = 0; i < st->n_ready && i < TWL_ALERTS_READY_MAX; i++)
		P("twilight_readiness_hosts_breaking{target=\"%s\"} %lld\n",
		  st->ready[i].target, (long long)st->ready[i].breaks);
	return ret;
}

/* Contract: see metrics.h. */
int twl_metrics_render_cert(struct twl_buf *b, int64_t not_after, int64_t now,
			    unsigned warn_days)
{
	if (!not_after)
		return 0;
	return twl_buf_printf(
		b,
		"# HELP twilight_tls_cert_expiry_timestamp_seconds When the server certificate expires.\n"
		"# TYPE twilight_tls_cert_expiry_timestamp_seconds gauge\n"
		"twilight_tls_cert_expiry_timestamp_seconds %lld\n"
		"# HELP twilight_tls_cert_expiring 1 from %u days before the server certificate expires.\n"
		"# TYPE twilight_tls_cert_expiring gauge\ntwilight_tls_cert_expiring %d\n",
		(long long)not_after, warn_days,
		not_after - now < (int64_t)warn_days * 86400);
}
