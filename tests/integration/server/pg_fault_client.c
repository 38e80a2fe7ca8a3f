// SPDX-License-Identifier: GPL-2.0
/*
 * The load of pg_faults.sh: AGENTS simulated agents post reports to one of
 * two twilight-servers, as the agent does with its spool: a batch the
 * server acknowledged (200 "stored" or "duplicate") is done, any other
 * answer or a cut connection sends the same body, under the same batch
 * id, again to the other server, until one acknowledges it.
 *
 *   pg_fault_client PHASE AGENTS TOKEN_FILE PROGRESS_FILE URL1 CA1 URL2 CA2
 *
 * PHASE (0..255) makes the host ids of this run its own. Every 100 ms
 * PROGRESS_FILE gets "acked N failed M": batches acknowledged, attempts
 * that were not. On SIGTERM every agent stops taking new batches, and
 * keeps resending the one it holds until acknowledged (at most
 * DRAIN_S seconds); then resends RESEND of its acknowledged batches, each
 * to the server it did not use for it, and wants "duplicate" for each.
 * Prints one line for the caller to compare with the database:
 *
 *   RESULT acked=N seq_sum=S stored=N1 duplicate=N2 failed=M resent=R
 *
 * With KILL=PID:N in the environment, the agent that receives the N-th
 * acknowledgement of the first server (URL1) kills process PID, that
 * server, at once (SIGKILL): a server killed
 * right after it answered, when a server that answered before its COMMIT
 * would lose what it answered.
 *
 * Every batch carries WARNINGS warnings and USAGE new usage keys of count
 * seq, so the database must hold exactly N batches, WARNINGS * N warnings
 * and USAGE * N usage rows whose counts sum to USAGE * S. Exits 1 when a
 * batch stayed unacknowledged, a resend was not a duplicate, or a server
 * answered a 4xx (a request the test got wrong).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#define MAX_AGENTS 64
#define WARNINGS 2
#define USAGE 4
#define RESEND 3
#define DRAIN_S 90

struct server {
	const char *url;
	const char *ca;
};

struct agent {
	int idx;
	char host_id[65];
	char key[128];
	int64_t acked, stored, duplicate, failed, seq_sum;
	int64_t last_acked[RESEND];
	int last_server[RESEND];
	int bad; /* a 4xx, an unacknowledged batch, a resend not duplicate */
	int done;
	pthread_t th;
};

static struct server servers[2];
static struct agent agents[MAX_AGENTS];
static int n_agents, phase;
static int64_t t0;
static volatile sig_atomic_t stopping;
static volatile time_t drain_end; /* set once stopping: give up then */
static int64_t first_acked, kill_after; /* acks of server 0 */
static pid_t kill_pid;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
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

/* POST @body to server @s's @path; the HTTP status or -1 (no answer). */
static long post(CURL *c, int s, const char *path, const char *auth,
		 const char *body, char resp[1024])
{
	char url[256], hdr[192];
	struct curl_slist *h = NULL;
	long status = 0;
	CURLcode rc;

	resp[0] = 0;
	snprintf(url, sizeof(url), "%s%s", servers[s].url, path);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", auth);
	h = curl_slist_append(h, hdr);
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, servers[s].ca);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	return rc == CURLE_OK ? status : -1;
}

/* The report of batch @seq of agent @a, in @buf (capped). */
static void report(const struct agent *a, int64_t seq, char *buf, size_t cap)
{
	const char *boot = "11111111-2222-3333-4444-555555555555";
	int64_t t = t0 + seq % 600;
	size_t n;

	n = (size_t)snprintf(
		buf, cap,
		"{\"v\":1,\"batch_id\":\"%02x%02x%028llx\",\"seq\":%lld,"
		"\"sent_time\":%lld,\"host\":{\"host_id\":\"%s\",\"hostname\":"
		"\"h\",\"boot_id\":\"%s\",\"kernel\":\"6.1.0\",\"cgroup_mode\":"
		"\"v1\",\"agent_version\":\"0.1.0\",\"catalog_version\":1},"
		"\"warnings\":[",
		phase, a->idx, (unsigned long long)seq, (long long)seq,
		(long long)t, a->host_id, boot);
	for (int i = 0; i < WARNINGS && n < cap; i++)
		n += (size_t)snprintf(
			buf + n, cap - n,
			"%s{\"feature\":\"memcg_v1.soft_limit\",\"text\":"
			"\"soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality.\","
			"\"kmsg_seq\":%lld,\"mono_us\":%lld,\"time\":%lld,"
			"\"level\":4,\"fields\":{},\"origin\":\"kmsg\"}",
			i ? "," : "", (long long)(seq * 100 + i),
			(long long)(seq * 1000), (long long)t);
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "],\"usage\":[");
	for (int i = 0; i < USAGE && n < cap; i++)
		n += (size_t)snprintf(
			buf + n, cap - n,
			"%s{\"boot_id\":\"%s\",\"feature\":\"memcg_v1.soft_limit\","
			"\"file\":\"memory.soft_limit_in_bytes\",\"op\":\"write\","
			"\"cgroup\":\"/b/%lld/%d\",\"comm\":\"w\",\"uid\":0,"
			"\"writer_cgroup\":\"/init.scope\",\"container\":\"\","
			"\"last_pid\":1,\"count\":%lld,\"failed\":0,"
			"\"condition_met\":0,\"first_seen\":%lld,\"last_seen\":%lld}",
			i ? "," : "", boot, (long long)seq, i, (long long)seq,
			(long long)t0, (long long)t);
	if (n < cap)
		snprintf(buf + n, cap - n, "],\"health\":{}}");
}

/*
 * Send batch @seq until a server acknowledges it, starting with *@s and
 * moving to the other after each failure. 1 "stored", 2 "duplicate",
 * 0 not acknowledged by the deadline, -1 a 4xx.
 */
static int deliver(struct agent *a, CURL *c, int64_t seq, int *s)
{
	static __thread char body[4096];
	char resp[1024];

	report(a, seq, body, sizeof(body));
	for (;;) {
		long st = post(c, *s, "/api/v1/reports", a->key, body, resp);

		if (st == 200 && strstr(resp, "\"stored\""))
			return 1;
		if (st == 200 && strstr(resp, "\"duplicate\""))
			return 2;
		if (st >= 400 && st < 500 && st != 429) {
			fprintf(stderr, "agent %d batch %lld: %ld %s\n", a->idx,
				(long long)seq, st, resp);
			return -1;
		}
		__atomic_add_fetch(&a->failed, 1, __ATOMIC_RELAXED);
		*s = !*s;
		if (drain_end && time(NULL) > drain_end)
			return 0;
		usleep(50000);
	}
}

static void *agent_main(void *arg)
{
	struct agent *a = arg;
	CURL *c = curl_easy_init();
	int s = a->idx % 2;

	for (int64_t seq = 1; c && !stopping; seq++) {
		int r = deliver(a, c, seq, &s);

		if (r <= 0) {
			fprintf(stderr, "agent %d: batch %lld %s\n", a->idx,
				(long long)seq,
				r ? "refused" : "never acknowledged");
			a->bad = 1;
			break;
		}
		a->last_acked[seq % RESEND] = seq;
		a->last_server[seq % RESEND] = s;
		a->seq_sum += seq;
		if (r == 1)
			a->stored++;
		else
			a->duplicate++;
		__atomic_add_fetch(&a->acked, 1, __ATOMIC_RELAXED);
		if (s == 0 && kill_pid > 0 &&
		    __atomic_add_fetch(&first_acked, 1, __ATOMIC_RELAXED) ==
			    kill_after)
			kill(kill_pid, SIGKILL);
	}
	curl_easy_cleanup(c);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Enrol every agent through server 0, or server 1 if 0 does not answer. */
static int enrol(const char *token_file)
{
	char tok[128] = "", body[128], resp[1024];
	FILE *f = fopen(token_file, "r");
	CURL *c = curl_easy_init();
	int ret = 0;

	if (!f || !fgets(tok, sizeof(tok), f) || !c) {
		fprintf(stderr, "cannot read %s\n", token_file);
		ret = -1;
	}
	if (f)
		fclose(f);
	tok[strcspn(tok, "\n")] = 0;
	for (int i = 0; !ret && i < n_agents; i++) {
		struct agent *a = &agents[i];
		json_t *j;
		long st;

		a->idx = i;
		snprintf(a->host_id, sizeof(a->host_id), "%02x%062x", phase,
			 i + 1);
		snprintf(body, sizeof(body), "{\"host_id\":\"%s\"}",
			 a->host_id);
		st = post(c, 0, "/api/v1/enroll", tok, body, resp);
		if (st != 200)
			st = post(c, 1, "/api/v1/enroll", tok, body, resp);
		j = st == 200 ? json_loads(resp, 0, NULL) : NULL;
		if (!j || !json_string_value(json_object_get(j, "key"))) {
			fprintf(stderr, "enrolment of agent %d: %ld %s\n", i,
				st, resp);
			ret = -1;
		} else {
			snprintf(a->key, sizeof(a->key), "%s",
				 json_string_value(json_object_get(j, "key")));
		}
		json_decref(j);
	}
	curl_easy_cleanup(c);
	return ret;
}

/* Resend recent acknowledged batches to the other server: "duplicate". */
static int64_t resend(struct agent *a)
{
	CURL *c = curl_easy_init();
	int64_t n = 0;

	for (int k = 0; c && k < RESEND && !a->bad; k++) {
		int s = !a->last_server[k];
		int64_t seq = a->last_acked[k];

		if (!seq)
			continue;
		if (deliver(a, c, seq, &s) != 2) {
			fprintf(stderr,
				"agent %d: acknowledged batch %lld resent: not a duplicate\n",
				a->idx, (long long)seq);
			a->bad = 1;
		}
		n++;
	}
	curl_easy_cleanup(c);
	return n;
}

static void progress(const char *file)
{
	int64_t acked = 0, failed = 0;
	char tmp[512];
	FILE *f;

	for (int i = 0; i < n_agents; i++) {
		acked += __atomic_load_n(&agents[i].acked, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&agents[i].failed, __ATOMIC_RELAXED);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "acked %lld failed %lld\n", (long long)acked,
		(long long)failed);
	if (fclose(f) == 0)
		rename(tmp, file);
}

static int run(const char *progress_file)
{
	int64_t acked = 0, sum = 0, stored = 0, dup = 0, failed = 0, re = 0;
	int bad = 0, alive;

	for (int i = 0; i < n_agents; i++)
		if (pthread_create(&agents[i].th, NULL, agent_main, &agents[i]))
			return 1;
	do {
		usleep(100000);
		if (stopping && !drain_end)
			drain_end = time(NULL) + DRAIN_S;
		progress(progress_file);
		alive = 0;
		for (int i = 0; i < n_agents; i++)
			alive += !__atomic_load_n(&agents[i].done,
						  __ATOMIC_ACQUIRE);
	} while (!stopping || alive);
	for (int i = 0; i < n_agents; i++)
		pthread_join(agents[i].th, NULL);
	drain_end = time(NULL) + DRAIN_S;
	for (int i = 0; i < n_agents; i++) {
		struct agent *a = &agents[i];

		re += resend(a);
		acked += a->acked;
		sum += a->seq_sum;
		stored += a->stored;
		dup += a->duplicate;
		failed += a->failed;
		bad |= a->bad;
	}
	progress(progress_file);
	printf("RESULT acked=%lld seq_sum=%lld stored=%lld duplicate=%lld failed=%lld resent=%lld\n",
	       (long long)acked, (long long)sum, (long long)stored,
	       (long long)dup, (long long)failed, (long long)re);
	return bad;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };

	if (argc != 9) {
		fprintf(stderr,
			"usage: %s PHASE AGENTS TOKEN_FILE PROGRESS_FILE URL1 CA1 URL2 CA2\n",
			argv[0]);
		return 2;
	}
	phase = atoi(argv[1]) & 0xff;
	n_agents = atoi(argv[2]);
	if (n_agents < 1 || n_agents > MAX_AGENTS) {
		fprintf(stderr, "AGENTS: 1..%d\n", MAX_AGENTS);
		return 2;
	}
	servers[0] = (struct server){ argv[5], argv[6] };
	servers[1] = (struct server){ argv[7], argv[8] };
	if (getenv("KILL") && sscanf(getenv("KILL"), "%d:%lld", &kill_pid,
				     (long long *)&kill_after) != 2) {
		fprintf(stderr, "KILL: PID:N\n");
		return 2;
	}
	t0 = (int64_t)time(NULL) - 3600;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (enrol(argv[3]))
		return 1;
	return run(argv[4]);
}
