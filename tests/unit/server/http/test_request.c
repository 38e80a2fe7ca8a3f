// SPDX-License-Identifier: GPL-2.0
/*
 * The request lifecycle (server/http/request.c) over real TLS: a request
 * is judged on its headers before a byte of its body is read. A client
 * that announces a large body and sends none gets its answer at once
 * (no credentials 401, a bad token 401, a wrong role 403, a wrong method
 * 405, a body for a public route or over max-body 413, a bad encoding
 * 415, no room in body-memory 503), and the
 * connection is closed without the body ever being waited for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "harness.h"
#include "raw_tls.h"

#define HOST "aced000000000000000000000000000000000000000000000000000000000001"

struct rstate {
	struct fixture f;
	char key[80];
};

/*
 * A connection timeout far longer than the test waits for an answer: an
 * answer that came only when the server gave up on the body would not
 * count.
 */
static void long_timeout(struct twl_config *c)
{
	c->conn_timeout_s = 120;
	c->request_timeout_s = 300;
	c->body_memory = 2u << 20;
}

static int setup(void **state)
{
	static struct rstate r;

	fixture_start(&r.f, long_timeout);
	enrol_host(&r.f, HOST, r.key);
	*state = &r;
	return 0;
}

static int teardown(void **state)
{
	struct rstate *r = *state;

	fixture_stop(&r->f);
	return 0;
}

/*
 * Send the headers of method path with @extra header lines (each ending
 * in CRLF) announcing @len body bytes, none of which follow: the status
 * that arrives within 10 s (0 if none), with the connection closed after.
 */
static int headers_only(struct rstate *r, const char *method, const char *path,
			const char *extra, size_t len, char *buf, size_t cap)
{
	struct raw_tls *t = raw_tls_connect(r->f.port, NULL, NULL, NULL);
	char head[1024];
	int status;

	assert_non_null(t);
	snprintf(
		head, sizeof(head),
		"%s %s HTTP/1.1\r\nHost: localhost\r\n%s"
		"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
		method, path, extra, len);
	assert_int_equal(raw_tls_write(t, head, strlen(head)), 0);
	status = raw_tls_response(t, buf, cap, 10000);
	if (status)
		assert_true(raw_tls_closed(t, 10000));
	raw_tls_free(t);
	return status;
}

static void test_refused_on_headers(void **state)
{
	struct rstate *r = *state;
	char auth[128], viewer[128], buf[8192];
	static const struct {
		const char *method, *path, *extra;
		int status;
		const char *code;
	} cases[] = {
		{ "POST", "/api/v1/reports", "", 401, "unauthorized" },
		{ "POST", "/api/v1/reports",
		  "Authorization: Bearer twlk_0000000000000000000000000000000000000000000000000000000000000000\r\n",
		  401, "unauthorized" },
		{ "POST", "/api/v1/enroll", "Authorization: Bearer nope\r\n",
		  401, "unauthorized" },
		{ "POST", "/api/v1/annotations", "", 401, "unauthorized" },
		/* public routes take no body from anybody */
		{ "GET", "/healthz", "", 413, "too_large" },
		{ "GET", "/index.html", "", 413, "too_large" },
		{ "PUT", "/api/v1/reports", "", 405, "method_not_allowed" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = headers_only(r, cases[i].method, cases[i].path,
				      cases[i].extra, 1000000, buf,
				      sizeof(buf));

		if (st != cases[i].status || !strstr(buf, cases[i].code))
			fail_msg(
				"case %zu: %s %s: want %d %s before the body, got %d: %s",
				i, cases[i].method, cases[i].path,
				cases[i].status, cases[i].code, st, buf);
	}
	/* a viewer may not post reports: refused before the body too */
	snprintf(viewer, sizeof(viewer), "Authorization: Bearer %s\r\n",
		 r->f.viewer);
	assert_int_equal(headers_only(r, "POST", "/api/v1/reports", viewer,
				      1000000, buf, sizeof(buf)),
			 403);
	/* an agent with a bad encoding or a body over max-body */
	snprintf(auth, sizeof(auth),
		 "Authorization: Bearer %s\r\nContent-Encoding: br\r\n",
		 r->key);
	assert_int_equal(headers_only(r, "POST", "/api/v1/reports", auth, 1000,
				      buf, sizeof(buf)),
			 415);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", r->key);
	assert_int_equal(headers_only(r, "POST", "/api/v1/reports", auth,
				      r->f.cfg.max_body + 1, buf, sizeof(buf)),
			 413);
}

/* body-memory: a body that would not fit is refused before it is read. */
static void test_body_memory(void **state)
{
	struct rstate *r = *state;
	char auth[128], buf[8192];

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", r->key);
	/* within max-body (4 MiB) but over body-memory (2 MiB) */
	assert_int_equal(headers_only(r, "POST", "/api/v1/reports", auth,
				      3u << 20, buf, sizeof(buf)),
			 503);
	assert_non_null(strstr(buf, "Retry-After: 5"));
	assert_non_null(strstr(buf, "overloaded"));
}

/* An admitted request is still answered normally, and its body read. */
static void test_admitted(void **state)
{
	struct rstate *r = *state;
	struct http_result res;
	json_t *rep = make_report(HOST, "ad000000000000000000000000000001", 1);
	char *body = dump(rep);

	http(&r->f, "POST", "/api/v1/reports", r->key, body, strlen(body), NULL,
	     &res);
	assert_int_equal(res.status, 200);
	http_result_fini(&res);
	assert_int_equal(count_rows(&r->f, "batches"), 1);
	free(body);
	json_decref(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_on_headers),
		cmocka_unit_test(test_body_memory),
		cmocka_unit_test(test_admitted),
	};
	int fails;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fails = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return fails;
}
