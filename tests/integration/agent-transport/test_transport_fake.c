// SPDX-License-Identifier: GPL-2.0
/*
 * The sender against a scripted fake HTTPS server on 127.0.0.1 with real TLS
 * (throw-away PKI generated at test time). Each case scripts the server's
 * answers and checks how the batch ends: delivered exactly once, retried
 * after the right delay, kept, split or quarantined. Time and randomness
 * are injected (fake clock, "random" that returns the bound or 0), so the
 * back-off arithmetic is checked exactly without sleeping.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>
#include <jansson.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "enroll.h"
#include "sender.h"
#include "tu_common.h"
#include "tu_fake_https.h"

enum rand_mode { RAND_MAX_BOUND, RAND_ZERO };

struct fx {
	char *dir, *logdir, *script, *portfile, *state, *spool, *token;
	struct tu_fake_https srv;
	char url[64];
	uint64_t now;
	int64_t wall;
	enum rand_mode rmode;
	uint64_t bounds[64];
	int n_bounds;
	struct twl_sender *s;
};

static uint64_t fx_now(void *c)
{
	return ((struct fx *)c)->now;
}

static int64_t fx_wall(void *c)
{
	return ((struct fx *)c)->wall;
}

static uint64_t fx_rand(void *c, uint64_t bound)
{
	struct fx *f = c;

	if (f->n_bounds < 64)
		f->bounds[f->n_bounds++] = bound;
	return f->rmode == RAND_MAX_BOUND ? bound : 0;
}

static char *fx_path(struct fx *f, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", f->dir, name) > 0);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_mkdtemp("transport");
	assert_non_null(f->dir);
	f->logdir = fx_path(f, "log");
	f->script = fx_path(f, "script");
	f->portfile = fx_path(f, "port");
	f->state = fx_path(f, "state");
	f->spool = fx_path(f, "spool");
	f->token = fx_path(f, "enroll.token");
	assert_int_equal(mkdir(f->logdir, 0700), 0);
	assert_int_equal(mkdir(f->state, 0700), 0);
	write_text(f->token, "enroll-tok-123\n");
	f->now = 1000000;
	f->wall = 1764732000;
	f->srv.pid = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	twl_sender_free(f->s);
	tu_fake_https_stop(&f->srv);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f->logdir);
	free(f->script);
	free(f->portfile);
	free(f->state);
	free(f->spool);
	free(f->token);
	free(f);
	return 0;
}

/* Start the fake server with @lines as its script ("server" or "other-server" cert). */
static void start_server(struct fx *f, const char *cert, int mode,
			 const char *const *lines)
{
	f->srv.script = f->script;
	f->srv.portfile = f->portfile;
	f->srv.logdir = f->logdir;
	tu_fake_https_start(&f->srv, tu_pki, cert, mode, lines);
	snprintf(f->url, sizeof(f->url), "%s", f->srv.url);
}

struct opts {
	bool no_token;
	bool client_cert;
	unsigned timeout_ms;
	unsigned cap_ms;
};

static void make_sender(struct fx *f, const struct opts *o)
{
	char *ca = NULL, *cc = NULL, *ck = NULL;
	struct twl_sender_cfg cfg = {
		.server_url = f->url,
		.enroll_token_file = o && o->no_token ? NULL : f->token,
		.state_dir = f->state,
		.spool_dir = f->spool,
		.host_id =
			"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
		.hostname = "test-host",
		.backoff_base_ms = 1000,
		.backoff_cap_ms = o && o->cap_ms ? o->cap_ms : 60000,
		.connect_timeout_ms = 5000,
		.timeout_ms = o && o->timeout_ms ? o->timeout_ms : 10000,
		.now_ms = fx_now,
		.wall_s = fx_wall,
		.rand_upto = fx_rand,
		.hook_ctx = f,
	};

	assert_true(asprintf(&ca, "%s/ca.pem", tu_pki) > 0);
	cfg.ca_file = ca;
	if (o && o->client_cert) {
		assert_true(asprintf(&cc, "%s/client.pem", tu_pki) > 0);
		assert_true(asprintf(&ck, "%s/client.key", tu_pki) > 0);
		cfg.client_cert = cc;
		cfg.client_key = ck;
	}
	f->s = twl_sender_new(&cfg);
	assert_non_null(f->s);
	free(ca);
	free(cc);
	free(ck);
}

/* The golden full report with its batch_id replaced by @bid. */
static char *make_batch(const char *bid)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char *path = NULL, *txt, *out;
	json_t *doc;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	assert_true(asprintf(&path, "%s/schema/examples/full.json", src) > 0);
	txt = tu_slurp(path, NULL);
	if (!txt)
		fail_msg("cannot read %s", path);
	doc = json_loads(txt, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_object_set_new(doc, "batch_id", json_string(bid)),
			 0);
	out = json_dumps(doc, JSON_COMPACT);
	assert_non_null(out);
	json_decref(doc);
	free(txt);
	free(path);
	return out;
}

/* A small valid report with one warning (cannot be split). */
static char *make_small_batch(const char *bid)
{
	char *full = make_batch(bid), *out;
	json_t *doc = json_loads(full, 0, NULL);

	assert_non_null(doc);
	json_array_clear(json_object_get(doc, "unknown"));
	json_array_clear(json_object_get(doc, "usage"));
	json_object_set_new(doc, "census", json_null());
	while (json_array_size(json_object_get(doc, "warnings")) > 1)
		json_array_remove(json_object_get(doc, "warnings"), 1);
	out = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	free(full);
	return out;
}

static void submit(struct fx *f, const char *json)
{
	assert_int_equal(twl_sender_submit(f->s, json, strlen(json)), 0);
}

static int n_requests(struct fx *f)
{
	return tu_count(f->logdir, ".req");
}

static char *req_file(struct fx *f, int n, const char *ext)
{
	return tu_fake_https_request(&f->srv, n, ext);
}

static void assert_req_has(struct fx *f, int n, const char *needle)
{
	char *head = req_file(f, n, "req");

	if (!strstr(head, needle))
		fail_msg("request %d lacks \"%s\":\n%s", n, needle, head);
	free(head);
}

static void assert_body_is(struct fx *f, int n, const char *json)
{
	char *body = req_file(f, n, "body");

	assert_string_equal(body, json);
	free(body);
}

static struct twl_sender_stats stats(struct fx *f)
{
	struct twl_sender_stats st;

	twl_sender_stats(f->s, &st);
	return st;
}

static void assert_enrolled_then(struct fx *f)
{
	assert_req_has(f, 1, "POST /api/v1/enroll HTTP/1.1");
	assert_req_has(f, 1, "Authorization: Bearer enroll-tok-123");
	{
		char *body = req_file(f, 1, "body");
		json_t *j = json_loads(body, 0, NULL);

		assert_non_null(j);
		assert_string_equal(
			json_string_value(json_object_get(j, "host_id")),
			"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7");
		assert_string_equal(
			json_string_value(json_object_get(j, "hostname")),
			"test-host");
		json_decref(j);
		free(body);
	}
}

/* ---- cases ---- */

static void test_503_then_200(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-1\"}",
				 "503||{\"error\":\"busy\"}",
				 "200||{\"ok\":true}", NULL };
	char *batch = make_batch("00000000000000000000000000000a01");
	char *path = NULL, *key;
	struct twl_sender_stats st;
	struct stat sb;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000),
			 1000); /* random(0, base) = base */
	assert_int_equal(f->n_bounds, 1);
	assert_int_equal(f->bounds[0], 1000);
	st = stats(f);
	assert_int_equal(st.spool_files, 1);
	assert_int_equal(st.send_failures, 1);
	assert_true(st.enrolled);
	assert_non_null(strstr(st.last_error, "HTTP 503 (busy)"));
	assert_int_equal(n_requests(f), 2);
	/* Not before the back-off has passed. */
	f->now += 999;
	assert_int_equal(twl_sender_run_once(f->s, 10000), 1);
	assert_int_equal(n_requests(f), 2);
	f->now += 1;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	st = stats(f);
	assert_int_equal(st.spool_files, 0);
	assert_int_equal(st.sent, 1);
	assert_int_equal(n_requests(f), 3);
	/* Nothing more is sent: delivered exactly once, even after a restart. */
	f->now += 3600000;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(n_requests(f), 3);
	twl_sender_free(f->s);
	f->s = NULL;
	make_sender(f, NULL);
	assert_true(stats(f).enrolled); /* host.key reused, no new enrolment */
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(n_requests(f), 3);

	assert_enrolled_then(f);
	for (int n = 2; n <= 3; n++) {
		assert_req_has(f, n, "POST /api/v1/reports HTTP/1.1");
		assert_req_has(f, n, "Authorization: Bearer hk-1");
		assert_req_has(f, n, "Content-Encoding: gzip");
		assert_req_has(f, n, "Content-Type: application/json");
		assert_req_has(f, n, "X-Fake-Body-Complete: yes");
		assert_body_is(f, n, batch); /* server gunzipped it */
	}
	{
		char *head = req_file(f, 2, "req");

		assert_true(strstr(head, "X-Fake-TLS: TLSv1.2") ||
			    strstr(head, "X-Fake-TLS: TLSv1.3"));
		free(head);
	}
	path = fx_path(f, "state/host.key");
	key = tu_slurp(path, NULL);
	assert_non_null(key);
	assert_string_equal(key, "hk-1");
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	free(key);
	free(path);
	free(batch);
}

static void test_backoff_grows_to_cap(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-2\"}",
				 "500||",
				 "502||",
				 "503||",
				 "504||",
				 "200||",
				 NULL };
	const struct opts o = { .cap_ms = 3000 };
	const uint64_t want[] = { 1000, 2000, 3000, 3000 };
	char *batch = make_batch("00000000000000000000000000000a02");

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, &o);
	submit(f, batch);
	for (int i = 0; i < 4; i++) {
		int r = twl_sender_run_once(f->s, 10000);

		/* Full jitter: the delay is random(0, min(cap, base * 2^i)). */
		assert_int_equal(f->bounds[f->n_bounds - 1], want[i]);
		assert_int_equal(r, (int)want[i]);
		f->now += (uint64_t)r;
	}
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).sent, 1);
	assert_int_equal(stats(f).send_failures, 4);
	assert_int_equal(n_requests(f), 6);
	free(batch);
}

/* A batch corrupted on disk is quarantined; the next one still goes out. */
static void test_corrupt_spool_file_skipped(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-17\"}", "200||",
				 NULL };
	char *a = make_batch("00000000000000000000000000000a17");
	char *b = make_batch("00000000000000000000000000000b17");
	char *path = fx_path(f, "spool/00000000000000000001.batch");
	int fd;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, a);
	submit(f, b);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "XX", 2, 100), 2); /* inside the payload */
	close(fd);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).spool_quarantined, 1);
	assert_int_equal(stats(f).sent, 1);
	assert_int_equal(n_requests(f), 2);
	assert_body_is(f, 2, b);
	free(path);
	free(a);
	free(b);
}

/* Full jitter may draw 0: still one attempt per run, never a tight loop. */
static void test_zero_jitter_never_spins(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "503||", "401||", "200||", NULL };
	const struct opts o = { .no_token = true };
	char *batch = make_batch("00000000000000000000000000000a16");

	f->rmode = RAND_ZERO;
	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, &o);
	assert_int_equal(twl_hostkey_store(f->state, "hk-16"), 0);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), 1);
	assert_int_equal(n_requests(f), 1);
	f->now += 1;
	/* 401 with half-fixed jitter: 500 ms from a 1000 ms base. */
	assert_int_equal(twl_sender_run_once(f->s, 10000), 500);
	assert_int_equal(n_requests(f), 2);
	f->now += 500;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(n_requests(f), 3);
	free(batch);
}

static void test_429_retry_after(void **state)
{
	struct fx *f = *state;
	char date[64], line[160];
	time_t when = (time_t)(f->wall + 30);
	struct tm tm;
	const char *script[] = {
		"201||{\"host_key\":\"hk-3\"}",
		"429|Retry-After: 7|{\"error\":\"rate_limited\"}", line,
		"200||", NULL
	};
	char *batch = make_batch("00000000000000000000000000000a03");

	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	snprintf(line, sizeof(line), "503|Retry-After: %s|", date);
	f->rmode = RAND_ZERO; /* jitter alone would retry at once */
	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), 7000);
	assert_non_null(strstr(stats(f).last_error, "HTTP 429 (rate_limited)"));
	f->now += 6999;
	assert_int_equal(twl_sender_run_once(f->s, 10000), 1);
	assert_int_equal(n_requests(f), 2);
	f->now += 1;
	/* An HTTP date 30 s after the (fake) wall clock. */
	assert_int_equal(twl_sender_run_once(f->s, 10000), 30000);
	assert_int_equal(n_requests(f), 3);
	f->now += 30000;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).sent, 1);
	assert_int_equal(stats(f).spool_files, 0);
	assert_body_is(f, 4, batch);
	free(batch);
}

static void test_401_keeps_batch_backs_off_to_an_hour(void **state)
{
	struct fx *f = *state;
	const char *script[20];
	const struct opts o = { .no_token = true };
	char *batch = make_batch("00000000000000000000000000000a04");
	char *path = fx_path(f, "state/host.key"), *key;
	struct twl_sender_stats st;
	int i;

	for (i = 0; i < 14; i++)
		script[i] = "401||{\"error\":\"unknown_key\"}";
	script[i] = NULL;
	assert_int_equal(twl_hostkey_store(f->state, "old-key"), 0);
	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, &o);
	submit(f, batch);
	for (i = 0; i < 14; i++) {
		uint64_t d = 1000ULL << i;
		int r;

		if (d > 3600000)
			d = 3600000;
		r = twl_sender_run_once(f->s, 10000);
		/* Half fixed, half random: d/2 + random(0, d/2), capped at an hour. */
		assert_int_equal(r, (int)d);
		st = stats(f);
		assert_true(st.key_rejected);
		assert_non_null(strstr(st.last_error, "key rejected"));
		assert_int_equal(st.spool_files, 1);
		assert_int_equal(st.spool_quarantined, 0);
		f->now += (uint64_t)r;
	}
	assert_int_equal(n_requests(f), 14);
	for (i = 1; i <= 14; i++)
		assert_req_has(f, i, "Authorization: Bearer old-key");
	/* Without an enrolment token the key is kept for the operator to fix. */
	key = tu_slurp(path, NULL);
	assert_non_null(key);
	assert_string_equal(key, "old-key");
	free(key);
	free(path);
	free(batch);
}

static void test_401_reenrols_with_token(void **state)
{
	struct fx *f = *state;
	/* The server's answer to a revoked key, and its enrolment answer. */
	const char *script[] = {
		"401||{\"error\":\"unauthorized\",\"reason\":\"this host key "
		"was revoked; enrol again with an enrolment token\"}",
		"200||{\"host_id\":\"9c1f\",\"key\":\"new-key\"}",
		"200||",
		NULL,
	};
	char *batch = make_batch("00000000000000000000000000000a05");
	char *path = fx_path(f, "state/host.key"), *key;
	int r;

	assert_int_equal(twl_hostkey_store(f->state, "old-key"), 0);
	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	r = twl_sender_run_once(f->s, 10000);
	assert_true(r >= 500 && r <= 1000);
	assert_true(stats(f).key_rejected);
	assert_non_null(strstr(stats(f).last_error, "key rejected"));
	assert_int_equal(access(path, F_OK), -1); /* will enrol again */
	assert_int_equal(stats(f).spool_files, 1);
	f->now += (uint64_t)r;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_false(stats(f).key_rejected);
	assert_int_equal(stats(f).sent, 1);
	assert_req_has(f, 1, "Authorization: Bearer old-key");
	assert_req_has(f, 2, "POST /api/v1/enroll");
	assert_req_has(f, 2, "Authorization: Bearer enroll-tok-123");
	assert_req_has(f, 3, "Authorization: Bearer new-key");
	assert_body_is(f, 3, batch);
	key = tu_slurp(path, NULL);
	assert_non_null(key);
	assert_string_equal(key, "new-key");
	free(key);
	free(path);
	free(batch);
}

static void test_403_with_token_keeps_key(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "403||{\"error\":\"forbidden\"}", "200||",
				 NULL };
	char *batch = make_batch("00000000000000000000000000000a13");
	char *path = fx_path(f, "state/host.key"), *key;
	int r;

	assert_int_equal(twl_hostkey_store(f->state, "kept-key"), 0);
	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	r = twl_sender_run_once(f->s, 10000);
	assert_int_equal(r, 1000);
	assert_true(stats(f).key_rejected);
	assert_non_null(strstr(stats(f).last_error,
			       "key rejected: HTTP 403 (forbidden)"));
	key = tu_slurp(path, NULL);
	assert_non_null(key);
	assert_string_equal(key, "kept-key");
	f->now += (uint64_t)r;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(n_requests(f), 2); /* no enrolment in between */
	assert_req_has(f, 2, "Authorization: Bearer kept-key");
	assert_false(stats(f).key_rejected);
	free(key);
	free(path);
	free(batch);
}

static void test_413_split(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-6\"}",
				 "413||{\"error\":\"too_large\"}", "200||",
				 "200||", NULL };
	const char *bid = "00000000000000000000000000000a06";
	char *batch = make_batch(bid), *a, *b, want_a[65], want_b[65];
	json_t *orig = json_loads(batch, 0, NULL), *ja, *jb;
	struct twl_verr err;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(n_requests(f), 4);
	assert_int_equal(stats(f).spool_files, 0);
	assert_int_equal(stats(f).spool_quarantined, 0);
	assert_int_equal(stats(f).sent, 2);
	assert_body_is(f, 2, batch);
	a = req_file(f, 3, "body");
	b = req_file(f, 4, "body");
	ja = twl_report_parse(a, strlen(a), &err);
	if (!ja)
		fail_msg("first half invalid: %s %s %s", err.code, err.field,
			 err.reason);
	jb = twl_report_parse(b, strlen(b), &err);
	if (!jb)
		fail_msg("second half invalid: %s %s %s", err.code, err.field,
			 err.reason);
	/* Ids derived from the original's, so a re-split after a crash matches. */
	twl_sha256_hex("00000000000000000000000000000a06/a", strlen(bid) + 2,
		       want_a);
	twl_sha256_hex("00000000000000000000000000000a06/b", strlen(bid) + 2,
		       want_b);
	want_a[32] = want_b[32] = 0;
	assert_string_equal(json_string_value(json_object_get(ja, "batch_id")),
			    want_a);
	assert_string_equal(json_string_value(json_object_get(jb, "batch_id")),
			    want_b);
	{
		const char *arrs[] = { "warnings", "unknown", "usage" };

		for (int i = 0; i < 3; i++) {
			json_t *all =
				json_deep_copy(json_object_get(ja, arrs[i]));

			json_array_extend(all, json_object_get(jb, arrs[i]));
			assert_true(json_equal(all,
					       json_object_get(orig, arrs[i])));
			json_decref(all);
		}
	}
	json_decref(ja);
	json_decref(jb);
	json_decref(orig);
	free(a);
	free(b);
	free(batch);
}

static void test_413_unsplittable_quarantined(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-7\"}", "413||",
				 NULL };
	char *batch = make_small_batch("00000000000000000000000000000a07");
	char *q = fx_path(f, "spool/quarantine");

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).spool_files, 0);
	assert_int_equal(stats(f).spool_quarantined, 1);
	assert_int_equal(tu_count(q, ".batch"), 1);
	assert_int_equal(n_requests(f), 2);
	free(q);
	free(batch);
}

/*
 * 409 batch_conflict: the server holds another body under this batch id
 * from this host; sending it again cannot help, so it is quarantined
 * with the server's reason, not retried forever.
 */
static void test_409_batch_conflict_quarantined(void **state)
{
	struct fx *f = *state;
	const char *script[] = {
		"201||{\"host_key\":\"hk-9\"}",
		"409||{\"error\":\"batch_conflict\",\"field\":\"batch_id\"}",
		"200||",
		NULL,
	};
	char *a = make_small_batch("00000000000000000000000000000a09");
	char *b = make_small_batch("00000000000000000000000000000b09");
	char *q = fx_path(f, "spool/quarantine");
	struct twl_sender_stats st;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, a);
	submit(f, b);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	st = stats(f);
	assert_int_equal(st.spool_files, 0); /* b went out after a */
	assert_int_equal(st.spool_quarantined, 1);
	assert_int_equal(tu_count(q, ".batch"), 1);
	assert_non_null(strstr(st.last_error, "batch_conflict"));
	assert_int_equal(n_requests(f), 3);
	free(q);
	free(a);
	free(b);
}

static void test_400_quarantined_unsupported_version_kept(void **state)
{
	struct fx *f = *state;
	const char *script[] = {
		"201||{\"host_key\":\"hk-8\"}",
		"400||{\"error\":\"unknown_field\",\"field\":\"warnings[0].x\",\"reason\":\"no such member\"}",
		"400||{\"error\":\"unsupported_version\",\"field\":\"v\"}",
		"200||",
		NULL,
	};
	char *a = make_batch("00000000000000000000000000000a08");
	char *b = make_batch("00000000000000000000000000000b08");
	char *q = fx_path(f, "spool/quarantine");
	struct twl_sender_stats st;
	DIR *d;
	struct dirent *de;
	int r, whys = 0;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, a);
	submit(f, b);
	r = twl_sender_run_once(f->s, 10000);
	assert_int_equal(r, 1000); /* b: unsupported_version is retried */
	st = stats(f);
	assert_int_equal(st.spool_files, 1);
	assert_int_equal(st.spool_quarantined, 1);
	assert_int_equal(tu_count(q, ".batch"), 1);
	assert_non_null(strstr(st.last_error, "unsupported_version"));
	/* The server's reason is kept beside the quarantined batch. */
	d = opendir(q);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (strstr(de->d_name, ".why")) {
			char *p = NULL, *why;

			assert_true(asprintf(&p, "%s/%s", q, de->d_name) > 0);
			why = tu_slurp(p, NULL);
			assert_non_null(why);
			assert_non_null(
				strstr(why, "HTTP 400 (unknown_field)"));
			assert_non_null(strstr(why, "warnings[0].x"));
			whys++;
			free(why);
			free(p);
		}
	}
	closedir(d);
	assert_int_equal(whys, 1);
	f->now += (uint64_t)r;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).sent, 1);
	assert_body_is(f, 2, a);
	assert_body_is(f, 3, b);
	assert_body_is(f, 4, b);
	free(q);
	free(a);
	free(b);
}

/*
 * Only a 400 or 422 naming a validator code is the server's verdict on the
 * batch: a proxy's 404 or 405, a 400 without such a body, are retried
 * with back-off and the batch is kept, byte for byte.
 */
static void test_4xx_without_verdict_retried(void **state)
{
	struct fx *f = *state;
	const char *script[] = {
		"201||{\"host_key\":\"hk-16\"}",
		"404||<html>Not Found</html>",
		"405|Allow: GET|",
		"400||",
		"400||{\"error\":\"bad_request\"}",
		"400||{\"error\":\"too_long\",\"field\":\"usage[0].cgroup\",\"reason\":\"the string is 1500 bytes\"}",
		NULL,
	};
	static const char *const want[] = { "HTTP 404", "HTTP 405", "HTTP 400",
					    "HTTP 400 (bad_request)" };
	char *batch = make_batch("00000000000000000000000000000a16");
	char *q = fx_path(f, "spool/quarantine");
	struct twl_sender_stats st;
	int r = 0;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	for (int i = 0; i < 4; i++) {
		f->now += (uint64_t)r;
		r = twl_sender_run_once(f->s, 10000);
		assert_int_equal(r, 1000 << i); /* back-off grows */
		st = stats(f);
		if (st.spool_quarantined || st.spool_files != 1)
			fail_msg(
				"after \"%s\" the batch was not kept (%llu quarantined, %llu spooled)",
				script[i + 1],
				(unsigned long long)st.spool_quarantined,
				(unsigned long long)st.spool_files);
		if (!strstr(st.last_error, want[i]))
			fail_msg("last_error \"%s\" lacks \"%s\"",
				 st.last_error, want[i]);
		assert_body_is(f, i + 2, batch);
	}
	f->now += (uint64_t)r;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	st = stats(f);
	assert_int_equal(st.spool_files, 0);
	assert_int_equal(st.spool_quarantined, 1);
	assert_int_equal(tu_count(q, ".batch"), 1);
	assert_non_null(strstr(st.last_error, "HTTP 400 (too_long)"));
	assert_body_is(f, 6, batch);
	free(q);
	free(batch);
}

/* A broken exchange is retried; both attempts carry the same batch. */
static void retried_then_delivered(struct fx *f, const char *action,
				   unsigned timeout_ms, const char *err_needle)
{
	const char *script[] = { "201||{\"host_key\":\"hk-9\"}", action,
				 "200||", NULL };
	const struct opts o = { .timeout_ms = timeout_ms };
	char *batch = make_batch("00000000000000000000000000000a09");
	struct twl_sender_stats st;
	int r;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, &o);
	submit(f, batch);
	r = twl_sender_run_once(f->s, 10000);
	assert_int_equal(r, 1000);
	st = stats(f);
	assert_int_equal(st.spool_files, 1);
	assert_int_equal(st.send_failures, 1);
	assert_int_equal(st.sent, 0);
	if (!strstr(st.last_error, err_needle))
		fail_msg("last_error \"%s\" lacks \"%s\"", st.last_error,
			 err_needle);
	f->now += (uint64_t)r;
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).sent, 1);
	assert_int_equal(stats(f).spool_files, 0);
	assert_int_equal(n_requests(f), 3);
	assert_body_is(f, 3, batch);
	{
		char *body = req_file(f, 2, "body");

		/* Same bytes, same batch_id: the server can drop the duplicate. */
		assert_string_equal(body, batch);
		free(body);
	}
	free(batch);
}

static void test_stall_times_out(void **state)
{
	retried_then_delivered(*state, "stall", 1000, "Timeout");
}

static void test_close_mid_body(void **state)
{
	retried_then_delivered(*state, "close-mid-body", 0, "network error");
}

static void test_close_without_answer(void **state)
{
	retried_then_delivered(*state, "close", 0, "network error");
}

static void test_wrong_ca_refused(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"stolen\"}", NULL };
	char *batch = make_batch("00000000000000000000000000000a10");
	struct twl_sender_stats st;

	start_server(f, "other-server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), 1000);
	st = stats(f);
	assert_false(st.enrolled);
	assert_int_equal(st.spool_files, 1);
	assert_non_null(strstr(st.last_error, "network error"));
	assert_int_equal(n_requests(f), 0); /* the token never left the host */
	free(batch);
}

static void test_plain_http_refused(void **state)
{
	struct fx *f = *state;
	struct twl_sender_cfg cfg = {
		.server_url = "http://127.0.0.1:9",
		.ca_file = "/nonexistent/ca.pem",
		.state_dir = f->state,
		.spool_dir = f->spool,
		.host_id = "abc",
	};

	assert_null(twl_sender_new(&cfg));
	assert_int_equal(errno, EINVAL);
	cfg.server_url = "https://127.0.0.1:9";
	cfg.ca_file = NULL;
	assert_null(twl_sender_new(&cfg));
	assert_int_equal(errno, EINVAL);
}

static void test_client_certificate(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-11\"}", "200||",
				 NULL };
	const struct opts o = { .client_cert = true };
	char *batch = make_batch("00000000000000000000000000000a11");

	start_server(f, "server", TU_SRV_CLIENT_CERT, script);
	make_sender(f, &o);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	assert_int_equal(stats(f).sent, 1);
	assert_req_has(f, 2, "X-Fake-Client-Subject: /CN=twl-test-client");
	free(batch);
}

static void test_client_certificate_missing(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-12\"}", NULL };
	char *batch = make_batch("00000000000000000000000000000a12");

	start_server(f, "server", TU_SRV_CLIENT_CERT, script);
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), 1000);
	assert_int_equal(stats(f).spool_files, 1);
	assert_int_equal(n_requests(f), 0);
	free(batch);
}

static void test_enrolment_refused(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "401||{\"error\":\"unauthorized\"}",
				 "200||{\"no_key\":1}", NULL };
	char *batch = make_batch("00000000000000000000000000000a15");
	char *path = fx_path(f, "state/host.key");
	struct twl_sender_stats st;
	int r;

	start_server(f, "server", TU_SRV_PLAIN, script);
	make_sender(f, NULL);
	submit(f, batch);
	r = twl_sender_run_once(f->s, 10000);
	assert_int_equal(r, 1000);
	st = stats(f);
	assert_true(st.key_rejected);
	assert_false(st.enrolled);
	assert_non_null(
		strstr(st.last_error,
		       "key rejected: enrolment token refused (HTTP 401"));
	assert_int_equal(st.spool_files, 1);
	/* A 2xx without a usable key is no enrolment either. */
	f->now += (uint64_t)r;
	r = twl_sender_run_once(f->s, 10000);
	assert_int_equal(r, 2000);
	st = stats(f);
	assert_false(st.enrolled);
	assert_non_null(strstr(st.last_error, "without a usable host_key"));
	assert_int_equal(st.spool_files, 1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(n_requests(f), 2);
	free(path);
	free(batch);
}

/* https_proxy from the environment is honoured (libcurl's default). */
static void test_proxy_from_environment(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-14\"}", "200||",
				 NULL };
	char *batch = make_batch("00000000000000000000000000000a14");
	char proxy[64];

	start_server(f, "server", TU_SRV_PROXY, script);
	/* The proxy tunnels to "127.0.0.1:1" and serves it itself. */
	snprintf(proxy, sizeof(proxy), "http://%s",
		 f->url + strlen("https://"));
	snprintf(f->url, sizeof(f->url), "https://127.0.0.1:1");
	assert_int_equal(setenv("https_proxy", proxy, 1), 0);
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	make_sender(f, NULL);
	submit(f, batch);
	assert_int_equal(twl_sender_run_once(f->s, 10000), TWL_SENDER_IDLE_MS);
	unsetenv("https_proxy");
	assert_int_equal(stats(f).sent, 1);
	assert_req_has(f, 1,
		       "X-Fake-Proxy-Connect: CONNECT 127.0.0.1:1 HTTP/1.1");
	assert_req_has(f, 2,
		       "X-Fake-Proxy-Connect: CONNECT 127.0.0.1:1 HTTP/1.1");
	assert_body_is(f, 2, batch);
	free(batch);
}

/* Whether @pid has ended: gone, or a zombie nobody has reaped yet. */
static bool ended(pid_t pid)
{
	char path[64], *stat, *p;
	bool gone;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = tu_slurp(path, NULL);
	if (!stat)
		return true;
	p = strrchr(stat, ')'); /* "pid (comm) STATE ..." */
	gone = p && (p[2] == 'Z' || p[2] == 'X');
	free(stat);
	return gone;
}

/*
 * The fake server ends with the process that started it. ctest kills a
 * test that overruns its timeout with SIGKILL; the server it started must
 * not go on listening (it did, until tu_fake_https_spawn() asked for
 * PR_SET_PDEATHSIG). A child of this test starts the server and is killed.
 */
static void test_server_ends_with_its_test(void **state)
{
	struct fx *f = *state;
	char *crt = NULL, *key = NULL, *ca = NULL;
	pid_t child, fake = -1;
	bool listening;
	ssize_t got;
	int fds[2], i;

	write_text(f->script, "");
	f->srv.script = f->script;
	f->srv.portfile = f->portfile;
	f->srv.logdir = f->logdir;
	assert_true(asprintf(&crt, "%s/server.pem", tu_pki) > 0);
	assert_true(asprintf(&key, "%s/server.key", tu_pki) > 0);
	assert_true(asprintf(&ca, "%s/ca.pem", tu_pki) > 0);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) { /* no test assertion in here: _exit() only */
		pid_t pid = tu_fake_https_spawn(&f->srv, crt, key, ca,
						TU_SRV_PLAIN);

		if (pid < 0 || write(fds[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], &fake, sizeof(fake));
	close(fds[0]);
	/* listening: it was started, not only forked */
	for (i = 0; i < 1000 && access(f->portfile, F_OK); i++)
		usleep(10000);
	listening = !access(f->portfile, F_OK);
	/* the child dies before any assertion, so no failure leaves it */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(crt);
	free(key);
	free(ca);
	assert_int_equal(got, sizeof(fake));
	assert_true(listening);
	for (i = 0; i < 1000 && !ended(fake); i++)
		usleep(10000);
	if (!ended(fake)) {
		kill(fake, SIGKILL);
		fail_msg(
			"fake_https (pid %d) still ran 10 s after the process that started it was killed",
			(int)fake);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_503_then_200, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_backoff_grows_to_cap,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_429_retry_after, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_401_keeps_batch_backs_off_to_an_hour, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_401_reenrols_with_token,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_403_with_token_keeps_key,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_409_batch_conflict_quarantined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_413_split, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_413_unsplittable_quarantined, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_400_quarantined_unsupported_version_kept, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_4xx_without_verdict_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_times_out, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_mid_body, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_without_answer,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_ca_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plain_http_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_client_certificate, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_client_certificate_missing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proxy_from_environment,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_enrolment_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_zero_jitter_never_spins,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_spool_file_skipped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_ends_with_its_test,
						setup, teardown),
	};
	static const char *const proxies[] = { "http_proxy",  "https_proxy",
					       "HTTPS_PROXY", "ALL_PROXY",
					       "all_proxy",   NULL };

	/* Loopback only: never let an inherited proxy setting reroute the tests. */
	for (int i = 0; proxies[i]; i++)
		unsetenv(proxies[i]);
	twl_log_init("test_transport_fake", LOG_WARNING);
	return cmocka_run_group_tests(tests, tu_pki_setup, tu_pki_teardown);
}
