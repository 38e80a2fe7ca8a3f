// SPDX-License-Identifier: GPL-2.0
/*
 * What wire format version 2 added, stored by the SQLite backend
 * (migrations 013, 014): usage target kinds, images and value summaries
 * merged per key; records of other boots; labels, runtimes and coverage
 * facts; warnings, counters and knobs of feature ids the catalog lacks,
 * and their re-matching once it knows them. Version 1 reports beside them
 * keep their meaning.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "harness.h"
#include "sqlite_fixture.h"
#include "store/ingest.h"
#include "store/store.h"

#define BOOT "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f"
#define OLD_BOOT "7c3e9a10-55b2-4f0e-8d1c-0a9b8c7d6e5f"

/* full-v2.json of host with batch id batch. */
static json_t *report_v2(const char *host, const char *batch)
{
	json_t *r = load_example("full-v2.json");

	json_object_set_new(json_object_get(r, "host"), "host_id",
			    json_string(host));
	json_object_set_new(r, "batch_id", json_string(batch));
	return r;
}

static struct twl_store *fresh(void)
{
	struct twl_store *s = NULL;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	return s;
}

/* Every member version 2 added is stored; version 1's meaning beside it. */
static void test_v2_members(void **state)
{
	struct twl_store *s = fresh();
	json_t *r = report_v2("a2", "b1");

	ingest_one(s, "a2", r);
	json_decref(r);
	r = report("a1", "b2"); /* full.json: version 1 */
	ingest_one(s, "a1", r);
	json_decref(r);
	/* usage: target kind as sent, image, value summary */
	assert_int_equal(
		q("SELECT count(*) FROM usage WHERE host_id = 'a2'"
		  " AND feature_id = 'memcg_v1.soft_limit'"
		  " AND target_kind = 'systemd_unit' AND image IS NULL"
		  " AND value_last = 2147483648"
		  " AND value_min = 1073741824 AND value_max = 2147483648"
		  " AND value_unlimited = 1 AND value_unit = 'bytes'"
		  " AND value_source = 'stored'"),
		1);
	assert_int_equal(
		q("SELECT count(*) FROM usage WHERE host_id = 'a2'"
		  " AND image = 'registry.example.org/payments/ledger:4.2.1'"
		  " AND target_kind = 'kubernetes' AND value_last = 10"),
		1);
	/* unlimited only: no range */
	assert_int_equal(q("SELECT count(*) FROM usage WHERE host_id = 'a2'"
			   " AND value_last = -1 AND value_min IS NULL"
			   " AND value_max IS NULL AND value_unlimited = 1"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE host_id = 'a2'"
			   " AND op = 'read' AND target_kind = 'root'"
			   " AND value_last IS NULL"),
			 1);
	/* version 1: the kind classified from cgroup, no value, no image */
	assert_int_equal(q("SELECT count(*) FROM usage WHERE host_id = 'a1'"
			   " AND target_kind IS NULL"),
			 0);
	assert_int_equal(
		q("SELECT count(*) FROM usage WHERE host_id = 'a1' AND"
		  " cgroup = '/system.slice/mysql.service'"
		  " AND target_kind = 'systemd_unit' AND value_last IS NULL"
		  " AND image IS NULL"),
		1);
	/* knobs: kinds as sent; runtimes; labels */
	assert_int_equal(q("SELECT count(*) FROM census_knobs WHERE host_id ="
			   " 'a2' AND target_kind = 'container'"),
			 1);
	assert_int_equal(
		q("SELECT count(*) FROM census_knobs WHERE host_id = 'a1'"
		  " AND target_kind IS NULL"),
		0);
	assert_int_equal(q("SELECT count(*) FROM host_runtimes WHERE host_id"
			   " = 'a2'"),
			 8);
	assert_int_equal(q("SELECT count(*) FROM host_runtimes WHERE host_id ="
			   " 'a2' AND name = 'docker' AND version = '24.0.7'"
			   " AND cgroup_driver = 'cgroupfs'"),
			 1);
	assert_int_equal(
		q("SELECT count(*) FROM host_labels WHERE host_id ="
		  " 'a2' AND key = 'k8s.zone' AND value = 'eu-west-1a'"),
		1);
	assert_int_equal(q("SELECT count(*) FROM host_labels"), 3);
	twl_store_close(s);
}

/*
 * Records carry their boot and kernel; one of another boot never changes
 * the host's current boot or kernel, whatever order reports come in.
 */
static void test_record_boots(void **state)
{
	struct twl_store *s = fresh();
	json_t *r = report_v2("a2", "b1"), *w;
	size_t i;

	ingest_one(s, "a2", r);
	assert_int_equal(
		q("SELECT count(*) FROM warnings WHERE boot_id = '" BOOT
		  "' AND kernel = '6.1.0-28-amd64' AND source ="
		  " 'kmsg' AND origin = 'kmsg'"),
		1);
	assert_int_equal(
		q("SELECT count(*) FROM warnings WHERE boot_id = '" OLD_BOOT
		  "' AND kernel = '6.1.0-27-amd64' AND source ="
		  " 'journal_export' AND origin = 'journal'"),
		1);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " origin = 'journal' AND source = 'journal' AND"
			   " kernel = '6.1.0-28-amd64' AND boot_id = '" BOOT
			   "'"),
			 1);
	/* a later report holding only records of the old boot */
	json_object_set_new(r, "batch_id", json_string("b2"));
	json_array_foreach(json_object_get(r, "warnings"), i, w)
	{
		json_object_set_new(w, "boot_id", json_string(OLD_BOOT));
		json_object_set_new(w, "kernel", json_string("6.1.0-27-amd64"));
		json_object_set_new(w, "kmsg_seq", json_integer(100 + i));
	}
	ingest_at(s, "a2", r, 2000);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM hosts WHERE boot_id = '" BOOT
			   "' AND kernel = '6.1.0-28-amd64'"),
			 1);
	assert_int_equal(
		q("SELECT count(*) FROM warnings WHERE boot_id = '" OLD_BOOT
		  "'"),
		5);
	twl_store_close(s);
}

/*
 * host.labels replace the host's when a report carries them (an empty
 * object removes them), and stay when it does not; unchanged labels are
 * not rewritten.
 */
static void test_labels(void **state)
{
	struct twl_store *s = fresh();
	json_t *r = report_v2("a2", "b1"), *labels;

	ingest_one(s, "a2", r);
	exec_sql("CREATE TABLE label_writes(n INT);"
		 " CREATE TRIGGER label_writes AFTER INSERT ON host_labels"
		 " BEGIN INSERT INTO label_writes VALUES(1); END");
	json_object_set_new(r, "batch_id", json_string("b2"));
	ingest_one(s, "a2", r); /* the same labels */
	assert_int_equal(q("SELECT count(*) FROM label_writes"), 0);
	labels = json_object_get(json_object_get(r, "host"), "labels");
	json_object_set_new(labels, "env", json_string("staging"));
	json_object_del(labels, "team");
	json_object_set_new(r, "batch_id", json_string("b3"));
	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT count(*) FROM host_labels"), 2);
	assert_int_equal(q("SELECT count(*) FROM host_labels WHERE key = 'env'"
			   " AND value = 'staging'"),
			 1);
	json_object_del(json_object_get(r, "host"), "labels");
	json_object_set_new(r, "batch_id", json_string("b4"));
	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT count(*) FROM host_labels"), 2);
	json_object_set_new(json_object_get(r, "host"), "labels",
			    json_object());
	json_object_set_new(r, "batch_id", json_string("b5"));
	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT count(*) FROM host_labels"), 0);
	json_decref(r);
	twl_store_close(s);
}

/* The bit of a coverage fact (TWL_FACT_*) as a mask. */
#define BIT(b) ((int64_t)1 << (b))

/*
 * Coverage facts from health: per controller, boots, counters; the
 * fleet's counts follow every change and an unchanged host writes
 * nothing.
 */
static void test_coverage(void **state)
{
	struct twl_store *s = fresh();
	json_t *r = report_v2("a2", "b1"), *h;
	int64_t want =
		BIT(TWL_FACT_BPF_ATTACHED + 0) | /* memory */
		BIT(TWL_FACT_BPF_ATTACHED + 4) | /* cgroup */
		BIT(TWL_FACT_BPF_UNAVAILABLE + 1) | /* cpuset */
		BIT(TWL_FACT_BPF_UNAVAILABLE + 3) | /* blkio */
		BIT(TWL_FACT_BPF_NOT_BUILT + 2) | /* freezer */
		BIT(TWL_FACT_CONTROLLERS) | BIT(TWL_FACT_BOOTS) |
		BIT(TWL_FACT_BOOT_COVERED) | BIT(TWL_FACT_SOME_BOOT_UNCOVERED) |
		BIT(TWL_FACT_JOURNAL_MISSED) | BIT(TWL_FACT_JOURNAL_ERRORS) |
		BIT(TWL_FACT_PROBE_NOT_BUILT);

	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT facts FROM host_coverage"), want);
	assert_int_equal(q("SELECT boots || ',' || boots_uncovered || ',' ||"
			   " journal_missed || ',' || probes_not_built ="
			   " '3,2,12,1' FROM host_coverage"),
			 1);
	assert_int_equal(qf("SELECT count(*) FROM coverage_count"
			    " WHERE hosts != ((%lld >> bit) & 1)",
			    (long long)want),
			 0);
	/* unchanged: no write; changed: counts move */
	exec_sql("CREATE TABLE cov_writes(n INT);"
		 " CREATE TRIGGER cov_writes AFTER UPDATE ON host_coverage"
		 " BEGIN INSERT INTO cov_writes VALUES(1); END");
	json_object_set_new(r, "batch_id", json_string("b2"));
	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT count(*) FROM cov_writes"), 0);
	h = json_object_get(r, "health");
	json_object_set_new(h, "records_lost", json_integer(3));
	json_object_del(h, "controllers");
	json_object_set_new(r, "batch_id", json_string("b3"));
	ingest_one(s, "a2", r);
	assert_int_equal(q("SELECT count(*) FROM cov_writes"), 1);
	assert_int_equal(qf("SELECT hosts FROM coverage_count WHERE bit = %d",
			    TWL_FACT_RECORDS_LOST),
			 1);
	assert_int_equal(qf("SELECT hosts FROM coverage_count WHERE bit = %d",
			    TWL_FACT_BPF_ATTACHED),
			 0);
	assert_int_equal(qf("SELECT sum(hosts) FROM coverage_count WHERE"
			    " bit BETWEEN 0 AND %d",
			    TWL_FACT_CONTROLLERS),
			 0);
	/* a second host, version 1: no controllers, no boots */
	json_decref(r);
	r = report("a1", "c1");
	ingest_one(s, "a1", r);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM host_coverage"), 2);
	assert_int_equal(qf("SELECT hosts FROM coverage_count WHERE bit = %d",
			    TWL_FACT_BOOTS),
			 1);
	assert_int_equal(
		q("SELECT sum(hosts) FROM coverage_count"),
		q("SELECT sum((SELECT count(*) FROM host_coverage c"
		  " WHERE (c.facts >> bit) & 1)) FROM coverage_count"));
	twl_store_close(s);
}

/* One usage key of a v2 report: count, last_seen and value summary. */
static json_t *value_report(const char *batch, int count, int last_seen,
			    const char *value)
{
	json_t *r = report_v2("a2", batch), *u, *arr;
	json_error_t e;

	arr = json_object_get(r, "usage");
	u = json_incref(json_array_get(arr, 1)); /* swappiness, number */
	json_array_clear(arr);
	json_array_append_new(arr, u);
	json_object_set_new(u, "count", json_integer(count));
	json_object_set_new(u, "condition_met", json_integer(count));
	json_object_set_new(u, "last_seen", json_integer(last_seen));
	json_object_set_new(u, "value", json_loads(value, 0, &e));
	assert_non_null(json_object_get(u, "value"));
	return r;
}

#define SUMMARY                                                          \
	"SELECT value_last || ',' || coalesce(value_min, 'n') || ',' ||" \
	" coalesce(value_max, 'n') || ',' || value_unlimited FROM usage"

/* The summary after storing reports[order[0..n)] in a fresh store. */
static void merge_in_order(const int *order, size_t n, const char *want)
{
	static const char *const values[] = {
		"{\"last\":10,\"min\":5,\"max\":10,\"unlimited\":false,"
		"\"unit\":\"number\",\"source\":\"parsed\"}",
		"{\"last\":7,\"min\":7,\"max\":20,\"unlimited\":true,"
		"\"unit\":\"number\",\"source\":\"parsed\"}",
		"{\"last\":99,\"min\":1,\"max\":99,\"unlimited\":false,"
		"\"unit\":\"number\",\"source\":\"parsed\"}",
		"{\"last\":50,\"min\":50,\"max\":50,\"unlimited\":false,"
		"\"unit\":\"number\",\"source\":\"parsed\"}",
	};
	static const int counts[] = { 5, 8, 6, 8 };
	static const int seen[] = { 1764733001, 1764733002, 1764733003,
				    1764733004 };
	struct twl_store *s = fresh();
	char batch[8], got[64];
	sqlite3 *db;
	sqlite3_stmt *st;

	for (size_t i = 0; i < n; i++) {
		int k = order[i];
		json_t *r;

		snprintf(batch, sizeof(batch), "b%d", k);
		r = value_report(batch, counts[k], seen[k], values[k]);
		ingest_one(s, "a2", r);
		/* a replay of the same batch changes nothing */
		assert_int_equal(twl_store_write_begin(s), 0);
		assert_int_equal(twl_store_ingest(s, "a2", r, 1000), 1);
		assert_int_equal(twl_store_write_end(s, true), 0);
		json_decref(r);
	}
	twl_store_close(s);
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, SUMMARY, -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(got, sizeof(got), "%s", sqlite3_column_text(st, 0));
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_string_equal(got, want);
}

/*
 * value merged per key: min of mins, max of maxes, OR of unlimited, last
 * of the entry with the greater count (ties: the later last_seen), also
 * when the counter did not grow; the same in any order.
 */
static void test_value_merge(void **state)
{
	static const int in_order[] = { 0, 1, 2, 3 };
	static const int shuffled[] = { 3, 2, 0, 1 };
	static const int reversed[] = { 3, 2, 1, 0 };

	merge_in_order(in_order, 1, "10,5,10,0");
	merge_in_order(in_order, 2, "7,5,20,1");
	merge_in_order(in_order, 3, "7,1,99,1"); /* count 6 < 8: last kept */
	merge_in_order(in_order, 4, "50,1,99,1"); /* 8 = 8, seen later */
	merge_in_order(shuffled, 4, "50,1,99,1");
	merge_in_order(reversed, 4, "50,1,99,1");
}

/*
 * Catalog skew: a warning of a feature id the catalog lacks becomes an
 * unknown text with that id (digits normalised, no rollup); usage and
 * knobs are stored under the id as-is.
 */
static void test_skew_stored(void **state)
{
	struct twl_store *s = fresh();
	json_t *r = report("a1", "b1"), *w, *u, *k;

	w = json_array_get(json_object_get(r, "warnings"), 0);
	json_object_set_new(w, "feature", json_string("memcg_v9.future"));
	json_object_set_new(w, "text",
			    json_string("future knob 42 is deprecated"));
	u = json_array_get(json_object_get(r, "usage"), 0);
	json_object_set_new(u, "feature", json_string("memcg_v9.future"));
	k = json_array_get(
		json_object_get(json_object_get(r, "census"), "knobs"), 0);
	json_object_set_new(k, "feature", json_string("memcg_v9.future"));
	ingest_one(s, "a1", r);
	json_decref(r);
	assert_int_equal(q("SELECT count(*) FROM warnings WHERE feature_id ="
			   " 'memcg_v9.future'"),
			 0);
	assert_int_equal(q("SELECT count FROM unknown_deprecations WHERE"
			   " feature_id = 'memcg_v9.future' AND text ="
			   " 'future knob ## is deprecated'"
			   " AND matched_feature_id IS NULL"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM usage WHERE feature_id ="
			   " 'memcg_v9.future'"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM census_knobs WHERE feature_id"
			   " = 'memcg_v9.future'"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM feature_host WHERE feature_id"
			   " = 'memcg_v9.future'"),
			 1);
	check_buckets();
	twl_store_close(s);
}

/*
 * Once the catalog knows a pending text's feature id, or one of its
 * messages matches a text, twl_store_catalog_rematch() matches them and
 * counts them in the rollups; at open only when the catalog is new to
 * the database.
 */
static void test_rematch(void **state)
{
	struct twl_store *s = fresh();
	int64_t n = -1;

	/* stored when the catalog lacked these: pending */
	exec_sql("INSERT INTO unknown_deprecations(host_id, boot_id, text,"
		 " first_kmsg_seq, first_time, count, received, feature_id)"
		 " VALUES('h1', 'b', 'some text', 0, 7200, 3, 7200,"
		 " 'memcg_v1.oom_control'),"
		 " ('h1', 'b', 'other text', 0, 7300, 1, 7300,"
		 " 'memcg_v9.still_unknown'),"
		 " ('h2', 'b', 'soft_limit_in_bytes is deprecated and will be"
		 " removed. Please report your usecase to linux-mm@kvack.org"
		 " if you depend on this functionality.', 0, 9000, 2, 9000,"
		 " NULL)");
	assert_int_equal(twl_store_catalog_rematch(s, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " matched_feature_id = 'memcg_v1.oom_control'"
			   " AND host_id = 'h1'"),
			 1);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " matched_feature_id = 'memcg_v1.soft_limit'"
			   " AND host_id = 'h2'"),
			 1);
	/* matched texts are kernel warnings: counted apart, never uses */
	assert_int_equal(q("SELECT warnings FROM feature_host WHERE host_id ="
			   " 'h1' AND feature_id = 'memcg_v1.oom_control'"),
			 3);
	assert_int_equal(q("SELECT sum(uses) FROM feature_host"), 0);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " matched_feature_id IS NULL"),
			 1);
	check_buckets();
	/* again: nothing left to match, nothing counted twice */
	assert_int_equal(twl_store_catalog_rematch(s, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(q("SELECT sum(warnings) FROM feature_host"), 5);
	twl_store_close(s);

	/* at open: not for a catalog the database saw */
	exec_sql("INSERT INTO unknown_deprecations(host_id, boot_id, text,"
		 " first_kmsg_seq, first_time, count, received, feature_id)"
		 " VALUES('h3', 'b', 't', 0, 7200, 1, 7200,"
		 " 'memcg_v1.swappiness')");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " host_id = 'h3' AND matched_feature_id IS NULL"),
			 1);
	/* a catalog new to it: matched */
	exec_sql("UPDATE server_meta SET value = 'older'"
		 " WHERE key = 'catalog_rematched'");
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	twl_store_close(s);
	assert_int_equal(q("SELECT count(*) FROM unknown_deprecations WHERE"
			   " host_id = 'h3' AND matched_feature_id ="
			   " 'memcg_v1.swappiness'"),
			 1);
	check_buckets();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_members),
		cmocka_unit_test(test_record_boots),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_value_merge),
		cmocka_unit_test(test_skew_stored),
		cmocka_unit_test(test_rematch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
