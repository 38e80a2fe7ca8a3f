// SPDX-License-Identifier: GPL-2.0
/*
 * What people and the alert detector write beside the reports, through
 * the storage interface (store.h, store_read.h, store_alerts.h), the
 * same test run against each backend: SQLite (a file) and PostgreSQL (a
 * database on the fixture's server). Annotations, migration status (and
 * uses seen after a workload migrated), webhooks, the delivery log, the
 * detector's state: their rules, caps and answers; and the same calls on
 * both backends answering the same JSON, byte for byte.
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

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/store.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

static char pg_uri[512];

/* A new empty store of @b. */
static struct twl_store *open_new(enum backend b)
{
	struct twl_store *s = NULL;

	if (b == SQLITE) {
		unlink(dbpath);
		assert_int_equal(twl_store_open(dbpath, &s), 0);
	} else {
		pg_fixture_db(pg_uri, sizeof(pg_uri));
		assert_int_equal(twl_store_open(pg_uri, &s), 0);
	}
	return s;
}

/* @sql (a count, say) on @b's database, beside the store. */
static int64_t raw_q(enum backend b, const char *sql)
{
	return b == SQLITE ? q(sql) : pg_q(pg_uri, sql);
}

/* Run @sql on @b's database, beside the store. */
static void raw_exec(enum backend b, const char *sql)
{
	if (b == SQLITE)
		exec_sql(sql);
	else
		pg_exec(pg_uri, sql);
}

/* @n rows of @row_sql ("INSERT INTO t(...) SELECT ..." without FROM). */
static void raw_fill(enum backend b, const char *insert, const char *select,
		     int n)
{
	char sql[1024];

	if (b == SQLITE)
		snprintf(sql, sizeof(sql),
			 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
			 " SELECT i + 1 FROM n WHERE i < %d) %s %s FROM n",
			 n, insert, select);
	else
		snprintf(sql, sizeof(sql),
			 "%s %s FROM generate_series(1, %d) i", insert, select,
			 n);
	raw_exec(b, sql);
}

#define GETS(o, k) json_string_value(json_object_get((o), (k)))
#define GETI(o, k) json_integer_value(json_object_get((o), (k)))

/* The list @key of *@doc (freed by the caller), checked to hold @n. */
static json_t *list_of(json_t *doc, const char *key, size_t n)
{
	json_t *arr = json_object_get(doc, key);

	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), n);
	return arr;
}

static void test_annotations(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_annotation a = { .feature = "soft",
				    .workload = "java",
				    .text = "heap sizing",
				    .fits = "partial",
				    .intent = "intentional",
				    .set_by = "puppet",
				    .v2_tried = "falls_short",
				    .shortfall = "no soft limit",
				    .team = "jvm",
				    .author = "carol",
				    .now = 300 };
	int64_t id1, id2, id3;
	json_t *doc, *arr, *e;

	assert_int_equal(twl_store_annotation_add(s, "oom", NULL, "oomd", "no",
						  "alice", 100, &id1),
			 0);
	assert_int_equal(twl_store_annotation_put(s, &a, &id2), 0);
	assert_int_equal(twl_store_annotation_add(s, "oom", "x", "later", NULL,
						  "bob", 50, &id3),
			 0);
	assert_true(id1 < id2 && id2 < id3);
	/* the rules: -EINVAL, nothing stored */
	assert_int_equal(twl_store_annotation_add(s, "oom", NULL, "x", "maybe",
						  "bob", 1, NULL),
			 -EINVAL);
	a.v2_tried = "works"; /* a shortfall only when it falls short */
	assert_int_equal(twl_store_annotation_put(s, &a, NULL), -EINVAL);
	a.v2_tried = "falls_short";
	a.team = "";
	assert_int_equal(twl_store_annotation_put(s, &a, NULL), -EINVAL);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM annotations"), 3);

	/* by feature, then time: oom's 50 before its 100, then soft */
	assert_int_equal(twl_read_annotations(s, NULL, &doc), 0);
	arr = list_of(doc, "annotations", 3);
	assert_int_equal(GETI(json_array_get(arr, 0), "id"), id3);
	assert_int_equal(GETI(json_array_get(arr, 1), "id"), id1);
	e = json_array_get(arr, 2);
	assert_string_equal(GETS(e, "feature"), "soft");
	assert_string_equal(GETS(e, "workload"), "java");
	assert_string_equal(GETS(e, "shortfall"), "no soft limit");
	assert_string_equal(GETS(e, "team"), "jvm");
	assert_int_equal(GETI(e, "created"), 300);
	json_decref(doc);
	assert_int_equal(twl_read_annotations(s, "oom", &doc), 0);
	e = json_array_get(list_of(doc, "annotations", 2), 1);
	assert_true(json_is_null(json_object_get(e, "workload")));
	assert_true(json_is_null(json_object_get(e, "team")));
	assert_string_equal(GETS(e, "fits"), "no");
	json_decref(doc);

	assert_int_equal(twl_store_annotation_delete(s, id1), 0);
	assert_int_equal(twl_store_annotation_delete(s, id1), -ENOENT);
	assert_int_equal(twl_read_annotations(s, "oom", &doc), 0);
	list_of(doc, "annotations", 1);
	json_decref(doc);
	twl_store_close(s);
}

/* The one past the cap is refused; a place freed is taken again. */
static void test_annotation_cap(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	int64_t id;

	raw_fill(b,
		 "INSERT INTO annotations(feature_id, text, author, created)",
		 "SELECT 'f', 'n', 'a', 1", TWL_STORE_MAX_ANNOTATIONS - 1);
	assert_int_equal(twl_store_annotation_add(s, "f", NULL, "last", NULL,
						  "a", 2, &id),
			 0);
	assert_int_equal(twl_store_annotation_add(s, "f", NULL, "one more",
						  NULL, "a", 3, NULL),
			 -EDQUOT);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM annotations"),
			 TWL_STORE_MAX_ANNOTATIONS);
	assert_int_equal(twl_store_annotation_delete(s, id), 0);
	assert_int_equal(twl_store_annotation_add(s, "f", NULL, "fits again",
						  NULL, "a", 4, NULL),
			 0);
	twl_store_close(s);
}

static void test_migration_status(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_migration_status m = { .feature = "soft",
					  .workload = "java",
					  .status = "migrated",
					  .owner = "jvm",
					  .author = "carol",
					  .date = 1000,
					  .now = 2000 };
	json_t *doc, *arr, *e;

	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	m.workload = NULL;
	m.status = "blocked"; /* needs a reason */
	assert_int_equal(twl_store_migration_status_set(s, &m), -EINVAL);
	m.reason = "needs v2 soft limits";
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	/* replaced, not added */
	m.workload = "java";
	m.status = "migrating";
	m.reason = NULL;
	m.now = 3000;
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM migration_status"), 2);

	assert_int_equal(twl_read_migration_status(s, "soft", &doc), 0);
	arr = list_of(doc, "statuses", 2);
	e = json_array_get(arr, 0);
	assert_true(json_is_null(json_object_get(e, "workload")));
	assert_string_equal(GETS(e, "status"), "blocked");
	assert_string_equal(GETS(e, "reason"), "needs v2 soft limits");
	assert_true(json_is_null(json_object_get(e, "seen_again")));
	e = json_array_get(arr, 1);
	assert_string_equal(GETS(e, "workload"), "java");
	assert_string_equal(GETS(e, "status"), "migrating");
	assert_true(json_is_null(json_object_get(e, "reason")));
	assert_int_equal(GETI(e, "updated"), 3000);
	json_decref(doc);
	assert_int_equal(twl_read_migration_status(s, "other", &doc), 0);
	list_of(doc, "statuses", 0);
	json_decref(doc);

	assert_int_equal(twl_store_migration_status_delete(s, "soft", "java"),
			 0);
	assert_int_equal(twl_store_migration_status_delete(s, "soft", "java"),
			 -ENOENT);
	assert_int_equal(twl_store_migration_status_delete(s, NULL, NULL),
			 -EINVAL);
	assert_int_equal(twl_store_migration_status_delete(s, "soft", NULL), 0);
	twl_store_close(s);
}

/* A usage row of @comm on @host: @op at @t. */
static void raw_usage(enum backend b, int id, const char *host,
		      const char *comm, const char *op, int64_t t)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO usage(id, host_id, boot_id, feature_id, file, op,"
		 " cgroup, comm, uid, writer_cgroup, count, first_seen,"
		 " last_seen) VALUES (%d, '%s', 'b', 'soft', 'f', '%s', '/',"
		 " '%s', 0, '/', 1, %lld, %lld)",
		 id, host, op, comm, (long long)t, (long long)t);
	raw_exec(b, sql);
}

/* A workload marked migrated and seen writing after it uses it again. */
static void test_migration_reuse(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_migration_status m = { .feature = "soft",
					  .workload = "java",
					  .status = "migrated",
					  .owner = "jvm",
					  .author = "carol",
					  .date = 1000,
					  .now = 1000 };
	json_t *doc, *e;

	raw_usage(b, 1, "h1", "java", "write", 900); /* before: no news */
	raw_usage(b, 2, "h2", "java", "write", 1500);
	raw_usage(b, 3, "h3", "java", "write", 1700);
	raw_usage(b, 4, "h4", "java", "read", 1800); /* a read is no use */
	raw_usage(b, 5, "h5", "runc", "write", 1900); /* another process */
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);

	assert_int_equal(twl_read_migration_reuse(s, 0, &doc), 0);
	e = json_array_get(list_of(doc, "reused", 1), 0);
	assert_string_equal(GETS(e, "workload"), "java");
	assert_int_equal(GETI(e, "hosts"), 2);
	assert_int_equal(GETI(e, "last_seen"), 1700);
	assert_string_equal(GETS(e, "ops"), "write");
	json_decref(doc);
	/* only what came after @after */
	assert_int_equal(twl_read_migration_reuse(s, 1600, &doc), 0);
	assert_int_equal(
		GETI(json_array_get(list_of(doc, "reused", 1), 0), "hosts"), 1);
	json_decref(doc);
	assert_int_equal(twl_read_migration_reuse(s, 1700, &doc), 0);
	list_of(doc, "reused", 0);
	json_decref(doc);

	assert_int_equal(twl_read_migration_status(s, NULL, &doc), 0);
	e = json_object_get(json_array_get(list_of(doc, "statuses", 1), 0),
			    "seen_again");
	assert_int_equal(GETI(e, "hosts"), 2);
	assert_int_equal(GETI(e, "last_seen"), 1700);
	json_decref(doc);
	twl_store_close(s);
}

static void test_webhooks(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	int64_t first = 0, id;
	json_t *doc, *e;
	char url[64];

	assert_int_equal(twl_store_webhook_add(s, NULL, "k", "a", 1, NULL),
			 -EINVAL);
	for (int i = 0; i < TWL_STORE_MAX_WEBHOOKS; i++) {
		snprintf(url, sizeof(url), "https://h%d.example/", i);
		assert_int_equal(twl_store_webhook_add(s, url, "sec", "alice",
						       10 + i, &id),
				 0);
		first = first ? first : id;
	}
	assert_int_equal(twl_store_webhook_add(s, "https://x.example/", "k",
					       "a", 99, NULL),
			 -EDQUOT);
	assert_int_equal(twl_store_webhook_list(s, false, &doc), 0);
	e = json_array_get(list_of(doc, "webhooks", TWL_STORE_MAX_WEBHOOKS), 0);
	assert_int_equal(GETI(e, "id"), first);
	assert_string_equal(GETS(e, "url"), "https://h0.example/");
	assert_int_equal(GETI(e, "created"), 10);
	assert_string_equal(GETS(e, "author"), "alice");
	assert_null(json_object_get(e, "secret"));
	json_decref(doc);
	assert_int_equal(twl_store_webhook_list(s, true, &doc), 0);
	e = json_array_get(list_of(doc, "webhooks", TWL_STORE_MAX_WEBHOOKS), 0);
	assert_string_equal(GETS(e, "secret"), "sec");
	json_decref(doc);

	assert_int_equal(twl_store_webhook_delete(s, first), 0);
	assert_int_equal(twl_store_webhook_delete(s, first), -ENOENT);
	assert_int_equal(twl_store_webhook_add(s, "https://x.example/", "k",
					       "a", 99, NULL),
			 0);
	twl_store_close(s);
}

/* Delivery @i of webhook @hook, logged. */
static void log_delivery(struct twl_store *s, int64_t hook, int i,
			 const char *error)
{
	char event[32];
	struct twl_delivery_row r = { .webhook_id = hook,
				      .event_id = event,
				      .kind = "new_use",
				      .attempt = (unsigned)i,
				      .status = error ? "retrying" :
							"delivered",
				      .http_status = error ? 0 : 204,
				      .error = error,
				      .at = 500 + i };

	snprintf(event, sizeof(event), "ev-%d", i);
	assert_int_equal(twl_store_delivery_log(s, &r), 0);
}

static void test_deliveries(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_delivery_row bad = { .webhook_id = 1, .kind = "k" };
	json_t *doc, *arr, *e;

	log_delivery(s, 1, 1, NULL);
	log_delivery(s, 2, 2, "connection refused");
	log_delivery(s, 1, 3, NULL);
	assert_int_equal(twl_store_delivery_log(s, &bad), -EINVAL);
	assert_int_equal(twl_store_deliveries(s, 0, 0, &doc), -EINVAL);
	assert_null(doc);
	assert_int_equal(twl_store_deliveries(s, -1, 5, &doc), -EINVAL);

	assert_int_equal(twl_store_deliveries(s, 0, 10, &doc), 0);
	arr = list_of(doc, "deliveries", 3);
	e = json_array_get(arr, 0); /* newest first */
	assert_string_equal(GETS(e, "event_id"), "ev-3");
	assert_true(json_is_null(json_object_get(e, "error")));
	assert_int_equal(GETI(e, "http_status"), 204);
	e = json_array_get(arr, 1);
	assert_string_equal(GETS(e, "error"), "connection refused");
	assert_string_equal(GETS(e, "status"), "retrying");
	assert_int_equal(GETI(e, "webhook_id"), 2);
	assert_int_equal(GETI(e, "attempt"), 2);
	assert_int_equal(GETI(e, "at"), 502);
	json_decref(doc);
	assert_int_equal(twl_store_deliveries(s, 1, 1, &doc), 0);
	e = json_array_get(list_of(doc, "deliveries", 1), 0);
	assert_string_equal(GETS(e, "event_id"), "ev-3");
	json_decref(doc);

	/* a full log keeps its newest rows, and no more */
	raw_fill(b,
		 "INSERT INTO webhook_deliveries(webhook_id, event_id, kind,"
		 " attempt, status, http_status, at)",
		 "SELECT 3, 'old', 'k', 1, 'failed', 0, 1",
		 TWL_STORE_MAX_DELIVERIES);
	log_delivery(s, 1, 4, NULL);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM webhook_deliveries"),
			 TWL_STORE_MAX_DELIVERIES);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM webhook_deliveries"
				  " WHERE event_id LIKE 'ev-%'"),
			 1);
	twl_store_close(s);
}

static void test_alert_state(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_new(b);
	struct twl_alert_kv kv[3] = {
		{ .key = "use|soft|host|h1", .value = 50, .keep_max = true },
		{ .key = "lost|h1|3", .value = 3 },
		{ .key = "use|soft|host|h1", .value = 70, .keep_max = true },
	};

	assert_int_equal(twl_store_alert_swap(s, kv, 0, 100), 0);
	/* one key twice in a batch: the second sees the first */
	assert_int_equal(twl_store_alert_swap(s, kv, 3, 100), 0);
	assert_false(kv[0].had);
	assert_false(kv[1].had);
	assert_true(kv[2].had);
	assert_int_equal(kv[2].old, 50);
	/* keep_max keeps the larger; a plain key takes the new value */
	kv[0].value = 10;
	kv[1].value = 1;
	assert_int_equal(twl_store_alert_swap(s, kv, 2, 200), 0);
	assert_true(kv[0].had && kv[1].had);
	assert_int_equal(kv[0].old, 70);
	assert_int_equal(kv[1].old, 3);
	assert_int_equal(raw_q(b, "SELECT value FROM alert_state"
				  " WHERE key = 'use|soft|host|h1'"),
			 70);
	assert_int_equal(
		raw_q(b,
		      "SELECT value FROM alert_state WHERE key = 'lost|h1|3'"),
		1);

	/* pruned by time, the scan's own key kept */
	kv[0] = (struct twl_alert_kv){ .key = "scan", .value = 1 };
	kv[1] = (struct twl_alert_kv){ .key = "probe|h2|x", .value = 1 };
	assert_int_equal(twl_store_alert_swap(s, kv, 2, 50), 0);
	assert_int_equal(twl_store_alert_prune(s, 150), 0);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM alert_state"), 3);
	assert_int_equal(twl_store_alert_prune(s, 250), 0);
	assert_int_equal(raw_q(b, "SELECT count(*) FROM alert_state"), 1);
	assert_int_equal(raw_q(b, "SELECT at FROM alert_state"), 50);
	twl_store_close(s);
}

/* The same writes on @s; each read's JSON text, in order, into @out. */
static void script(struct twl_store *s, enum backend b, char **out)
{
	struct twl_annotation a = { .feature = "soft",
				    .text = "t\"q\u00e9",
				    .author = "z",
				    .team = "t",
				    .now = 7 };
	struct twl_migration_status m = { .feature = "soft",
					  .status = "migrated",
					  .owner = "o",
					  .author = "x",
					  .date = 100,
					  .now = 100 };
	json_t *docs[6];
	size_t n = 0;

	assert_int_equal(twl_store_annotation_add(s, "soft", "B", "1", "yes",
						  "x", 5, NULL),
			 0);
	assert_int_equal(twl_store_annotation_add(s, "Soft", "a", "2", NULL,
						  "x", 5, NULL),
			 0);
	assert_int_equal(twl_store_annotation_put(s, &a, NULL), 0);
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	m.workload = "Java";
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	m.workload = "java";
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	raw_usage(b, 1, "h1", "java", "write", 150);
	raw_usage(b, 2, "h2", "java", "register_event", 160);
	assert_int_equal(
		twl_store_webhook_add(s, "https://a/", "k", "x", 1, NULL), 0);
	log_delivery(s, 1, 1, "refused");
	log_delivery(s, 1, 2, NULL);
	assert_int_equal(twl_read_annotations(s, NULL, &docs[n++]), 0);
	assert_int_equal(twl_read_migration_status(s, NULL, &docs[n++]), 0);
	assert_int_equal(twl_read_migration_reuse(s, 0, &docs[n++]), 0);
	assert_int_equal(twl_store_webhook_list(s, true, &docs[n++]), 0);
	assert_int_equal(twl_store_deliveries(s, 0, 10, &docs[n++]), 0);
	assert_int_equal(twl_store_deliveries(s, 1, 1, &docs[n++]), 0);
	for (size_t i = 0; i < n; i++) {
		out[i] = json_dumps(docs[i], 0);
		assert_non_null(out[i]);
		json_decref(docs[i]);
	}
}

/* What one backend answers, the other answers byte for byte. */
static void test_same_json(void **state)
{
	struct twl_store *sq = open_new(SQLITE), *pg = open_new(POSTGRESQL);
	char *a[6], *b[6];

	(void)state;
	script(sq, SQLITE, a);
	script(pg, POSTGRESQL, b);
	for (size_t i = 0; i < 6; i++) {
		print_message("%zu: %s\n", i, a[i]);
		assert_string_equal(a[i], b[i]);
		free(a[i]);
		free(b[i]);
	}
	twl_store_close(sq);
	twl_store_close(pg);
}

static int group_teardown(void **state)
{
	pg_fixture_drop_all(state);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_annotations),	     BOTH(test_annotation_cap),
		BOTH(test_migration_status), BOTH(test_migration_reuse),
		BOTH(test_webhooks),	     BOTH(test_deliveries),
		BOTH(test_alert_state),	     cmocka_unit_test(test_same_json),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
