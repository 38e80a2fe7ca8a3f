// SPDX-License-Identifier: GPL-2.0
/*
 * agent/enroll.c: secrets (what may be sent as a bearer token), token and
 * host key files, and the enrolment itself against the scripted fake
 * HTTPS server on 127.0.0.1 (real TLS, throw-away PKI): what is sent, and
 * what each answer means (key, refused, retry later, bad request, no
 * usable key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>

#include "enroll.h"
#include "transport.h"
#include "tu_common.h"
#include "tu_fake_https.h"

#define HOST_ID \
	"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_secret_valid(void **state)
{
	char big[TWL_HOST_KEY_MAX + 2];

	assert_true(twl_secret_valid("abc-DEF_123.~", 13));
	assert_false(twl_secret_valid("", 0));
	assert_false(twl_secret_valid(NULL, 3));
	assert_false(twl_secret_valid("a b", 3));
	assert_false(twl_secret_valid("a\r\nX-Evil: 1", 12));
	assert_false(twl_secret_valid("caf\xc3\xa9", 5));
	assert_false(twl_secret_valid("a\x7f", 2));
	memset(big, 'k', sizeof(big));
	assert_true(twl_secret_valid(big, TWL_HOST_KEY_MAX));
	assert_false(twl_secret_valid(big, TWL_HOST_KEY_MAX + 1));
}

/* Token files: white space around is dropped, anything else is refused. */
static void test_read_secret(void **state)
{
	char *dir = tu_mkdtemp("secret"), *path = NULL, *key = (char *)1;
	char big[TWL_TOKEN_MAX + 2];

	assert_non_null(dir);
	assert_true(asprintf(&path, "%s/token", dir) > 0);
	assert_int_equal(twl_read_secret(path, &key), -ENOENT);
	assert_null(key);
	write_text(path, "  tok-with-spaces-around \n\n");
	assert_int_equal(twl_read_secret(path, &key), 0);
	assert_string_equal(key, "tok-with-spaces-around");
	free(key);
	write_text(path, "two words\n");
	assert_int_equal(twl_read_secret(path, &key), -EINVAL);
	assert_null(key);
	write_text(path, " \n\t\n");
	assert_int_equal(twl_read_secret(path, &key), -EINVAL);
	/* longer than a token file may be: refused, not cut */
	memset(big, 't', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_text(path, big);
	assert_int_equal(twl_read_secret(path, &key), -EINVAL);
	assert_null(key);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

static void test_hostkey_files(void **state)
{
	char *dir = tu_mkdtemp("hostkey"), *path = NULL, *key = NULL;
	char *sub = NULL;
	struct stat st;

	assert_non_null(dir);
	assert_int_equal(twl_hostkey_load(dir, &key), -ENOENT);
	assert_int_equal(twl_hostkey_store(dir, "bad key"), -EINVAL);
	assert_int_equal(twl_hostkey_store(dir, "k-0123456789"), 0);
	assert_true(asprintf(&path, "%s/host.key", dir) > 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(twl_hostkey_load(dir, &key), 0);
	assert_string_equal(key, "k-0123456789");
	free(key);
	write_text(path, "\n");
	assert_int_equal(twl_hostkey_load(dir, &key), -EINVAL);
	assert_int_equal(twl_hostkey_forget(dir), 0);
	assert_int_equal(access(path, F_OK), -1);
	/* forgetting a key that is gone is fine */
	assert_int_equal(twl_hostkey_forget(dir), 0);
	/* no state directory configured */
	assert_int_equal(twl_hostkey_load("", &key), -EINVAL);
	assert_int_equal(twl_hostkey_store(NULL, "k"), -EINVAL);
	/* A missing state directory is created (0700). */
	assert_true(asprintf(&sub, "%s/sub", dir) > 0);
	assert_int_equal(twl_hostkey_store(sub, "k-sub"), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(twl_hostkey_load(sub, &key), 0);
	assert_string_equal(key, "k-sub");
	free(key);
	free(sub);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

/* ---- enrolment over HTTPS ---- */

struct fx {
	char *dir, *script, *portfile, *logdir;
	struct tu_fake_https srv;
	struct twl_transport *tr;
	struct twl_http_result res;
};

static char *fx_path(struct fx *f, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", f->dir, name) > 0);
	return p;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_mkdtemp("enroll");
	assert_non_null(f->dir);
	f->script = fx_path(f, "script");
	f->portfile = fx_path(f, "port");
	f->logdir = fx_path(f, "log");
	assert_int_equal(mkdir(f->logdir, 0700), 0);
	f->srv = (struct tu_fake_https){ .script = f->script,
					 .portfile = f->portfile,
					 .logdir = f->logdir,
					 .pid = -1 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	twl_transport_free(f->tr);
	tu_fake_https_stop(&f->srv);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f->script);
	free(f->portfile);
	free(f->logdir);
	free(f);
	return 0;
}

/* Serve @lines and connect a transport to the server (CA checked). */
static void serve(struct fx *f, const char *const *lines)
{
	struct twl_transport_cfg tc = { .connect_timeout_ms = 5000,
					.timeout_ms = 10000 };
	char *ca = NULL;

	tu_fake_https_start(&f->srv, tu_pki, "server", TU_SRV_PLAIN, lines);
	assert_true(asprintf(&ca, "%s/ca.pem", tu_pki) > 0);
	tc.server_url = f->srv.url;
	tc.ca_file = ca;
	f->tr = twl_transport_new(&tc);
	assert_non_null(f->tr);
	free(ca);
}

/* twl_enroll() with the test's token and identity; the key or NULL. */
static int enroll(struct fx *f, char **key)
{
	*key = (char *)1;
	return twl_enroll(f->tr, "enroll-tok-123", HOST_ID, "test-host", key,
			  &f->res);
}

/* 201 with a key: sent as the protocol says, the key comes back. */
static void test_enroll_ok(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "201||{\"host_key\":\"hk-1\"}", NULL };
	char *key, *head, *body;
	json_t *j;

	serve(f, script);
	assert_int_equal(enroll(f, &key), 0);
	assert_string_equal(key, "hk-1");
	assert_int_equal(f->res.status, 201);
	free(key);
	head = tu_fake_https_request(&f->srv, 1, "req");
	assert_non_null(strstr(head, "POST /api/v1/enroll HTTP/1.1"));
	assert_non_null(strstr(head, "Authorization: Bearer enroll-tok-123"));
	/* the version is the build's (CMake's PROJECT_VERSION) */
	assert_non_null(strstr(
		head, "User-Agent: twilight-agent/" TWL_AGENT_VERSION "\r\n"));
	free(head);
	body = tu_fake_https_request(&f->srv, 1, "body");
	j = json_loads(body, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "host_id")),
			    HOST_ID);
	assert_string_equal(json_string_value(json_object_get(j, "hostname")),
			    "test-host");
	json_decref(j);
	free(body);
}

/* The member name of the server's first version is still understood. */
static void test_enroll_old_member_name(void **state)
{
	struct fx *f = *state;
	const char *script[] = { "200||{\"key\":\"hk-old\"}", NULL };
	char *key;

	serve(f, script);
	assert_int_equal(enroll(f, &key), 0);
	assert_string_equal(key, "hk-old");
	free(key);
}

/* Each kind of answer maps to one outcome, and never to a key. */
static void test_enroll_answers(void **state)
{
	struct fx *f = *state;
	const char *script[] = {
		"401||{\"error\":\"bad_token\"}",
		"403||{\"error\":\"forbidden\"}",
		"503||{\"error\":\"busy\"}",
		"429|Retry-After: 5|{\"error\":\"slow_down\"}",
		"400||{\"error\":\"bad_value\",\"field\":\"host_id\"}",
		"400||{\"error\":\"bad_request\"}",
		"404||",
		"413||{\"error\":\"too_large\"}",
		"200||{\"host_key\":\"two words\"}",
		"201||{\"host_key\":42}",
		"200||not json",
		"close",
		NULL,
	};
	const struct {
		int ret;
		long status;
	} want[] = {
		{ -EACCES, 401 }, { -EACCES, 403 }, { -EAGAIN, 503 },
		{ -EAGAIN, 429 }, { -EINVAL, 400 }, { -EAGAIN, 400 },
		{ -EAGAIN, 404 }, { -EINVAL, 413 }, { -EPROTO, 200 },
		{ -EPROTO, 201 }, { -EPROTO, 200 }, { -EAGAIN, 0 },
	};
	char *key;

	serve(f, script);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int ret = enroll(f, &key);

		if (ret != want[i].ret || f->res.status != want[i].status)
			fail_msg("answer %zu (%s): got %d, HTTP %ld", i,
				 script[i], ret, f->res.status);
		assert_null(key);
		if (want[i].status == 429)
			assert_string_equal(f->res.retry_after, "5");
	}
}

/* No server at all: retry later, the network error said. */
static void test_enroll_no_server(void **state)
{
	struct fx *f = *state;
	struct twl_transport_cfg tc = { .server_url = "https://127.0.0.1:1",
					.connect_timeout_ms = 5000,
					.timeout_ms = 5000 };
	char *ca = NULL, *key;

	assert_true(asprintf(&ca, "%s/ca.pem", tu_pki) > 0);
	tc.ca_file = ca;
	f->tr = twl_transport_new(&tc);
	assert_non_null(f->tr);
	assert_int_equal(enroll(f, &key), -EAGAIN);
	assert_null(key);
	assert_int_equal(f->res.status, 0);
	assert_true(f->res.error[0] != '\0');
	free(ca);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_valid),
		cmocka_unit_test(test_read_secret),
		cmocka_unit_test(test_hostkey_files),
		cmocka_unit_test_setup_teardown(test_enroll_ok, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_enroll_old_member_name,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_enroll_answers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_enroll_no_server, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, tu_pki_setup, tu_pki_teardown);
}
