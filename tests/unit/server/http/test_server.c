// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's connections (server/http/server.c) over real TLS: per
 * address counts are exact (a full 127.0.0.144 does not lock out
 * 127.0.0.1, as a 12-bit hash once did), and slow clients are closed
 * however steadily they trickle: headers past request-timeout, a body
 * below min-rate. Each slow client keeps sending a byte every half
 * second; the connection must be closed while it does. TLS 1.2 offers
 * AEAD suites only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "harness.h"
#include "raw_tls.h"

#define HOST "5105000000000000000000000000000000000000000000000000000000000001"

static void limits(struct twl_config *c)
{
	c->limit_loopback = true;
	c->max_per_ip = 4;
	c->ip_rate = 1000;
	c->ip_burst = 1000;
	c->conn_timeout_s = 60; /* the idle timeout never ends a trickle */
	c->request_timeout_s = 3;
	c->min_rate = 1000;
}

static int setup(void **state)
{
	static struct fixture f;

	fixture_start(&f, limits);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(*state);
	return 0;
}

static void test_exact_per_address(void **state)
{
	struct fixture *f = *state;
	struct raw_tls *t[4], *extra;
	struct http_result r;

	for (int i = 0; i < 4; i++) {
		t[i] = raw_tls_connect(f->port, "127.0.0.144", NULL, NULL);
		assert_non_null(t[i]);
	}
	/* 127.0.0.144 is full ... */
	extra = raw_tls_connect(f->port, "127.0.0.144", NULL, NULL);
	assert_null(extra);
	/* ... and 127.0.0.1 is not */
	http(f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	raw_tls_free(t[0]);
	/* a place freed is a place taken again */
	for (int i = 0; i < 100; i++) {
		extra = raw_tls_connect(f->port, "127.0.0.144", NULL, NULL);
		if (extra)
			break;
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	}
	assert_non_null(extra);
	raw_tls_free(extra);
	for (int i = 1; i < 4; i++)
		raw_tls_free(t[i]);
}

/*
 * Send @head, then one byte of @drip every half second: true once the
 * server closed the connection, false if it was still open after 30
 * bytes (15 s; the server was told to give up after 3 to 6).
 */
static bool closed_while_trickling(struct fixture *f, const char *head,
				   const char *drip)
{
	struct raw_tls *t = raw_tls_connect(f->port, NULL, NULL, NULL);
	bool closed = false;

	assert_non_null(t);
	assert_int_equal(raw_tls_write(t, head, strlen(head)), 0);
	for (int i = 0; i < 30 && !closed; i++) {
		closed = raw_tls_write(t, drip + i % strlen(drip), 1) ||
			 raw_tls_closed(t, 500);
	}
	raw_tls_free(t);
	return closed;
}

static long rejections(struct fixture *f, const char *reason)
{
	struct http_result r;
	char want[128];
	const char *p;
	long n;

	snprintf(want, sizeof(want),
		 "twilight_rejections_total{reason=\"%s\"} ", reason);
	http(f, "GET", "/metrics", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	p = strstr(r.body, want);
	assert_non_null(p);
	n = atol(p + strlen(want));
	http_result_fini(&r);
	return n;
}

static void test_slow_headers(void **state)
{
	struct fixture *f = *state;
	long before = rejections(f, "too_slow");

	assert_true(closed_while_trickling(
		f, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n",
		"X-Slow: abcdefghijklmnopqrstuvwxyz\r\n"));
	assert_true(rejections(f, "too_slow") > before);
}

static void test_slow_body(void **state)
{
	struct fixture *f = *state;
	char key[80], head[512];

	enrol_host(f, HOST, key);
	snprintf(
		head, sizeof(head),
		"POST /api/v1/reports HTTP/1.1\r\nHost: localhost\r\n"
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
		"Content-Length: 100000\r\n\r\n{\"v\":1,",
		key);
	/* 2 bytes a second where 1000 are due: closed after the grace */
	assert_true(closed_while_trickling(f, head, "                "));
	assert_int_equal(count_rows(f, "batches"), 0);
}

/*
 * TLS 1.2 offers only AEAD suites with forward secrecy: CBC with SHA-1 or
 * SHA-256 MACs is refused, GCM and ChaCha20-Poly1305 are accepted.
 */
static void test_tls12_aead_only(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *cipher;
		bool ok;
	} cases[] = {
		{ "ECDHE-ECDSA-AES128-SHA", false },
		{ "ECDHE-ECDSA-AES256-SHA", false },
		{ "ECDHE-ECDSA-AES128-SHA256", false },
		{ "ECDHE-ECDSA-AES256-SHA384", false },
		{ "ECDHE-ECDSA-AES128-GCM-SHA256", true },
		{ "ECDHE-ECDSA-AES256-GCM-SHA384", true },
		{ "ECDHE-ECDSA-CHACHA20-POLY1305", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct raw_tls *t = raw_tls_connect(
			f->port, NULL, f->cfg.ca_file, cases[i].cipher);

		if (!t != !cases[i].ok)
			fail_msg("TLS 1.2 with %s: %s", cases[i].cipher,
				 t ? "accepted" : "refused");
		raw_tls_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_per_address),
		cmocka_unit_test(test_slow_headers),
		cmocka_unit_test(test_slow_body),
		cmocka_unit_test(test_tls12_aead_only),
	};
	int fails;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fails = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return fails;
}
