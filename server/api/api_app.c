// SPDX-License-Identifier: GPL-2.0
/* twilight's application state (api_app.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "alerts/alerts.h"
#include "api/answer_cache.h"
#include "api/answer_context.h"
#include "api/api_app.h"
#include "api/api_ingest.h"
#include "api/api_read.h"
#include "api/readiness.h"
#include "http/http.h"
#include "http/server.h"

struct api_state {
	struct twl_store *store;
	void *writer; /* twl_api_ingest_start()'s */
	struct twl_alerts *alerts;
	struct twl_answer_cache *answers;
};

/*
 * Slow answers kept: at most this many (room for those computed ahead,
 * up to two per catalog feature and one per target, and as many again
 * asked for with other parameters), refreshed for a day after use.
 */
#define ANSWERS_MAX 96
#define ANSWERS_WARM_MS (86400 * 1000ull)

/*
 * What the dashboard asks for first, computed ahead of any request
 * (slow-answer-ahead, answer_cache.h): every feature's detail and export
 * preview, the export, each target's readiness. A failure costs only
 * the waits it would have spared; it is logged.
 */
static void answers_ahead(struct twl_server *srv, struct twl_answer_cache *c)
{
	int rc = twl_api_feature_ahead(c);

	if (!rc)
		rc = twl_api_export_ahead(srv, c);
	if (!rc)
		rc = twl_api_readiness_ahead(srv, c);
	if (rc)
		twl_log(LOG_WARNING,
			"cannot compute the dashboard's answers ahead: %s; "
			"each is computed for its first request instead",
			strerror(-rc));
}

/* The kept answers (answer_cache.h) from the server's configuration. */
static struct twl_answer_cache *answers_new(struct twl_server *srv)
{
	const struct twl_config *cfg = twl_server_config(srv);
	struct twl_answer_cache_opts o = {
		.slow_ms = cfg->slow_answer_ms,
		.max_age_ms = cfg->slow_answer_max_age_s * 1000ull,
		.max_entries = ANSWERS_MAX,
		.keep_warm_ms = ANSWERS_WARM_MS,
		.store = twl_server_store(srv),
	};
	struct twl_answer_cache *c;
	int rc = twl_answer_context(cfg, o.context);

	c = twl_answer_cache_new(srv, &o);
	/*
	 * The stored answers of this context (the same code, settings,
	 * catalog and targets) are served and computed again at their
	 * usual times. Without a context, a start may come with other
	 * ones than they saw: each is served when first asked for and
	 * computed again at once (answer_cache.h).
	 */
	if (rc)
		twl_answer_cache_touch(c);
	return c;
}

/* twl_alerts_opts.kept_breaks: from the kept readiness answers. */
static int kept_breaks(void *ctx, const char *target, int64_t *count)
{
	struct api_state *st = ctx;

	return twl_api_readiness_kept_breaks(st->answers, target, count);
}

/* The alerts' settings from the server's configuration. */
static void alerts_opts(const struct twl_config *cfg, struct twl_alerts_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_s = cfg->alert_interval_s;
	o->new_days = cfg->alert_new_days;
	o->silent_after = cfg->silent_after_s;
	o->rate_per_min = cfg->webhook_rate;
	o->retry_base_s = cfg->webhook_retry_s;
	o->queue_max = 4096;
	o->data_dir = cfg->data_dir;
	o->deliver.ca_file = cfg->webhook_ca_file;
	o->deliver.timeout_s = cfg->webhook_timeout_s;
}

/* Contract: see api_app.h. */
int twl_api_app_start(struct twl_server *srv, void **state)
{
	struct api_state *st = calloc(1, sizeof(*st));
	struct twl_alerts_opts o;
	int rc;

	if (!st) {
		twl_log(LOG_ERR, "cannot start the application: out of memory");
		return -ENOMEM;
	}
	st->store = twl_server_store(srv);
	rc = twl_api_ingest_start(srv, &st->writer);
	if (rc) {
		free(st);
		return rc;
	}
	/* the answers first: the detector reads the kept ones (kept_breaks) */
	alerts_opts(twl_server_config(srv), &o);
	o.kept_breaks = kept_breaks;
	o.kept_ctx = st;
	st->answers = answers_new(srv);
	if (st->answers)
		st->alerts = twl_alerts_new(twl_server_store(srv), &o);
	if (!st->alerts) {
		rc = -(errno ? errno : ENOMEM);
		twl_log(LOG_ERR, "cannot start the alert or answer threads: %s",
			strerror(-rc));
		twl_answer_cache_free(st->answers);
		twl_api_ingest_drain(st->writer);
		twl_api_ingest_free(st->writer);
		free(st);
		return rc;
	}
	*state = st;
	/*
	 * After the state is the server's: an export computed ahead asks
	 * for its readiness answer through it (twl_api_answer()), and the
	 * registration's lock orders this write before that read.
	 */
	if (twl_server_config(srv)->slow_answer_ahead)
		answers_ahead(srv, st->answers);
	return 0;
}

/* Contract: see api_app.h. */
void twl_api_app_drain(void *state)
{
	struct api_state *st = state;

	if (!st)
		return;
	/*
	 * The server stops: a long read under way (an export's data, a
	 * kept answer's refresh, the detector's readiness step) ends now
	 * instead of holding the stop for minutes; its request answers 503
	 * "stopping". The writer still commits everything queued.
	 */
	twl_store_stop_reads(st->store);
	twl_api_ingest_drain(st->writer);
}

/* Contract: see api_app.h. */
void twl_api_app_free(void *state)
{
	struct api_state *st = state;

	if (!st)
		return;
	/* the detector reads the kept answers: it stops first */
	twl_alerts_free(st->alerts);
	twl_answer_cache_free(st->answers);
	twl_api_ingest_free(st->writer);
	free(st);
}

/* Contract: see api_ingest.h. */
struct twl_writer *twl_api_writer(struct twl_server *srv)
{
	struct api_state *st = twl_server_app_state(srv);

	return st ? st->writer : NULL;
}

/* Contract: see api_app.h. */
struct twl_alerts *twl_api_alerts(struct twl_server *srv)
{
	struct api_state *st = twl_server_app_state(srv);

	return st ? st->alerts : NULL;
}

/* Contract: see api_app.h. */
int twl_api_answer(struct twl_server *srv, struct twl_response *resp,
		   const struct twl_answer_kind *k, const void *params,
		   size_t len, json_t **out)
{
	struct api_state *st = twl_server_app_state(srv);
	uint64_t age;
	int rc;

	if (!st || !st->answers)
		return k->fn(srv, params, out);
	rc = resp ? twl_answer_cache_get(st->answers, k, params, len, out,
					 &age) :
		    twl_answer_cache_get_inner(st->answers, k, params, len, out,
					       &age);
	if (rc > 0 && resp) /* a kept one: how old, whole seconds (RFC 9111) */
		twl_response_header(resp, "Age", "%llu",
				    (unsigned long long)(age / 1000));
	return rc < 0 ? rc : 0;
}

/* Contract: see api_app.h. */
void twl_api_answers_touch(struct twl_server *srv)
{
	struct api_state *st = twl_server_app_state(srv);

	if (!st)
		return;
	twl_answer_cache_touch(st->answers);
	/* a target added is computed ahead too (registered once) */
	if (twl_server_config(srv)->slow_answer_ahead &&
	    twl_api_readiness_ahead(srv, st->answers))
		twl_log(LOG_WARNING, "cannot compute a new target's readiness "
				     "ahead; it is computed when asked for");
}
