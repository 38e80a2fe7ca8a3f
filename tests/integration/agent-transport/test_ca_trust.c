// SPDX-License-Identifier: GPL-2.0
/*
 * The agent trusts exactly the configured CA (ca-file), never the system's
 * CAs. A second, unrelated CA ("other-ca", as a TLS-inspection proxy's
 * would be) is put where libcurl and OpenSSL look by default: a temporary
 * directory bind-mounted over /etc/ssl/certs and over libcurl's compiled-in
 * CA path and bundle, in a private mount namespace of this process only
 * (this machine's certificates are never touched), plus SSL_CERT_FILE and
 * SSL_CERT_DIR. A server with a certificate of that CA must be refused
 * before the request (bearer token included) leaves the host.
 *
 * Needs root for unshare(CLONE_NEWNS) and mount (CI runs as root): it
 * fails loudly otherwise. A control case first shows that libcurl's
 * defaults do trust the planted CA, so the refusal is the agent's doing.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <curl/curl.h>

#include <twilight/util.h>

#include "transport.h"
#include "tu_common.h"
#include "tu_fake_https.h"

/* The planted CA: a directory in the temp dir, mounted over the defaults. */
static char *rogue;

struct fx {
	char *dir, *script, *portfile, *logdir;
	struct tu_fake_https srv;
};

static char *join(const char *a, const char *b)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", a, b) > 0);
	return p;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_mkdtemp("ca-trust");
	assert_non_null(f->dir);
	f->script = join(f->dir, "script");
	f->portfile = join(f->dir, "port");
	f->logdir = join(f->dir, "log");
	assert_int_equal(mkdir(f->logdir, 0700), 0);
	f->srv.pid = -1;
	f->srv.script = f->script;
	f->srv.portfile = f->portfile;
	f->srv.logdir = f->logdir;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tu_fake_https_stop(&f->srv);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f->script);
	free(f->portfile);
	free(f->logdir);
	free(f);
	return 0;
}

/* Bind-mount @src over @dst (both exist); fails the run loudly. */
static int bind_over(const char *src, const char *dst)
{
	if (mount(src, dst, NULL, MS_BIND, NULL) == 0)
		return 0;
	fprintf(stderr, "cannot bind-mount %s over %s: %s\n", src, dst,
		strerror(errno));
	return -1;
}

/* Is @path below (or at) the directory @dir? */
static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/*
 * Mount the planted CA over libcurl's compiled-in CA path and bundle when
 * they lie outside /etc/ssl/certs (mounted already). A default that does
 * not exist holds no CA: nothing to cover.
 */
static int cover_curl_defaults(const char *dir, const char *bundle)
{
	const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
	struct stat st;

	fprintf(stderr, "libcurl %s: default CA bundle %s, CA path %s\n",
		v->version, v->cainfo ? v->cainfo : "(none)",
		v->capath ? v->capath : "(none)");
	if (v->capath && !below(v->capath, "/etc/ssl/certs") &&
	    stat(v->capath, &st) == 0 && bind_over(dir, v->capath))
		return -1;
	if (v->cainfo && !below(v->cainfo, "/etc/ssl/certs") &&
	    stat(v->cainfo, &st) == 0 && bind_over(bundle, v->cainfo))
		return -1;
	return 0;
}

/*
 * The PKI, then the planted CA: other-ca.pem hashed for OpenSSL's
 * directory lookup and as the bundle ca-certificates.crt.
 */
static int group_setup(void **state)
{
	char *cmd = NULL, *bundle;
	int ret = -1;

	if (tu_pki_setup(state))
		return -1;
	rogue = tu_mkdtemp("rogue-ca");
	if (!rogue)
		return -1;
	bundle = join(rogue, "ca-certificates.crt");
	if (asprintf(&cmd,
		     "cp '%s/other-ca.pem' '%s/' && openssl rehash '%s' && "
		     "cp '%s/other-ca.pem' '%s'",
		     tu_pki, rogue, rogue, tu_pki, bundle) < 0)
		goto out;
	if (system(cmd) != 0) {
		fprintf(stderr, "planting the CA failed: %s\n", cmd);
		goto out;
	}
	if (bind_over(rogue, "/etc/ssl/certs") ||
	    cover_curl_defaults(rogue, bundle))
		goto out;
	if (setenv("SSL_CERT_FILE", bundle, 1) ||
	    setenv("SSL_CERT_DIR", rogue, 1))
		goto out;
	ret = 0;
out:
	free(cmd);
	free(bundle);
	return ret;
}

static int group_teardown(void **state)
{
	umount2("/etc/ssl/certs", MNT_DETACH);
	tu_rmrf(rogue);
	free(rogue);
	return tu_pki_teardown(state);
}

static void start(struct fx *f, const char *cert)
{
	static const char *const script[] = { "200||{\"ok\":true}",
					      "200||{\"ok\":true}", NULL };

	tu_fake_https_start(&f->srv, tu_pki, cert, TU_SRV_PLAIN, script);
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
	return size * n;
}

/* Control: libcurl's own defaults trust the planted CA in this namespace. */
static void test_defaults_trust_planted_ca(void **state)
{
	struct fx *f = *state;
	char err[CURL_ERROR_SIZE] = "";
	CURL *c = curl_easy_init();
	CURLcode cc;

	start(f, "other-server");
	assert_non_null(c);
	curl_easy_setopt(c, CURLOPT_URL, f->srv.url);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	cc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	if (cc != CURLE_OK)
		fail_msg(
			"libcurl's defaults refuse the planted CA (%s: %s): the setup does "
			"not reach the default CA path, so the next cases would show nothing",
			curl_easy_strerror(cc), err);
	assert_int_equal(tu_count(f->logdir, ".req"), 1);
}

static struct twl_transport *make_transport(struct fx *f, const char *ca)
{
	char *ca_file = join(tu_pki, ca);
	struct twl_transport_cfg cfg = { .server_url = f->srv.url,
					 .ca_file = ca_file,
					 .connect_timeout_ms = 5000,
					 .timeout_ms = 10000 };
	struct twl_transport *t = twl_transport_new(&cfg);

	assert_non_null(t);
	free(ca_file);
	return t;
}

/* The agent refuses the planted CA's server: nothing is sent. */
static void test_configured_ca_only(void **state)
{
	struct fx *f = *state;
	struct twl_http_result *res = malloc(sizeof(*res));
	struct twl_transport *t;
	int ret;

	assert_non_null(res);
	start(f, "other-server");
	t = make_transport(f, "ca.pem");
	ret = twl_transport_post(t, "/api/v1/enroll", "enroll-tok-123", "{}", 2,
				 false, res);
	if (ret != -EIO)
		fail_msg(
			"a server certified by a CA in the default path was accepted "
			"(ret %d, HTTP %ld): the agent trusts more than ca-file",
			ret, res->status);
	assert_int_equal(res->status, 0);
	assert_int_equal(res->curl_code, CURLE_PEER_FAILED_VERIFICATION);
	/* The token never left the host. */
	assert_int_equal(tu_count(f->logdir, ".req"), 0);
	twl_transport_free(t);
	free(res);
}

/* The configured CA still works in the same namespace. */
static void test_configured_ca_accepted(void **state)
{
	struct fx *f = *state;
	struct twl_http_result *res = malloc(sizeof(*res));
	struct twl_transport *t;

	assert_non_null(res);
	start(f, "server");
	t = make_transport(f, "ca.pem");
	assert_int_equal(twl_transport_post(t, "/api/v1/reports", "hk", "{}", 2,
					    false, res),
			 0);
	assert_int_equal(res->status, 200);
	assert_int_equal(tu_count(f->logdir, ".req"), 1);
	twl_transport_free(t);
	free(res);
}

/* A private mount namespace for this process, or a loud failure. */
static int private_mounts(void)
{
	if (geteuid() != 0) {
		fprintf(stderr,
			"test_ca_trust needs root (CI runs as root): it mounts a planted CA "
			"over the default CA path in a private mount namespace\n");
		return -1;
	}
	if (unshare(CLONE_NEWNS)) {
		fprintf(stderr,
			"unshare(CLONE_NEWNS) failed: %s; the CA trust test cannot run "
			"(a container needs CAP_SYS_ADMIN for it)\n",
			strerror(errno));
		return -1;
	}
	/* Nothing mounted here may propagate back to the machine. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr,
			"making / private in the namespace failed: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults_trust_planted_ca,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_configured_ca_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_configured_ca_accepted,
						setup, teardown),
	};
	static const char *const proxies[] = { "http_proxy",  "https_proxy",
					       "HTTPS_PROXY", "ALL_PROXY",
					       "all_proxy",   NULL };

	for (int i = 0; proxies[i]; i++)
		unsetenv(proxies[i]);
	if (private_mounts())
		return 1;
	twl_log_init("test_ca_trust", LOG_WARNING);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
