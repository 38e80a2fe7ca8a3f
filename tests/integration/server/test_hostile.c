// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile requests against the real twilight-server binary over TLS on
 * loopback. Each attack in attacks[] runs against one live server with
 * its per-address limits on (limit-loopback) and short deadlines; it
 * checks the server's answers, and a thread reads the server's VmRSS from
 * /proc while it runs: its growth over the attack must stay within
 * conns x PER_CONN_KIB + SLACK_KIB (see those). After each attack a fresh
 * client is served. Cases: slow headers, a slow body, anonymous large
 * bodies on many connections, enrolment abuse, a NUL in the path, one
 * address full while another is served, CBC suites over TLS 1.2
 * (openssl s_client), two hosts sending one batch id (and one host
 * another body under it), times from the future. A new case is a function and a row of attacks[].
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "raw_tls.h"

/*
 * What one connection may cost the server: its libmicrohttpd buffer
 * (conn-memory, 16 KiB), the TLS session with its record buffers (two
 * 16 KiB records and state), and the request's own state: 64 KiB.
 */
#define PER_CONN_KIB 64
/*
 * Growth any attack may cause beyond that: allocator arenas of the
 * server's threads, the SQLite pages authentication touches, and ASan's
 * quarantine of freed blocks, capped at 8 MiB for the server (start()).
 */
#define SLACK_KIB (32 * 1024)
#define MAX_BODY (4 << 20) /* the server's max-body (default) */
#define ENROLL_CAP 40 /* enroll-max-keys given to the server */

struct target {
	pid_t pid;
	uint16_t port;
	char dir[64], ca[128], admin[80], agent[80];
};

static struct target tg;
static const char *server_bin;
static int keys_enrolled; /* host keys minted so far (enrol()) */

struct attack {
	const char *name;
	/* 0 when the server answered as it must; else *why says what not */
	int (*run)(struct target *t, char *why, size_t cap);
	unsigned conns; /* connections it holds at once: its memory bound */
};

/* ---- the server ---------------------------------------------------- */

static void read_token(const char *dir, const char *name, char out[80])
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, 80, f));
	out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

static int start(void **state)
{
	char out[160], line[512];
	FILE *f = NULL;

	snprintf(tg.dir, sizeof(tg.dir), "/tmp/twl-hostile-XXXXXX");
	assert_non_null(mkdtemp(tg.dir));
	snprintf(out, sizeof(out), "%s/server.out", tg.dir);
	tg.pid = fork();
	assert_true(tg.pid >= 0);
	if (tg.pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		/*
		 * An ASan build keeps freed memory; a small quarantine. The
		 * enrolment burst barely refills (enroll-rate 0.001/s), so
		 * enrolment_abuse meets 429 however slowly the machine runs.
		 */
		setenv("ASAN_OPTIONS", "quarantine_size_mb=8", 1);
		execl(server_bin, server_bin, "--data-dir", tg.dir, "--listen",
		      "127.0.0.1:0", "--limit-loopback", "--max-per-ip", "16",
		      "--ip-rate", "1000", "--ip-burst", "1000",
		      "--request-timeout", "4s", "--min-rate", "1K",
		      "--enroll-rate", "0.001", "--enroll-burst", "100",
		      "--enroll-max-keys", "40", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600 && !tg.port; i++) {
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		f = fopen(out, "r");
		while (f && fgets(line, sizeof(line), f)) {
			char *p = strstr(line, "(port ");

			if (p)
				tg.port = (uint16_t)atoi(p + 6);
		}
		if (f)
			fclose(f);
		assert_int_equal(waitpid(tg.pid, NULL, WNOHANG), 0);
	}
	assert_true(tg.port > 0);
	snprintf(tg.ca, sizeof(tg.ca), "%s/ca.pem", tg.dir);
	read_token(tg.dir, "admin.token", tg.admin);
	read_token(tg.dir, "agent.token", tg.agent);
	return 0;
}

static int stop(void **state)
{
	char cmd[128];
	int status = -1;

	kill(tg.pid, SIGTERM);
	waitpid(tg.pid, &status, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tg.dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", tg.dir);
	/* it stopped cleanly, after everything */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return 0;
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

struct rss_watch {
	pid_t pid;
	atomic_int stop;
	atomic_long peak;
	pthread_t th;
};

static void *rss_sampler(void *arg)
{
	struct rss_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		long k = rss_kib(w->pid);

		if (k > atomic_load(&w->peak))
			atomic_store(&w->peak, k);
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	return NULL;
}

/* ---- requests ------------------------------------------------------- */

/* A loopback source address of its own for the @i-th group of clients. */
static const char *source(unsigned i, char buf[16])
{
	snprintf(buf, 16, "127.0.%u.%u", 1 + (i / 250) % 250, 1 + i % 250);
	return buf;
}

/*
 * One request from @src (NULL: 127.0.0.1) with bearer @token (NULL: none)
 * and @body (NULL: none): the status, 0 if none came; the answer in @out.
 */
static int request(struct target *t, const char *src, const char *method,
		   const char *path, const char *token, const char *body,
		   char *out, size_t cap)
{
	struct raw_tls *c = raw_tls_connect(t->port, src, t->ca, NULL);
	char head[1024];
	int st;

	if (!c)
		return 0;
	snprintf(head, sizeof(head),
		 "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		 "%s%s%sContent-Type: application/json\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 method, path, token ? "Authorization: Bearer " : "",
		 token ? token : "", token ? "\r\n" : "",
		 body ? strlen(body) : 0);
	st = raw_tls_write(c, head, strlen(head)) ||
			     (body && raw_tls_write(c, body, strlen(body))) ?
		     0 :
		     raw_tls_response(c, out, cap, 20000);
	raw_tls_free(c);
	return st;
}

/* The server still serves a newcomer. */
static bool serves(struct target *t)
{
	char out[4096];

	return request(t, "127.0.0.1", "GET", "/healthz", NULL, NULL, out,
		       sizeof(out)) == 200;
}

/* Enrol @host_id with the enrolment token: the status; *key on 200. */
static int enrol(struct target *t, const char *src, const char *host_id,
		 char key[80])
{
	char body[128], out[4096];
	json_t *j;
	int st;

	snprintf(body, sizeof(body), "{\"host_id\":\"%s\"}", host_id);
	st = request(t, src, "POST", "/api/v1/enroll", t->agent, body, out,
		     sizeof(out));
	keys_enrolled += st == 200;
	if (st == 200 && key) {
		j = json_loads(strstr(out, "\r\n\r\n") + 4, 0, NULL);
		snprintf(key, 80, "%s",
			 json_string_value(json_object_get(j, "key")));
		json_decref(j);
	}
	return st;
}

#define FAIL(...)                                \
	do {                                     \
		snprintf(why, cap, __VA_ARGS__); \
		ret = -1;                        \
		goto out;                        \
	} while (0)

/*
 * Keep @n connections trickling @drip a byte each per half second after
 * @head: 0 when the server closed every one while they trickled (within
 * 30 s; it was told 4 s), else the number still open.
 */
static int trickle(struct target *t, unsigned n, const char *head,
		   const char *drip)
{
	struct raw_tls *c[64] = { 0 };
	unsigned open = 0;
	char src[16];

	for (unsigned i = 0; i < n; i++) {
		c[i] = raw_tls_connect(t->port, source(i / 2, src), NULL, NULL);
		if (c[i] && raw_tls_write(c[i], head, strlen(head)) == 0)
			open++;
	}
	for (int round = 0; round < 60 && open; round++) {
		for (unsigned i = 0; i < n; i++) {
			if (!c[i])
				continue;
			if (raw_tls_write(c[i], drip + round % strlen(drip),
					  1) ||
			    raw_tls_closed(c[i], 0)) {
				raw_tls_free(c[i]);
				c[i] = NULL;
				open--;
			}
		}
		nanosleep(&(struct timespec){ 0, 500000000 }, NULL);
	}
	for (unsigned i = 0; i < n; i++)
		raw_tls_free(c[i]);
	return (int)open;
}

/* ---- attacks -------------------------------------------------------- */

static int slow_headers(struct target *t, char *why, size_t cap)
{
	int open = trickle(t, 32,
			   "GET /healthz HTTP/1.1\r\nHost: localhost\r\n",
			   "X-Slow: abcdefghijklmnopqrstuvwxyz\r\n");
	int ret = 0;

	if (open)
		FAIL("%d of 32 slow-header connections still open after 30 s",
		     open);
out:
	return ret;
}

static int slow_body(struct target *t, char *why, size_t cap)
{
	char key[80], head[512];
	int ret = 0, open;

	if (enrol(t, NULL, "5105", key) != 200)
		FAIL("cannot enrol for the slow body");
	snprintf(
		head, sizeof(head),
		"POST /api/v1/reports HTTP/1.1\r\nHost: localhost\r\n"
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
		"Content-Length: 1048576\r\n\r\n{",
		key);
	open = trickle(t, 16, head, "                ");
	if (open)
		FAIL("%d of 16 slow-body connections still open after 30 s",
		     open);
out:
	return ret;
}

/*
 * 256 connections (16 per address) announce a body of max-body without
 * credentials and push 1 MiB each: all are refused on their headers. The
 * server buffered them whole before (1 GiB of bodies, 256 MiB of them
 * sent here). Then the answer itself, on connections that send no body.
 */
static int anonymous_bodies(struct target *t, char *why, size_t cap)
{
	enum { N = 256, CHUNK = 16384, PUSH = 1 << 20 };
	static char chunk[CHUNK];
	struct raw_tls *c[N] = { 0 };
	char head[256], src[16], out[4096];
	unsigned open = 0;
	int ret = 0, st;

	memset(chunk, '{', sizeof(chunk));
	snprintf(head, sizeof(head),
		 "POST /api/v1/reports HTTP/1.1\r\nHost: localhost\r\n"
		 "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		 MAX_BODY);
	for (unsigned i = 0; i < N; i++) {
		c[i] = raw_tls_connect(t->port, source(10 + i / 16, src), NULL,
				       NULL);
		if (c[i] && raw_tls_write(c[i], head, strlen(head)) == 0)
			open++;
	}
	if (open < N / 2)
		FAIL("only %u of %d connections were accepted", open, N);
	for (unsigned sent = 0; sent < PUSH && open; sent += CHUNK)
		for (unsigned i = 0; i < N; i++)
			if (c[i] && raw_tls_write(c[i], chunk, CHUNK)) {
				raw_tls_free(c[i]);
				c[i] = NULL;
				open--;
			}
	for (unsigned i = 0; i < N; i++) {
		/* still writable: its answer must have come, and be 401 */
		st = c[i] ? raw_tls_response(c[i], out, sizeof(out), 20000) : 0;
		raw_tls_free(c[i]);
		c[i] = NULL;
		if (st && st != 401)
			FAIL("an anonymous body got %d: %.200s", st, out);
	}
	st = request(t, source(30, src), "POST", "/api/v1/reports", NULL, NULL,
		     out, sizeof(out));
	if (st != 401)
		FAIL("an anonymous report got %d, want 401", st);
out:
	for (unsigned i = 0; i < N; i++)
		raw_tls_free(c[i]);
	return ret;
}

/*
 * The enrolment token asks for 300 host ids, then for one of them again:
 * 40 keys in all (enroll-max-keys), 403 enrolment_cap past them, 429
 * once the burst is spent; nothing else, and no key more in the store.
 */
static int enrolment_abuse(struct target *t, char *why, size_t cap)
{
	int counts[600] = { 0 }, st, ret = 0, before = keys_enrolled;
	char id[32], key[80], out[4096];
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int64_t keys = -1;

	for (int i = 0; i < 300; i++) {
		snprintf(id, sizeof(id), "ab%04d", i);
		st = enrol(t, NULL, id, i ? NULL : key);
		if (st != 200 && st != 403 && st != 429)
			FAIL("enrolment %d answered %d", i, st);
		counts[st]++;
	}
	st = enrol(t, NULL, "ab0000", NULL);
	if (st == 200)
		counts[200]++;
	/* the keys earlier attacks enrolled count too */
	if (counts[200] + before != ENROLL_CAP)
		FAIL("%d enrolments succeeded, want %d", counts[200],
		     ENROLL_CAP - before);
	if (!counts[403] || !counts[429])
		FAIL("no refusal past the cap (%d) or the burst (%d)",
		     counts[403], counts[429]);
	/* no credentials, or a host key: refused */
	st = request(t, NULL, "POST", "/api/v1/enroll", NULL, "{}", out,
		     sizeof(out));
	if (st != 401)
		FAIL("anonymous enrolment answered %d", st);
	st = request(t, NULL, "POST", "/api/v1/enroll", key,
		     "{\"host_id\":\"ff\"}", out, sizeof(out));
	if (st != 403)
		FAIL("enrolment with a host key answered %d", st);
	snprintf(out, sizeof(out), "%s/twilight.db", t->dir);
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT count(*) FROM host_keys", -1, &q,
			       NULL) ||
	    sqlite3_step(q) != SQLITE_ROW)
		FAIL("cannot count host keys: %s", sqlite3_errmsg(db));
	keys = sqlite3_column_int64(q, 0);
	if (keys != ENROLL_CAP)
		FAIL("%lld host keys stored, want %d", (long long)keys,
		     ENROLL_CAP);
out:
	sqlite3_finalize(q);
	sqlite3_close(db);
	return ret;
}

/* A count from the server's database (read-only, beside the server). */
static int64_t db_count(struct target *t, const char *sql)
{
	char path[128];
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int64_t n = -1;

	snprintf(path, sizeof(path), "%s/twilight.db", t->dir);
	if (!sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) &&
	    !sqlite3_prepare_v2(db, sql, -1, &q, NULL) &&
	    sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return n;
}

/*
 * POST a minimal version 2 report of @host_id under @batch_id with @key,
 * @members spliced in after "health" ("" for none): the status, the
 * answer in @out.
 */
static int post_report(struct target *t, const char *key, const char *host_id,
		       const char *batch_id, const char *hostname,
		       const char *members, char *out, size_t cap)
{
	char body[4096];

	snprintf(
		body, sizeof(body),
		"{\"v\":2,\"batch_id\":\"%s\",\"seq\":1,"
		"\"sent_time\":1764732000,\"host\":{\"host_id\":\"%s\","
		"\"hostname\":\"%s\",\"boot_id\":"
		"\"2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f\",\"kernel\":\"6.1.0\","
		"\"cgroup_mode\":\"v1\",\"agent_version\":\"0.2.0\","
		"\"catalog_version\":1},\"health\":{}%s}",
		batch_id, host_id, hostname, members);
	return request(t, NULL, "POST", "/api/v1/reports", key, body, out, cap);
}

/*
 * Two hosts send one batch id: each host's batch is its own and stored
 * (host B's was answered "duplicate" and dropped before); host A's
 * identical resend is 200 "duplicate"; another body under A's id is 409
 * batch_conflict (it was a silent "duplicate") and changes nothing.
 */
static int batch_id_reuse(struct target *t, char *why, size_t cap)
{
	static const char id[] = "0123456789abcdef0123456789abcdef";
	char ka[80], kb[80], out[4096];
	int ret = 0, st;

	if (enrol(t, NULL, "b1d0a1", ka) != 200 ||
	    enrol(t, NULL, "b1d0b2", kb) != 200)
		FAIL("cannot enrol the two hosts");
	st = post_report(t, ka, "b1d0a1", id, "a", "", out, sizeof(out));
	if (st != 200 || !strstr(out, "\"stored\""))
		FAIL("host A's batch answered %d: %.300s", st, out);
	st = post_report(t, kb, "b1d0b2", id, "b", "", out, sizeof(out));
	if (st != 200 || !strstr(out, "\"stored\""))
		FAIL("host B's batch under A's id answered %d: %.300s", st,
		     out);
	st = post_report(t, ka, "b1d0a1", id, "a", "", out, sizeof(out));
	if (st != 200 || !strstr(out, "\"duplicate\""))
		FAIL("host A's resend answered %d: %.300s", st, out);
	st = post_report(t, ka, "b1d0a1", id, "changed", "", out, sizeof(out));
	if (st != 409 || !strstr(out, "\"batch_conflict\"") ||
	    !strstr(out, "\"batch_id\""))
		FAIL("another body under A's id answered %d: %.300s", st, out);
	if (db_count(t, "SELECT count(*) FROM hosts WHERE hostname IN"
			" ('a', 'b')") != 2 ||
	    db_count(t, "SELECT count(*) FROM hosts WHERE hostname ="
			" 'changed'") != 0)
		FAIL("the hosts' rows are not A's and B's first batches");
out:
	return ret;
}

/*
 * A report whose times lie at 2^53 - 1 (the wire's largest integer): it
 * is stored, its rows' times at most the receive time + 5 minutes (they
 * were stored as sent: the export printed year 285,428,751), and the
 * host row says so (times_clamped, time_sent_max).
 */
static int future_times(struct target *t, char *why, size_t cap)
{
	static const char members[] =
		",\"warnings\":[{\"feature\":\"memcg_v1.soft_limit\","
		"\"text\":\"soft_limit_in_bytes is deprecated\",\"kmsg_seq\":1,"
		"\"mono_us\":1,\"time\":9007199254740991,\"level\":4,"
		"\"fields\":{},\"origin\":\"kmsg\"}],"
		"\"usage\":[{\"boot_id\":"
		"\"2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f\","
		"\"feature\":\"memcg_v1.soft_limit\","
		"\"file\":\"memory.soft_limit_in_bytes\",\"op\":\"write\","
		"\"use\":\"configures\",\"cgroup\":\"/a\",\"comm\":\"x\","
		"\"uid\":0,\"writer_cgroup\":\"/\",\"container\":\"\","
		"\"last_pid\":1,\"count\":1,\"failed\":0,"
		"\"condition_met\":0,\"first_seen\":9007199254740991,"
		"\"last_seen\":9007199254740991}]";
	char key[80], out[4096], sql[256];
	int64_t bound = (int64_t)time(NULL) + 3600;
	int ret = 0, st;

	if (enrol(t, NULL, "f07e", key) != 200)
		FAIL("cannot enrol");
	st = post_report(t, key, "f07e", "f07e0001", "f", members, out,
			 sizeof(out));
	if (st != 200 || !strstr(out, "\"stored\""))
		FAIL("the report answered %d: %.300s", st,
		     strstr(out, "\r\n\r\n") ? strstr(out, "\r\n\r\n") : out);
	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT max(last_seen) FROM usage WHERE host_id ="
		 " 'f07e') < %lld AND (SELECT max(time) FROM warnings WHERE"
		 " host_id = 'f07e') < %lld",
		 (long long)bound, (long long)bound);
	if (db_count(t, sql) != 1)
		FAIL("a time from the future was stored as sent");
	if (db_count(t, "SELECT times_clamped FROM hosts WHERE host_id ="
			" 'f07e'") != 3 ||
	    db_count(t, "SELECT time_sent_max FROM hosts WHERE host_id ="
			" 'f07e'") != 9007199254740991LL)
		FAIL("the host row does not say its times were clamped");
	/* and the host's detail says so too, the original beside it */
	st = request(t, NULL, "GET", "/api/v1/hosts/f07e", t->admin, NULL, out,
		     sizeof(out));
	if (st != 200 || !strstr(out, "\"times_clamped\":3") ||
	    !strstr(out, "\"time_sent_max\":9007199254740991"))
		FAIL("the host detail answered %d without the clamped times",
		     st);
out:
	return ret;
}

static int nul_in_path(struct target *t, char *why, size_t cap)
{
	static const char *const paths[] = {
		"/index.html%00.js",
		"/healthz%00",
		"/api/v1/hosts?cursor=%00",
		"/%00/../index.html",
	};
	char out[4096];
	int ret = 0;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int st = request(t, NULL, "GET", paths[i], NULL, NULL, out,
				 sizeof(out));

		if (st != 400 || strstr(out, "<html") ||
		    strstr(out, "<!doctype"))
			FAIL("GET %s answered %d: %.200s", paths[i], st, out);
	}
out:
	return ret;
}

/* 127.0.0.144 at max-per-ip with idle connections; 127.0.0.1 served. */
static int one_address_full(struct target *t, char *why, size_t cap)
{
	struct raw_tls *c[17] = { 0 };
	int ret = 0, n = 0;

	for (int i = 0; i < 17; i++) {
		c[i] = raw_tls_connect(t->port, "127.0.0.144", NULL, NULL);
		n += c[i] != NULL;
	}
	if (n != 16)
		FAIL("127.0.0.144 got %d connections, want max-per-ip (16)", n);
	if (!serves(t))
		FAIL("127.0.0.1 is not served while 127.0.0.144 is full");
out:
	for (int i = 0; i < 17; i++)
		raw_tls_free(c[i]);
	return ret;
}

/* openssl s_client with one TLS 1.2 cipher: whether the handshake worked. */
static bool s_client(struct target *t, const char *cipher)
{
	char cmd[512];

	snprintf(
		cmd, sizeof(cmd),
		"openssl s_client -connect 127.0.0.1:%u -tls1_2 -cipher %s"
		" -CAfile '%s' -verify_return_error </dev/null >/dev/null 2>&1",
		t->port, cipher, t->ca);
	return system(cmd) == 0;
}

static int tls12_cbc(struct target *t, char *why, size_t cap)
{
	static const char *const cbc[] = {
		"ECDHE-ECDSA-AES128-SHA",
		"ECDHE-ECDSA-AES256-SHA",
		"ECDHE-ECDSA-AES128-SHA256",
		"ECDHE-RSA-AES128-SHA",
		"AES128-SHA",
		"AES128-GCM-SHA256",
	};
	int ret = 0;

	if (system("command -v openssl >/dev/null"))
		FAIL("openssl(1) is missing (scripts/install-deps installs it)");
	for (size_t i = 0; i < sizeof(cbc) / sizeof(cbc[0]); i++)
		if (s_client(t, cbc[i]))
			FAIL("TLS 1.2 with %s was accepted", cbc[i]);
	if (!s_client(t, "ECDHE-ECDSA-AES128-GCM-SHA256") ||
	    !s_client(t, "ECDHE-ECDSA-CHACHA20-POLY1305"))
		FAIL("TLS 1.2 with an AEAD suite was refused");
out:
	return ret;
}

static const struct attack attacks[] = {
	{ "slow_headers", slow_headers, 32 },
	{ "slow_body", slow_body, 16 },
	{ "anonymous_bodies", anonymous_bodies, 256 },
	{ "batch_id_reuse", batch_id_reuse, 1 },
	{ "future_times", future_times, 1 },
	{ "enrolment_abuse", enrolment_abuse, 1 },
	{ "nul_in_path", nul_in_path, 1 },
	{ "one_address_full", one_address_full, 17 },
	{ "tls12_cbc", tls12_cbc, 1 },
};
#define N_ATTACKS (sizeof(attacks) / sizeof(attacks[0]))

/* ---- the runner ----------------------------------------------------- */

static void run_attack(void **state)
{
	const struct attack *a = *state;
	struct rss_watch w = { .pid = tg.pid };
	long base, bound, grew;
	char why[512] = "";
	int ret;

	base = rss_kib(tg.pid);
	assert_true(base > 0);
	atomic_store(&w.peak, base);
	assert_int_equal(pthread_create(&w.th, NULL, rss_sampler, &w), 0);
	ret = a->run(&tg, why, sizeof(why));
	atomic_store(&w.stop, 1);
	pthread_join(w.th, NULL);
	grew = atomic_load(&w.peak) - base;
	bound = (long)a->conns * PER_CONN_KIB + SLACK_KIB;
	printf("%s: RSS %ld KiB before, grew by %ld KiB (bound %ld)\n", a->name,
	       base, grew, bound);
	if (ret)
		fail_msg("%s: %s", a->name, why);
	if (grew > bound)
		fail_msg("%s: the server's RSS grew by %ld KiB, over %ld KiB",
			 a->name, grew, bound);
	assert_int_equal(waitpid(tg.pid, NULL, WNOHANG), 0);
	if (!serves(&tg))
		fail_msg("%s: the server no longer serves", a->name);
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[N_ATTACKS];

	if (argc != 2) {
		fprintf(stderr, "usage: %s TWILIGHT_SERVER\n", argv[0]);
		return 2;
	}
	server_bin = argv[1];
	for (size_t i = 0; i < N_ATTACKS; i++)
		tests[i] = (struct CMUnitTest){
			.name = attacks[i].name,
			.test_func = run_attack,
			.initial_state = (void *)&attacks[i],
		};
	return cmocka_run_group_tests(tests, start, stop);
}
