// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed input: every case gets the right 4xx with a JSON error, stores
 * nothing, and the server keeps serving. Cases: every rejected wire example
 * (wrong types, unknown fields, invalid UTF-8, too many, newer version...,
 * with the code and field from schema/examples/README.md), huge strings,
 * deep nesting, a gzip bomb, bad gzip, an unknown encoding, missing and
 * malformed tokens, wrong roles, a revoked key, a report for another host,
 * a replayed batch, oversized bodies (declared and chunked), slow clients.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include <twilight/util.h>

#include "harness.h"

/* host id of the examples in schema/examples */
#define EX_HOST \
	"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"

struct mstate {
	struct fixture f;
	char key[80];
	int64_t rows;
};

static void short_timeout(struct twl_config *c)
{
	c->conn_timeout_s = 2;
	c->max_body = 256 * 1024;
	c->max_inflated = 1024 * 1024;
}

static int setup(void **state)
{
	static struct mstate m;
	json_t *rep;
	char *body;
	struct http_result r;

	fixture_start(&m.f, short_timeout);
	enrol_host(&m.f, EX_HOST, m.key);
	/* one stored batch so "nothing changed" compares against real data */
	rep = make_report(EX_HOST, "1000000000000000000000000000000a", 1);
	body = dump(rep);
	http(&m.f, "POST", "/api/v1/reports", m.key, body, strlen(body), NULL,
	     &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	free(body);
	json_decref(rep);
	m.rows = count_data_rows(&m.f);
	assert_true(m.rows > 5);
	*state = &m;
	return 0;
}

static int teardown(void **state)
{
	struct mstate *m = *state;

	fixture_stop(&m->f);
	return 0;
}

/* After each case: nothing stored, server still up. */
static void still_fine(struct mstate *m)
{
	struct http_result r;

	assert_int_equal(count_data_rows(&m->f), m->rows);
	http(&m->f, "GET", "/healthz", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
}

static void expect(struct mstate *m, const char *token, const void *body,
		   size_t len, const char *extra, long status, const char *code,
		   const char *field)
{
	struct http_result r;

	http(&m->f, "POST", "/api/v1/reports", token, body, len, extra, &r);
	if (r.status != status)
		fail_msg("want %ld got %ld: %.300s", status, r.status,
			 r.body ? r.body : "");
	assert_non_null(r.json);
	if (code)
		assert_string_equal(
			json_string_value(json_object_get(r.json, "error")),
			code);
	if (field) {
		const char *got =
			json_string_value(json_object_get(r.json, "field"));

		if (!field[0])
			assert_true(!got || !got[0]);
		else
			assert_string_equal(got ? got : "(none)", field);
	}
	assert_non_null(json_object_get(r.json, "reason"));
	http_result_fini(&r);
	still_fine(m);
}

/* Every invalid-*.json example, with code and field from the README table. */
static void test_invalid_examples(void **state)
{
	struct mstate *m = *state;
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char path[512], *readme = NULL, *line, *save = NULL;
	int n = 0;

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/schema/examples/README.md", src);
	assert_int_equal(twl_read_file(path, 1 << 20, &readme, NULL), 0);
	for (line = strtok_r(readme, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char file[128], code[64], field[160], *data = NULL;
		size_t len;

		if (sscanf(line, "| `%127[^`]` | `%63[^`]` | `%159[^`]` |",
			   file, code, field) != 3 ||
		    strncmp(file, "invalid-", 8))
			continue;
		if (!strcmp(field, "(document)"))
			field[0] = 0;
		snprintf(path, sizeof(path), "%s/schema/examples/%s", src,
			 file);
		assert_int_equal(twl_read_file(path, 1 << 24, &data, &len), 0);
		print_message("  %s -> %s %s\n", file, code, field);
		expect(m, m->key, data, len, NULL, 400, code, field);
		free(data);
		n++;
	}
	free(readme);
	assert_true(n >= 15);
}

static void test_huge_string(void **state)
{
	struct mstate *m = *state;
	json_t *rep =
		make_report(EX_HOST, "20000000000000000000000000000001", 2);
	size_t big = 200 * 1024;
	char *s = malloc(big + 1), *body;

	memset(s, 'x', big);
	s[big] = 0;
	json_object_set_new(json_object_get(rep, "host"), "hostname",
			    json_string(s));
	body = dump(rep);
	expect(m, m->key, body, strlen(body), NULL, 400, "too_long",
	       "host.hostname");
	free(body);
	free(s);
	json_decref(rep);
}

static void test_deep_nesting(void **state)
{
	struct mstate *m = *state;
	size_t depth = 100000;
	char *body = malloc(2 * depth + 64);
	size_t n = 0;

	n += (size_t)sprintf(body, "{\"v\":1,\"census\":");
	for (size_t i = 0; i < depth; i++)
		body[n++] = '[';
	for (size_t i = 0; i < depth; i++)
		body[n++] = ']';
	body[n++] = '}';
	expect(m, m->key, body, n, NULL, 400, "too_deep", NULL);
	free(body);
}

static void test_invalid_utf8_raw(void **state)
{
	struct mstate *m = *state;
	json_t *rep =
		make_report(EX_HOST, "20000000000000000000000000000002", 2);
	char *body = dump(rep), *p;

	/* corrupt the hostname's first byte into a lone continuation byte */
	p = strstr(body, "db-7.example.net");
	assert_non_null(p);
	*p = (char)0x80;
	expect(m, m->key, body, strlen(body), NULL, 400, "invalid_utf8",
	       "host.hostname");
	free(body);
	json_decref(rep);
}

static void test_gzip_bomb(void **state)
{
	struct mstate *m = *state;
	size_t big = 64u << 20; /* 64 MiB of spaces (valid JSON padding) */
	char *plain = malloc(big), *gz;
	size_t gzlen;

	memset(plain, ' ', big);
	gzip_bytes(plain, big, &gz, &gzlen);
	free(plain);
	assert_true(gzlen < m->f.cfg.max_body);
	expect(m, m->key, gz, gzlen, "Content-Encoding: gzip", 413, "too_large",
	       NULL);
	free(gz);
}

static void test_bad_encoding(void **state)
{
	struct mstate *m = *state;

	expect(m, m->key, "not gzip at all", 15, "Content-Encoding: gzip", 400,
	       "bad_encoding", NULL);
	expect(m, m->key, "{}", 2, "Content-Encoding: br", 415, "bad_encoding",
	       NULL);
}

static void test_auth_failures(void **state)
{
	struct mstate *m = *state;
	json_t *rep =
		make_report(EX_HOST, "20000000000000000000000000000003", 3);
	char *body = dump(rep);
	struct http_result r;

	expect(m, NULL, body, strlen(body), NULL, 401, "unauthorized", NULL);
	expect(m, "nonsense", body, strlen(body), NULL, 401, "unauthorized",
	       NULL);
	expect(m,
	       "twlk_0000000000000000000000000000000000000000000000000000000000000000",
	       body, strlen(body), NULL, 401, "unauthorized", NULL);
	/* wrong roles: viewer and admin tokens, the enrolment token */
	expect(m, m->f.viewer, body, strlen(body), NULL, 403, "forbidden",
	       NULL);
	expect(m, m->f.admin, body, strlen(body), NULL, 403, "forbidden", NULL);
	expect(m, m->f.enrol, body, strlen(body), NULL, 403, "forbidden", NULL);
	/* a host key may only enrol/post: no reads, no admin */
	http(&m->f, "GET", "/metrics", m->key, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(&m->f, "GET", "/api/v1/tokens", m->f.viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	still_fine(m);
	free(body);
	json_decref(rep);
}

static void test_other_host(void **state)
{
	struct mstate *m = *state;
	json_t *rep =
		make_report("1234", "20000000000000000000000000000004", 1);
	char *body = dump(rep);

	expect(m, m->key, body, strlen(body), NULL, 403, "host_mismatch",
	       "host.host_id");
	free(body);
	json_decref(rep);
}

static void test_replay(void **state)
{
	struct mstate *m = *state;
	json_t *rep =
		make_report(EX_HOST, "1000000000000000000000000000000a", 1);
	char *body = dump(rep);
	struct http_result r;

	http(&m->f, "POST", "/api/v1/reports", m->key, body, strlen(body), NULL,
	     &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "status")),
		"duplicate");
	http_result_fini(&r);
	still_fine(m);
	free(body);
	json_decref(rep);
}

static void test_revoked_key(void **state)
{
	struct mstate *m = *state;
	const char *host =
		"abcdef0000000000000000000000000000000000000000000000000000000007";
	char key[80], path[128], *body;
	struct http_result r;
	json_t *rep;

	enrol_host(&m->f, host, key);
	snprintf(path, sizeof(path), "/api/v1/host-keys/%s", host);
	http(&m->f, "DELETE", path, m->f.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	rep = make_report(host, "20000000000000000000000000000005", 1);
	body = dump(rep);
	expect(m, key, body, strlen(body), NULL, 401, "unauthorized", NULL);
	free(body);
	json_decref(rep);
}

static void test_oversized(void **state)
{
	struct mstate *m = *state;
	size_t big = m->f.cfg.max_body + 1;
	char *body = malloc(big);
	struct http_result r;
	int rc;

	memset(body, ' ', big);
	/*
	 * Declared Content-Length over the cap: answered before the body is
	 * read. The client asks first (Expect: 100-continue, as curl does for
	 * large bodies) and so reliably reads the 413 instead of racing the
	 * server's close with its upload.
	 */
	rc = http_try(&m->f, "POST", "/api/v1/reports", m->key, body, big,
		      "Expect: 100-continue", &r);
	assert_int_equal(rc, CURLE_OK);
	assert_int_equal(r.status, 413);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "too_large");
	http_result_fini(&r);
	still_fine(m);
	/* chunked, no Content-Length: cut off at the cap */
	rc = http_try(&m->f, "POST", "/api/v1/reports", m->key, body, big,
		      "Transfer-Encoding: chunked", &r);
	assert_int_equal(r.status, 413);
	http_result_fini(&r);
	still_fine(m);
	free(body);
}

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* The server closes the connection: read returns 0 or an error, within limit s. */
static void wait_closed(int fd, int limit_s)
{
	time_t t0 = time(NULL);
	char buf[4096];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_true(time(NULL) - t0 <= limit_s);
		if (poll(&p, 1, 500) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return;
	}
}

static void test_slow_clients(void **state)
{
	struct mstate *m = *state;
	static const char partial_hello[] =
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
	int idle, slow, i;

	/* idle: connects and sends nothing */
	idle = tcp_connect(m->f.port);
	/* slowloris: starts a TLS handshake and stalls */
	slow = tcp_connect(m->f.port);
	assert_int_equal(write(slow, partial_hello, sizeof(partial_hello) - 1),
			 (ssize_t)sizeof(partial_hello) - 1);
	/* meanwhile others are served */
	for (i = 0; i < 3; i++)
		still_fine(m);
	wait_closed(idle, (int)m->f.cfg.conn_timeout_s + 5);
	wait_closed(slow, (int)m->f.cfg.conn_timeout_s + 5);
	close(idle);
	close(slow);
	still_fine(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_examples),
		cmocka_unit_test(test_huge_string),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_invalid_utf8_raw),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_bad_encoding),
		cmocka_unit_test(test_auth_failures),
		cmocka_unit_test(test_other_host),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_revoked_key),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_slow_clients),
	};
	int fails;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fails = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return fails;
}
