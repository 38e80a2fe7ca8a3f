// SPDX-License-Identifier: GPL-2.0
/*
 * twl_bench_server_load: simulated agents against a running twilight-server
 * over HTTPS (tls_client.c over epoll, one keep-alive connection per agent). Each
 * agent enrols through POST /api/v1/enroll with the enrolment token, then
 * posts wire-format v1 reports of --entries usage entries (valid for the
 * shared validator: checked before the run) to POST /api/v1/reports.
 *
 *   --rate 0   closed loop: every agent posts its next report as soon as
 *              the previous one is answered (maximum throughput).
 *   --rate R   open loop: R reports/s in total, agent a's k-th report due at
 *              start + (k * agents + a) / R; latency is counted from the due
 *              time, so a server that falls behind shows it (no coordinated
 *              omission). The service time (sent -> answered) is shown too.
 *
 * A warm-up (not counted) precedes the measured phase, which ends after
 * --duration seconds or --reports answered reports, whichever is first;
 * in-flight requests are then drained. Any answer but 200 "stored" is an
 * error and makes the exit status 1. The last line is machine-readable:
 * "RESULT key=value ...".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/err.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "report_gen.h"
#include "tls_client.h"

#define MAX_ENTRIES 4096
#define REQ_HEAD_CAP 512 /* request line and headers */
#define TRANSFER_TIMEOUT 60.0 /* s, as the libcurl version had */

enum phase { PH_ENROLL, PH_REPORT };

struct agent {
	struct tlc_conn c;
	unsigned idx;
	const char *bearer, *path;
	unsigned long conns_seen; /* c.connects already counted */
	char host_id[65];
	char key[128]; /* per-host key from enrolment */
	uint64_t seq; /* last seq sent */
	uint64_t k_next; /* next schedule slot of this agent (open loop) */
	bool busy;
	double t_sched, t_start;
	char *body; /* the request's body */
	int body_len;
	char *req; /* request line, headers and body */
};

struct opts {
	const char *url, *cacert, *token_file;
	unsigned agents, entries;
	double rate, duration, warmup;
	unsigned long max_reports;
	int server_pid; /* 0 = unknown: no server CPU figures */
};

/* Thread groups of the server whose time is shown apart. */
enum { G_WRITER, G_HTTP, G_CKPT, G_N };

/*
 * Seconds per thread group: cpu = user + system time (/proc/PID/task/TID/
 * stat); run = on a CPU and wait = runnable but waiting for one (the
 * scheduler's /proc/PID/task/TID/schedstat; sched is false where the
 * kernel has none).
 */
struct thread_times {
	double cpu[G_N], run[G_N], wait[G_N];
	bool sched;
};

struct run {
	struct opts o;
	struct tlc_ctx tlc;
	struct agent *ag;
	size_t body_cap;
	uint32_t nonce;
	int64_t t0;
	enum phase phase;
	double t_begin; /* schedule origin (start of warm-up) */
	double t_measure; /* start of the measured phase */
	bool measuring, stopping;
	unsigned long done, errors, in_flight, new_conns;
	unsigned long stored_all; /* "stored" answers, warm-up and drain too */
	unsigned long status_count[600];
	unsigned printed_errors;
	double *lat_sched, *lat_service;
	size_t n_lat, cap_lat;
	uint64_t cursor; /* next global schedule slot (open loop) */
	/* CPU at the measured phase's start */
	double c_client0, cl_run0, cl_wait0;
	struct thread_times s0;
	bool have_s0;
	int epfd;
	double next_timeout_scan;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* schedstat of path: run and wait seconds. Returns 0 or -errno. */
static int schedstat(const char *path, double *run, double *wait)
{
	unsigned long long r, w;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu", &r, &w);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*run = (double)r / 1e9;
	*wait = (double)w / 1e9;
	return 0;
}

/*
 * Times of process pid's threads, split into libmicrohttpd's threads
 * ("MHD-*"), the WAL checkpointer ("twl-checkpoint") and the others (the
 * group-commit writer "twl-writer" and its sync thread "twl-sync"; the
 * main thread only waits). Returns 0 or -errno.
 */
static int server_times(int pid, struct thread_times *t)
{
	char path[64], buf[1024], comm[32];
	struct dirent *de;
	DIR *d;
	long hz = sysconf(_SC_CLK_TCK);

	memset(t, 0, sizeof(*t));
	t->sched = true;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long ut = 0, st = 0;
		double run = 0, wait = 0;
		char *p;
		FILE *f;
		int g;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		/* pid (comm) state ... field 14 utime, 15 stime */
		if (!p || !(p = strrchr(buf, ')')) ||
		    sscanf(p + 2,
			   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			   &ut, &st) != 2)
			continue;
		snprintf(comm, sizeof(comm), "%.*s",
			 (int)(p - strchr(buf, '(') - 1), strchr(buf, '(') + 1);
		g = !strncmp(comm, "MHD", 3)	    ? G_HTTP :
		    !strcmp(comm, "twl-checkpoint") ? G_CKPT :
						      G_WRITER;
		t->cpu[g] += (double)(ut + st) / hz;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat",
			 pid, de->d_name);
		if (schedstat(path, &run, &wait))
			t->sched = false;
		t->run[g] += run;
		t->wait[g] += wait;
	}
	closedir(d);
	return 0;
}

/* Point agent a at an endpoint, with the bearer credential it sends. */
static void agent_setup(struct agent *a, const char *path, const char *bearer)
{
	a->path = path;
	a->bearer = bearer;
}

static int finish(struct run *r, struct agent *a, double now);

/* The exchange of agent a failed: count it, say why (5 at most). */
static void transfer_failed(struct run *r, struct agent *a, int err)
{
	a->busy = false;
	r->in_flight--;
	r->errors++;
	if (r->printed_errors++ < 5)
		fprintf(stderr,
			"server-load: agent %u: transfer failed: %s: %s\n",
			a->idx, a->c.why ? a->c.why : "?", strerror(-err));
}

/* Act on what tlc_request/tlc_progress returned for agent a. */
static int advanced(struct run *r, struct agent *a, int pr)
{
	if (pr < 0) {
		transfer_failed(r, a, pr);
		return 0;
	}
	return pr == 1 ? finish(r, a, mono()) : 0;
}

static int agent_start(struct run *r, struct agent *a, double sched)
{
	int head;

	if (r->phase == PH_ENROLL) {
		a->body_len = snprintf(a->body, r->body_cap,
				       "{\"host_id\":\"%s\"}", a->host_id);
	} else {
		a->seq++;
		a->body_len = gen_report_json(r->nonce, a->idx, a->seq,
					      r->o.entries, r->t0, a->body,
					      r->body_cap);
		if (a->body_len < 0)
			return a->body_len;
	}
	head = snprintf(a->req, REQ_HEAD_CAP,
			"POST %s HTTP/1.1\r\nHost: %s\r\n"
			"Authorization: Bearer %s\r\n"
			"Content-Type: application/json\r\n"
			"Content-Length: %d\r\n\r\n",
			a->path, r->tlc.authority, a->bearer, a->body_len);
	if (head < 0 || head >= REQ_HEAD_CAP)
		return -ENOSPC;
	memcpy(a->req + head, a->body, (size_t)a->body_len);
	a->t_sched = sched;
	a->t_start = mono();
	a->busy = true;
	r->in_flight++;
	return advanced(r, a,
			tlc_request(&r->tlc, &a->c, a->req,
				    (size_t)head + (size_t)a->body_len));
}

/* Due time of agent a's k-th report (open loop). */
static double due(const struct run *r, unsigned a, uint64_t k)
{
	return r->t_begin + ((double)k * r->o.agents + a) / r->o.rate;
}

static void record(struct run *r, struct agent *a, double now)
{
	if (r->n_lat < r->cap_lat) {
		r->lat_sched[r->n_lat] = now - a->t_sched;
		r->lat_service[r->n_lat] = now - a->t_start;
		r->n_lat++;
	}
}

/* Agent a's answer is complete: check it, count it, start what is next. */
static int finish(struct run *r, struct agent *a, double now)
{
	const char *resp = tlc_body(&a->c, NULL);
	long status = a->c.status;
	unsigned long conns = a->c.connects - a->conns_seen;
	bool ok;

	a->conns_seen = a->c.connects;
	a->busy = false;
	r->in_flight--;
	if (status >= 0 && status < 600)
		r->status_count[status]++;
	if (r->phase == PH_ENROLL) {
		json_t *j = json_loads(resp, 0, NULL);
		const char *key = json_string_value(json_object_get(j, "key"));

		if (status == 200 && key && strlen(key) < sizeof(a->key)) {
			r->done++;
			snprintf(a->key, sizeof(a->key), "%s", key);
		} else {
			r->errors++;
			if (r->printed_errors++ < 5)
				fprintf(stderr,
					"server-load: enrolment of agent %u: HTTP %ld %s\n",
					a->idx, status, resp);
		}
		json_decref(j);
		return 0;
	}

	ok = status == 200 && strstr(resp, "\"stored\"");
	r->stored_all += ok;
	if (!ok) {
		r->errors++;
		if (r->printed_errors++ < 5)
			fprintf(stderr,
				"server-load: report of agent %u seq %" PRIu64
				": HTTP %ld %s\n",
				a->idx, a->seq, status, resp);
	}
	if (r->measuring && !r->stopping) {
		r->new_conns += conns;
		if (ok) {
			r->done++;
			record(r, a, now);
		}
	}
	a->k_next++;
	if (r->stopping)
		return 0;
	if (r->o.rate <= 0)
		return agent_start(r, a, now);
	if (due(r, a->idx, a->k_next) <= now)
		return agent_start(r, a, due(r, a->idx, a->k_next));
	return 0;
}

/* Once a second: fail the exchanges older than TRANSFER_TIMEOUT. */
static void expire(struct run *r, double now)
{
	if (now < r->next_timeout_scan)
		return;
	r->next_timeout_scan = now + 1;
	for (unsigned i = 0; i < r->o.agents; i++) {
		struct agent *a = &r->ag[i];

		if (a->busy && now - a->t_start > TRANSFER_TIMEOUT) {
			a->c.why = "no answer within 60 s";
			tlc_close(&a->c);
			transfer_failed(r, a, -ETIMEDOUT);
		}
	}
}

/*
 * Drive the exchanges (edge-triggered epoll: the cost per wake-up follows
 * the sockets that are ready, not the agent count) until stop() says so or
 * until is reached.
 */
static int pump(struct run *r, double until, bool (*stop)(struct run *, double))
{
	struct epoll_event evs[64];
	int ret = 0, n;

	for (;;) {
		double now = mono(), wait_s;

		if (stop && stop(r, now))
			return 0;
		if (now >= until)
			return -ETIMEDOUT;
		expire(r, now);
		/* open loop: start every report that is due and whose agent is idle */
		while (r->phase == PH_REPORT && r->o.rate > 0 && !r->stopping) {
			uint64_t c = r->cursor;
			struct agent *a = &r->ag[c % r->o.agents];

			if (r->t_begin + (double)c / r->o.rate > now)
				break;
			r->cursor++;
			if (!a->busy && due(r, a->idx, a->k_next) <= now) {
				ret = agent_start(r, a,
						  due(r, a->idx, a->k_next));
				if (ret)
					return ret;
			}
		}
		wait_s = 0.1;
		if (r->phase == PH_REPORT && r->o.rate > 0 && !r->stopping)
			wait_s = r->t_begin + (double)r->cursor / r->o.rate -
				 now;
		if (wait_s > 0.1)
			wait_s = 0.1;
		n = epoll_wait(r->epfd, evs, 64,
			       wait_s > 0 ? 1 + (int)(wait_s * 1000) : 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int k = 0; k < n; k++) {
			struct agent *a = evs[k].data.ptr;

			if (!a->busy)
				continue; /* e.g. a kept connection closing */
			ret = advanced(r, a, tlc_progress(&r->tlc, &a->c));
			if (ret)
				return ret;
		}
	}
}

static bool enroll_done(struct run *r, double now)
{
	return r->in_flight == 0;
}

static bool measure_done(struct run *r, double now)
{
	if (!r->measuring && now >= r->t_begin + r->o.warmup) {
		r->measuring = true;
		r->t_measure = now;
		r->done = 0;
		r->new_conns = 0;
		r->c_client0 = cpu_seconds();
		if (schedstat("/proc/self/schedstat", &r->cl_run0,
			      &r->cl_wait0))
			r->cl_run0 = -1;
		r->have_s0 = r->o.server_pid &&
			     !server_times(r->o.server_pid, &r->s0);
	}
	return r->measuring && (now >= r->t_measure + r->o.duration ||
				r->done >= r->o.max_reports);
}

static bool drained(struct run *r, double now)
{
	return r->in_flight == 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int read_token(const char *path, char *out, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = twl_read_file(path, 4096, &buf, &len);

	if (ret)
		return ret;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
		       buf[len - 1] == ' '))
		len--;
	if (!len || len >= cap) {
		free(buf);
		return -EINVAL;
	}
	memcpy(out, buf, len);
	out[len] = 0;
	free(buf);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twl_bench_server_load --url https://127.0.0.1:PORT --cacert CA.pem\n"
		"         --token-file AGENT.token [--agents 1000] [--entries 20]\n"
		"         [--rate R (reports/s, 0 = closed loop)] [--duration 10] [--warmup 2]\n"
		"         [--reports 1000000] [--server-pid PID]\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .agents = 1000,
			    .entries = 20,
			    .duration = 10,
			    .warmup = 2,
			    .max_reports = 1000000 };
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;

		if (!v)
			goto bad;
		i++;
		if (!strcmp(k, "--url"))
			o->url = v;
		else if (!strcmp(k, "--cacert"))
			o->cacert = v;
		else if (!strcmp(k, "--token-file"))
			o->token_file = v;
		else if (!strcmp(k, "--agents"))
			o->agents = (unsigned)strtoul(v, &end, 10);
		else if (!strcmp(k, "--entries"))
			o->entries = (unsigned)strtoul(v, &end, 10);
		else if (!strcmp(k, "--rate"))
			o->rate = strtod(v, &end);
		else if (!strcmp(k, "--duration"))
			o->duration = strtod(v, &end);
		else if (!strcmp(k, "--warmup"))
			o->warmup = strtod(v, &end);
		else if (!strcmp(k, "--reports"))
			o->max_reports = strtoul(v, &end, 10);
		else if (!strcmp(k, "--server-pid"))
			o->server_pid = (int)strtol(v, &end, 10);
		else
			goto bad;
		if (end && *end)
			goto bad;
	}
	if (!o->url || !o->cacert || !o->token_file || o->agents < 1 ||
	    o->agents > 100000 || o->entries < 1 || o->entries > MAX_ENTRIES ||
	    o->rate < 0 || o->duration <= 0 || o->warmup < 0 ||
	    o->max_reports < 1 || o->max_reports > 100000000)
		goto bad;
	return 0;
bad:
	usage(stderr);
	return -EINVAL;
}

/* Build one report and run it through the shared validator. */
static int check_report(const struct run *r)
{
	struct twl_verr err = { 0 };
	char *buf = malloc(r->body_cap);
	json_t *doc;
	int n;

	if (!buf)
		return -ENOMEM;
	n = gen_report_json(r->nonce, 0, 1, r->o.entries, r->t0, buf,
			    r->body_cap);
	doc = n > 0 ? twl_report_parse(buf, (size_t)n, &err) : NULL;
	free(buf);
	if (!doc) {
		fprintf(stderr,
			"server-load: the generated report is not valid wire format: %s at '%s': %s\n",
			err.code, err.field, err.reason);
		return -EINVAL;
	}
	json_decref(doc);
	return 0;
}

/* What the measured phase cost, taken at its end (-1: not known). */
struct figures {
	double t_end, secs; /* end of the measured phase, its length */
	double c0, c1; /* load generator CPU at its start and end */
	double cl_run, cl_wait; /* load generator schedstat at its end */
	double sh, sw, sc; /* server CPU: HTTP threads, writer, checkpointer */
	struct thread_times s1; /* server thread times during it */
};

/*
 * Options, catalog, enrolment token and the report generator's nonce and
 * time origin; a report of the chosen size is checked to be valid wire
 * format. Returns 0, or 2 (the exit status) after saying what is wrong.
 */
static int init_run(struct run *r, int argc, char **argv, char *token,
		    size_t cap)
{
	char hex[9];
	int ret;

	if (parse_args(argc, argv, &r->o))
		return 2;
	if (gen_init()) {
		fprintf(stderr,
			"server-load: the catalog has no feature with control files\n");
		return 2;
	}
	ret = read_token(r->o.token_file, token, cap);
	if (ret) {
		fprintf(stderr,
			"server-load: cannot read the enrolment token %s: %s\n",
			r->o.token_file, strerror(-ret));
		return 2;
	}
	if (twl_random_hex(hex, 4)) {
		fprintf(stderr, "server-load: getrandom failed\n");
		return 2;
	}
	r->nonce = (uint32_t)strtoul(hex, NULL, 16);
	r->t0 = (int64_t)time(NULL) - 3600;
	r->body_cap = 1024 + (size_t)r->o.entries * 640;
	if (check_report(r))
		return 2;
	return 0;
}

/*
 * The latency arrays, epoll set, TLS context and the agents with their
 * buffers, each pointed at the enrolment endpoint. Returns 0 or -1; what
 * was made is freed by free_run().
 */
static int alloc_run(struct run *r, const char *token)
{
	int ret;

	r->cap_lat = r->o.max_reports;
	r->lat_sched = calloc(r->cap_lat, sizeof(double));
	r->lat_service = calloc(r->cap_lat, sizeof(double));
	r->ag = calloc(r->o.agents, sizeof(*r->ag));
	if (!r->lat_sched || !r->lat_service || !r->ag)
		return -1;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		return -1;
	ret = tlc_ctx_init(&r->tlc, r->o.url, r->o.cacert, r->epfd);
	if (ret) {
		fprintf(stderr,
			"server-load: %s: %s (the URL must be https://HOST:PORT "
			"with a numeric host; the CA file a PEM certificate)\n",
			ret == -EINVAL ? r->o.url : r->o.cacert,
			strerror(-ret));
		ERR_print_errors_fp(stderr);
		return -1;
	}
	r->phase = PH_ENROLL;
	for (unsigned i = 0; i < r->o.agents; i++) {
		struct agent *a = &r->ag[i];

		a->idx = i;
		tlc_conn_init(&a->c, a);
		gen_host_id(r->nonce, i, a->host_id);
		a->body = malloc(r->body_cap);
		a->req = malloc(REQ_HEAD_CAP + r->body_cap);
		if (!a->body || !a->req)
			return -1;
		agent_setup(a, "/api/v1/enroll", token);
	}
	return 0;
}

/* Say what the run will do (agent 0's body is a scratch buffer still). */
static void print_plan(struct run *r)
{
	printf("server-load: %u agents, %u usage entries per report (%zu bytes), %s, warm-up %.0f s, "
	       "then %.0f s or %lu reports\n",
	       r->o.agents, r->o.entries,
	       (size_t)gen_report_json(r->nonce, 0, 1, r->o.entries, r->t0,
				       r->ag[0].body, r->body_cap),
	       r->o.rate > 0 ? "open loop" :
			       "closed loop (as fast as answered)",
	       r->o.warmup, r->o.duration, r->o.max_reports);
	if (r->o.rate > 0)
		printf("server-load: offered load %.0f reports/s (%.2f per agent per second)\n",
		       r->o.rate, r->o.rate / r->o.agents);
}

/*
 * Phase 1, enrolment: one new TLS connection per agent, kept for the
 * reports. Returns 0 when every agent has its key, else -1.
 */
static int enroll(struct run *r)
{
	double t = mono();
	int ret;

	for (unsigned i = 0; i < r->o.agents; i++)
		if (agent_start(r, &r->ag[i], t))
			return -1;
	ret = pump(r, t + 120, enroll_done);
	if (ret || r->errors || r->done != r->o.agents) {
		fprintf(stderr,
			"server-load: enrolment failed (%lu of %u enrolled, %lu errors%s)\n",
			r->done, r->o.agents, r->errors,
			ret == -ETIMEDOUT ? ", timed out" : "");
		return -1;
	}
	printf("server-load: enrolled %u agents in %.2f s\n", r->o.agents,
	       mono() - t);
	return 0;
}

/*
 * The CPU and scheduler figures at the end of the measured phase, as
 * differences from those measure_done() took at its start.
 */
static void take_figures(struct run *r, struct figures *f)
{
	f->t_end = mono();
	f->c1 = cpu_seconds();
	f->c0 = r->c_client0;
	if (schedstat("/proc/self/schedstat", &f->cl_run, &f->cl_wait) ||
	    r->cl_run0 < 0)
		f->cl_run = -1;
	if (r->have_s0 && !server_times(r->o.server_pid, &f->s1)) {
		for (int g = 0; g < G_N; g++) {
			f->s1.cpu[g] -= r->s0.cpu[g];
			f->s1.run[g] -= r->s0.run[g];
			f->s1.wait[g] -= r->s0.wait[g];
		}
		f->s1.sched = f->s1.sched && r->s0.sched;
		f->sh = f->s1.cpu[G_HTTP];
		f->sw = f->s1.cpu[G_WRITER];
		f->sc = f->s1.cpu[G_CKPT];
	} else {
		f->sh = f->sw = f->sc = -1;
		f->s1.sched = false;
	}
}

/*
 * Phase 2, reports: warm-up, then the measured phase, then the drain of
 * what is still in flight. Returns 0 or -1 if the run failed.
 */
static int run_reports(struct run *r, struct figures *f)
{
	int ret;

	r->phase = PH_REPORT;
	for (unsigned i = 0; i < r->o.agents; i++)
		agent_setup(&r->ag[i], "/api/v1/reports", r->ag[i].key);
	r->done = 0;
	r->t_begin = mono();
	if (r->o.rate <= 0) {
		for (unsigned i = 0; i < r->o.agents; i++)
			if (agent_start(r, &r->ag[i], r->t_begin))
				return -1;
	}
	ret = pump(r, r->t_begin + r->o.warmup + r->o.duration + 600,
		   measure_done);
	take_figures(r, f);
	if (ret) {
		fprintf(stderr, "server-load: run failed: %s\n",
			strerror(-ret));
		return -1;
	}
	f->secs = f->t_end - r->t_measure;
	r->stopping = true;
	ret = pump(r, f->t_end + 60, drained);
	if (ret)
		fprintf(stderr,
			"server-load: %lu requests still in flight after 60 s\n",
			r->in_flight);
	return 0;
}

/* Where the CPU time of the measured phase went, if it is known. */
static void print_cpu(const struct run *r, const struct figures *f)
{
	double secs = f->secs, sh = f->sh, sw = f->sw, sc = f->sc;

	printf("load generator CPU : %.2f s in the measured %.2f s (%.0f%% of one core)\n",
	       f->c1 - f->c0, secs, 100 * (f->c1 - f->c0) / secs);
	if (sw >= 0 && r->done)
		printf("server CPU         : %.2f s (%.0f%% of one core): %.0f us per report = "
		       "writer %.0f us + HTTP threads %.0f us + WAL checkpointer %.0f us\n",
		       sh + sw + sc, 100 * (sh + sw + sc) / secs,
		       1e6 * (sh + sw + sc) / r->done, 1e6 * sw / r->done,
		       1e6 * sh / r->done, 1e6 * sc / r->done);
	if (f->s1.sched && f->cl_run >= 0)
		printf("thread time        : share of the measured wall time on a CPU / runnable but "
		       "waiting for one: writer %.0f%% / %.0f%%, HTTP threads %.0f%% / %.0f%%, "
		       "checkpointer %.0f%% / %.0f%%, load generator %.0f%% / %.0f%%\n",
		       100 * f->s1.run[G_WRITER] / secs,
		       100 * f->s1.wait[G_WRITER] / secs,
		       100 * f->s1.run[G_HTTP] / secs,
		       100 * f->s1.wait[G_HTTP] / secs,
		       100 * f->s1.run[G_CKPT] / secs,
		       100 * f->s1.wait[G_CKPT] / secs,
		       100 * (f->cl_run - r->cl_run0) / secs,
		       100 * (f->cl_wait - r->cl_wait0) / secs);
}

/* The measured phase's figures for a person (latencies sorted first). */
static void print_figures(struct run *r, const struct figures *f)
{
	size_t n = r->n_lat;
	double secs = f->secs;

	qsort(r->lat_sched, n, sizeof(double), cmp_double);
	qsort(r->lat_service, n, sizeof(double), cmp_double);
	printf("reports answered   : %lu in %.2f s (%lu errors; new connections opened in the "
	       "measured phase: %lu)\n",
	       r->done, secs, r->errors, r->new_conns);
	printf("throughput         : %.0f reports/s, %.0f rows/s\n",
	       r->done / secs, r->done * (double)r->o.entries / secs);
	printf("latency%s: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
	       r->o.rate > 0 ? " (from due) " : "            ",
	       pct(r->lat_sched, n, 0.5) * 1e3,
	       pct(r->lat_sched, n, 0.99) * 1e3,
	       n ? r->lat_sched[n - 1] * 1e3 : 0);
	if (r->o.rate > 0)
		printf("service (sent->ok) : p50 %.2f ms, p99 %.2f ms\n",
		       pct(r->lat_service, n, 0.5) * 1e3,
		       pct(r->lat_service, n, 0.99) * 1e3);
	print_cpu(r, f);
	for (int s = 0; s < 600; s++)
		if (r->status_count[s] && s != 200)
			printf("HTTP %d            : %lu answers\n", s,
			       r->status_count[s]);
}

/* The last, machine-readable line (after print_figures sorted). */
static void print_result(const struct run *r, const struct figures *f)
{
	size_t n = r->n_lat;
	double secs = f->secs, sh = f->sh, sw = f->sw, sc = f->sc;

	printf("RESULT mode=%s agents=%u entries=%u rate=%.0f reports=%lu seconds=%.3f "
	       "reports_per_s=%.1f rows_per_s=%.1f p50_ms=%.3f p99_ms=%.3f "
	       "service_p50_ms=%.3f service_p99_ms=%.3f errors=%lu new_conns=%lu "
	       "server_cpu_us=%.1f writer_cpu_us=%.1f client_cpu_us=%.1f "
	       "writer_run_pct=%.1f writer_wait_pct=%.1f stored_all=%lu\n",
	       r->o.rate > 0 ? "open" : "closed", r->o.agents, r->o.entries,
	       r->o.rate, r->done, secs, r->done / secs,
	       r->done * (double)r->o.entries / secs,
	       pct(r->lat_sched, n, 0.5) * 1e3,
	       pct(r->lat_sched, n, 0.99) * 1e3,
	       pct(r->lat_service, n, 0.5) * 1e3,
	       pct(r->lat_service, n, 0.99) * 1e3, r->errors, r->new_conns,
	       sw >= 0 && r->done ? 1e6 * (sh + sw + sc) / r->done : -1,
	       sw >= 0 && r->done ? 1e6 * sw / r->done : -1,
	       r->done ? 1e6 * (f->c1 - f->c0) / r->done : -1,
	       f->s1.sched ? 100 * f->s1.run[G_WRITER] / secs : -1,
	       f->s1.sched ? 100 * f->s1.wait[G_WRITER] / secs : -1,
	       r->stored_all);
}

/* Close the connections and free what alloc_run() made (any part of it). */
static void free_run(struct run *r)
{
	if (r->ag) {
		for (unsigned i = 0; i < r->o.agents; i++) {
			tlc_close(&r->ag[i].c);
			free(r->ag[i].body);
			free(r->ag[i].req);
		}
	}
	tlc_ctx_fini(&r->tlc);
	if (r->epfd > 0)
		close(r->epfd);
	free(r->ag);
	free(r->lat_sched);
	free(r->lat_service);
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	struct figures f = { .cl_run = -1 };
	char token[256];
	int status = 1;

	if (init_run(&r, argc, argv, token, sizeof(token)))
		return 2;
	if (alloc_run(&r, token))
		goto out;
	print_plan(&r);
	if (enroll(&r) || run_reports(&r, &f))
		goto out;
	print_figures(&r, &f);
	print_result(&r, &f);
	status = r.errors ? 1 : 0;
out:
	free_run(&r);
	return status;
}
