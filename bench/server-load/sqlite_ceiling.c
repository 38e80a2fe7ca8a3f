// SPDX-License-Identifier: GPL-2.0
/*
 * twl_bench_sqlite_ceiling: the peer runs for bench/server-load/run, in one
 * process, no HTTP, no TLS. Each mode gets a fresh database created with
 * the server's own migrations (twl_store_open), WAL, synchronous=FULL
 * (the server's durability: each COMMIT syncs the WAL), and stores the
 * same reports the load generator sends (report_gen.c),
 * agents round-robin, seq increasing:
 *
 *   raw    the ceiling of the issue: the report's usage rows upserted
 *          straight into SQLite, the plain way: one table of whole rows
 *          (raw_usage below, the server's usage table as it was before
 *          its migration 021 split it), INSERT ... ON CONFLICT DO UPDATE
 *          on the unique key, keeping the maximum (the server's rules),
 *          one BEGIN IMMEDIATE ... COMMIT per report. The server's writer
 *          stores the same values but finds rows by the hash of their
 *          key, and keeps their counts apart from their keys
 *          (server/README.md).
 *   store  the server's storage layer (twl_store_ingest_prepared: batch
 *          id, host, usage, rollups: the writer thread's work), one
 *          transaction per report; decode + validate + flatten (what the
 *          server's HTTP threads do: twl_wire_decode,
 *          twl_ingest_prepare_report) timed apart.
 *   group  the same with --group reports sharing one COMMIT, as the
 *          server's writer does under load.
 *
 * Each mode runs --duration seconds or --reports reports, whichever is
 * first. The last line is "RESULT key=value ...".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "store/ingest.h"
#include "report_gen.h"
#include "store/store.h"

struct opts {
	const char *dir, *modes, *pragma;
	unsigned agents, entries, group;
	double duration;
	unsigned long max_reports;
};

struct result {
	unsigned long reports;
	double secs; /* storing only */
	double parse_s; /* generate + decode + validate + flatten (store modes) */
	double cpu; /* CPU seconds (user + system) of the storing */
};

/* --pragma: run on every connection this process opens (an experiment:
 * e.g. a larger page cache for the server's storage layer, unchanged). */
static const char *extra_pragma;

static int apply_pragma(sqlite3 *db, const char **err, const void *api)
{
	return sqlite3_exec(db, extra_pragma, NULL, NULL, NULL);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A fresh database with the server's schema at dir/name. */
static int fresh_db(const struct opts *o, const char *name, char *path,
		    size_t cap)
{
	struct twl_store *s = NULL;
	char side[600];
	int ret;

	snprintf(path, cap, "%s/%s", o->dir, name);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	ret = twl_store_open(path, &s);
	if (ret) {
		fprintf(stderr,
			"sqlite-ceiling: cannot create %s with the server's migrations: %s\n",
			path, strerror(-ret));
		return ret;
	}
	twl_store_close(s);
	return 0;
}

/*
 * The raw peer's table, in the same database file as the server's schema:
 * a usage row whole, its key unique.
 */
static const char raw_table[] =
	"CREATE TABLE raw_usage (id INTEGER PRIMARY KEY,"
	" host_id TEXT NOT NULL, boot_id TEXT NOT NULL,"
	" feature_id TEXT NOT NULL, file TEXT NOT NULL, op TEXT NOT NULL,"
	" cgroup TEXT NOT NULL, comm TEXT NOT NULL, uid INT NOT NULL,"
	" writer_cgroup TEXT NOT NULL, container TEXT NOT NULL DEFAULT '',"
	" last_pid INT NOT NULL DEFAULT 0, count INT NOT NULL,"
	" failed INT NOT NULL DEFAULT 0, condition_met INT NOT NULL DEFAULT 0,"
	" first_seen INT NOT NULL, last_seen INT NOT NULL,"
	" UNIQUE (host_id, boot_id, feature_id, file, op, cgroup, comm, uid,"
	" writer_cgroup))";

/*
 * A usage row upserted the plain SQL way: cumulative counters keep their
 * maximum per key, so replays and resends change nothing. The server's
 * writer applies the same rules (server/store/sqlite/
 * store_sqlite_ingest_usage.c, U_UPD).
 */
static const char raw_upsert[] =
	"INSERT INTO raw_usage(host_id, boot_id, feature_id, file, op, cgroup,"
	" comm, uid, writer_cgroup, container, last_pid, count, failed,"
	" condition_met, first_seen, last_seen)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	" ?15, ?16) ON CONFLICT DO UPDATE SET"
	" container = CASE WHEN excluded.count >= count THEN excluded.container"
	" ELSE container END,"
	" last_pid = CASE WHEN excluded.count >= count THEN excluded.last_pid"
	" ELSE last_pid END,"
	" count = max(count, excluded.count), failed = max(failed, excluded.failed),"
	" condition_met = max(condition_met, excluded.condition_met),"
	" first_seen = min(first_seen, excluded.first_seen),"
	" last_seen = max(last_seen, excluded.last_seen)";

static bool more(const struct opts *o, unsigned long n, double t_start)
{
	return n < o->max_reports && (n % 64 || mono() - t_start < o->duration);
}

static int run_raw(const struct opts *o, int64_t t0, struct result *res)
{
	char path[600], host_id[65], boot_id[37];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct gen_usage u;
	unsigned long n = 0;
	double t, c;
	int rc, ret = -EIO;

	if (fresh_db(o, "raw.db", path, sizeof(path)))
		return -EIO;
	rc = sqlite3_open_v2(path, &db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(
			db,
			"PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;",
			NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, raw_table, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(db, raw_upsert, -1,
					SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	t = mono();
	c = cpu_seconds();
	for (n = 0; more(o, n, t); n++) {
		unsigned a = n % o->agents;
		uint64_t seq = n / o->agents + 1;

		gen_host_id(0, a, host_id);
		gen_boot_id(0, a, boot_id);
		rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			goto fail;
		for (unsigned j = 0; j < o->entries; j++) {
			gen_entry(a, seq, j, t0, &u);
			sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, boot_id, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, u.feature, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 4, u.file, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 5, u.op, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 6, u.cgroup, -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 7, u.comm, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 8, u.uid);
			sqlite3_bind_text(st, 9, u.writer_cgroup, -1,
					  SQLITE_STATIC);
			sqlite3_bind_text(st, 10, u.container, -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 11, u.last_pid);
			sqlite3_bind_int64(st, 12, u.count);
			sqlite3_bind_int64(st, 13, u.failed);
			sqlite3_bind_int64(st, 14, u.condition_met);
			sqlite3_bind_int64(st, 15, u.first_seen);
			sqlite3_bind_int64(st, 16, u.last_seen);
			rc = sqlite3_step(st);
			sqlite3_reset(st);
			if (rc != SQLITE_DONE)
				goto fail;
		}
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			goto fail;
	}
	res->secs = mono() - t;
	res->cpu = cpu_seconds() - c;
	res->reports = n;
	ret = 0;
fail:
	if (ret)
		fprintf(stderr,
			"sqlite-ceiling: raw upsert into %s failed: %s\n", path,
			db ? sqlite3_errmsg(db) : "cannot open");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

/* Store modes: group = 1 is one transaction per report. */
static int run_store(const struct opts *o, unsigned group, int64_t t0,
		     struct result *res)
{
	char path[600], *buf;
	size_t cap = 1024 + (size_t)o->entries * 640;
	struct twl_store *s = NULL;
	struct twl_verr err;
	struct twl_ingest **docs;
	unsigned long n = 0;
	double t, tp = 0, ts = 0, x, c, cs = 0;
	int ret;

	if (fresh_db(o, group > 1 ? "group.db" : "store.db", path,
		     sizeof(path)))
		return -EIO;
	ret = twl_store_open(path, &s);
	buf = malloc(cap);
	docs = calloc(group, sizeof(*docs));
	if (ret || !buf || !docs) {
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	t = mono();
	while (more(o, n, t)) {
		unsigned k, g = 0;

		x = mono();
		for (; g < group && n + g < o->max_reports; g++) {
			unsigned long m = n + g;
			int len = gen_report_json(0, m % o->agents,
						  m / o->agents + 1, o->entries,
						  t0, buf, cap);
			struct twl_wire_report r;
			char host_id[65];

			gen_host_id(0, m % o->agents, host_id);
			docs[g] = NULL;
			if (len > 0 &&
			    !twl_wire_decode(buf, (size_t)len, &r, &err) &&
			    twl_ingest_prepare_report(&r, host_id, &docs[g]))
				err = (struct twl_verr){ .code = "ENOMEM" };
			if (!docs[g]) {
				fprintf(stderr,
					"sqlite-ceiling: generated report invalid: %s %s\n",
					err.code, err.field);
				ret = -EINVAL;
				goto out;
			}
		}
		tp += mono() - x;
		x = mono();
		c = cpu_seconds();
		ret = twl_store_write_begin(s);
		for (k = 0; !ret && k < g; k++) {
			unsigned long m = n + k;
			char host_id[65];

			gen_host_id(0, m % o->agents, host_id);
			ret = twl_store_ingest_prepared(
				s, host_id, docs[k],
				t0 + (int64_t)(m / o->agents));
			ret = ret == 1 ? -EEXIST :
					 ret; /* every batch id is new */
		}
		ret = ret ? (twl_store_write_end(s, false), ret) :
			    twl_store_write_end(s, true);
		ts += mono() - x;
		cs += cpu_seconds() - c;
		for (k = 0; k < g; k++) {
			twl_ingest_free(docs[k]);
			docs[k] = NULL;
		}
		if (ret)
			goto out;
		n += g;
	}
	res->reports = n;
	res->secs = ts;
	res->cpu = cs;
	res->parse_s = tp;
out:
	if (ret)
		fprintf(stderr,
			"sqlite-ceiling: storing through the storage layer into %s failed: %s\n",
			path, strerror(-ret));
	for (unsigned k = 0; docs && k < group; k++)
		twl_ingest_free(docs[k]);
	free(docs);
	free(buf);
	twl_store_close(s);
	return ret;
}

static double per_s(const struct result *r)
{
	return r->reports && r->secs > 0 ? r->reports / r->secs : -1;
}

static double cpu_us(const struct result *r)
{
	return r->reports ? 1e6 * r->cpu / r->reports : -1;
}

static void print_mode(const char *what, const struct result *r,
		       unsigned entries)
{
	if (!r->reports)
		return;
	printf("%s: %lu reports in %.2f s = %.0f reports/s, %.0f rows/s; CPU %.0f us/report\n",
	       what, r->reports, r->secs, per_s(r), per_s(r) * entries,
	       cpu_us(r));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twl_bench_sqlite_ceiling --dir DIR [--agents 1000] [--entries 20]\n"
		"         [--duration 10] [--reports 1000000] [--group 64]\n"
		"         [--modes raw,store,group]\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .modes = "raw,store,group",
			  .agents = 1000,
			  .entries = 20,
			  .group = 64,
			  .duration = 10,
			  .max_reports = 1000000 };
	struct result raw = { 0 }, one = { 0 }, grp = { 0 };
	int64_t t0 = (int64_t)time(NULL) - 3600;

	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;

		if (!v) {
			usage(stderr);
			return 2;
		}
		if (!strcmp(k, "--dir"))
			o.dir = v;
		else if (!strcmp(k, "--agents"))
			o.agents = (unsigned)strtoul(v, &end, 10);
		else if (!strcmp(k, "--entries"))
			o.entries = (unsigned)strtoul(v, &end, 10);
		else if (!strcmp(k, "--pragma"))
			o.pragma = v;
		else if (!strcmp(k, "--modes"))
			o.modes = v;
		else if (!strcmp(k, "--group"))
			o.group = (unsigned)strtoul(v, &end, 10);
		else if (!strcmp(k, "--duration"))
			o.duration = strtod(v, &end);
		else if (!strcmp(k, "--reports"))
			o.max_reports = strtoul(v, &end, 10);
		else
			end = (char *)"bad";
		if (end && *end) {
			usage(stderr);
			return 2;
		}
	}
	if (!o.dir || o.agents < 1 || o.entries < 1 || o.entries > 4096 ||
	    o.group < 1 || o.group > 4096 || o.duration <= 0 ||
	    o.max_reports < 1) {
		usage(stderr);
		return 2;
	}
	twl_log_init("twl_bench_sqlite_ceiling", LOG_WARNING);
	if (o.pragma) {
		extra_pragma = o.pragma;
		sqlite3_auto_extension((void (*)(void))apply_pragma);
		printf("extra pragma on every connection: %s\n", o.pragma);
	}
	if (gen_init()) {
		fprintf(stderr,
			"sqlite-ceiling: the catalog has no feature with control files\n");
		return 2;
	}
	if ((strstr(o.modes, "raw") && run_raw(&o, t0, &raw)) ||
	    (strstr(o.modes, "store") && run_store(&o, 1, t0, &one)) ||
	    (strstr(o.modes, "group") && run_store(&o, o.group, t0, &grp)))
		return 1;
	print_mode("raw SQLite (ceiling)", &raw, o.entries);
	print_mode("storage layer, 1/tx ", &one, o.entries);
	{
		char label[64];

		snprintf(label, sizeof(label), "storage layer, %u/tx", o.group);
		print_mode(label, &grp, o.entries);
	}
	if (one.reports)
		printf("generate + decode + validate + flatten (twl_wire_decode, twl_ingest_prepare_report; apart from the above): %.0f us/report\n",
		       1e6 * one.parse_s / one.reports);
	printf("RESULT raw_reports_per_s=%.1f raw_rows_per_s=%.1f raw_cpu_us=%.1f "
	       "store_reports_per_s=%.1f store_cpu_us=%.1f group_reports_per_s=%.1f "
	       "group_cpu_us=%.1f parse_us=%.1f\n",
	       per_s(&raw), per_s(&raw) * o.entries, cpu_us(&raw), per_s(&one),
	       cpu_us(&one), per_s(&grp), cpu_us(&grp),
	       one.reports ? 1e6 * one.parse_s / one.reports : -1);
	return 0;
}
