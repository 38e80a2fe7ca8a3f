// SPDX-License-Identifier: GPL-2.0
/*
 * twl_bench_pg_ceiling: the PostgreSQL peer of bench/server-load/run (PG=1),
 * in one process, no HTTP, no TLS. The database at --uri (empty, or made
 * by an earlier run) gets the server's schema through its own migrations
 * (twl_store_open); then the same reports the load generator sends
 * (report_gen.c, agents round-robin, seq increasing) have their usage rows
 * upserted straight into it through libpq, the plain way: INSERT ... ON
 * CONFLICT on the unique key DO UPDATE keeping the maximum (the server's
 * rules), one BEGIN ... COMMIT per report, in pipeline mode with --window
 * reports in flight (the fastest of the ways tried: one round trip per
 * window). The row id, which the server computes from the key's hash,
 * is a hash of the key here too.
 *
 * Runs --duration seconds; the last line is "RESULT key=value ...".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <libpq-fe.h>

#include <twilight/util.h>

#include "report_gen.h"
#include "store/store.h"

#define NPARAM 17

static const char upsert[] =
	"INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
	" comm, uid, writer_cgroup, container, last_pid, count, failed,"
	" condition_met, first_seen, last_seen, id)"
	" VALUES($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9, $10, $11::bigint,"
	" $12::bigint, $13::bigint, $14::bigint, $15::bigint, $16::bigint,"
	" $17::bigint)"
	" ON CONFLICT (host_id, boot_id, feature_id, file, op, cgroup, comm,"
	" uid, writer_cgroup) DO UPDATE SET"
	" container = CASE WHEN excluded.count >= usage.count"
	" THEN excluded.container ELSE usage.container END,"
	" last_pid = CASE WHEN excluded.count >= usage.count"
	" THEN excluded.last_pid ELSE usage.last_pid END,"
	" count = greatest(usage.count, excluded.count),"
	" failed = greatest(usage.failed, excluded.failed),"
	" condition_met = greatest(usage.condition_met, excluded.condition_met),"
	" first_seen = least(usage.first_seen, excluded.first_seen),"
	" last_seen = greatest(usage.last_seen, excluded.last_seen)";

struct opts {
	const char *uri;
	unsigned agents, entries, window;
	double duration;
};

static double now_s(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* FNV-1a of the key's strings: the row id (the server hashes the key). */
static int64_t key_id(const char *const *v)
{
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < 9; i++) {
		for (const char *p = v[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	return (int64_t)(h >> 1);
}

/* Queue report @seq of agent @a: BEGIN, its upserts, COMMIT. */
static int send_report(PGconn *c, const struct opts *o, unsigned a,
		       uint64_t seq, int64_t t0)
{
	char host[65], boot[37], num[7][24];
	struct gen_usage u;
	const char *v[NPARAM];
	int ok;

	gen_host_id(0, a, host);
	gen_boot_id(0, a, boot);
	ok = PQsendQueryParams(c, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
	for (unsigned j = 0; ok && j < o->entries; j++) {
		gen_entry(a, seq, j, t0, &u);
		snprintf(num[0], sizeof(num[0]), "%u", u.uid);
		snprintf(num[1], sizeof(num[1]), "%u", u.last_pid);
		snprintf(num[2], sizeof(num[2]), "%" PRId64, u.count);
		snprintf(num[3], sizeof(num[3]), "%" PRId64, u.failed);
		snprintf(num[4], sizeof(num[4]), "%" PRId64, u.condition_met);
		snprintf(num[5], sizeof(num[5]), "%" PRId64, u.first_seen);
		snprintf(num[6], sizeof(num[6]), "%" PRId64, u.last_seen);
		v[0] = host, v[1] = boot, v[2] = u.feature, v[3] = u.file;
		v[4] = u.op, v[5] = u.cgroup, v[6] = u.comm, v[7] = num[0];
		v[8] = u.writer_cgroup, v[9] = u.container, v[10] = num[1];
		v[11] = num[2], v[12] = num[3], v[13] = num[4];
		v[14] = num[5], v[15] = num[6];
		{
			const char *key[9] = { v[0], v[1], v[2], v[3], v[4],
					       v[5], v[6], v[7], v[8] };
			char id[24];

			snprintf(id, sizeof(id), "%" PRId64, key_id(key));
			v[16] = id;
			ok = PQsendQueryPrepared(c, "up", NPARAM, v, NULL, NULL,
						 0);
		}
	}
	if (ok)
		ok = PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL,
				       0);
	return ok ? 0 : -EIO;
}

/* Read every result up to the pipeline's sync; 0 when all succeeded. */
static int drain(PGconn *c)
{
	PGresult *r;
	int ret = 0;

	for (;;) {
		r = PQgetResult(c);
		if (!r && PQstatus(c) != CONNECTION_OK)
			return -EIO;
		if (!r)
			continue; /* the end of one statement's results */
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			return ret;
		}
		if (PQresultStatus(r) != PGRES_COMMAND_OK && !ret) {
			fprintf(stderr, "pg-ceiling: %s",
				PQresultErrorMessage(r));
			ret = -EIO;
		}
		PQclear(r);
	}
}

static int run(PGconn *c, const struct opts *o, unsigned long *reports)
{
	int64_t t0 = (int64_t)time(NULL) - 3600;
	double start = now_s(CLOCK_MONOTONIC);
	unsigned long n = 0;

	if (PQenterPipelineMode(c) != 1)
		return -EIO;
	while (now_s(CLOCK_MONOTONIC) - start < o->duration) {
		for (unsigned k = 0; k < o->window; k++, n++)
			if (send_report(c, o, n % o->agents, n / o->agents + 1,
					t0))
				return -EIO;
		if (PQpipelineSync(c) != 1 || drain(c))
			return -EIO;
	}
	*reports = n;
	return PQexitPipelineMode(c) == 1 ? 0 : -EIO;
}

static int parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--uri"))
			o->uri = v;
		else if (!strcmp(k, "--agents"))
			o->agents = (unsigned)atoi(v);
		else if (!strcmp(k, "--entries"))
			o->entries = (unsigned)atoi(v);
		else if (!strcmp(k, "--window"))
			o->window = (unsigned)atoi(v);
		else if (!strcmp(k, "--duration"))
			o->duration = atof(v);
		else
			return -EINVAL;
	}
	return argc % 2 == 1 && o->uri && o->agents && o->entries &&
			       o->entries <= 4096 && o->window &&
			       o->duration > 0 ?
		       0 :
		       -EINVAL;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.agents = 1000, .entries = 20, .window = 64, .duration = 10
	};
	struct twl_store *s = NULL;
	unsigned long n = 0;
	struct rusage ru;
	double t, cpu;
	PGconn *c;
	int ret;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: twl_bench_pg_ceiling --uri URI [--agents 1000] [--entries 20] [--window 64] [--duration 10]\n");
		return 2;
	}
	twl_log_init("twl_bench_pg_ceiling", LOG_WARNING);
	if (gen_init() || twl_store_open(o.uri, &s)) {
		fprintf(stderr, "pg-ceiling: no catalog, or no schema at %s\n",
			o.uri);
		return 2;
	}
	twl_store_close(s);
	c = PQconnectdb(o.uri);
	if (PQstatus(c) != CONNECTION_OK ||
	    PQresultStatus(PQprepare(c, "up", upsert, NPARAM, NULL)) !=
		    PGRES_COMMAND_OK) {
		fprintf(stderr, "pg-ceiling: %s", PQerrorMessage(c));
		return 1;
	}
	t = now_s(CLOCK_MONOTONIC);
	ret = run(c, &o, &n);
	t = now_s(CLOCK_MONOTONIC) - t;
	getrusage(RUSAGE_SELF, &ru);
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	PQfinish(c);
	if (ret) {
		fprintf(stderr, "pg-ceiling: the upserts failed\n");
		return 1;
	}
	printf("raw PostgreSQL (libpq pipeline, %u reports in flight, 1 tx/report): %lu reports in %.2f s = %.0f reports/s, %.0f rows/s; client CPU %.0f us/report\n",
	       o.window, n, t, n / t, n * o.entries / t, 1e6 * cpu / n);
	printf("RESULT raw_reports_per_s=%.1f raw_rows_per_s=%.1f raw_cpu_us=%.1f\n",
	       n / t, n * o.entries / t, 1e6 * cpu / n);
	return 0;
}
