// SPDX-License-Identifier: GPL-2.0
/*
 * Schema migrations (server/store/sqlite/migrate.c) as twl_store_open()
 * applies them: a fresh database, reopening (nothing twice), a newer
 * database refused, a failing migration rolled back whole, and the rows
 * of older schemas carried over and ingested into.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include <twilight/catalog.h>

#include "sqlite_fixture.h"
#include "store/sqlite/migrate.h"
#include "store/store.h"

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
	/*
	 * two hosts of one feature, days apart, through 002's triggers, and
	 * the usage rows they count (migration 015 rebuilds the rollups from
	 * the raw rows)
	 */
	exec_sql(
		"PRAGMA user_version = 5;"
		" INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
		" comm, uid, writer_cgroup, count, first_seen, last_seen) VALUES"
		" ('aa', 'b', 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes',"
		" 'write', '/a', 'dockerd', 0, '/', 5, 1764000000, 1764500000),"
		" ('bb', 'b', 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes',"
		" 'write', '/b', 'dockerd', 0, '/', 7, 1764000000, 1764735000),"
		" ('aa', 'b', 'memcg_v1.oom_control', 'memory.oom_control',"
		" 'register_event', '/a', 'oomd', 0, '/', 1, 1764000000,"
		" 1764100000);"
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

/*
 * A version-14 database whose rollups counted reads as uses and credited
 * warnings (migration 005): migration 015 rebuilds them from the raw rows,
 * a read-only host no longer among the hosts using the feature, the
 * warning counted apart.
 */
static void test_use_kinds_migration(void **state)
{
	struct twl_store *s = NULL;

	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 14)
			exec_sql(m->sql);
	exec_sql(
		"PRAGMA user_version = 14;"
		" INSERT INTO usage(host_id, boot_id, feature_id, file, op, cgroup,"
		" comm, uid, writer_cgroup, count, first_seen, last_seen) VALUES"
		" ('aa', 'b', 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes',"
		" 'write', '/a', 'java', 0, '/', 5, 1764000000, 1764500000),"
		" ('aa', 'b', 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes',"
		" 'read', '/a', 'java', 0, '/', 9, 1764000000, 1764500000),"
		" ('rr', 'b', 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes',"
		" 'read', '/r', 'runc', 0, '/', 100, 1764000000, 1764600000);"
		" INSERT INTO warnings(host_id, boot_id, feature_id, kmsg_seq,"
		" mono_us, time, level, text, origin, received) VALUES"
		" ('ww', 'b', 'memcg_v1.soft_limit', 1, 1, 1764700000, 4, 'w',"
		" 'kmsg', 1764700000);"
		/* what the old writer kept: reads as uses, the warning credited */
		" INSERT INTO feature_host(feature_id, host_id, first_used,"
		" last_used, uses, last_hour) VALUES"
		" ('memcg_v1.soft_limit', 'aa', 1764000000, 1764500000, 14,"
		" 1764500000 / 3600),"
		" ('memcg_v1.soft_limit', 'rr', 1764000000, 1764600000, 100,"
		" 1764600000 / 3600),"
		" ('memcg_v1.soft_limit', 'ww', 1764700000, 1764700000, 1,"
		" 1764700000 / 3600)");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	check_buckets();
	assert_int_equal(q("SELECT sum(uses) FROM feature_host"), 5);
	assert_int_equal(q("SELECT sum(reads) FROM feature_host"), 109);
	assert_int_equal(q("SELECT sum(warnings) FROM feature_host"), 1);
	assert_int_equal(q("SELECT sum(hosts) FROM feature_hour"), 2);
	assert_int_equal(q("SELECT sum(configuring) FROM feature_hour"), 1);
	assert_int_equal(q("SELECT sum(reading_only) FROM feature_hour"), 1);
	assert_int_equal(q("SELECT sum(uses) FROM feature_day"), 5);
	/* java writes and reads: configuring, never a read-only workload */
	assert_int_equal(q("SELECT count(*) FROM feature_comm WHERE reads > 0"
			   " AND configures + listens = 0"),
			 1);
	assert_int_equal(
		q("SELECT configures FROM feature_comm WHERE comm = 'java'"),
		1);
	unlink(dbpath);
}

/* Every column of every usage row, one text (the view or the table). */
#define USAGE_ALL                                                              \
	"SELECT group_concat(quote(id) || quote(host_id) || quote(boot_id) ||" \
	" quote(feature_id) || quote(file) || quote(op) || quote(cgroup) ||"   \
	" quote(comm) || quote(uid) || quote(writer_cgroup) ||"                \
	" quote(container) || quote(last_pid) || quote(count) ||"              \
	" quote(failed) || quote(condition_met) || quote(first_seen) ||"       \
	" quote(last_seen) || quote(key_check) || quote(target_kind) ||"       \
	" quote(image) || quote(value_last) || quote(value_min) ||"            \
	" quote(value_max) || quote(value_unlimited) || quote(value_unit) ||"  \
	" quote(value_source), '|') FROM (SELECT * FROM usage ORDER BY id)"

/*
 * @sql's first column as text into @out (@cap bytes); of EXPLAIN QUERY
 * PLAN, its steps' details joined by ';'.
 */
static void text_of(const char *sql, char *out, size_t cap)
{
	bool plan = !strncmp(sql, "EXPLAIN QUERY PLAN", 18);
	size_t o = 0;
	sqlite3 *db;
	sqlite3_stmt *st;

	out[0] = 0;
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && o < cap) {
		const unsigned char *v = sqlite3_column_text(st, plan ? 3 : 0);

		o += (size_t)snprintf(out + o, cap - o, "%s;",
				      v ? (const char *)v : "(null)");
		if (!plan)
			break;
	}
	assert_true(o > 0 && o < cap);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/*
 * Migration 021 splits usage into usage_key and usage_count: every row
 * reads the same through the view, column by column, the process counts
 * stay, and the view takes an insert and a delete into both tables.
 */
static void test_usage_split_migration(void **state)
{
	struct twl_store *s = NULL;
	char before[4096], after[4096];

	(void)state;
	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 20)
			exec_sql(m->sql);
	exec_sql(
		"PRAGMA user_version = 20;"
		" INSERT INTO usage(id, host_id, boot_id, feature_id, file, op,"
		" cgroup, comm, uid, writer_cgroup, container, last_pid, count,"
		" failed, condition_met, first_seen, last_seen, key_check,"
		" target_kind, image, value_last, value_min, value_max,"
		" value_unlimited, value_unit, value_source) VALUES"
		" (7, 'aa', 'b', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'write', '/a', 'java', 0, '/',"
		" 'docker:1', 41, 5, 1, 2, 1764000000, 1764500000, -12,"
		" 'container', '/usr/bin/java', 4096, 1024, 8192, 1, 'bytes',"
		" 'write'),"
		" (-9, 'aa', 'b', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'read', '/a', 'java', 0, '/', '',"
		" 0, 9, 0, 0, 1764000000, 1764500000, NULL, NULL, NULL, NULL,"
		" NULL, NULL, NULL, NULL, NULL)");
	text_of(USAGE_ALL, before, sizeof(before));
	assert_int_equal(q("SELECT reads FROM feature_comm"), 1);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	text_of(USAGE_ALL, after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(q("SELECT count(*) FROM usage_key"), 2);
	assert_int_equal(q("SELECT count(*) FROM usage_count"), 2);
	assert_int_equal(q("SELECT configures + reads FROM feature_comm"), 2);
	/* the view as the table was: an insert without an id, a delete */
	exec_sql("INSERT INTO usage(host_id, boot_id, feature_id, file, op,"
		 " cgroup, comm, uid, writer_cgroup, count, first_seen,"
		 " last_seen) VALUES ('bb', 'b', 'memcg_v1.soft_limit',"
		 " 'memory.soft_limit_in_bytes', 'write', '/b', 'runc', 0,"
		 " '/', 3, 1764000000, 1764600000)");
	assert_int_equal(q("SELECT count(*) FROM usage_count c JOIN usage_key k"
			   " USING (id) WHERE k.host_id = 'bb' AND c.count = 3"
			   " AND c.container = '' AND c.failed = 0"),
			 1);
	assert_int_equal(q("SELECT configures FROM feature_comm"
			   " WHERE comm = 'runc'"),
			 1);
	exec_sql("DELETE FROM usage WHERE host_id = 'bb'");
	assert_int_equal(q("SELECT count(*) FROM usage_key"), 2);
	assert_int_equal(q("SELECT count(*) FROM usage_count"), 2);
	assert_int_equal(q("SELECT count(*) FROM feature_comm"
			   " WHERE comm = 'runc'"),
			 0);
	unlink(dbpath);
}

/*
 * Migration 022 names usage_count's host by its number in host_refs:
 * every row reads the same through the view, each count row carries its
 * key's host's number, every host known gets one, and an insert through
 * the view numbers a new host once and reuses a known host's number.
 */
static void test_host_refs_migration(void **state)
{
	struct twl_store *s = NULL;
	char before[4096], after[4096];

	(void)state;
	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 21)
			exec_sql(m->sql);
	exec_sql(
		"PRAGMA user_version = 21;"
		" INSERT INTO hosts(host_id, first_seen, last_seen, last_hour)"
		" VALUES ('zz', 1764000000, 1764000000, 1764000000 / 3600);"
		" INSERT INTO usage(id, host_id, boot_id, feature_id, file, op,"
		" cgroup, comm, uid, writer_cgroup, container, last_pid, count,"
		" failed, condition_met, first_seen, last_seen, key_check,"
		" value_last, value_unit) VALUES"
		" (7, 'aa', 'b', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'write', '/a', 'java', 0, '/',"
		" 'docker:1', 41, 5, 1, 2, 1764000000, 1764500000, -12, 4096,"
		" 'bytes'),"
		" (-9, 'cc', 'b', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'read', '/a', 'java', 0, '/', '',"
		" 0, 9, 0, 0, 1764000000, 1764500000, NULL, NULL, NULL),"
		" (8, 'aa', 'b', 'memcg_v1.oom_control', 'memory.oom_control',"
		" 'register_event', '/a', 'java', 0, '/', '', 0, 3, 0, 0,"
		" 1764000000, 1764500000, 5, NULL, NULL)");
	text_of(USAGE_ALL, before, sizeof(before));
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	text_of(USAGE_ALL, after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(q("SELECT count(*) FROM host_refs"), 3);
	assert_int_equal(
		q("SELECT count(*) FROM pragma_table_info('usage_count')"
		  " WHERE name = 'host_id'"),
		0);
	/* each count row names its key's host */
	assert_int_equal(q("SELECT count(*) FROM usage_count c JOIN usage_key k"
			   " USING (id) JOIN host_refs r ON r.ref = c.host_ref"
			   " WHERE r.host_id = k.host_id"),
			 3);
	/* through the view: a new host gets a number, a known one keeps its */
	exec_sql(
		"INSERT INTO usage(host_id, boot_id, feature_id, file, op,"
		" cgroup, comm, uid, writer_cgroup, count, first_seen,"
		" last_seen) VALUES ('bb', 'b', 'memcg_v1.soft_limit',"
		" 'memory.soft_limit_in_bytes', 'write', '/b', 'runc', 0,"
		" '/', 3, 1764000000, 1764600000), ('aa', 'b',"
		" 'memcg_v1.soft_limit', 'memory.soft_limit_in_bytes', 'write',"
		" '/b', 'runc', 0, '/', 4, 1764000000, 1764600000)");
	assert_int_equal(q("SELECT count(*) FROM host_refs"), 4);
	assert_int_equal(q("SELECT sum(c.count) FROM usage_count c"
			   " JOIN usage_key k USING (id) JOIN host_refs r"
			   " ON r.ref = c.host_ref WHERE r.host_id = k.host_id"
			   " AND k.comm = 'runc'"),
			 7);
	unlink(dbpath);
}

/* Every column of every batches row, one text (the view or the table). */
#define BATCHES_ALL                                                  \
	"SELECT group_concat(quote(host_id) || quote(batch_id) ||"   \
	" quote(seq) || quote(received) || quote(body_sha256), '|')" \
	" FROM (SELECT * FROM batches ORDER BY host_id, batch_id)"

/*
 * Migration 023 keeps batch ids under their host's number: the view
 * batches reads as the table did, a host with batches and no host row
 * gets a number, and migrate-store's ordered pages of the view (keyed
 * host_id, batch_id) need no sort.
 */
static void test_batch_ids_migration(void **state)
{
	struct twl_store *s = NULL;
	char before[1024], after[1024];

	(void)state;
	unlink(dbpath);
	for (const struct twl_migration *m = twl_migrations; m->name; m++)
		if (atoi(m->name) <= 22)
			exec_sql(m->sql);
	exec_sql("PRAGMA user_version = 22;"
		 " INSERT INTO host_refs(host_id) VALUES ('bb');"
		 " INSERT INTO batches(host_id, batch_id, seq, received,"
		 " body_sha256) VALUES ('bb', 'b1', 1, 1764000000, x'00ff'),"
		 " ('bb', 'b2', 2, 1764000100, NULL),"
		 " ('aa', 'b1', 7, 1764000200, x'5c0a')");
	text_of(BATCHES_ALL, before, sizeof(before));
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("PRAGMA user_version"), twl_migrate_latest());
	text_of(BATCHES_ALL, after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(q("SELECT count(*) FROM batch_ids"), 3);
	assert_int_equal(q("SELECT count(*) FROM host_refs"), 2);
	assert_int_equal(q("SELECT count(*) FROM batch_ids b JOIN host_refs r"
			   " ON r.ref = b.host_ref WHERE r.host_id = 'aa'"
			   " AND b.seq = 7"),
			 1);
	text_of("EXPLAIN QUERY PLAN SELECT host_id, batch_id, seq, received,"
		" body_sha256 FROM batches WHERE (host_id, batch_id) > (?1, ?2)"
		" ORDER BY host_id, batch_id LIMIT ?3",
		after, sizeof(after));
	assert_null(strstr(after, "TEMP B-TREE"));
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrations),
		cmocka_unit_test(test_usage_migration),
		cmocka_unit_test(test_feature_host_migration),
		cmocka_unit_test(test_use_kinds_migration),
		cmocka_unit_test(test_usage_split_migration),
		cmocka_unit_test(test_host_refs_migration),
		cmocka_unit_test(test_batch_ids_migration),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
