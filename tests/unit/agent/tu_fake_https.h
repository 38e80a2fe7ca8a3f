/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running the scripted fake HTTPS server (tests/integration/agent-transport/
 * fake_https.c, its path in FAKE_HTTPS) on 127.0.0.1 with a throw-away PKI
 * (gen-certs.sh next to it), for tests of the agent's HTTPS client parts.
 * Include after <cmocka.h>: failures fail the running test.
 */
#ifndef TU_FAKE_HTTPS_H
#define TU_FAKE_HTTPS_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_common.h"

#ifndef FAKE_HTTPS
#error "FAKE_HTTPS (the fake_https binary) comes from the test's CMakeLists.txt"
#endif

/* Server modes, or-ed. */
enum { TU_SRV_PLAIN = 0, TU_SRV_CLIENT_CERT = 1, TU_SRV_PROXY = 2 };

/*
 * A new PKI in a fresh temp directory (ca.pem, server.pem/.key,
 * client.pem/.key, other-ca.pem, other-server.pem/.key); NULL after
 * printing why. Remove it with tu_rmrf().
 */
static inline char *tu_pki_new(void)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char *dir, *cmd = NULL;
	int rc;

	if (!src) {
		fprintf(stderr,
			"TWILIGHT_SOURCE_DIR is not set (run through ctest)\n");
		return NULL;
	}
	dir = tu_mkdtemp("pki");
	if (!dir)
		return NULL;
	if (asprintf(
		    &cmd,
		    "sh '%s/tests/integration/agent-transport/gen-certs.sh' '%s'",
		    src, dir) < 0) {
		free(dir);
		return NULL;
	}
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "generating the test PKI failed: %s\n", cmd);
		tu_rmrf(dir);
		free(dir);
		dir = NULL;
	}
	free(cmd);
	return dir;
}

/* The PKI of the running test program, made by tu_pki_setup(). */
static char *tu_pki;

/* cmocka group setup and teardown that make and remove tu_pki. */
static inline int tu_pki_setup(void **state)
{
	tu_pki = tu_pki_new();
	return tu_pki ? 0 : -1;
}

static inline int tu_pki_teardown(void **state)
{
	tu_rmrf(tu_pki);
	free(tu_pki);
	tu_pki = NULL;
	return 0;
}

/* Where one server keeps its script, port and request log. */
struct tu_fake_https {
	const char *script, *portfile, *logdir; /* files the caller names */
	pid_t pid; /* -1 when not running */
	char url[64]; /* "https://127.0.0.1:PORT" once listening */
};

/*
 * Fork and exec the server with the certificate and key files @crt and
 * @key, in @mode (@ca: the client CA of TU_SRV_CLIENT_CERT), its script
 * already written: the child's pid, or -1 (fork failed). No test
 * assertion here, so a test may call it from a process of its own.
 *
 * The server gets SIGTERM when the thread that started it ends, however
 * it ends: a test that ctest kills on its timeout leaves no server behind
 * (before, one kept listening until someone killed it by hand). Start it
 * from a thread that outlives it (the tests' main thread).
 */
static inline pid_t tu_fake_https_spawn(const struct tu_fake_https *srv,
					const char *crt, const char *key,
					const char *ca, int mode)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		const char *argv[16] = {
			FAKE_HTTPS,  "--cert",	    crt,	   "--key",
			key,	     "--port-file", srv->portfile, "--script",
			srv->script, "--log-dir",   srv->logdir
		};
		int n = 11;

		/* the parent may have ended before the signal was asked for */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(126);
		if (mode & TU_SRV_CLIENT_CERT) {
			argv[n++] = "--client-ca";
			argv[n++] = ca;
		}
		if (mode & TU_SRV_PROXY)
			argv[n++] = "--proxy";
		argv[n] = NULL;
		execv(FAKE_HTTPS, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/*
 * Start the server with certificate @cert ("server", "other-server") of
 * @pki in @mode, answering the n-th request with @lines[n] (NULL-ended,
 * the format of fake_https.c). Returns once it listens (fails the test
 * after 10 s or if it exits).
 */
static inline void tu_fake_https_start(struct tu_fake_https *srv,
				       const char *pki, const char *cert,
				       int mode, const char *const *lines)
{
	FILE *fp = fopen(srv->script, "w");
	char *crt = NULL, *key = NULL, *ca = NULL;
	int port = 0;

	assert_non_null(fp);
	for (; *lines; lines++)
		fprintf(fp, "%s\n", *lines);
	assert_int_equal(fclose(fp), 0);
	assert_true(asprintf(&crt, "%s/%s.pem", pki, cert) > 0);
	assert_true(asprintf(&key, "%s/%s.key", pki, cert) > 0);
	assert_true(asprintf(&ca, "%s/ca.pem", pki) > 0);
	unlink(srv->portfile);
	srv->pid = tu_fake_https_spawn(srv, crt, key, ca, mode);
	assert_true(srv->pid >= 0);
	for (int i = 0; i < 1000 && !port; i++) {
		char *txt = tu_slurp(srv->portfile, NULL);

		if (txt)
			port = atoi(txt);
		free(txt);
		if (!port) {
			int st;

			if (waitpid(srv->pid, &st, WNOHANG) == srv->pid)
				fail_msg(
					"fake_https exited before listening (status %d)",
					st);
			usleep(10000);
		}
	}
	if (!port)
		fail_msg("fake_https did not write %s within 10 s",
			 srv->portfile);
	snprintf(srv->url, sizeof(srv->url), "https://127.0.0.1:%d", port);
	free(crt);
	free(key);
	free(ca);
}

/*
 * What the server logged of request @n (1-based): @ext "req" (request
 * line, headers, TLS details) or "body". A new string; fails the test
 * when there is none.
 */
static inline char *tu_fake_https_request(const struct tu_fake_https *srv,
					  int n, const char *ext)
{
	char *p = NULL, *txt;

	assert_true(asprintf(&p, "%s/%03d.%s", srv->logdir, n, ext) > 0);
	txt = tu_slurp(p, NULL);
	if (!txt)
		fail_msg("no %s", p);
	free(p);
	return txt;
}

/* Stop the server if it runs (SIGTERM, then reap it). */
static inline void tu_fake_https_stop(struct tu_fake_https *srv)
{
	int st;

	if (srv->pid > 0) {
		kill(srv->pid, SIGTERM);
		waitpid(srv->pid, &st, 0);
	}
	srv->pid = -1;
}

#endif
