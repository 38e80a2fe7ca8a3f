// SPDX-License-Identifier: GPL-2.0
/* Durable delivery: spool, enrolment and the retry rules (sender.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <twilight/catalog.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "catalog_update.h"
#include "enroll.h"
#include "report.h"
#include "sender.h"
#include "spool.h"
#include "transport.h"

#define REPORTS_PATH "/api/v1/reports"
#define CATALOG_PATH "/api/v1/agent/catalog"

struct twl_sender {
	struct twl_sender_cfg cfg; /* string members point to the copies below */
	char *server_url, *ca_file, *client_cert, *client_key, *token_file;
	char *state_dir, *spool_dir, *host_id, *hostname;
	struct twl_spool *spool;
	struct twl_transport *tr;
	char *host_key;
	unsigned retry_n; /* consecutive retryable failures */
	unsigned reject_n; /* consecutive key rejections */
	uint64_t next_at_ms; /* no attempt before this (cfg clock) */
	uint64_t sent, send_failures, entries_dropped;
	bool key_rejected;
	char last_error[256];
};

static uint64_t default_now_ms(void *ctx)
{
	return twl_mono_ms();
}

static int64_t default_wall_s(void *ctx)
{
	return (int64_t)time(NULL);
}

static uint64_t default_rand_upto(void *ctx, uint64_t bound)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint64_t)rand();
	return bound == UINT64_MAX ? r : r % (bound + 1);
}

static uint64_t now_ms(const struct twl_sender *s)
{
	return s->cfg.now_ms(s->cfg.hook_ctx);
}

static int dup_opt(const char *in, char **out)
{
	*out = NULL;
	if (!in)
		return 0;
	*out = strdup(in);
	return *out ? 0 : -ENOMEM;
}

static const char *check_cfg(const struct twl_sender_cfg *c)
{
	if (!c->server_url || strncasecmp(c->server_url, "https://", 8))
		return "server-url: must be an https:// URL";
	if (!c->ca_file || !c->ca_file[0])
		return "ca-file: required (server certificates are always verified)";
	if (!c->client_cert != !c->client_key)
		return "client-cert/client-key: give both or neither";
	if (!c->state_dir || !c->state_dir[0])
		return "state-dir: required";
	if (!c->spool_dir || !c->spool_dir[0])
		return "spool-dir: required";
	if (!c->host_id || !c->host_id[0] || strlen(c->host_id) > 64 ||
	    strspn(c->host_id, "0123456789abcdef-") != strlen(c->host_id))
		return "host_id: required, at most 64 characters of [0-9a-f-]";
	if (c->spool_max_bytes && c->spool_max_bytes < 4096)
		return "spool-max-bytes: at least 4096";
	/* older batches than the server keeps ids of could count twice */
	if (c->spool_max_age_s > TWL_WIRE_RESEND_DAYS * 86400U)
		return "spool-max-age: at most 35d (the server's batch-days keeps batch ids at least that long)";
	if (c->backoff_base_ms && c->backoff_cap_ms &&
	    c->backoff_base_ms > c->backoff_cap_ms)
		return "backoff-base: larger than backoff-cap";
	return NULL;
}

/*
 * Copy the strings of @cfg into @s and point s->cfg at the copies (the
 * hostname defaults to this machine's name). 0 or -ENOMEM.
 */
static int copy_strings(struct twl_sender *s, const struct twl_sender_cfg *cfg)
{
	char hn[256];
	int ret;

	if (!cfg->hostname) {
		if (gethostname(hn, sizeof(hn)) < 0)
			hn[0] = 0;
		hn[sizeof(hn) - 1] = 0;
	}
	ret = dup_opt(cfg->server_url, &s->server_url);
	ret = ret ?: dup_opt(cfg->ca_file, &s->ca_file);
	ret = ret ?: dup_opt(cfg->client_cert, &s->client_cert);
	ret = ret ?: dup_opt(cfg->client_key, &s->client_key);
	ret = ret ?: dup_opt(cfg->enroll_token_file, &s->token_file);
	ret = ret ?: dup_opt(cfg->state_dir, &s->state_dir);
	ret = ret ?: dup_opt(cfg->spool_dir, &s->spool_dir);
	ret = ret ?: dup_opt(cfg->host_id, &s->host_id);
	ret = ret ?: dup_opt(cfg->hostname ? cfg->hostname : hn, &s->hostname);
	if (ret)
		return ret;
	s->cfg.server_url = s->server_url;
	s->cfg.ca_file = s->ca_file;
	s->cfg.client_cert = s->client_cert;
	s->cfg.client_key = s->client_key;
	s->cfg.enroll_token_file = s->token_file;
	s->cfg.state_dir = s->state_dir;
	s->cfg.spool_dir = s->spool_dir;
	s->cfg.host_id = s->host_id;
	s->cfg.hostname = s->hostname;
	return 0;
}

/* The documented default of every field of @c left 0, and the hooks. */
static void apply_defaults(struct twl_sender_cfg *c)
{
	if (!c->spool_max_bytes)
		c->spool_max_bytes = TWL_SENDER_DEF_SPOOL_MAX_BYTES;
	if (!c->spool_max_age_s)
		c->spool_max_age_s = TWL_SENDER_DEF_SPOOL_MAX_AGE_S;
	if (!c->backoff_base_ms)
		c->backoff_base_ms = TWL_SENDER_DEF_BACKOFF_BASE_MS;
	if (!c->backoff_cap_ms)
		c->backoff_cap_ms = TWL_SENDER_DEF_BACKOFF_CAP_MS;
	if (c->backoff_cap_ms < c->backoff_base_ms)
		c->backoff_cap_ms = c->backoff_base_ms;
	if (!c->connect_timeout_ms)
		c->connect_timeout_ms = TWL_SENDER_DEF_CONNECT_TIMEOUT_MS;
	if (!c->timeout_ms)
		c->timeout_ms = TWL_SENDER_DEF_TIMEOUT_MS;
	if (!c->now_ms)
		c->now_ms = default_now_ms;
	if (!c->wall_s)
		c->wall_s = default_wall_s;
	if (!c->rand_upto)
		c->rand_upto = default_rand_upto;
}

/* Open the spool (logged when it fails). 0 or a negative errno. */
static int open_spool(struct twl_sender *s)
{
	struct twl_spool_opts so = { 0 };
	int err;

	so.dir = s->spool_dir;
	so.max_bytes = s->cfg.spool_max_bytes;
	so.max_age_s = s->cfg.spool_max_age_s;
	so.quarantine_max = s->cfg.quarantine_max_files;
	so.wall_s = s->cfg.wall_s;
	so.ctx = s->cfg.hook_ctx;
	s->spool = twl_spool_open(&so);
	if (s->spool)
		return 0;
	err = errno;
	twl_log(LOG_ERR, "sender: cannot open spool %s: %s%s", s->spool_dir,
		strerror(err),
		err == EBUSY ?
			" (another agent uses it; stop it or pick another spool-dir)" :
			"; check the directory and its permissions");
	return -err;
}

/* Set up the HTTPS client (logged when it fails). 0 or a negative errno. */
static int open_transport(struct twl_sender *s)
{
	struct twl_transport_cfg tc = { 0 };
	int err;

	tc.server_url = s->server_url;
	tc.ca_file = s->ca_file;
	tc.client_cert = s->client_cert;
	tc.client_key = s->client_key;
	tc.connect_timeout_ms = s->cfg.connect_timeout_ms;
	tc.timeout_ms = s->cfg.timeout_ms;
	s->tr = twl_transport_new(&tc);
	if (s->tr)
		return 0;
	err = errno;
	twl_log(LOG_ERR, "sender: cannot set up HTTPS client for %s: %s",
		s->server_url, strerror(err));
	return -err;
}

/* Contract: see sender.h. */
struct twl_sender *twl_sender_new(const struct twl_sender_cfg *cfg)
{
	struct twl_sender *s;
	const char *bad;
	int ret;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	bad = check_cfg(cfg);
	if (bad) {
		twl_log(LOG_ERR,
			"sender: bad configuration: %s; fix the config file",
			bad);
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->cfg = *cfg;
	ret = copy_strings(s, cfg);
	if (ret)
		goto fail;
	apply_defaults(&s->cfg);
	ret = open_spool(s);
	if (ret)
		goto fail;
	ret = open_transport(s);
	if (ret)
		goto fail;
	if (twl_hostkey_load(s->state_dir, &s->host_key) == -EINVAL)
		twl_log(LOG_WARNING,
			"sender: %s/host.key is empty or invalid; will enrol again",
			s->state_dir);
	return s;
fail:
	twl_sender_free(s);
	errno = -ret;
	return NULL;
}

/* Contract: see sender.h. */
void twl_sender_free(struct twl_sender *s)
{
	if (!s)
		return;
	twl_spool_close(s->spool);
	twl_transport_free(s->tr);
	if (s->host_key) {
		explicit_bzero(s->host_key, strlen(s->host_key));
		free(s->host_key);
	}
	free(s->server_url);
	free(s->ca_file);
	free(s->client_cert);
	free(s->client_key);
	free(s->token_file);
	free(s->state_dir);
	free(s->spool_dir);
	free(s->host_id);
	free(s->hostname);
	free(s);
}

/* Contract: see sender.h. */
int twl_sender_submit(struct twl_sender *s, const char *json, size_t len)
{
	int ret;

	if (!json || !len)
		return -EINVAL;
	ret = twl_spool_put(s->spool, json, len, NULL);
	if (ret)
		twl_log(LOG_ERR,
			"sender: cannot spool a %zu-byte batch in %s: %s%s",
			len, s->spool_dir, strerror(-ret),
			ret == -E2BIG ?
				" (larger than spool_max_bytes; raise it)" :
				"; check free space and permissions");
	return ret;
}

/* Contract: see sender.h. */
void twl_sender_count_dropped(struct twl_sender *s, unsigned n)
{
	s->entries_dropped += n;
}

/* Full-jitter exponential delay: random(0, min(cap, base * 2^(n-1))). */
static uint64_t jitter_delay(const struct twl_sender *s, unsigned n,
			     uint64_t cap)
{
	uint64_t d = s->cfg.backoff_base_ms;

	for (unsigned i = 1; i < n && d < cap; i++)
		d *= 2;
	if (d > cap)
		d = cap;
	return s->cfg.rand_upto(s->cfg.hook_ctx, d);
}

/*
 * Arm the back-off. A zero delay (full jitter can draw 0) becomes 1 ms so
 * that a failure always ends the current run_once() instead of looping
 * straight into the next attempt.
 */
static int set_wait(struct twl_sender *s, uint64_t now, uint64_t delay)
{
	if (!delay)
		delay = 1;
	s->next_at_ms = now + delay;
	return delay > INT_MAX ? INT_MAX : (int)delay;
}

/* Retryable failure: exponential full jitter, at least Retry-After. */
static int back_off_retry(struct twl_sender *s,
			  const struct twl_http_result *res, uint64_t now)
{
	uint64_t d, ra = 0;

	s->retry_n++;
	d = jitter_delay(s, s->retry_n, s->cfg.backoff_cap_ms);
	if (res && res->retry_after[0] &&
	    twl_retry_after_ms(res->retry_after, s->cfg.wall_s(s->cfg.hook_ctx),
			       TWL_SENDER_KEY_REJECT_CAP_MS, &ra) == 0 &&
	    ra > d)
		d = ra;
	return set_wait(s, now, d);
}

/*
 * Key or token refused: exponential up to an hour, with "equal" jitter
 * (half fixed, half random) so a refused host never retries at once.
 */
static int back_off_reject(struct twl_sender *s, uint64_t now)
{
	uint64_t d = s->cfg.backoff_base_ms;

	s->reject_n++;
	for (unsigned i = 1;
	     i < s->reject_n && d < TWL_SENDER_KEY_REJECT_CAP_MS; i++)
		d *= 2;
	if (d > TWL_SENDER_KEY_REJECT_CAP_MS)
		d = TWL_SENDER_KEY_REJECT_CAP_MS;
	d = d / 2 + s->cfg.rand_upto(s->cfg.hook_ctx, d / 2);
	return set_wait(s, now, d);
}

/* Describe an HTTP result in a few words ("HTTP 503 (busy)" / network). */
static void describe(const struct twl_http_result *res, char *out, size_t cap)
{
	char code[64];

	if (!res->status) {
		snprintf(out, cap, "network error: %.140s", res->error);
		return;
	}
	twl_error_code(res->body, res->body_len, code, sizeof(code));
	if (code[0])
		snprintf(out, cap, "HTTP %ld (%s)", res->status, code);
	else
		snprintf(out, cap, "HTTP %ld", res->status);
}

/* Keep the key the server gave (stored for restarts when possible). */
static void keep_key(struct twl_sender *s, char *key)
{
	int ret = twl_hostkey_store(s->state_dir, key);

	if (ret)
		twl_log(LOG_ERR,
			"sender: enrolled but cannot save %s/host.key: %s; the agent will enrol again after a restart",
			s->state_dir, strerror(-ret));
	else
		twl_log(LOG_INFO, "sender: enrolled host %s with %s",
			s->host_id, s->server_url);
	s->host_key = key;
	s->reject_n = 0;
}

/*
 * Enrolment refused or failed (@ret from twl_enroll(), not 0 or -ENOMEM):
 * say why and back off. Returns the ms to wait.
 */
static int enroll_failed(struct twl_sender *s, int ret,
			 const struct twl_http_result *res, uint64_t now)
{
	char what[160], body[200];

	describe(res, what, sizeof(what));
	s->send_failures++;
	switch (ret) {
	case -EACCES:
		s->key_rejected = true;
		snprintf(s->last_error, sizeof(s->last_error),
			 "key rejected: enrolment token refused (%s)", what);
		twl_log(LOG_ERR,
			"sender: %s; check %s against the server's enrolment tokens",
			s->last_error, s->token_file);
		return back_off_reject(s, now);
	case -EAGAIN:
		snprintf(s->last_error, sizeof(s->last_error),
			 "enrolment failed: %s", what);
		twl_log(LOG_WARNING, "sender: %s; will retry", s->last_error);
		return back_off_retry(s, res, now);
	default:
		snprintf(s->last_error, sizeof(s->last_error),
			 "enrolment refused: %s%s", what,
			 ret == -EPROTO ? " without a usable host_key" : "");
		twl_printable_copy(res->body, res->body_len, body,
				   sizeof(body));
		twl_log(LOG_ERR,
			"sender: %s: %s; check server_url and the server version",
			s->last_error, body);
		return back_off_reject(s, now);
	}
}

/* Make sure a host key is loaded, enrolling if needed. 0 or ms to wait. */
static int ensure_key(struct twl_sender *s, uint64_t now)
{
	struct twl_http_result *res = NULL;
	char *token = NULL, *key = NULL;
	int ret;

	if (s->host_key)
		return 0;
	ret = twl_hostkey_load(s->state_dir, &s->host_key);
	if (!ret)
		return 0;
	if (!s->token_file) {
		snprintf(
			s->last_error, sizeof(s->last_error),
			"no host key in %s/host.key and no enrolment token configured",
			s->state_dir);
		twl_log(LOG_ERR, "sender: %s; set enroll_token_file",
			s->last_error);
		return back_off_reject(s, now);
	}
	ret = twl_read_secret(s->token_file, &token);
	if (ret) {
		snprintf(s->last_error, sizeof(s->last_error),
			 "cannot read enrolment token %s: %s", s->token_file,
			 strerror(-ret));
		twl_log(LOG_ERR,
			"sender: %s; put the token from the server admin there",
			s->last_error);
		return back_off_reject(s, now);
	}
	res = malloc(sizeof(*res));
	if (!res) {
		ret = -ENOMEM;
		goto out;
	}
	ret = twl_enroll(s->tr, token, s->host_id, s->hostname, &key, res);
	if (!ret) {
		keep_key(s, key);
		key = NULL;
	} else if (ret != -ENOMEM) {
		ret = enroll_failed(s, ret, res, now);
	}
out:
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	free(key);
	free(res);
	if (ret == 0 && !s->host_key)
		ret = 1; /* defensive: never report success without a key */
	return ret;
}

/* Handle a 413: spool both halves, then delete the original. */
static int split_batch(struct twl_sender *s, uint64_t id, const char *json,
		       size_t len)
{
	char *a = NULL, *b = NULL;
	int ret;

	ret = twl_report_split(json, len, &a, &b);
	if (ret == -E2BIG || ret == -EINVAL) {
		twl_log(LOG_ERR,
			"sender: server says batch %s/%020llu is too large (HTTP 413) and it cannot be split further; quarantined; raise the server's body limit",
			s->spool_dir, (unsigned long long)id);
		ret = twl_spool_quarantine(
			s->spool, id, "HTTP 413 and cannot be split further");
		goto out;
	}
	if (ret)
		goto out;
	ret = twl_spool_put(s->spool, a, strlen(a), NULL);
	if (!ret)
		ret = twl_spool_put(s->spool, b, strlen(b), NULL);
	if (ret) {
		twl_log(LOG_ERR,
			"sender: cannot spool the halves of an oversized batch in %s: %s",
			s->spool_dir, strerror(-ret));
		goto out;
	}
	ret = twl_spool_remove(s->spool, id);
	if (ret == -ENOENT) /* dropped by the size cap meanwhile */
		ret = 0;
	twl_log(LOG_INFO,
		"sender: batch %020llu too large for the server (HTTP 413); split in two",
		(unsigned long long)id);
out:
	free(a);
	free(b);
	return ret;
}

/* Quarantine a batch the server rejected, keeping its answer. */
static int reject_batch(struct twl_sender *s, uint64_t id,
			const struct twl_http_result *res)
{
	char why[TWL_HTTP_MAX_BODY + 200], what[160];
	size_t n;

	describe(res, what, sizeof(what));
	n = (size_t)snprintf(why, sizeof(why), "%s: ", what);
	twl_printable_copy(res->body, res->body_len, why + n, sizeof(why) - n);
	s->send_failures++;
	snprintf(s->last_error, sizeof(s->last_error), "batch rejected: %.200s",
		 why);
	twl_log(LOG_ERR,
		"sender: server rejected batch %020llu: %.400s; quarantined in %s/quarantine",
		(unsigned long long)id, why, s->spool_dir);
	return twl_spool_quarantine(s->spool, id, why);
}

/* 401/403 for a batch: keep it, back off; after a 401 enrol again. */
static int key_refused(struct twl_sender *s, const struct twl_http_result *res,
		       uint64_t now)
{
	char what[160];
	int ret;

	s->send_failures++;
	s->key_rejected = true;
	describe(res, what, sizeof(what));
	ret = back_off_reject(s, now);
	/*
	 * 401: the server does not know this key (revoked, or its database
	 * was rebuilt) and asks for a new enrolment; with a token at hand,
	 * enrol again at the next attempt (the token is the trust root:
	 * revoking it stops this). 403 means the key is known but not
	 * allowed (role, client certificate, host mismatch): a new key would
	 * not help, so keep it and wait for the operator.
	 */
	if (res->status == 401 && s->token_file &&
	    access(s->token_file, R_OK) == 0) {
		twl_hostkey_forget(s->state_dir);
		explicit_bzero(s->host_key, strlen(s->host_key));
		free(s->host_key);
		s->host_key = NULL;
		snprintf(s->last_error, sizeof(s->last_error),
			 "key rejected: %s; will enrol again", what);
	} else {
		snprintf(s->last_error, sizeof(s->last_error),
			 "key rejected: %s; batches kept", what);
	}
	twl_log(LOG_ERR,
		"sender: %s (retry in %d ms); if it persists, check the host's registration on the server",
		s->last_error, ret);
	return ret;
}

/*
 * What the server's answer @res to batch @id (@json, @len bytes) means for
 * the batch (the rules in sender.h). <0 error, 0 go on, >0 wait ms.
 */
static int handle_answer(struct twl_sender *s, uint64_t id, const char *json,
			 size_t len, const struct twl_http_result *res)
{
	uint64_t now = now_ms(s);
	char what[160];
	int ret = 0;

	switch (twl_classify(res)) {
	case TWL_V_DELIVERED:
		ret = twl_spool_remove(s->spool, id);
		if (ret == -ENOENT)
			ret = 0;
		s->sent++;
		s->retry_n = 0;
		s->reject_n = 0;
		s->key_rejected = false;
		break;
	case TWL_V_RETRY:
		s->send_failures++;
		describe(res, what, sizeof(what));
		ret = back_off_retry(s, res, now);
		snprintf(s->last_error, sizeof(s->last_error), "POST %s: %s",
			 REPORTS_PATH, what);
		twl_log(LOG_WARNING,
			"sender: %s; batch kept, retrying in %d ms",
			s->last_error, ret);
		break;
	case TWL_V_KEY_REJECTED:
		ret = key_refused(s, res, now);
		break;
	case TWL_V_SPLIT:
		ret = split_batch(s, id, json, len);
		break;
	case TWL_V_QUARANTINE:
		ret = reject_batch(s, id, res);
		break;
	}
	return ret;
}

/* One attempt at the oldest batch. Returns <0 error, 0 go on, >0 wait ms. */
static int send_oldest(struct twl_sender *s)
{
	struct twl_http_result *res = NULL;
	unsigned char *gz = NULL;
	char *json = NULL;
	size_t len = 0, gzlen = 0;
	uint64_t id;
	int ret;

	ret = twl_spool_oldest(s->spool, &id);
	if (ret)
		return TWL_SENDER_IDLE_MS;
	ret = ensure_key(s, now_ms(s));
	if (ret)
		return ret;
	ret = twl_spool_load(s->spool, id, &json, &len);
	if (ret == -EBADMSG || ret == -ENOENT)
		return 0; /* quarantined or gone: next batch */
	if (ret) {
		twl_log(LOG_ERR,
			"sender: cannot read spooled batch %020llu in %s: %s",
			(unsigned long long)id, s->spool_dir, strerror(-ret));
		return ret;
	}
	ret = twl_gzip(json, len, &gz, &gzlen);
	if (ret)
		goto out;
	res = malloc(sizeof(*res));
	if (!res) {
		ret = -ENOMEM;
		goto out;
	}
	ret = twl_transport_post(s->tr, REPORTS_PATH, s->host_key, gz, gzlen,
				 true, res);
	if (ret != -ENOMEM)
		ret = handle_answer(s, id, json, len, res);
out:
	free(res);
	free(gz);
	free(json);
	return ret;
}

/* Contract: see sender.h. */
int twl_sender_run_once(struct twl_sender *s, int budget_ms)
{
	uint64_t start = now_ms(s), now;
	int ret;

	twl_spool_expire(s->spool);
	if (start < s->next_at_ms) {
		uint64_t d = s->next_at_ms - start;

		return d > INT_MAX ? INT_MAX : (int)d;
	}
	for (;;) {
		ret = send_oldest(s);
		if (ret != 0)
			return ret;
		now = now_ms(s);
		if (budget_ms <= 0 || now - start >= (uint64_t)budget_ms)
			return 0;
	}
}

/* What a catalog request's answer means: see twl_sender_fetch_catalog(). */
static int catalog_answer(struct twl_sender *s, int ret,
			  const struct twl_http_result *res,
			  const struct twl_buf *body, char *err, size_t cap)
{
	if (ret == -EIO) {
		snprintf(err, cap, "%s", res->error);
		return ret;
	}
	if (ret)
		return ret;
	if (res->status == 204)
		return 0;
	if (res->status != 200) {
		snprintf(err, cap, "the server answered HTTP %ld", res->status);
		return -EPROTO;
	}
	return twl_agent_catalog_accept(s->state_dir,
					body->data ? body->data : "", body->len,
					err, cap);
}

/* Contract: see sender.h. */
int twl_sender_fetch_catalog(struct twl_sender *s, char *err, size_t cap)
{
	struct twl_http_result *res;
	struct twl_buf body;
	char path[64];
	int ret;

	err[0] = '\0';
	if (!s->host_key && twl_hostkey_load(s->state_dir, &s->host_key)) {
		snprintf(err, cap, "not enrolled yet");
		return -EAGAIN;
	}
	res = malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	twl_buf_init(&body, TWL_CATALOG_MAX_BYTES);
	snprintf(path, sizeof(path), CATALOG_PATH "?have=%u",
		 twl_catalog_version());
	ret = twl_transport_get(s->tr, path, s->host_key, &body, res);
	ret = catalog_answer(s, ret, res, &body, err, cap);
	twl_buf_fini(&body);
	free(res);
	return ret;
}

/* Contract: see sender.h. */
void twl_sender_stats(const struct twl_sender *s, struct twl_sender_stats *st)
{
	struct twl_spool_counts c;
	uint64_t now = now_ms(s);

	memset(st, 0, sizeof(*st));
	twl_spool_counts(s->spool, &c);
	st->spool_bytes = c.bytes;
	st->spool_files = c.files;
	st->spool_dropped = c.dropped;
	st->spool_quarantined = c.quarantined;
	st->sent = s->sent;
	st->send_failures = s->send_failures;
	st->entries_dropped = s->entries_dropped;
	st->retry_in_ms = s->next_at_ms > now ? s->next_at_ms - now : 0;
	st->key_rejected = s->key_rejected;
	st->enrolled = s->host_key != NULL;
	snprintf(st->last_error, sizeof(st->last_error), "%s", s->last_error);
}
