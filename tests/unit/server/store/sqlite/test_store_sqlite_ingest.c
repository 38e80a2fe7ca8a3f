// SPDX-License-Identifier: GPL-2.0
/*
 * The ingest write path on SQLite (server/store/sqlite/store_sqlite_ingest.c):
 * reports in savepoints (a failing batch rolls back alone, replays
 * return 1, counters keep their maximum), the host row, usage rows by the
 * hash of their key, uses credited to warnings, and the hour and day
 * rollups.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "sqlite_fixture.h"
#include "store/ingest.h"
#include "store/sqlite/migrate.h"
#include "store/sqlite/store_sqlite_internal.h" /* bumped_from */
#include "store/store.h"

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
	json_decref(a);
	json_decref(b);
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * The host row: a report with the same name, kernel and cgroup mode
 * updates it without naming them (H_HOST_TOUCH), one that changes them
 * rewrites them (H_HOST_UPSERT); last_seen never goes back, a report
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
	int64_t h[3], uses, reads, first;
	char sql[512];
	json_t *r, *u;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report(host, "bb01");
	/* the ids of the entries' keys (pinned in tests/unit/server/store/
	 * test_ingest.c) */
	assert_int_equal(twl_ingest_prepare(r, host, &in), 0);
	assert_int_equal(in->n_usage, 3);
	for (int i = 0; i < 3; i++)
		h[i] = in->usage_id[i];
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
	reads = q("SELECT sum(reads) FROM feature_host");
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

	/*
	 * entry 0 moves to another id, like a row copied by migration 004
	 * (its key and its counts, migration 021)
	 */
	snprintf(sql, sizeof(sql),
		 "UPDATE usage_key SET id = 42 WHERE id = %lld;"
		 " UPDATE usage_count SET id = 42 WHERE id = %lld",
		 (long long)h[0], (long long)h[0]);
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
	 * (U_BUMP), which kept the count it replaced; the others
	 * (moved, squatted) took the two steps */
	assert_int_equal(s->bumped_from, 4);
	/* the rollup grew by the counters' growth: uses (12 + 4) x 9 of the
	 * write and the registration, reads 7200 x 9 of cadvisor's read */
	assert_int_equal(q("SELECT sum(uses) FROM feature_host") - uses,
			 9 * (12 + 4));
	assert_int_equal(q("SELECT sum(reads) FROM feature_host") - reads,
			 9 * 7200);
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
			 9 * (12 + 4) + 1);
	twl_store_close(s);
	unlink(dbpath);
}

/*
 * The example report with n usage entries of long, distinct cgroups and
 * long containers (a container is among the columns an update changes,
 * in usage_count, migration 021).
 */
static json_t *report_wide(const char *host, const char *batch, size_t n,
			   int64_t count)
{
	json_t *r = report(host, batch);
	json_t *one = json_array_get(json_object_get(r, "usage"), 0);
	json_t *arr = json_array();
	char cg[600], ct[540];

	memset(cg, 'x', sizeof(cg) - 1);
	cg[sizeof(cg) - 1] = 0;
	memset(ct, 'y', sizeof(ct) - 1);
	ct[sizeof(ct) - 1] = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *u = json_deep_copy(one);

		snprintf(cg, 32, "/c/%06u/", (unsigned)(i % 1000000));
		cg[strlen(cg)] = 'x';
		json_object_set_new(u, "cgroup", json_string(cg));
		snprintf(ct, 32, "/%06u/", (unsigned)(i % 1000000));
		ct[strlen(ct)] = 'y';
		json_object_set_new(u, "container", json_string(ct));
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
	/* counts of ~600 bytes: the second batch changes all but the last,
	 * on more than 400 pages */
	assert_true(
		q("SELECT count(*) FROM dbstat WHERE name = 'usage_count'") >
		400);
	exec_sql("CREATE TRIGGER boom BEFORE UPDATE ON usage_count"
		 " WHEN NEW.container LIKE '/002999/%'"
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

/*
 * Another host's row at entry 1's id, with entry 1's check: only the
 * host tells them apart, compared exactly (usage_count's host number,
 * migration 022). Takes @r; returns the open store.
 */
static struct twl_store *key_check_other_host(const char *host, json_t *r,
					      const int64_t *id,
					      const int64_t *check)
{
	struct twl_store *s = NULL;

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
	json_decref(r); /* consumed: the caller gave it up */
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0999'"),
			 1);
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0123'"
			   " AND comm = 'kubelet'"),
			 4);
	/* the rows at their ids carry their checks */
	assert_int_equal(qf("SELECT key_check FROM usage WHERE id = %lld",
			    (long long)id[0]) == check[0],
			 1);
	return s;
}

/* Entry 0's row with another key's check: the whole key decides. */
static void key_check_mismatch(struct twl_store *s, const char *host,
			       const int64_t *check)
{
	json_t *r;

	exec_sql("UPDATE usage_count SET key_check = 7 WHERE id ="
		 " (SELECT id FROM usage WHERE comm = 'systemd')");
	r = report_x10(host, "kc02");
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(q("SELECT count FROM usage WHERE comm = 'systemd'"),
			 120);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE comm = 'systemd'"),
			 1);
	/* found by the whole key (U_UPD), which sets the check again;
	 * U_BUMP would have left 7 */
	assert_int_equal(qf("SELECT key_check = %lld FROM usage"
			    " WHERE comm = 'systemd'",
			    (long long)check[0]),
			 1);
	assert_int_equal(q("SELECT count FROM usage WHERE host_id = '0999'"),
			 1);
	twl_store_close(s);
}

/* A version-8 database: its usage rows have no check yet. */
static void key_check_from_v8(const char *host, const int64_t *check)
{
	struct twl_store *s = NULL;
	json_t *r;

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

/*
 * The writer's common update matches a row by id, key_check and host
 * (migration 009; the host by its number since 022): a row at the key's
 * id whose check is another key's is not updated by it, nor is another
 * host's row with the key's id and check; a row stored before 009 (no
 * check) is found by its whole key and gets its check.
 */
static void test_usage_key_check(void **state)
{
	const char *host = "0123";
	struct twl_ingest *in;
	int64_t id[3], check[3];
	struct twl_store *s;
	json_t *r;

	r = report(host, "kc01");
	/* the entries' ids and checks (pinned in test_ingest.c) */
	assert_int_equal(twl_ingest_prepare(r, host, &in), 0);
	for (int i = 0; i < 3; i++) {
		id[i] = in->usage_id[i];
		check[i] = in->usage_check[i];
	}
	twl_ingest_free(in);

	s = key_check_other_host(host, r, id, check);
	key_check_mismatch(s, host, check);
	key_check_from_v8(host, check);
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

static int64_t feature_warnings(const char *feature, bool day_sum)
{
	return qf(day_sum ? "SELECT sum(warnings) FROM feature_day"
			    " WHERE feature_id = '%s'" :
			    "SELECT warnings FROM feature_host"
			    " WHERE feature_id = '%s'",
		  feature);
}

/*
 * A kernel warning is evidence counted apart from BPF's uses, never added
 * to them (migration 015): warnings alone make a host use a feature with
 * no uses; BPF counts that arrive later are the uses, whole; a warning
 * after them adds a warning, not a use.
 */
static void test_warnings_apart(void **state)
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
	assert_int_equal(feature_uses(soft, false), 0);
	assert_int_equal(feature_uses(oom, false), 0);
	assert_int_equal(feature_warnings(soft, false), 1);
	assert_int_equal(feature_warnings(oom, false), 2);
	assert_int_equal(feature_warnings(swap, true), 1);
	/* a host using them all the same: a warning is evidence of use */
	assert_int_equal(q("SELECT sum(hosts) FROM feature_hour"
			   " WHERE feature_id = 'memcg_v1.oom_control'"),
			 1);
	check_buckets();

	/* BPF counts arrive (the same warnings again: replays of rows) */
	r = report_x10(host, "dd02");
	u = json_array_get(json_object_get(r, "usage"), 1); /* oom_control */
	json_object_set_new(u, "count", json_integer(1));
	ingest_one(s, host, r);
	json_decref(r);
	assert_int_equal(feature_uses(soft, false), 120);
	assert_int_equal(feature_uses(soft, true), 120);
	assert_int_equal(feature_uses(oom, false), 1);
	assert_int_equal(feature_uses(oom, true), 1);
	assert_int_equal(feature_warnings(oom, false), 2);
	assert_int_equal(feature_uses(swap, false), 0); /* no BPF row */
	check_buckets();

	/* a new warning once BPF counts the feature: a warning, no use */
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
	assert_int_equal(feature_warnings(soft, false), 2);
	assert_int_equal(feature_warnings(soft, true), 2);
	check_buckets();
	twl_store_close(s);
	unlink(dbpath);
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
		" WHEN NEW.reads > 1000000 BEGIN SELECT RAISE(ABORT, 'boom'); END");

	/* one group: the common update for all 300, more sums than kept */
	assert_int_equal(twl_store_write_begin(s), 0);
	for (int h = 0; h < 300; h++) {
		snprintf(host, sizeof(host), "h%03d", h);
		snprintf(batch, sizeof(batch), "b%03d", h);
		r = report_soft_at(host, batch, t + h * 86400 + 10, 200);
		assert_int_equal(twl_store_ingest(s, host, r, 1000), 0);
		json_decref(r);
	}
	/* soft_limit's update goes through, memsw's (later: reads) aborts */
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

/* The example's unknown text, first seen at @seq @count times. */
static json_t *report_unknown(const char *batch, int64_t seq, int64_t count)
{
	json_t *r = report("0123", batch);
	json_t *u = json_array_get(json_object_get(r, "unknown"), 0);

	json_object_set_new(u, "kmsg_seq", json_integer(seq));
	json_object_set_new(u, "count", json_integer(count));
	return r;
}

#define UNKNOWN_COUNT                                       \
	"SELECT sum(count) FROM unknown_deprecations WHERE" \
	" host_id = '0123' AND text LIKE 'cgroup#: fancy_knob%'"

/*
 * Unknown texts' counts are a batch's occurrences: a batch stored again
 * under another id (its id pruned, a replay) adds nothing, only a batch
 * counted before with more occurrences adds the difference; retention
 * drops the per-batch counts with the batch ids.
 */
static void test_unknown_replay_idempotent(void **state)
{
	struct twl_store *s = NULL;
	json_t *r;
	int64_t deleted = 0;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	r = report_unknown("uk01", 2100, 3);
	ingest_one(s, "0123", r);
	json_decref(r);
	assert_int_equal(q(UNKNOWN_COUNT), 3);
	/* the same batch again, its id gone: counted once (was 6) */
	r = report_unknown("uk02", 2100, 3);
	ingest_one(s, "0123", r);
	json_decref(r);
	assert_int_equal(q(UNKNOWN_COUNT), 3);
	/* a later batch: added */
	r = report_unknown("uk03", 2200, 2);
	ingest_one(s, "0123", r);
	json_decref(r);
	assert_int_equal(q(UNKNOWN_COUNT), 5);
	/* the first batch again with one occurrence more: max-merged */
	r = report_unknown("uk04", 2100, 4);
	ingest_one(s, "0123", r);
	json_decref(r);
	assert_int_equal(q(UNKNOWN_COUNT), 6);
	r = report_unknown("uk05", 2100, 1);
	ingest_one(s, "0123", r);
	json_decref(r);
	assert_int_equal(q(UNKNOWN_COUNT), 6);
	assert_int_equal(q("SELECT count(*) FROM unknown_counts"), 2);
	/* retention: batch-days drops the per-batch counts, not the texts */
	assert_int_equal(twl_store_prune(s, 1000 + 36 * 86400, 35, 0, &deleted),
			 0);
	assert_int_equal(q("SELECT count(*) FROM unknown_counts"), 0);
	assert_int_equal(q(UNKNOWN_COUNT), 6);
	twl_store_close(s);
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_savepoints),
		cmocka_unit_test(test_unknown_replay_idempotent),
		cmocka_unit_test(test_host_row),
		cmocka_unit_test(test_usage_ids),
		cmocka_unit_test(test_ingest_savepoint_large),
		cmocka_unit_test(test_usage_key_check),
		cmocka_unit_test(test_warnings_apart),
		cmocka_unit_test(test_feature_host_hour),
		cmocka_unit_test(test_feature_day_sums),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
