// SPDX-License-Identifier: GPL-2.0
/*
 * Alerts by webhook end to end: an in-process server (tests/unit/server/
 * harness.h) delivers to the scripted HTTPS receiver fake_https on
 * 127.0.0.1 (tests/unit/agent/tu_fake_https.h), reports going in through
 * the real API. Checked: every delivery's signature (recomputed here with
 * OpenSSL's HMAC, not the server's code), a retry after a 500, exactly one
 * delivery per event, the delivery log; and, with a receiver that never
 * answers, that every report is still acknowledged. Ingest latency with
 * and without the hanging receiver is printed, not asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "alerts/alerts.h"
#include "api/api_app.h"
#include "harness.h"
#include "prom_text.h"
#include "tu_fake_https.h"

#define SECRET "webhook-test-secret-0123456789"

static char ca_path[400];

static void tweak(struct twl_config *cfg)
{
	cfg->alert_interval_s = 1;
	cfg->webhook_retry_s = 1;
	cfg->webhook_timeout_s = 2;
	cfg->webhook_rate = 6000;
	snprintf(cfg->webhook_ca_file, sizeof(cfg->webhook_ca_file), "%s",
		 ca_path);
}

struct world {
	struct fixture f;
	struct tu_fake_https rx;
	char *tmp, script[300], port[300], log[300];
};

static void world_start(struct world *w, const char *const *script)
{
	memset(w, 0, sizeof(*w));
	w->rx.pid = -1;
	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", tu_pki);
	w->tmp = tu_mkdtemp("hook");
	assert_non_null(w->tmp);
	snprintf(w->script, sizeof(w->script), "%s/script", w->tmp);
	snprintf(w->port, sizeof(w->port), "%s/port", w->tmp);
	snprintf(w->log, sizeof(w->log), "%s/log", w->tmp);
	assert_int_equal(mkdir(w->log, 0700), 0);
	w->rx.script = w->script;
	w->rx.portfile = w->port;
	w->rx.logdir = w->log;
	tu_fake_https_start(&w->rx, tu_pki, "server", TU_SRV_PLAIN, script);
	fixture_start(&w->f, tweak);
}

static void world_stop(struct world *w)
{
	fixture_stop(&w->f);
	tu_fake_https_stop(&w->rx);
	tu_rmrf(w->tmp);
	free(w->tmp);
}

static int64_t add_webhook(struct world *w, const char *secret)
{
	struct http_result r;
	char body[400];
	int64_t id;

	snprintf(body, sizeof(body), "{\"url\":\"%s/hook\",\"secret\":\"%s\"}",
		 w->rx.url, secret);
	http(&w->f, "POST", "/api/v1/webhooks", w->f.admin, body, strlen(body),
	     NULL, &r);
	assert_int_equal(r.status, 201);
	id = json_integer_value(json_object_get(r.json, "id"));
	assert_true(id > 0);
	assert_null(json_object_get(r.json, "secret"));
	http_result_fini(&r);
	return id;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Post one report; its latency in ms. Fails unless it is stored. */
static double post_report(struct world *w, const char *host, const char *key,
			  int seq)
{
	char batch[40];
	struct http_result r;
	json_t *rep;
	char *txt;
	double t0, ms;

	snprintf(batch, sizeof(batch), "b%031d", seq);
	rep = make_report(host, batch, seq);
	txt = dump(rep);
	t0 = mono_ms();
	http(&w->f, "POST", "/api/v1/reports", key, txt, strlen(txt), NULL, &r);
	ms = mono_ms() - t0;
	assert_int_equal(r.status, 200);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "status")), "stored");
	http_result_fini(&r);
	free(txt);
	json_decref(rep);
	return ms;
}

/* The detector's last scan time (alert_state "scan"), 0 before the first. */
static int64_t last_scan(struct world *w)
{
	return query_int(&w->f,
			 "SELECT coalesce(max(value), 0) FROM alert_state"
			 " WHERE key = ?1",
			 "scan");
}

/*
 * Wait until the detector finished a scan that started after now: the
 * next one has started (scans take turns on one thread).
 */
static void wait_scan(struct world *w)
{
	int64_t t = time(NULL), first;
	int i;

	for (i = 0; i < 300 && last_scan(w) <= t; i++)
		usleep(100000);
	first = last_scan(w);
	assert_true(first > t);
	for (i = 0; i < 300 && last_scan(w) <= first; i++)
		usleep(100000);
	assert_true(last_scan(w) > first);
}

/* One header's value from a logged request head into @out. */
static bool req_header(const char *head, const char *name, char *out,
		       size_t cap)
{
	size_t n = strlen(name);
	const char *p;

	for (p = head; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1, *e;

			while (*v == ' ')
				v++;
			e = v + strcspn(v, "\r\n");
			snprintf(out, cap, "%.*s", (int)(e - v), v);
			return true;
		}
	}
	return false;
}

/* A receiver's check: HMAC-SHA256 of "TIMESTAMP.BODY" under the secret. */
static void verify_signature(const char *head, const char *body, size_t len,
			     const char *secret)
{
	char ts[32], sig[100], want[80], *msg = NULL;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0, i;

	assert_true(req_header(head, "X-Twilight-Timestamp", ts, sizeof(ts)));
	assert_true(req_header(head, "X-Twilight-Signature", sig, sizeof(sig)));
	assert_true(llabs(atoll(ts) - (long long)time(NULL)) < 3600);
	assert_true(asprintf(&msg, "%s.%.*s", ts, (int)len, body) > 0);
	assert_non_null(HMAC(EVP_sha256(), secret, (int)strlen(secret),
			     (unsigned char *)msg, strlen(msg), mac, &maclen));
	strcpy(want, "sha256=");
	for (i = 0; i < maclen; i++)
		snprintf(want + 7 + 2 * i, 3, "%02x", mac[i]);
	assert_string_equal(sig, want);
	free(msg);
}

/* What the receiver saw. */
struct seen {
	int requests, answered_500, answered_200;
	char ids[256][40]; /* delivery ids answered 200 */
	char first_id[40]; /* the request answered 500 */
	bool retried; /* the 500's event came again */
};

static void receiver_log(struct world *w, const char *secret, struct seen *s)
{
	char *head, *body, action[32], id[40], kind[40], *path = NULL;
	size_t len;
	int n, j;

	memset(s, 0, sizeof(*s));
	for (n = 1;; n++) {
		assert_true(asprintf(&path, "%s/%03d.req", w->log, n) > 0);
		head = tu_slurp(path, NULL);
		free(path);
		if (!head)
			break;
		body = tu_fake_https_request(&w->rx, n, "body");
		len = strlen(body);
		s->requests++;
		assert_true(req_header(head, "X-Fake-Action", action,
				       sizeof(action)));
		assert_true(req_header(head, "X-Twilight-Delivery", id,
				       sizeof(id)));
		assert_true(req_header(head, "X-Twilight-Event", kind,
				       sizeof(kind)));
		assert_non_null(strstr(head, "POST /hook "));
		verify_signature(head, body, len, secret);
		assert_non_null(strstr(body, id));
		if (!strncmp(action, "500", 3)) {
			s->answered_500++;
			snprintf(s->first_id, sizeof(s->first_id), "%s", id);
		} else if (!strncmp(action, "200", 3)) {
			if (!strcmp(id, s->first_id))
				s->retried = true;
			for (j = 0; j < s->answered_200; j++)
				if (!strcmp(s->ids[j], id))
					fail_msg("event %s delivered twice",
						 id);
			assert_true(s->answered_200 < 256);
			snprintf(s->ids[s->answered_200++], 40, "%s", id);
		}
		free(head);
		free(body);
	}
}

/* The new uses of the fleet: (feature, host) and (feature, process name). */
static int64_t expected_events(struct world *w)
{
	return query_int(&w->f,
			 "SELECT (SELECT count(*) FROM feature_host"
			 " WHERE kinds & 27) + (SELECT count(*) FROM"
			 " (SELECT DISTINCT feature_id, comm FROM usage"
			 " WHERE op <> 'read' AND comm <> ''))",
			 NULL);
}

static int64_t log_count(struct world *w, const char *status)
{
	return query_int(&w->f,
			 "SELECT count(*) FROM webhook_deliveries"
			 " WHERE status = ?1",
			 status);
}

static const char *const ok_script[] = { "500|Content-Type: text/plain|down",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 "200||ok",
					 NULL };

/* GET /metrics counts what the delivery log holds, by outcome and type. */
static void check_metrics(struct world *w, const struct twl_alerts_stats *st)
{
	static const char *const outcomes[] = { "delivered", "retrying",
						"failed", "dropped" };
	struct http_result r;
	char series[128];
	size_t i;

	http(&w->f, "GET", "/metrics", w->f.viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(prom_check_exposition(r.body) > 0);
	for (i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		snprintf(series, sizeof(series),
			 "twilight_webhook_deliveries_total{outcome=\"%s\"}",
			 outcomes[i]);
		assert_int_equal(prom_value_of(r.body, series),
				 log_count(w, outcomes[i]));
	}
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_webhook_deliveries_total{outcome=\"delivered\"}"),
		st->raised);
	assert_int_equal(
		prom_value_of(r.body,
			      "twilight_alert_events_total{type=\"new_use\"}"),
		expected_events(w));
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_alert_events_total{type=\"host_silent\"}"),
		0);
	/* readiness per target: the detector's last scan, as it stored it */
	assert_int_equal(
		prom_value_of(r.body, "twilight_readiness_hosts_breaking"
				      "{target=\"debian-12-6.12\"}"),
		query_int(&w->f, "SELECT value FROM alert_state WHERE key = ?1",
			  "ready|debian-12-6.12"));
	http_result_fini(&r);
}

/* Signature verified, a retry after the 500, one delivery per event. */
static void test_deliveries(void **state)
{
	struct twl_alerts_stats st;
	struct world w;
	struct http_result r;
	struct seen s;
	int64_t want;
	char key[80];
	int i;

	(void)state;
	world_start(&w, ok_script);
	wait_scan(&w); /* the first scan: an empty fleet, nothing announced */
	add_webhook(&w, SECRET);
	enrol_host(&w.f, "0000aaaa", key);
	post_report(&w, "0000aaaa", key, 1);
	wait_scan(&w);
	twl_alerts_stats(twl_api_alerts(w.f.srv), &st);
	/* a new use per (feature, host) and (feature, process name) */
	assert_int_equal(st.raised_by_kind[TWL_ALERT_NEW_USE],
			 expected_events(&w));
	want = (int64_t)st.raised;
	assert_true(want >= 4);
	for (i = 0; i < 300 && log_count(&w, "delivered") < want; i++)
		usleep(100000);
	assert_int_equal(log_count(&w, "delivered"), want);
	/* the same uses again, and more scans: nothing new to announce */
	post_report(&w, "0000aaaa", key, 2);
	wait_scan(&w);
	wait_scan(&w);
	twl_alerts_stats(twl_api_alerts(w.f.srv), &st);
	assert_int_equal(st.raised, want);
	assert_int_equal(st.delivered, want);
	assert_int_equal(st.retried, 1);
	receiver_log(&w, SECRET, &s);
	assert_int_equal(s.answered_500, 1);
	assert_true(s.retried);
	assert_int_equal(s.answered_200, want);
	assert_int_equal(s.requests, want + 1);
	assert_int_equal(log_count(&w, "retrying"), 1);
	assert_int_equal(log_count(&w, "delivered"), want);
	check_metrics(&w, &st);

	/* the log, newest first; the secret is never answered */
	http(&w.f, "GET", "/api/v1/webhooks/deliveries?limit=1000", w.f.admin,
	     NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "deliveries")),
			 want + 1);
	http_result_fini(&r);
	http(&w.f, "GET", "/api/v1/webhooks", w.f.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, SECRET));
	http_result_fini(&r);
	http(&w.f, "GET", "/api/v1/webhooks", w.f.viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	world_stop(&w);
}

static const char *const stall_script[] = { "stall", "stall", "stall",
					    "stall", "stall", "stall",
					    "stall", "stall", NULL };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_latency(const char *what, double *ms, int n)
{
	qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
	printf("ingest latency %s: n=%d median=%.2f ms p90=%.2f ms max=%.2f ms\n",
	       what, n, ms[n / 2], ms[n * 9 / 10], ms[n - 1]);
}

#define REPORTS 60

/* A receiver that never answers holds up no report. */
static void test_hanging_receiver(void **state)
{
	double before[REPORTS], during[REPORTS];
	char host[16], key[80];
	struct world w;
	int i;

	(void)state;
	world_start(&w, stall_script);
	wait_scan(&w);
	for (i = 0; i < REPORTS; i++) {
		snprintf(host, sizeof(host), "0000b%03d", i);
		enrol_host(&w.f, host, key);
		before[i] = post_report(&w, host, key, 1);
	}
	wait_scan(&w);
	add_webhook(&w, SECRET);
	/* new hosts: new uses, events the receiver never answers */
	enrol_host(&w.f, "0000c000", key);
	post_report(&w, "0000c000", key, 1);
	for (i = 0; i < 100 && tu_count(w.log, ".req") < 1; i++)
		usleep(100000);
	assert_true(tu_count(w.log, ".req") >= 1);
	for (i = 0; i < REPORTS; i++) {
		snprintf(host, sizeof(host), "0000d%03d", i);
		enrol_host(&w.f, host, key);
		during[i] = post_report(&w, host, key, 1);
	}
	/* every report was acknowledged above; nothing was delivered */
	for (i = 0; i < 100 && log_count(&w, "retrying") < 1; i++)
		usleep(100000);
	assert_true(log_count(&w, "retrying") >= 1);
	assert_int_equal(log_count(&w, "delivered"), 0);
	print_latency("without webhooks", before, REPORTS);
	print_latency("receiver hanging", during, REPORTS);
	world_stop(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deliveries),
		cmocka_unit_test(test_hanging_receiver),
	};

	return cmocka_run_group_tests(tests, tu_pki_setup, tu_pki_teardown);
}
