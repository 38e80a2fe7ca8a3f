// SPDX-License-Identifier: GPL-2.0
/*
 * The alert engine: the queue events are raised into, the delivery
 * thread that fans each event out to the webhooks and retries failed
 * attempts on the back-off schedule (sign.h), and the detector's thread
 * (detect.h). Pending deliveries are bounded; past the bound an event is
 * dropped, counted and logged.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>

#include "alerts/alerts.h"
#include "alerts/detect.h"
#include "alerts/queue.h"
#include "alerts/sign.h"
#include "http/ratelimit.h"
#include "store/store_alerts.h"

#define PENDING_MAX 1024
#define DEDUP_KEYS 65536
#define DEDUP_WINDOW (24 * 3600)

/* One event owed to one webhook. */
struct pending {
	int64_t hook;
	struct twl_alert_event ev; /* its own copy of the body */
	unsigned attempt; /* made so far */
	int64_t due;
};

struct twl_alerts {
	struct twl_store *s;
	struct twl_alerts_opts o;
	struct twl_alert_queue *q;
	struct twl_ratelimit *rl;
	atomic_int stop;
	atomic_uint hooks_gen;
	unsigned hooks_seen; /* hooks_gen when hooks was read */
	json_t *hooks; /* webhooks with secrets, the delivery thread's */
	struct pending pend[PENDING_MAX];
	size_t n_pend;
	atomic_uint_fast64_t delivered, failed, retried, dropped;
	atomic_uint_fast64_t by_kind[TWL_ALERT_KINDS];
	pthread_t deliverer, detector;
	bool deliverer_up, detector_up;
	pthread_mutex_t lock; /* the detector's sleep; ready, n_ready */
	pthread_cond_t wake;
	size_t n_ready;
	struct twl_alerts_ready ready[TWL_ALERTS_READY_MAX];
};

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void log_attempt(struct twl_alerts *a, const struct pending *p,
			const char *status, long http, const char *err)
{
	struct twl_delivery_row r = { .webhook_id = p->hook,
				      .event_id = p->ev.id,
				      .kind = p->ev.kind,
				      .attempt = p->attempt,
				      .status = status,
				      .http_status = http,
				      .error = err && *err ? err : NULL,
				      .at = now_s() };
	int rc = twl_store_delivery_log(a->s, &r);

	if (rc)
		twl_log(LOG_WARNING,
			"alerts: cannot log the delivery of event %s to "
			"webhook %" PRId64 ": %s",
			p->ev.id, p->hook, strerror(-rc));
}

/* The webhooks as now stored, when they changed since last read. */
static void hooks_refresh(struct twl_alerts *a)
{
	unsigned gen = atomic_load(&a->hooks_gen);
	json_t *doc = NULL;
	int rc;

	if (a->hooks && gen == a->hooks_seen)
		return;
	rc = twl_store_webhook_list(a->s, true, &doc);
	if (rc) {
		twl_log(LOG_WARNING, "alerts: cannot read the webhooks: %s",
			strerror(-rc));
		return;
	}
	json_decref(a->hooks);
	a->hooks = json_incref(json_object_get(doc, "webhooks"));
	json_decref(doc);
	a->hooks_seen = gen;
}

static json_t *hook_find(struct twl_alerts *a, int64_t id)
{
	json_t *h;
	size_t i;

	json_array_foreach(a->hooks, i, h)
	{
		if (json_integer_value(json_object_get(h, "id")) == id)
			return h;
	}
	return NULL;
}

/* Owe @ev to every webhook; past PENDING_MAX the rest is dropped. */
static void fan_out(struct twl_alerts *a, const struct twl_alert_event *ev)
{
	struct pending *p;
	json_t *h;
	size_t i;

	hooks_refresh(a);
	json_array_foreach(a->hooks, i, h)
	{
		struct pending drop = { .ev = *ev };

		drop.hook = json_integer_value(json_object_get(h, "id"));
		if (a->n_pend == PENDING_MAX) {
			atomic_fetch_add(&a->dropped, 1);
			log_attempt(a, &drop, "dropped", 0,
				    "too many deliveries pending");
			continue;
		}
		p = &a->pend[a->n_pend];
		*p = drop;
		p->ev.body = strdup(ev->body);
		if (!p->ev.body) {
			atomic_fetch_add(&a->dropped, 1);
			log_attempt(a, &drop, "dropped", 0, "out of memory");
			continue;
		}
		p->due = now_s();
		a->n_pend++;
	}
}

static void pending_remove(struct twl_alerts *a, size_t i)
{
	free(a->pend[i].ev.body);
	a->pend[i] = a->pend[--a->n_pend];
}

/*
 * Attempt pending delivery @i if its time and the webhook's rate allow:
 * true when it is done with (delivered, given up, webhook gone).
 */
static bool attempt(struct twl_alerts *a, size_t i)
{
	struct pending *p = &a->pend[i];
	char key[24], err[256];
	int64_t wait, now = now_s();
	json_t *h;
	long http;
	int rc;

	if (p->due > now)
		return false;
	h = hook_find(a, p->hook);
	if (!h) {
		atomic_fetch_add(&a->dropped, 1);
		log_attempt(a, p, "dropped", 0, "webhook deleted");
		return true;
	}
	snprintf(key, sizeof(key), "%" PRId64, p->hook);
	wait = twl_ratelimit_take(a->rl, key, mono_s());
	if (wait) {
		p->due = now + wait;
		return false;
	}
	p->attempt++;
	rc = twl_webhook_post(json_string_value(json_object_get(h, "url")),
			      json_string_value(json_object_get(h, "secret")),
			      &p->ev, &a->o.deliver, now, &http, err,
			      sizeof(err));
	if (!rc) {
		atomic_fetch_add(&a->delivered, 1);
		log_attempt(a, p, "delivered", http, NULL);
		return true;
	}
	wait = twl_webhook_backoff(a->o.retry_base_s, p->attempt);
	if (wait < 0 || atomic_load(&a->stop)) {
		atomic_fetch_add(&a->failed, 1);
		log_attempt(a, p, "failed", http, err);
		return true;
	}
	atomic_fetch_add(&a->retried, 1);
	log_attempt(a, p, "retrying", http, err);
	p->due = now_s() + wait;
	return false;
}

/* Milliseconds until the next pending delivery is due, at most 1000. */
static int next_wait_ms(struct twl_alerts *a)
{
	int64_t now = now_s(), first = now + 1;
	size_t i;

	for (i = 0; i < a->n_pend; i++)
		if (a->pend[i].due < first)
			first = a->pend[i].due;
	return first <= now ? 0 : 1000;
}

static void *deliver_main(void *arg)
{
	struct twl_alerts *a = arg;
	struct twl_alert_event ev;
	size_t i;

	while (!atomic_load(&a->stop)) {
		if (twl_alert_queue_pop(a->q, &ev, next_wait_ms(a))) {
			fan_out(a, &ev);
			free(ev.body);
		}
		hooks_refresh(a);
		for (i = 0; i < a->n_pend && !atomic_load(&a->stop);)
			if (attempt(a, i))
				pending_remove(a, i);
			else
				i++;
	}
	while (a->n_pend) {
		atomic_fetch_add(&a->dropped, 1);
		log_attempt(a, &a->pend[0], "dropped", 0, "server stopped");
		pending_remove(a, 0);
	}
	return NULL;
}

/*
 * The detector: a scan every interval until stopped, its readiness step
 * paced by what it costs (TWL_DETECT_READY_PACE).
 */
static void *detect_main(void *arg)
{
	struct twl_alerts *a = arg;
	struct twl_detect_opts d = { .new_days = a->o.new_days,
				     .silent_after = a->o.silent_after,
				     .data_dir = a->o.data_dir,
				     .kept_breaks = a->o.kept_breaks,
				     .kept_ctx = a->o.kept_ctx };
	struct timespec until;
	uint64_t ready_next = 0, t0;
	int rc;

	pthread_mutex_lock(&a->lock);
	while (!atomic_load(&a->stop)) {
		pthread_mutex_unlock(&a->lock);
		t0 = twl_mono_ms();
		d.skip_readiness = t0 < ready_next;
		rc = twl_alert_detect_scan(a->s, a, &d, now_s());
		if (!d.skip_readiness)
			ready_next = twl_detect_ready_next(t0, twl_mono_ms());
		if (rc && rc != -ECANCELED) /* not: the server stops */
			twl_log(LOG_WARNING,
				"alerts: a detector scan failed: %s",
				strerror(-rc));
		pthread_mutex_lock(&a->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += a->o.interval_s;
		while (!atomic_load(&a->stop) &&
		       pthread_cond_timedwait(&a->wake, &a->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Contract: see alerts.h. */
struct twl_alerts *twl_alerts_new(struct twl_store *s,
				  const struct twl_alerts_opts *o)
{
	struct twl_alerts *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->s = s;
	a->o = *o;
	a->o.deliver.cancel = &a->stop;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	a->q = twl_alert_queue_new(o->queue_max, DEDUP_KEYS, DEDUP_WINDOW);
	a->rl = twl_ratelimit_new(o->rate_per_min / 60.0,
				  o->rate_per_min < 1 ? 1 : o->rate_per_min);
	if (!a->q || !a->rl)
		goto fail;
	if (pthread_create(&a->deliverer, NULL, deliver_main, a))
		goto fail;
	a->deliverer_up = true;
	if (o->interval_s) {
		if (pthread_create(&a->detector, NULL, detect_main, a))
			goto fail;
		a->detector_up = true;
	}
	return a;
fail:
	twl_alerts_free(a);
	errno = ENOMEM;
	return NULL;
}

/* Contract: see alerts.h. */
void twl_alerts_free(struct twl_alerts *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	atomic_store(&a->stop, 1);
	pthread_cond_broadcast(&a->wake);
	pthread_mutex_unlock(&a->lock);
	if (a->q)
		twl_alert_queue_close(a->q);
	if (a->detector_up)
		pthread_join(a->detector, NULL);
	if (a->deliverer_up)
		pthread_join(a->deliverer, NULL);
	json_decref(a->hooks);
	twl_alert_queue_free(a->q);
	twl_ratelimit_free(a->rl);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->wake);
	free(a);
}

struct body_args {
	const char *kind;
	int64_t now;
	const json_t *detail;
};

/* The event's JSON body (docs/api.md "Webhooks"). */
static char *make_body(void *arg, const char *id)
{
	struct body_args *b = arg;
	json_t *j;
	char *s;

	j = json_pack("{s:s, s:s, s:I, s:O?}", "id", id, "kind", b->kind, "at",
		      (json_int_t)b->now, "detail", (json_t *)b->detail);
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return s;
}

static const char *const kind_names[TWL_ALERT_KINDS] = {
	"new_use",	   "host_silent",	  "records_lost", "probe_lost",
	"readiness_worse", "migrated_used_again", "other",
};

/* Contract: see alerts.h. */
const char *twl_alert_kind_name(enum twl_alert_kind k)
{
	return k < TWL_ALERT_KINDS ? kind_names[k] : "other";
}

static enum twl_alert_kind kind_of(const char *kind)
{
	int k;

	for (k = 0; k < TWL_ALERT_OTHER; k++)
		if (!strcmp(kind, kind_names[k]))
			return (enum twl_alert_kind)k;
	return TWL_ALERT_OTHER;
}

/* Contract: see alerts.h. */
int twl_alert_raise(struct twl_alerts *a, const char *kind, const char *key,
		    int64_t now, const json_t *detail)
{
	struct body_args b = { kind, now, detail };
	int rc;

	if (!a || !kind || (detail && !json_is_object(detail)))
		return -EINVAL;
	rc = twl_alert_queue_push(a->q, kind, key, now, make_body, &b);
	if (!rc)
		atomic_fetch_add(&a->by_kind[kind_of(kind)], 1);
	return rc;
}

/* Contract: see alerts.h. */
void twl_alerts_webhooks_changed(struct twl_alerts *a)
{
	if (a)
		atomic_fetch_add(&a->hooks_gen, 1);
}

/* Contract: see alerts.h. */
void twl_alerts_set_ready(struct twl_alerts *a,
			  const struct twl_alerts_ready *r, size_t n)
{
	if (n > TWL_ALERTS_READY_MAX)
		n = TWL_ALERTS_READY_MAX;
	pthread_mutex_lock(&a->lock);
	memcpy(a->ready, r, n * sizeof(*r));
	a->n_ready = n;
	pthread_mutex_unlock(&a->lock);
}

/* Contract: see alerts.h. */
void twl_alerts_stats(struct twl_alerts *a, struct twl_alerts_stats *out)
{
	struct twl_alert_queue_stats q;
	int k;

	twl_alert_queue_stats(a->q, &q);
	out->raised = q.queued;
	for (k = 0; k < TWL_ALERT_KINDS; k++)
		out->raised_by_kind[k] = atomic_load(&a->by_kind[k]);
	out->deduplicated = q.deduplicated;
	out->dropped = q.dropped;
	out->deliveries_dropped = atomic_load(&a->dropped);
	pthread_mutex_lock(&a->lock);
	out->n_ready = a->n_ready;
	memcpy(out->ready, a->ready, a->n_ready * sizeof(a->ready[0]));
	pthread_mutex_unlock(&a->lock);
	out->delivered = atomic_load(&a->delivered);
	out->failed = atomic_load(&a->failed);
	out->retried = atomic_load(&a->retried);
}
