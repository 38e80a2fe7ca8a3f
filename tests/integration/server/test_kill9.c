// SPDX-License-Identifier: GPL-2.0
/*
 * kill -9 of twilight-server during ingest, then restart: every batch the
 * server acknowledged (200 "stored") is present exactly once with all its
 * rows, and resending every acknowledged batch answers "duplicate" and
 * changes nothing. Uses the real binary, real TLS, keep-alive clients.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sqlite3.h>

#define N_AGENTS 8
#define MAX_ACKS 100000
#define WARNINGS_PER_BATCH 4
#define USAGE_PER_BATCH 16
#define ROUNDS 3

static const char *server_bin;
static char dir[64];
static uint16_t port;
static pid_t server_pid;
static volatile int stop_clients;

struct agent {
	int idx;
	char host_id[65];
	char key[80];
	int64_t *acked; /* seqs acknowledged as stored */
	size_t n_acked;
	size_t n_errors;
	int64_t next_seq;
};

static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t p;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	p = ntohs(a.sin_port);
	close(fd);
	return p;
}

static size_t sink(char *p, size_t sz, size_t n, void *arg)
{
	char *buf = arg;
	size_t have = strlen(buf), take = sz * n;

	if (take > 1023 - have)
		take = 1023 - have;
	memcpy(buf + have, p, take);
	buf[have + take] = 0;
	return sz * n;
}

/* One request on handle c (kept alive across calls). Returns HTTP status or -curl code. */
static long request(CURL *c, const char *method, const char *path,
		    const char *token, const char *body, char resp[1024])
{
	char url[256], auth[128], ca[128];
	struct curl_slist *h = NULL;
	long status = 0;
	CURLcode rc;

	resp[0] = 0;
	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", port, path);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	return rc == CURLE_OK ? status : -(long)rc;
}

static void start_server(void)
{
	char listen[64];
	CURL *c;
	char resp[1024];

	snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
	server_pid = fork();
	assert_true(server_pid >= 0);
	if (server_pid == 0) {
		execl(server_bin, server_bin, "--data-dir", dir, "--listen",
		      listen, "--host-rate", "1000000", "--host-burst",
		      "1000000", "--threads", "2", (char *)NULL);
		_exit(127);
	}
	c = curl_easy_init();
	for (int i = 0; i < 300; i++) {
		if (request(c, "GET", "/healthz", NULL, NULL, resp) == 200) {
			curl_easy_cleanup(c);
			return;
		}
		usleep(100000);
	}
	curl_easy_cleanup(c);
	fail_msg("server did not become healthy on port %u", port);
}

static char *make_report(const struct agent *a, int64_t seq)
{
	const char *boot = "11111111-2222-3333-4444-555555555555";
	json_t *r, *w = json_array(), *u = json_array();
	char batch[65];
	char *s;

	snprintf(batch, sizeof(batch), "%02x%030llx", a->idx,
		 (unsigned long long)seq);
	for (int i = 0; i < WARNINGS_PER_BATCH; i++)
		json_array_append_new(
			w,
			json_pack(
				"{ss ss sI sI sI si so ss}", "feature",
				"memcg_v1.soft_limit", "text",
				"soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality.",
				"kmsg_seq", (json_int_t)(seq * 100 + i),
				"mono_us", (json_int_t)(seq * 1000), "time",
				(json_int_t)1764732000 + seq, "level", 4,
				"fields", json_object(), "origin", "kmsg"));
	for (int i = 0; i < USAGE_PER_BATCH; i++) {
		char comm[16], cg[64];

		snprintf(comm, sizeof(comm), "w%lld", (long long)(seq % 1000));
		snprintf(cg, sizeof(cg), "/batch/%lld/%d", (long long)seq, i);
		json_array_append_new(
			u,
			json_pack(
				"{ss ss ss ss ss ss si ss ss si sI si si sI sI}",
				"boot_id", boot, "feature",
				"memcg_v1.soft_limit", "file",
				"memory.soft_limit_in_bytes", "op", "write",
				"cgroup", cg, "comm", comm, "uid", 0,
				"writer_cgroup", "/init.scope", "container", "",
				"last_pid", 1, "count", (json_int_t)seq,
				"failed", 0, "condition_met", 0, "first_seen",
				(json_int_t)1764732000, "last_seen",
				(json_int_t)1764732000 + seq));
	}
	r = json_pack("{si ss sI sI s{ss ss ss ss ss ss si} so so s{}}", "v", 1,
		      "batch_id", batch, "seq", (json_int_t)seq, "sent_time",
		      (json_int_t)1764732000 + seq, "host", "host_id",
		      a->host_id, "hostname", "h", "boot_id", boot, "kernel",
		      "6.1.0", "cgroup_mode", "v1", "agent_version", "0.1.0",
		      "catalog_version", 1, "warnings", w, "usage", u,
		      "health");
	assert_non_null(r);
	s = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return s;
}

static void *agent_main(void *arg)
{
	struct agent *a = arg;
	CURL *c = curl_easy_init();
	char resp[1024];

	for (int64_t seq = a->next_seq; !stop_clients && a->n_acked < MAX_ACKS;
	     seq++) {
		char *body = make_report(a, seq);
		long st = request(c, "POST", "/api/v1/reports", a->key, body,
				  resp);

		free(body);
		if (st == 200 && strstr(resp, "\"stored\"")) {
			a->acked[a->n_acked++] = seq;
		} else if (st < 0 || st >= 500) {
			a->n_errors++;
			break; /* server gone: stop, like an agent that spools */
		} else {
			fprintf(stderr, "agent %d: unexpected %ld %s\n", a->idx,
				st, resp);
			a->n_errors++;
			break;
		}
	}
	curl_easy_cleanup(c);
	return NULL;
}

static int64_t q(sqlite3 *db, const char *sql, const char *p1, int64_t p2,
		 int64_t p3)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, p1, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, p2);
	sqlite3_bind_int64(st, 3, p3);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Enrol every agent with the token the server wrote into its data dir. */
static void enrol_agents(struct agent *agents)
{
	char path[128], enrol[128], resp[1024], body[128];
	FILE *f;
	CURL *c;

	snprintf(path, sizeof(path), "%s/agent.token", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(enrol, sizeof(enrol), f));
	fclose(f);
	enrol[strcspn(enrol, "\n")] = 0;
	c = curl_easy_init();
	for (int i = 0; i < N_AGENTS; i++) {
		json_t *j;

		agents[i].idx = i;
		snprintf(agents[i].host_id, sizeof(agents[i].host_id), "%064x",
			 i + 1);
		snprintf(body, sizeof(body), "{\"host_id\":\"%s\"}",
			 agents[i].host_id);
		assert_int_equal(request(c, "POST", "/api/v1/enroll", enrol,
					 body, resp),
				 200);
		j = json_loads(resp, 0, NULL);
		assert_non_null(j);
		snprintf(agents[i].key, sizeof(agents[i].key), "%s",
			 json_string_value(json_object_get(j, "key")));
		json_decref(j);
		agents[i].acked = calloc(MAX_ACKS, sizeof(int64_t));
		agents[i].next_seq = 1;
		assert_non_null(agents[i].acked);
	}
	curl_easy_cleanup(c);
}

/*
 * One round: agents ingest, the server is killed -9 right after an
 * acknowledgement arrives (polling every millisecond), so that a server
 * that acknowledged before its COMMIT would lose acknowledged batches.
 * Returns the batches acknowledged in all rounds so far.
 */
static size_t kill_round(struct agent *agents, int round, size_t before)
{
	pthread_t th[N_AGENTS];
	size_t total = 0, errors = 0;
	int status;

	for (int i = 0; i < N_AGENTS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, agent_main,
						&agents[i]),
				 0);
	for (int i = 0; i < 10000; i++) {
		size_t n = 0;

		usleep(1000);
		for (int k = 0; k < N_AGENTS; k++)
			n += agents[k].n_acked;
		if (n >= before + 150)
			break;
	}
	assert_int_equal(kill(server_pid, SIGKILL), 0);
	assert_int_equal(waitpid(server_pid, &status, 0), server_pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	stop_clients = 1;
	for (int i = 0; i < N_AGENTS; i++) {
		pthread_join(th[i], NULL);
		total += agents[i].n_acked;
		errors += agents[i].n_errors;
		agents[i].n_errors = 0;
		agents[i].next_seq = (round + 1) * 10000 + 1;
	}
	stop_clients = 0;
	print_message(
		"round %d: %zu batches acknowledged in all, %zu clients cut off by SIGKILL\n",
		round, total, errors);
	assert_true(total > before);
	assert_true(errors > 0); /* the kill really hit ingest in flight */
	return total;
}

/* Every acknowledged batch is in the database with all its rows. */
static void check_acked_stored(sqlite3 *db, const struct agent *agents)
{
	for (int i = 0; i < N_AGENTS; i++) {
		const struct agent *a = &agents[i];

		for (size_t k = 0; k < a->n_acked; k++) {
			int64_t seq = a->acked[k];
			char batch[65];

			snprintf(batch, sizeof(batch), "%02x%030llx", a->idx,
				 (unsigned long long)seq);
			if (q(db,
			      "SELECT count(*) FROM batches WHERE batch_id = ?1 AND ?2 = ?3",
			      batch, 0, 0) != 1)
				fail_msg(
					"acknowledged batch %s missing after kill -9",
					batch);
			assert_int_equal(
				q(db,
				  "SELECT count(*) FROM warnings WHERE host_id = ?1 AND"
				  " kmsg_seq BETWEEN ?2 AND ?3",
				  a->host_id, seq * 100, seq * 100 + 99),
				WARNINGS_PER_BATCH);
			assert_int_equal(
				q(db,
				  "SELECT count(*) FROM usage WHERE host_id = ?1 AND"
				  " count = ?2 AND ?3 = 0",
				  a->host_id, seq, 0),
				USAGE_PER_BATCH);
		}
	}
}

static int64_t rows_in_all(sqlite3 *db)
{
	return q(
		db,
		"SELECT (SELECT count(*) FROM batches) + (SELECT count(*) FROM warnings)"
		" + (SELECT count(*) FROM usage) + (SELECT sum(uses) FROM feature_host)"
		" + ?2 + ?3 + length(?1)",
		"", 0, 0);
}

/* Resend every acknowledged batch: all duplicates, nothing changes. */
static void check_resend_is_duplicate(sqlite3 *db, struct agent *agents)
{
	int64_t rows_before = rows_in_all(db);
	char resp[1024];
	CURL *c = curl_easy_init();

	for (int i = 0; i < N_AGENTS; i++) {
		for (size_t k = 0; k < agents[i].n_acked; k++) {
			char *b = make_report(&agents[i], agents[i].acked[k]);

			assert_int_equal(request(c, "POST", "/api/v1/reports",
						 agents[i].key, b, resp),
					 200);
			assert_non_null(strstr(resp, "\"duplicate\""));
			free(b);
		}
	}
	curl_easy_cleanup(c);
	assert_int_equal(rows_in_all(db), rows_before);
}

static void test_kill9_during_ingest(void **state)
{
	static struct agent agents[N_AGENTS];
	char path[128];
	sqlite3 *db;
	size_t total = 0;
	int status;

	snprintf(dir, sizeof(dir), "/tmp/twl-kill9-XXXXXX");
	assert_non_null(mkdtemp(dir));
	port = free_port();
	start_server();
	enrol_agents(agents);
	for (int round = 0; round < ROUNDS; round++) {
		total = kill_round(agents, round, total);
		start_server();
	}
	snprintf(path, sizeof(path), "%s/twilight.db", dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	check_acked_stored(db, agents);
	check_resend_is_duplicate(db, agents);
	sqlite3_close(db);
	kill(server_pid, SIGTERM);
	waitpid(server_pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	server_pid = 0;
	for (int i = 0; i < N_AGENTS; i++)
		free(agents[i].acked);
}

/* Also after a failed assertion: no server or data dir is left behind. */
static int teardown(void **state)
{
	char *cmd;

	if (server_pid > 0 && kill(server_pid, SIGKILL) == 0)
		waitpid(server_pid, NULL, 0);
	server_pid = 0;
	if (dir[0] && asprintf(&cmd, "rm -rf '%s'", dir) > 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
		free(cmd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_kill9_during_ingest, teardown),
	};
	int fails;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH/twilight-server\n", argv[0]);
		return 2;
	}
	server_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	fails = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return fails;
}
