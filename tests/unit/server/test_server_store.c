// SPDX-License-Identifier: GPL-2.0
/*
 * Storage layer and pure helpers: migrations (fresh, idempotent, a newer
 * database refused), catalog seed loaded, ingest in savepoints (a failing
 * batch rolls back alone, replays return 1, counters keep their maximum),
 * token and key storage, retention; config parsing; rate limiter.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sqlite3.h>

#include <twilight/catalog.h>

#include "http/auth.h"
#include "store/sqlite/checkpoint.h"
#include "config.h"
#include "harness.h"
#include "store/ingest.h"
#include "store/sqlite/migrate.h"
#include "http/ratelimit.h"
#include "shim_vfs.h"
#include "store/store.h"
#include "store/sqlite/store_sqlite_internal.h" /* twl_store_admin_write_lock */

static char dir[64];
static char dbpath[128];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/twl-store-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int64_t q(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void test_migrations(void **state)
{
	struct twl_store *s = NULL;
	sqlite3 *db;

	unlink(dbpath);
	assert_true(twl_migrate_latest() >= 1);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_schema_version(s), twl_migrate_latest());
	twl_store_close(s);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	assert_int_equal(
		q("SELECT count(*) FROM sqlite_master WHERE name IN ('hosts','host_keys',"
		  "'tokens','batches','warnings','unknown_deprecations','usage',"
		  "'census_knobs','feature_host')"),
		9);
	/* the catalog seed matches the compiled catalog */
	assert_int_equal(q("SELECT count(*) FROM catalog_feature"),
			 (int64_t)twl_catalog_count());
	/* reopening applies nothing twice */
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("SELECT count(*) FROM catalog_feature"),
			 (int64_t)twl_catalog_count());
	/* a database from a newer binary is refused, not damaged */
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(twl_store_open(dbpath, &s), -EPROTO);
	assert_int_equal(q("PRAGMA user_version"), 999);
	unlink(dbpath);
}

static json_t *report(const char *host, const char *batch)
{
	return make_report(host, batch, 1);
}

static void test_ingest_savepoints(void **state)
{
	const char *host = "0123";
	struct twl_store *s = NULL;
	json_t *a, *b, *bad;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	a = report(host, "aa01");
	b = report(host, "aa02");
	/* A test-only trigger makes any warning with text "boom" fail, after
	 * the batch id, host and earlier rows of that batch were written. */
	{
		sqlite3 *db;

		assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
		assert_int_equal(
			sqlite3_exec(
				db,
				"CREATE TRIGGER boom BEFORE INSERT ON warnings WHEN NEW.text = 'boom'"
				" BEGIN SELECT RAISE(ABORT, 'boom'); END",
				NULL, NULL, NULL),
			SQLITE_OK);
		sqlite3_close(db);
	}
	bad = report(host, "aa03");
	json_object_set_new(bad, "seq", json_integer(99));
	json_object_set_new(json_array_get(json_object_get(bad, "warnings"), 1),
			    "text", json_string("boom"));

	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, host, a, 1000), 0);
	assert_int_equal(twl_store_ingest(s, host, a, 1000),
			 1); /* same batch in one commit */
	assert_true(twl_store_ingest(s, host, bad, 1000) <
		    0); /* rolled back alone */
	assert_int_equal(twl_store_ingest(s, host, b, 1000), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
	assert_int_equal(q("SELECT count(*) FROM batches"), 2);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'aa03'"), 0);
	assert_int_equal(q("SELECT max(last_seq) FROM hosts"), 1);
	assert_int_equal(
		q("SELECT count(*) FROM warnings"),
		(int64_t)json_array_size(json_object_get(a, "warnings")));
	json_decref(bad);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'aa01'"), 1);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'zz99'"), 0);
	/* a rolled-back transaction leaves nothing */
	assert_int_equal(twl_store_write_begin(s), 0);
	bad = report(host, "aa04");
	json_object_set_new(json_object_get(bad, "host"), "boot_id",
			    json_string("other-boot"));
	assert_int_equal(twl_store_ingest(s, host, bad, 1000), 0);
	assert_int_equal(twl_store_write_end(s, false), 0);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'aa04'"), 0);
	json_decref(bad);
	/* retention: batch ids older than batch_days go, newer stay */
	assert_int_equal(twl_store_prune(s, 1800000000, 35, 0, NULL), 0);
	assert_int_equal(q("SELECT count(*) FROM batches"), 0);
	assert_true(q("SELECT count(*) FROM usage") >
		    0); /* data_days 0 = keep */
	assert_int_equal(twl_store_prune(s, 1800000000, 35, 1, NULL), 0);
	assert_int_equal(q("SELECT count(*) FROM usage"), 0);
	json_decref(a);
	json_decref(b);
	twl_store_close(s);
	unlink(dbpath);
}

static void exec_sql(const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static void ingest_at(struct twl_store *s, const char *host, json_t *r,
		      int64_t now)
{
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, host, r, now), 0);
	assert_int_equal(twl_store_write_end(s, true), 0);
}

static void ingest_one(struct twl_store *s, const char *host, json_t *r)
{
	ingest_at(s, host, r, 1000);
}

/*
 * The host row: a report with the same name, kernel and cgroup mode
 * updates it without naming them (W_HOST_TOUCH), one that changes them
 * rewrites them (W_HOST_UPSERT); last_seen never goes back, a report
 * without a census keeps the last one, and the indexes stay consistent.
 */
static void test_host_row(void **state)
{
	const char *host = "0123";
	struct twl_store *s = NULL;
	json_t *r, *h;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report(host, "cc01");
	ingest_at(s, host, r, 1000);
	json_decref(r);
	assert_int_equal(q("SELECT last_seen FROM hosts"), 1000);
	assert_int_equal(q("SELECT census_json IS NOT NULL FROM hosts"), 1);

	/* same descriptive fields, new health, no census */
	r = report(host, "cc02");
	json_object_set_new(json_object_get(r, "health"), "records_lost",
			    json_integer(7));
	json_object_del(r, "census");
	ingest_at(s, host, r, 2000);
	json_decref(r);
	assert_int_equal(q("SELECT last_seen FROM hosts"), 2000);
	assert_int_equal(q("SELECT records_lost FROM hosts"), 7);
	assert_int_equal(q("SELECT census_json IS NOT NULL FROM hosts"), 1);

	/* renamed, new kernel and cgroup mode, stored late */
	r = report(host, "cc03");
	h = json_object_get(r, "host");
	json_object_set_new(h, "hostname", json_string("renamed"));
	json_object_set_new(h, "kernel", json_string("6.12.0-test"));
	json_object_set_new(h, "cgroup_mode", json_string("v2"));
	ingest_at(s, host, r, 1500);
	assert_int_equal(q("SELECT last_seen FROM hosts"), 2000);
	assert_int_equal(q("SELECT count(*) FROM hosts INDEXED BY hosts_kernel"
			   " WHERE kernel = '6.12.0-test'"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM hosts INDEXED BY"
			   " hosts_hostname WHERE hostname = 'renamed'"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM hosts INDEXED BY"
			   " hosts_cgroup_mode WHERE cgroup_mode = 'v2'"),
			 1);

	/*
	 * and again, unchanged: in place, last_seen moves on in its hour;
	 * no statement names last_hour (migration 008)
	 */
	exec_sql("CREATE TABLE hour_sets(n INT);"
		 " CREATE TRIGGER hour_sets AFTER UPDATE OF last_hour ON hosts"
		 " BEGIN INSERT INTO hour_sets VALUES(1); END");
	json_object_set_new(r, "batch_id", json_string("cc04"));
	ingest_at(s, host, r, 2500);
	assert_int_equal(q("SELECT count(*) FROM hosts INDEXED BY"
			   " hosts_last_hour WHERE last_hour = 0"
			   " AND last_seen = 2500"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 0);
	/* the next hour: the upsert moves the host to that hour's bucket */
	json_object_set_new(r, "batch_id", json_string("cc05"));
	ingest_at(s, host, r, 3700);
	assert_int_equal(q("SELECT last_hour FROM hosts"), 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 1);
	assert_int_equal(q("SELECT hosts FROM host_hour WHERE hour = 0"), 0);
	assert_int_equal(
		q("SELECT hosts FROM host_hour WHERE cgroup_mode = 'v2'"
		  " AND hour = 1"),
		1);
	/* late, from the hour before: the upsert, last_seen stays */
	json_object_set_new(r, "batch_id", json_string("cc06"));
	ingest_at(s, host, r, 3000);
	json_decref(r);
	assert_int_equal(q("SELECT last_seen FROM hosts"), 3700);
	assert_int_equal(q("SELECT last_hour FROM hosts"), 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 2);
	assert_int_equal(q("SELECT sum(hosts) FROM host_hour"), 1);
	assert_int_equal(q("SELECT count(*) FROM hosts"), 1);
	assert_int_equal(q("SELECT count(*) FROM pragma_integrity_check"
			   " WHERE integrity_check = 'ok'"),
			 1);
	twl_store_close(s);
	unlink(dbpath);
}

/* The example report again, each usage counter times ten. */
static json_t *report_x10(const char *host, const char *batch)
{
	json_t *r = report(host, batch), *u;
	size_t i;

	json_array_foreach(json_object_get(r, "usage"), i, u)
		json_object_set_new(
			u, "count",
			json_integer(10 * json_integer_value(json_object_get(
						  u, "count"))));
	return r;
}

/*
 * Usage rows are addressed by the hash of their key (migration 004): a
 * new key lands at its hash; a key whose hash id is taken gets another
 * id; a row under another id (a collision, a row copied by 004) is found
 * through the unique key and updated, never duplicated.
 */
static void test_usage_ids(void **state)
{
	const char *host = "0123";
	struct twl_store *s = NULL;
	struct twl_ingest *in;
	int64_t h[3], uses, first;
	char sql[512];
	json_t *r, *u;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report(host, "bb01");
	assert_int_equal(twl_ingest_prepare(r, host, &in), 0);
	assert_int_equal(in->n_usage, 3);
	for (int i = 0; i < 3; i++) {
		h[i] = in->usage_id[i];
		assert_true(h[i] == twl_usage_key_hash(host, &in->usage[i]));
	}
	/*
	 * Stored ids depend on the hash: pin it (FNV-1a as ingest.h says,
	 * computed apart in Python), so that a change is a decision.
	 */
	assert_true(h[0] == INT64_C(-3940864479740376979));
	twl_ingest_free(in);
	/* the hash is the key's: another host, another id */
	assert_int_equal(twl_ingest_prepare(r, "0124", &in), 0);
	assert_true(in->usage_id[0] != h[0]);
	twl_ingest_free(in);

	/* entry 2's id is taken by a row of another key before it comes */
	snprintf(
		sql, sizeof(sql),
		"INSERT INTO usage(id, host_id, boot_id, feature_id, file, op,"
		" cgroup, comm, uid, writer_cgroup, count, first_seen, last_seen)"
		" VALUES(%lld, '0123', 'b', 'f', 'x', 'read', '', 'squatter', 0,"
		" '', 5, 1, 1)",
		(long long)h[2]);
	exec_sql(sql);
	ingest_one(s, host, r);
	json_decref(r);
	uses = q("SELECT sum(uses) FROM feature_host");
	assert_int_equal(q("SELECT count(*) FROM usage"), 4);
	snprintf(sql, sizeof(sql),
		 "SELECT id = %lld FROM usage WHERE comm = 'systemd'",
		 (long long)h[0]);
	assert_int_equal(q(sql), 1);
	snprintf(sql, sizeof(sql),
		 "SELECT id = %lld FROM usage WHERE comm = 'kubelet'",
		 (long long)h[1]);
	assert_int_equal(q(sql), 1);
	snprintf(sql, sizeof(sql),
		 "SELECT id != %lld FROM usage WHERE comm = 'cadvisor'",
		 (long long)h[2]);
	assert_int_equal(q(sql), 1);

	/* entry 0 moves to another id, like a row copied by migration 004 */
	snprintf(sql, sizeof(sql), "UPDATE usage SET id = 42 WHERE id = %lld",
		 (long long)h[0]);
	exec_sql(sql);
	r = report_x10(host, "bb02");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM usage"), 4);
	assert_int_equal(q("SELECT count FROM usage WHERE id = 42"), 120);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 120);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'kubelet'"),
			 40);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'cadvisor'"),
			 72000);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'squatter'"),
			 5);
	/* kubelet's row, at its hash, took the one-statement path
	 * (W_USAGE_BUMP), which kept the count it replaced; the others
	 * (moved, squatted) took the two steps */
	assert_int_equal(s->bumped_from, 4);
	/* the rollup grew by the counters' growth: (12 + 4 + 7200) x 9 */
	assert_int_equal(q("SELECT sum(uses) FROM feature_host") - uses,
			 9 * (12 + 4 + 7200));
	/* the rollup's first use moves back when a batch reports earlier use
	 * (the full upsert; otherwise only last use and uses change) */
	first = q("SELECT first_used FROM feature_host"
		  " WHERE feature_id = 'memcg_v1.soft_limit'");
	r = report_x10(host, "bb03");
	u = json_array_get(json_object_get(r, "usage"), 0);
	json_object_set_new(u, "count", json_integer(121));
	json_object_set_new(u, "first_seen", json_integer(first - 1000));
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT first_used FROM feature_host"
			   " WHERE feature_id = 'memcg_v1.soft_limit'"),
			 first - 1000);
	assert_int_equal(q("SELECT sum(uses) FROM feature_host") - uses,
			 9 * (12 + 4 + 7200) + 1);
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * The store's process-wide SQLite settings took, though a constructor
 * (store_sqlite_read.c) initialises SQLite before main(): with memory
 * statistics off, SQLite reports no memory in use.
 */
static void test_sqlite_config(void **state)
{
	struct twl_store *s = NULL;
	sqlite3_int64 cur = -1, hi = -1;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(q("SELECT count(*) FROM hosts"), 0);
	assert_int_equal(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &cur, &hi,
					  0),
			 SQLITE_OK);
	assert_true(cur == 0);
	twl_store_close(s);
	unlink(dbpath);
}

/* The example report with n usage entries of long, distinct cgroups. */
static json_t *report_wide(const char *host, const char *batch, size_t n,
			   int64_t count)
{
	json_t *r = report(host, batch);
	json_t *one = json_array_get(json_object_get(r, "usage"), 0);
	json_t *arr = json_array();
	char cg[600];

	memset(cg, 'x', sizeof(cg) - 1);
	cg[sizeof(cg) - 1] = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *u = json_deep_copy(one);

		snprintf(cg, 32, "/c/%06u/", (unsigned)(i % 1000000));
		cg[strlen(cg)] = 'x';
		json_object_set_new(u, "cgroup", json_string(cg));
		json_object_set_new(u, "count", json_integer(count));
		json_array_append_new(arr, u);
	}
	json_object_set_new(r, "usage", arr);
	return r;
}

/*
 * A batch that changed thousands of rows over hundreds of pages before it
 * failed rolls back alone, in a group commit with another.
 */
static void test_ingest_savepoint_large(void **state)
{
	const char *host = "0123";
	struct twl_store *s = NULL;
	json_t *wide, *small;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	wide = report_wide(host, "sp01", 3000, 5);
	ingest_one(s, host, wide);
	json_decref(wide);
	assert_int_equal(q("SELECT count(*) FROM usage"), 3000);
	/* rows of ~700 bytes: the second batch changes all but the last,
	 * on more than 400 pages */
	assert_true(q("SELECT count(*) FROM dbstat WHERE name = 'usage'") >
		    400);
	exec_sql("CREATE TRIGGER boom BEFORE UPDATE ON usage"
		 " WHEN NEW.cgroup LIKE '/c/002999/%'"
		 " BEGIN SELECT RAISE(ABORT, 'boom'); END");

	small = report(host, "sp02");
	wide = report_wide(host, "sp03", 3000, 9);
	assert_int_equal(twl_store_write_begin(s), 0);
	assert_int_equal(twl_store_ingest(s, host, small, 1000), 0);
	/* the trigger's abort at the last row */
	assert_int_equal(twl_store_ingest(s, host, wide, 1000), -EEXIST);
	assert_int_equal(twl_store_write_end(s, true), 0);
	json_decref(small);
	json_decref(wide);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'sp02'"), 1);
	assert_int_equal(
		q("SELECT count(*) FROM batches WHERE batch_id = 'sp03'"), 0);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE count = 5"), 3000);
	assert_int_equal(q("SELECT count(*) FROM pragma_integrity_check"
			   " WHERE integrity_check = 'ok'"),
			 1);
	twl_store_close(s);
	unlink(dbpath);
}

/* q() of a statement formatted like printf */
static int64_t qf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int64_t qf(const char *fmt, ...)
{
	char sql[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return q(sql);
}

/*
 * The writer's common update matches a row by id, key_check and host_id
 * (migration 009): a row at the key's id whose check is another key's is
 * not updated by it, nor is another host's row with the key's id and
 * check; a row stored before 009 (no check) is found by its whole key and
 * gets its check.
 */
static void test_usage_key_check(void **state)
{
	const char *host = "0123";
	struct twl_store *s = NULL;
	struct twl_ingest *in;
	int64_t id[3], check[3];
	json_t *r;

	r = report(host, "kc01");
	assert_int_equal(twl_ingest_prepare(r, host, &in), 0);
	for (int i = 0; i < 3; i++) {
		id[i] = in->usage_id[i];
		check[i] = in->usage_check[i];
		assert_true(check[i] ==
			    twl_usage_key_check(host, &in->usage[i]));
		/* the id: host_id's 40 bits, then the check's low 24 */
		assert_true((id[i] & 0xffffff) == (check[i] & 0xffffff));
		assert_true((id[i] & ~INT64_C(0xffffff)) ==
			    (id[0] & ~INT64_C(0xffffff)));
	}
	/* pinned like the id (FNV-1a computed apart in Python) */
	assert_true(check[0] == INT64_C(3608518302753540205));
	assert_true(check[1] == INT64_C(-5345176192915146397));
	twl_ingest_free(in);

	/*
	 * Another host's row at entry 1's id, with entry 1's check: only
	 * host_id tells them apart, and it is compared exactly.
	 */
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	exec_sql(
		"INSERT INTO usage(id, key_check, host_id, boot_id,"
		" feature_id, file, op, cgroup, comm, uid, writer_cgroup,"
		" count, first_seen, last_seen)"
		" SELECT -3940864479735383709, -5345176192915146397, '0999',"
		" '2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f', 'memcg_v1.oom_control',"
		" 'memory.oom_control', 'register_event',"
		" '/kubepods/burstable/pod1234', 'kubelet', 0,"
		" '/kubepods.slice/kubelet.service', 1, 1, 1");
	assert_int_equal(qf("SELECT count(*) FROM usage WHERE id = %lld"
			    " AND key_check = -5345176192915146397",
			    (long long)id[1]),
			 1);
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0999'"),
			 1);
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0123'"
			   " AND comm = 'kubelet'"),
			 4);
	/* the rows at their ids carry their checks */
	assert_int_equal(qf("SELECT key_check FROM usage WHERE id = %lld",
			    (long long)id[0]) == check[0],
			 1);

	/* entry 0's row with another key's check: the whole key decides */
	exec_sql("UPDATE usage SET key_check = 7 WHERE comm = 'systemd'");
	r = report_x10(host, "kc02");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 120);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE comm = 'systemd'"),
			 1);
	/* found by the whole key (W_USAGE_UPD), which sets the check again;
	 * W_USAGE_BUMP would have left 7 */
	assert_int_equal(qf("SELECT key_check = %lld FROM usage"
			    " WHERE comm = 'systemd'",
			    (long long)check[0]),
			 1);
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0999'"),
			 1);
	twl_store_close(s);

	/* a version-8 database: its usage rows have no check yet */
	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 8)
			exec_sql(m->sql);
	exec_sql(
		"PRAGMA user_version = 8;"
		" INSERT INTO usage(id, host_id, boot_id, feature_id, file, op,"
		" cgroup, comm, uid, writer_cgroup, container, last_pid, count,"
		" failed, condition_met, first_seen, last_seen)"
		" VALUES(-3940864479740376979, '0123',"
		" '2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'write', '/system.slice/mysql.service',"
		" 'systemd', 0, '/init.scope', 'systemd:init.scope', 1, 12, 0, 12,"
		" 1764732041, 1764735500)");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	assert_int_equal(
		q("SELECT count(*) FROM usage WHERE key_check IS NULL"), 1);
	r = report_x10(host, "kc03");
	ingest_one(s, host, r);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 120);
	assert_int_equal(qf("SELECT key_check = %lld FROM usage"
			    " WHERE comm = 'systemd'",
			    (long long)check[0]),
			 1);
	/* and from then on the one-statement update, which keeps the count
	 * it replaced */
	json_object_set_new(r, "batch_id", json_string("kc04"));
	json_object_set_new(json_array_get(json_object_get(r, "usage"), 0),
			    "count", json_integer(121));
	s->bumped_from = 0;
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(s->bumped_from, 120);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 121);
	assert_int_equal(q("SELECT count(*) FROM usage"), 3);
	twl_store_close(s);
	unlink(dbpath);
}

static int64_t feature_uses(const char *feature, bool day_sum)
{
	char sql[256];

	snprintf(
		sql, sizeof(sql),
		day_sum ?
			"SELECT sum(uses) FROM feature_day WHERE feature_id = '%s'" :
			"SELECT uses FROM feature_host WHERE feature_id = '%s'",
		feature);
	return q(sql);
}

/*
 * Uses credit a kernel warning only where BPF does not count its feature
 * on that boot: the first usage row takes the credited warnings back, a
 * warning after it adds nothing, and the day buckets follow a decrease.
 */
static void test_uses_credit(void **state)
{
	const char *host = "0123", *soft = "memcg_v1.soft_limit",
		   *oom = "memcg_v1.oom_control", *swap = "memcg_v1.swappiness";
	struct twl_store *s = NULL;
	json_t *r, *w, *u;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	/* warnings only, a second oom_control one among them */
	r = report(host, "dd01");
	json_array_clear(json_object_get(r, "usage"));
	w = json_deep_copy(json_array_get(json_object_get(r, "warnings"), 1));
	json_object_set_new(w, "kmsg_seq", json_integer(1902));
	json_array_append_new(json_object_get(r, "warnings"), w);
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(feature_uses(soft, false), 1);
	assert_int_equal(feature_uses(oom, false), 2);
	assert_int_equal(feature_uses(swap, false), 1);

	/* BPF counts arrive (the same warnings again: replays of rows) */
	r = report_x10(host, "dd02");
	u = json_array_get(json_object_get(r, "usage"), 1); /* oom_control */
	json_object_set_new(u, "count", json_integer(1));
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(feature_uses(soft, false), 120);
	assert_int_equal(feature_uses(soft, true), 120);
	assert_int_equal(feature_uses(oom, false), 1); /* 2 + (1 - 2) */
	assert_int_equal(feature_uses(oom, true), 1);
	assert_int_equal(feature_uses(swap, false), 1); /* no BPF row */

	/* a new warning once BPF counts the feature: no credit */
	r = report(host, "dd03");
	json_array_clear(json_object_get(r, "usage"));
	json_object_set_new(json_array_get(json_object_get(r, "warnings"), 0),
			    "kmsg_seq", json_integer(5000));
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(
		q("SELECT count(*) FROM warnings WHERE kmsg_seq = 5000"), 1);
	assert_int_equal(feature_uses(soft, false), 120);
	assert_int_equal(feature_uses(soft, true), 120);
	twl_store_close(s);
	unlink(dbpath);
}

/* feature_hour holds, per (feature, hour), the feature_host rows whose
 * last use is in that hour, and feature_day each feature's last use and
 * (no rows pruned here) its uses. */
static void check_buckets(void)
{
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, sum(uses) AS n"
		  " FROM feature_host GROUP BY 1) g WHERE g.n IS NOT"
		  " (SELECT sum(uses) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, last_hour,"
		  " count(*) AS n FROM feature_host GROUP BY 1, 2) g"
		  " LEFT JOIN feature_hour h ON h.feature_id = g.feature_id"
		  " AND h.hour = g.last_hour WHERE h.hosts IS NOT g.n"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM feature_hour h WHERE hosts != 0"
		  " AND hosts != (SELECT count(*) FROM feature_host f"
		  " WHERE f.feature_id = h.feature_id AND f.last_hour = h.hour)"),
		0);
	assert_int_equal(
		q("SELECT count(*) FROM (SELECT feature_id, max(last_used) AS m"
		  " FROM feature_host GROUP BY 1) g WHERE g.m IS NOT"
		  " (SELECT max(last_used) FROM feature_day d"
		  " WHERE d.feature_id = g.feature_id)"),
		0);
}

/* report_x10 of batch with usage[0] (memcg_v1.soft_limit) last seen at
 * last and counted count times. */
static json_t *report_soft_at(const char *host, const char *batch, int64_t last,
			      int64_t count)
{
	json_t *r = report_x10(host, batch),
	       *u = json_array_get(json_object_get(r, "usage"), 0);

	json_object_set_new(u, "last_seen", json_integer(last));
	json_object_set_new(u, "count", json_integer(count));
	return r;
}

/*
 * feature_host's index is by hour (migration 006): an update whose last
 * use stays in the row's hour (or is older) does not name last_hour, so
 * it moves no index entry; a later hour does, and the hour buckets and
 * each feature's last use follow, whatever the order of the reports.
 */
static void test_feature_host_hour(void **state)
{
	const char *host = "0123";
	const int64_t t = 1764735500; /* full.json's soft_limit last use */
	const char *last = "SELECT last_used FROM feature_host"
			   " WHERE feature_id = 'memcg_v1.soft_limit'";
	const char *hour = "SELECT last_hour FROM feature_host"
			   " WHERE feature_id = 'memcg_v1.soft_limit'";
	struct twl_store *s = NULL;
	json_t *r;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report(host, "ee01");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q(last), t);
	assert_int_equal(q(hour), t / 3600);
	check_buckets();
	/* counts the rows of statements that name last_hour */
	exec_sql(
		"CREATE TABLE hour_sets(feature_id TEXT);"
		" CREATE TRIGGER hour_sets AFTER UPDATE OF last_hour ON feature_host"
		" BEGIN INSERT INTO hour_sets VALUES(NEW.feature_id); END");

	/* later in the same hour, every feature: no statement names it */
	r = report_soft_at(host, "ee02", t + 400, 200);
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q(last), t + 400);
	assert_int_equal(q(hour), t / 3600);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 0);
	check_buckets();

	/* the next hour: the full upsert moves the row to the next bucket */
	r = report_soft_at(host, "ee03", t + 3600, 300);
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q(last), t + 3600);
	assert_int_equal(q(hour), t / 3600 + 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"
			   " WHERE feature_id = 'memcg_v1.soft_limit'"),
			 1);
	assert_int_equal(
		q("SELECT hosts FROM feature_hour WHERE feature_id ="
		  " 'memcg_v1.soft_limit' AND hour = 1764735500 / 3600"),
		0);
	check_buckets();

	/*
	 * A late report of an earlier hour: uses grow, last use stays. Not
	 * this batch's hour, so the full upsert (its trigger keeps
	 * feature_day), which names last_hour, to the same value.
	 */
	r = report_soft_at(host, "ee04", t + 100, 400);
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q(last), t + 3600);
	assert_int_equal(q(hour), t / 3600 + 1);
	assert_int_equal(q("SELECT count(*) FROM hour_sets"), 2);
	assert_int_equal(
		q("SELECT uses FROM feature_host"
		  " WHERE feature_id = 'memcg_v1.soft_limit'"),
		400); /* BPF's count (the warning's credit is gone: 005) */
	check_buckets();

	/* the CHECK holds the two columns together for any writer */
	exec_sql("DROP TRIGGER hour_sets");
	assert_int_equal(q("SELECT count(*) FROM feature_host"
			   " WHERE last_hour != last_used / 3600"),
			 0);
	{
		sqlite3 *db;

		assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
		assert_int_equal(
			sqlite3_exec(
				db,
				"UPDATE feature_host SET last_used = last_used + 7200",
				NULL, NULL, NULL),
			SQLITE_CONSTRAINT);
		sqlite3_close(db);
	}
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * The common rollup update's feature_day upkeep is summed over a group
 * commit by the writer (migration 007): a batch that fails after its
 * update adds nothing, a rolled-back transaction adds nothing and leaves
 * nothing behind, and more (feature, day) sums than the writer keeps are
 * written at once. Each time, feature_day agrees with feature_host.
 */
static void test_feature_day_sums(void **state)
{
	const int64_t t = 1764735500;
	struct twl_store *s = NULL;
	char host[8], batch[16];
	json_t *r, *u;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	/* 300 hosts, host h's uses on day h: their first reports insert */
	for (int h = 0; h < 300; h++) {
		snprintf(host, sizeof(host), "h%03d", h);
		snprintf(batch, sizeof(batch), "a%03d", h);
		r = report_soft_at(host, batch, t + h * 86400, 100);
		ingest_one(s, host, r);
		json_decref(r);
	}
	check_buckets();
	exec_sql(
		"CREATE TRIGGER boom BEFORE UPDATE ON feature_host"
		" WHEN NEW.uses > 1000000 BEGIN SELECT RAISE(ABORT, 'boom'); END");

	/* one group: the common update for all 300, more sums than kept */
	assert_int_equal(twl_store_write_begin(s), 0);
	for (int h = 0; h < 300; h++) {
		snprintf(host, sizeof(host), "h%03d", h);
		snprintf(batch, sizeof(batch), "b%03d", h);
		r = report_soft_at(host, batch, t + h * 86400 + 10, 200);
		assert_int_equal(twl_store_ingest(s, host, r, 1000), 0);
		json_decref(r);
	}
	/* soft_limit's update goes through, memsw's (later) aborts */
	r = report_soft_at("h007", "c007", t + 7 * 86400 + 20, 300);
	u = json_array_get(json_object_get(r, "usage"), 2);
	json_object_set_new(u, "count", json_integer(5000000));
	assert_true(twl_store_ingest(s, "h007", r, 1000) < 0);
	json_decref(r);
	assert_int_equal(twl_store_write_end(s, true), 0);
	check_buckets();
	assert_int_equal(
		q("SELECT uses FROM feature_host WHERE host_id = 'h007'"
		  " AND feature_id = 'memcg_v1.soft_limit'"),
		200);

	/* a rolled-back group adds nothing, and leaves nothing behind */
	assert_int_equal(twl_store_write_begin(s), 0);
	r = report_soft_at("h001", "d001", t + 86400 + 30, 400);
	assert_int_equal(twl_store_ingest(s, "h001", r, 1000), 0);
	json_decref(r);
	assert_int_equal(twl_store_write_end(s, false), 0);
	r = report_soft_at("h002", "d002", t + 2 * 86400 + 30, 400);
	ingest_one(s, "h002", r);
	json_decref(r);
	check_buckets();
	assert_int_equal(
		q("SELECT uses FROM feature_host WHERE host_id = 'h001'"
		  " AND feature_id = 'memcg_v1.soft_limit'"),
		200);
	twl_store_close(s);
	unlink(dbpath);
}

/* feature_host and hosts rows of a version-5 database get their hour
 * (006, 008) and feature_host its host-first key (010). */
static void test_feature_host_migration(void **state)
{
	struct twl_store *s = NULL;
	const char *host = "0123";
	json_t *r;

	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 5)
			exec_sql(m->sql);
	/* two hosts of one feature, days apart, through 002's triggers */
	exec_sql(
		"PRAGMA user_version = 5;"
		" INSERT INTO feature_host(feature_id, host_id, first_used,"
		" last_used, uses) VALUES"
		" ('memcg_v1.soft_limit', 'aa', 1764000000, 1764500000, 5),"
		" ('memcg_v1.soft_limit', 'bb', 1764000000, 1764735000, 7),"
		" ('memcg_v1.oom_control', 'aa', 1764000000, 1764100000, 1);"
		" INSERT INTO hosts(host_id, cgroup_mode, first_seen, last_seen)"
		" VALUES ('aa', 'v1', 1764000000, 1764500000),"
		" ('bb', 'hybrid', 1764000000, 1764735000)");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(q("SELECT last_hour FROM hosts WHERE host_id = 'bb'"),
			 1764735000 / 3600);
	assert_int_equal(q("SELECT hosts FROM host_hour WHERE cgroup_mode ="
			   " 'hybrid' AND hour = 1764735000 / 3600"),
			 1);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	assert_int_equal(q("SELECT count(*) FROM feature_host"), 3);
	assert_int_equal(q("SELECT sum(uses) FROM feature_host"), 13);
	/* keyed by host first (migration 010): a host's rows are neighbours */
	assert_int_equal(
		q("SELECT group_concat(name, ',') = 'host_id,feature_id' FROM"
		  " (SELECT name FROM pragma_index_info("
		  "'sqlite_autoindex_feature_host_1') ORDER BY seqno)"),
		1);
	assert_int_equal(q("SELECT last_hour FROM feature_host WHERE host_id"
			   " = 'bb'"),
			 1764735000 / 3600);
	/* the day sums are kept, the latest use lands on its day */
	assert_int_equal(q("SELECT sum(uses) FROM feature_day"), 13);
	assert_int_equal(q("SELECT sum(hosts) FROM feature_day"), 3);
	assert_int_equal(
		q("SELECT last_used FROM feature_day WHERE feature_id"
		  " = 'memcg_v1.soft_limit' AND day = 1764735000 / 86400"),
		1764735000);
	check_buckets();
	assert_int_equal(q("SELECT count(*) FROM pragma_integrity_check"
			   " WHERE integrity_check = 'ok'"),
			 1);
	/* and ingest goes on: host 0123 joins both features */
	r = report(host, "ff01");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM feature_host"
			   " WHERE feature_id = 'memcg_v1.soft_limit'"),
			 3);
	check_buckets();
	twl_store_close(s);
	unlink(dbpath);
}

/* Usage rows of a version-3 database survive migration 004 and are updated. */
static void test_usage_migration(void **state)
{
	struct twl_store *s = NULL;
	const char *host = "0123";
	json_t *r;

	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 3)
			exec_sql(m->sql);
	exec_sql(
		"PRAGMA user_version = 3;"
		" INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
		" comm, uid, writer_cgroup, container, last_pid, count, failed,"
		" condition_met, first_seen, last_seen) VALUES('0123',"
		" '2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'write', '/system.slice/mysql.service',"
		" 'systemd', 0, '/init.scope', 'systemd:init.scope', 1, 12, 0, 12,"
		" 1764732041, 1764735500)");
	/* a migration that fails rolls back whole: the rows stay at version 3 */
	exec_sql("CREATE TABLE usage_v4(x)");
	assert_int_equal(twl_store_open(dbpath, &s), -EIO);
	assert_int_equal(q("PRAGMA user_version"), 3);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 12);
	exec_sql("DROP TABLE usage_v4");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 12);
	assert_int_equal(
		q("SELECT count(*) FROM feature_comm WHERE comm = 'systemd'"),
		1);
	r = report_x10(host, "cc01");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE comm = 'systemd'"),
			 1);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 120);
	assert_int_equal(q("SELECT count(*) FROM usage"), 3);
	/* the triggers of 004 keep feature_comm: plus the two new rows' names */
	assert_int_equal(q("SELECT count(*) FROM feature_comm"), 3);
	twl_store_close(s);
	unlink(dbpath);
}

struct resolve_arg {
	struct twl_store *s;
	const char *secret;
	int ret;
};

static void *resolve_thread(void *p)
{
	struct resolve_arg *a = p;
	struct twl_principal who;

	a->ret = twl_auth_resolve(a->s, a->secret, &who);
	return NULL;
}

/*
 * Resolve secret on another thread while this one holds the reader lock,
 * as a long dashboard query does: authentication has a connection of its
 * own and must not wait (5 s allowed).
 */
static int resolve_beside_reader(struct twl_store *s, const char *secret)
{
	struct resolve_arg a = { s, secret, 1 };
	struct timespec t;
	pthread_t th;
	int joined;

	twl_store_read_lock(s);
	assert_int_equal(pthread_create(&th, NULL, resolve_thread, &a), 0);
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 5;
	joined = pthread_timedjoin_np(th, NULL, &t);
	twl_store_read_unlock(s);
	if (joined)
		pthread_join(th, NULL);
	assert_int_equal(joined, 0);
	return a.ret;
}

static void test_tokens_and_keys(void **state)
{
	struct twl_store *s = NULL;
	struct twl_principal who;
	char secret[80], key[80], hostid[65];
	int64_t id;
	int n;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(
		twl_auth_token_create(s, "ops", "viewer", 5, secret, &id), 0);
	assert_int_equal(twl_auth_token_create(s, "ops", "superuser", 5, key,
					       NULL),
			 -EINVAL);
	assert_int_equal(twl_auth_resolve(s, secret, &who), 0);
	assert_int_equal(who.role, TWL_ROLE_VIEWER);
	assert_int_equal(who.token_id, id);
	assert_string_equal(who.name, "ops");
	secret[10] ^= 1; /* one flipped digit: unknown */
	assert_true(twl_auth_resolve(s, secret, &who) < 0);
	secret[10] ^= 1;
	assert_int_equal(twl_store_token_revoke(s, id, 6), 0);
	assert_int_equal(twl_auth_resolve(s, secret, &who), -ENOENT);
	assert_int_equal(twl_store_token_revoke(s, id, 6), -ENOENT);

	assert_int_equal(twl_auth_host_key_create(s, "abcd", 5, key), 0);
	assert_int_equal(twl_auth_resolve(s, key, &who), 0);
	assert_int_equal(who.role, TWL_ROLE_AGENT);
	assert_string_equal(who.host_id, "abcd");
	assert_int_equal(resolve_beside_reader(s, key), 0);
	assert_int_equal(twl_store_host_key_revoke(s, "abcd", 7, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(twl_auth_resolve(s, key, &who), -EKEYREVOKED);
	assert_int_equal(twl_store_host_key_lookup(s, "0000", hostid), -ENOENT);
	assert_int_equal(twl_auth_resolve(s, "twlt_short", &who), -EINVAL);
	twl_store_close(s);
	unlink(dbpath);
}

static void test_config(void **state)
{
	struct twl_config c;
	char err[256], *rest[8];
	char *argv[] = { "serve",	    "--data-dir",
			 "/tmp/x",	    "--listen=[::1]:9443",
			 "--san",	    "10.0.2.2",
			 "--max-body",	    "2M",
			 "--limit-loopback" };
	char *bad1[] = { "--no-such-option", "1" };
	char *bad2[] = { "--max-body", "lots" };
	char *wal[] = { "--wal-max", "64M" };
	int n_rest;

	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 9, argv, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(n_rest, 1);
	assert_string_equal(rest[0], "serve");
	assert_string_equal(c.listen, "[::1]:9443");
	assert_int_equal(c.n_sans, 1);
	assert_string_equal(c.sans[0], "10.0.2.2");
	assert_int_equal(c.max_body, 2u << 20);
	assert_true(c.limit_loopback);
	assert_string_equal(c.db_path, "/tmp/x/twilight.db");
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, bad1, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no-such-option"));
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, bad2, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "max-body"));
	twl_config_defaults(&c);
	c.batch_days = 10;
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "35"));
	twl_config_defaults(&c);
	assert_int_equal(c.wal_max, 256u << 20);
	assert_int_equal(twl_config_load(&c, 2, wal, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(c.wal_max, 64u << 20);
	c.wal_max = 16u << 20;
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wal-max"));
}

static void test_config_file(void **state)
{
	struct twl_config c;
	char err[256], *rest[4], path[160], dd[200];
	char *argv[] = { "--data-dir", dd, "--threads", "3" };
	int n_rest;
	FILE *f;

	snprintf(dd, sizeof(dd), "%s", dir);
	snprintf(path, sizeof(path), "%s/twilight-server.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# comment\nthreads = 5\nhost-rate = 2.5\nlisten = 127.0.0.1:1234\n",
	      f);
	fclose(f);
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 4, argv, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(c.threads, 3); /* flag beats file */
	assert_true(c.host_rate == 2.5);
	assert_string_equal(c.listen, "127.0.0.1:1234");
	f = fopen(path, "w");
	fputs("threads = many\n", f);
	fclose(f);
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, argv, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":1:"));
	unlink(path);
}

static void test_ratelimit(void **state)
{
	struct twl_ratelimit *rl = twl_ratelimit_new(1.0, 3);

	assert_non_null(rl);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 1);
	assert_int_equal(twl_ratelimit_take(rl, "other", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 101.1), 0);
	/* many keys: memory stays bounded, fresh keys still get their burst */
	for (int i = 0; i < 100000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(twl_ratelimit_take(rl, k, 200.0), 0);
	}
	twl_ratelimit_free(rl);
	assert_null(twl_ratelimit_new(0, 1));
}

/* One commit of blobs 4000-byte rows into bulk, on the writer's connection. */
static void bulk_commit(struct twl_store *s, int blobs)
{
	sqlite3 *db = twl_store_admin_write_lock(s);
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
		 " SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO bulk SELECT randomblob(4000) FROM n",
		 blobs);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	twl_store_admin_write_unlock(s);
}

/*
 * WAL checkpoints run on the store's own thread (server/store/sqlite/checkpoint.c),
 * not in the writer's COMMIT: after ~20 MB (past its 4000-page
 * threshold) committed through the writer
 * connection in small transactions, the database file itself grows while
 * the writer does nothing more, which only a checkpoint can do.
 */
static void test_checkpoint_thread(void **state)
{
	struct twl_store *s = NULL;
	struct stat st;
	off_t before;
	int i, waited;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(stat(dbpath, &st), 0);
	before = st.st_size;
	{
		sqlite3 *db = twl_store_admin_write_lock(s);

		assert_int_equal(sqlite3_exec(db, "CREATE TABLE bulk(x BLOB)",
					      NULL, NULL, NULL),
				 SQLITE_OK);
		twl_store_admin_write_unlock(s);
	}
	for (i = 0; i < 100; i++)
		bulk_commit(s, 50);
	for (waited = 0; waited < 100; waited++) {
		assert_int_equal(stat(dbpath, &st), 0);
		if (st.st_size > before + (4 << 20))
			break;
		usleep(100 * 1000);
	}
	if (st.st_size <= before + (4 << 20))
		fail_msg(
			"database file %lld -> %lld bytes in 10 s: no checkpoint ran",
			(long long)before, (long long)st.st_size);
	twl_store_close(s);
}

/*
 * The checkpoint policy (checkpoint.h): the thread is asked once per 4000
 * new WAL frames, not after every commit past 4000, but after every commit
 * in the last 8000 frames before the limit; past the limit the writer
 * tries itself after every commit; a restarted WAL counts from 0 again.
 */
static void test_checkpoint_policy(void **state)
{
	static const struct {
		int pages, limit;
		enum twl_ckpt_action want;
		int asked_at;
	} steps[] = {
		{ 120, 16384, TWL_CKPT_NONE, 0 },
		{ 3999, 16384, TWL_CKPT_NONE, 0 },
		{ 4000, 16384, TWL_CKPT_ASK, 4000 },
		{ 4100, 16384, TWL_CKPT_NONE, 4000 },
		{ 7999, 16384, TWL_CKPT_NONE, 4000 },
		{ 8000, 16384, TWL_CKPT_ASK, 8000 },
		{ 8383, 16384, TWL_CKPT_NONE, 8000 },
		/* the last stretch: after every commit that added frames */
		{ 8384, 16384, TWL_CKPT_ASK, 8384 },
		{ 8400, 16384, TWL_CKPT_ASK, 8400 },
		{ 8400, 16384, TWL_CKPT_NONE, 8400 },
		{ 16383, 16384, TWL_CKPT_ASK, 16383 },
		{ 16384, 16384, TWL_CKPT_SELF, 16383 },
		{ 16900, 16384, TWL_CKPT_SELF, 16383 },
		{ 90, 16384, TWL_CKPT_NONE, 0 },
		{ 3999, 16384, TWL_CKPT_NONE, 0 },
		{ 4000, 16384, TWL_CKPT_ASK, 4000 },
		/* the default limit: 16384 is just another ask */
		{ 16384, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_ASK, 16384 },
		{ 20000, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_NONE, 16384 },
		{ 57000, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_ASK, 57000 },
		{ 57535, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_NONE, 57000 },
		{ 57536, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_ASK, 57536 },
		{ 65535, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_ASK, 65535 },
		{ 65536, TWL_CKPT_LIMIT_PAGES, TWL_CKPT_SELF, 65535 },
	};
	int asked_at = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(twl_ckpt_step(steps[i].pages, steps[i].limit,
					       &asked_at),
				 steps[i].want);
		assert_int_equal(asked_at, steps[i].asked_at);
	}
	/* the thread syncs the database in the last stretch only */
	assert_false(twl_ckpt_near_limit(4000, TWL_CKPT_LIMIT_PAGES));
	assert_false(twl_ckpt_near_limit(57535, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(57536, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(70000, TWL_CKPT_LIMIT_PAGES));
	assert_true(twl_ckpt_near_limit(8000, 16000));
	assert_false(twl_ckpt_near_limit(7999, 16000));
}

/*
 * At wal-max the writer checkpoints the WAL itself after its commits
 * (counted for /metrics), and once every frame is copied its next
 * transaction starts the WAL again. A reader's open snapshot first keeps
 * any checkpoint short of the WAL's end, so the WAL must reach the limit.
 */
static void test_wal_catchup(void **state)
{
	struct twl_store *s = NULL;
	sqlite3 *reader = NULL, *db;
	sqlite3_stmt *st;
	uint64_t n = 0;
	double secs = -1;
	int i, log = -1;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_set_wal_max(s, 1), 8000);
	assert_int_equal(twl_store_wal_catchups(s, &n, &secs), 0);
	assert_int_equal(n, 0);
	assert_true(secs == 0);
	db = twl_store_admin_write_lock(s);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE bulk(x BLOB)", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	twl_store_admin_write_unlock(s);
	assert_int_equal(sqlite3_open(dbpath, &reader), SQLITE_OK);
	assert_int_equal(sqlite3_exec(reader,
				      "BEGIN; SELECT count(*) FROM bulk;", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	for (i = 0; i < 200; i++) /* ~10,000 pages */
		bulk_commit(s, 50);
	assert_int_equal(twl_store_wal_catchups(s, &n, &secs), 0);
	if (n < 1)
		fail_msg(
			"WAL past its limit, but the writer never checkpointed it");
	assert_true(secs > 0);
	assert_int_equal(sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(reader);
	/* the size of the WAL in frames, from another connection */
	assert_int_equal(sqlite3_open(dbpath, &reader), SQLITE_OK);
	for (i = 0; i < 100; i++) {
		bulk_commit(s, 1);
		assert_int_equal(
			sqlite3_prepare_v2(reader,
					   "PRAGMA wal_checkpoint(PASSIVE)", -1,
					   &st, NULL),
			SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		log = sqlite3_column_int(st, 1);
		sqlite3_finalize(st);
		if (log >= 0 && log < 1000)
			break;
	}
	if (log < 0 || log >= 1000)
		fail_msg("the WAL did not start again: %d frames", log);
	sqlite3_close(reader);
	twl_store_close(s);
}

/* Counts xSync calls on main databases and on other files (shim_vfs.h). */
static int count_main_syncs, count_other_syncs;

static int count_sync(int flags, sqlite3_file *real, int sync_flags)
{
	(void)real;
	(void)sync_flags;
	if (flags & SQLITE_OPEN_MAIN_DB)
		count_main_syncs++;
	else
		count_other_syncs++;
	return SQLITE_OK;
}

/*
 * twl_ckpt_sync_db(), which the checkpoint thread runs after each of its
 * checkpoints, syncs the main database file (not the WAL), through the
 * connection's VFS.
 */
static void test_ckpt_sync_db(void **state)
{
	static const struct shim_hooks hooks = { .sync = count_sync };
	sqlite3 *db = NULL;
	int before, other;

	(void)state;
	unlink(dbpath);
	assert_int_equal(shim_vfs_register("twl-count", &hooks, 0), SQLITE_OK);
	assert_int_equal(sqlite3_open_v2(dbpath, &db,
					 SQLITE_OPEN_READWRITE |
						 SQLITE_OPEN_CREATE,
					 "twl-count"),
			 SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "PRAGMA journal_mode = WAL;"
			     " PRAGMA synchronous = NORMAL;"
			     " CREATE TABLE t(x); INSERT INTO t VALUES(1);",
			     NULL, NULL, NULL),
		SQLITE_OK);
	before = count_main_syncs;
	other = count_other_syncs;
	assert_int_equal(twl_ckpt_sync_db(db), SQLITE_OK);
	assert_int_equal(count_main_syncs, before + 1);
	assert_int_equal(count_other_syncs, other);
	sqlite3_close(db);
	shim_vfs_unregister();
}

/* wal-max in bytes becomes the writer's limit in pages, at least 8000. */
static void test_wal_max(void **state)
{
	struct twl_store *s = NULL;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_set_wal_max(s, 256u << 20), 65536);
	assert_int_equal(twl_store_set_wal_max(s, 64u << 20), 16384);
	assert_int_equal(twl_store_set_wal_max(s, 1u << 20), 8000);
	twl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrations),
		cmocka_unit_test(test_usage_ids),
		cmocka_unit_test(test_usage_key_check),
		cmocka_unit_test(test_ingest_savepoint_large),
		cmocka_unit_test(test_sqlite_config),
		cmocka_unit_test(test_host_row),
		cmocka_unit_test(test_usage_migration),
		cmocka_unit_test(test_feature_host_hour),
		cmocka_unit_test(test_feature_day_sums),
		cmocka_unit_test(test_feature_host_migration),
		cmocka_unit_test(test_uses_credit),
		cmocka_unit_test(test_ingest_savepoints),
		cmocka_unit_test(test_tokens_and_keys),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_checkpoint_thread),
		cmocka_unit_test(test_checkpoint_policy),
		cmocka_unit_test(test_ckpt_sync_db),
		cmocka_unit_test(test_wal_max),
		cmocka_unit_test(test_wal_catchup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
