// SPDX-License-Identifier: GPL-2.0
/*
 * Migration status (server/api/migration_status.c, the SQLite store's
 * store_sqlite_migration.c) through the real API of an in-process server:
 * set, replaced, listed, refused with a 400 naming the member, deleted;
 * workloads marked migrated and seen configuring or listening again after
 * the status's date (GET /api/v1/migration-reuse), the fleet posted
 * through the real ingest API; readiness shows the statuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "store/store.h"

#define HOST "9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
#define SOFT "memcg_v1.soft_limit"
#define OOM "memcg_v1.oom_control"
#define MEMSW "memcg_v1.memsw"

/*
 * full.json's uses, moved so that it was sent an hour ago: systemd writes
 * soft_limit (last at T_SYSTEMD), kubelet listens on oom_control (last at
 * T_KUBELET), cadvisor only reads memsw (last at T_CADVISOR).
 */
static int64_t shift;
#define T_SYSTEMD (1764735500 + shift)
#define T_KUBELET (1764734000 + shift)
#define T_CADVISOR (1764735590 + shift)

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	fixture_start(&fx, NULL);
	shift = (int64_t)time(NULL) - FULL_JSON_SENT - 3600;
	post_full_report(&fx, HOST, "0000000000000000000000000000000a", shift);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_stop(&fx);
	return 0;
}

/* POST @fmt as the admin; the answer's status. */
static long set_status(struct http_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static long set_status(struct http_result *r, const char *fmt, ...)
{
	char body[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	http(&fx, "POST", "/api/v1/migration-status", fx.admin, body,
	     strlen(body), NULL, r);
	if (r->status != 200 && r->status != 400)
		print_message("%s -> %ld %.*s\n", body, r->status, (int)r->len,
			      r->body);
	return r->status;
}

static void refused(const char *body, const char *code, const char *field)
{
	struct http_result r;
	int64_t before = count_rows(&fx, "migration_status");

	set_status(&r, "%s", body);
	if (r.status != 400)
		fail_msg("%s: status %ld, want 400", body, r.status);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    code);
	if (*field)
		assert_string_equal(
			json_string_value(json_object_get(r.json, "field")),
			field);
	else
		assert_null(json_object_get(r.json, "field"));
	http_result_fini(&r);
	assert_int_equal(count_rows(&fx, "migration_status"), before);
}

/* The entry of @arr for @feature and @workload (NULL: the whole feature). */
static json_t *entry(json_t *arr, const char *feature, const char *workload)
{
	json_t *x;
	size_t i;

	json_array_foreach(arr, i, x)
	{
		const char *w =
			json_string_value(json_object_get(x, "workload"));

		if (!strcmp(json_string_value(json_object_get(x, "feature")),
			    feature) &&
		    (workload ? w && !strcmp(w, workload) : !w))
			return x;
	}
	return NULL;
}

#define GETI(o, k) json_integer_value(json_object_get((o), (k)))
#define GETS(o, k) json_string_value(json_object_get((o), (k)))

static void test_set_list_delete(void **state)
{
	struct http_result r;
	json_t *e;

	(void)state;
	assert_int_equal(set_status(&r,
				    "{\"feature\":\"" SOFT "\",\"workload\":"
				    "\"java\",\"status\":\"migrating\","
				    "\"owner\":\"team-payments\","
				    "\"date\":\"2026-11-02\"}"),
			 200);
	assert_int_equal(GETI(r.json, "date"), 1793577600);
	assert_string_equal(GETS(r.json, "author"), "t-admin");
	http_result_fini(&r);
	/* Setting again replaces. */
	assert_int_equal(set_status(&r,
				    "{\"feature\":\"" SOFT "\",\"workload\":"
				    "\"java\",\"status\":\"blocked\","
				    "\"reason\":\"needs memory.low per JVM\","
				    "\"owner\":\"team-payments\"}"),
			 200);
	http_result_fini(&r);
	assert_int_equal(count_rows(&fx, "migration_status"), 1);

	http(&fx, "GET", "/api/v1/migration-status?feature=" SOFT, fx.viewer,
	     NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	e = entry(json_object_get(r.json, "statuses"), SOFT, "java");
	assert_non_null(e);
	assert_string_equal(GETS(e, "status"), "blocked");
	assert_string_equal(GETS(e, "reason"), "needs memory.low per JVM");
	assert_string_equal(GETS(e, "owner"), "team-payments");
	assert_true(json_is_null(json_object_get(e, "seen_again")));
	http_result_fini(&r);

	/* Viewers read, only admins write. */
	http(&fx, "POST", "/api/v1/migration-status", fx.viewer, "{}", 2, NULL,
	     &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);

	http(&fx, "DELETE",
	     "/api/v1/migration-status?feature=" SOFT "&workload=java",
	     fx.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	http(&fx, "DELETE",
	     "/api/v1/migration-status?feature=" SOFT "&workload=java",
	     fx.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	http(&fx, "DELETE", "/api/v1/migration-status", fx.admin, NULL, 0, NULL,
	     &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
	assert_int_equal(count_rows(&fx, "migration_status"), 0);
}

static void test_refused(void **state)
{
	(void)state;
	refused("[1]", "wrong_type", "");
	refused("{\"feature\":\"" SOFT "\",\"owner\":\"o\"}", "missing_field",
		"status");
	refused("{\"feature\":\"" SOFT
		"\",\"status\":\"done\",\"owner\":\"o\"}",
		"out_of_range", "status");
	refused("{\"feature\":\"nope\",\"status\":\"migrated\",\"owner\":\"o\"}",
		"unknown_feature", "feature");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"blocked\","
		"\"owner\":\"o\"}",
		"missing_field", "reason");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrating\","
		"\"reason\":\"x\",\"owner\":\"o\"}",
		"out_of_range", "reason");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\"}",
		"missing_field", "owner");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\",\"owner\":"
		"\"0123456789012345678901234567890123456789012345678901234567890"
		"1234\"}",
		"too_long", "owner");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\","
		"\"owner\":\"o\",\"workload\":\"a\\u0007b\"}",
		"invalid_text", "workload");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\","
		"\"owner\":\"o\",\"date\":\"2026-13-01\"}",
		"wrong_type", "date");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\","
		"\"owner\":\"o\",\"date\":\"2999-01-01\"}",
		"out_of_range", "date");
	refused("{\"feature\":\"" SOFT "\",\"status\":\"migrated\","
		"\"owner\":\"o\",\"when\":1}",
		"unknown_field", "when");
}

/*
 * Migrated, then seen: systemd writes after its date; the whole of
 * oom_control migrated before kubelet's last registration. Not seen:
 * kubelet's own status dated after its last use, cadvisor (it only
 * reads), java (never seen), and soft_limit as a whole (accepted risk,
 * not migrated).
 */
static void test_reuse(void **state)
{
	struct http_result r;
	json_t *arr, *e;
	char path[96];

	(void)state;
	assert_int_equal(set_status(&r,
				    "{\"feature\":\"" SOFT "\",\"workload\":"
				    "\"systemd\",\"status\":\"migrated\","
				    "\"owner\":\"sre\",\"date\":%lld}",
				    (long long)T_SYSTEMD - 500),
			 200);
	http_result_fini(&r);
	set_status(&r,
		   "{\"feature\":\"" OOM "\",\"status\":\"migrated\","
		   "\"owner\":\"sre\",\"date\":%lld}",
		   (long long)T_KUBELET - 1000);
	http_result_fini(&r);
	set_status(&r,
		   "{\"feature\":\"" OOM "\",\"workload\":\"kubelet\","
		   "\"status\":\"migrated\",\"owner\":\"sre\",\"date\":%lld}",
		   (long long)T_KUBELET + 1);
	http_result_fini(&r);
	set_status(&r,
		   "{\"feature\":\"" MEMSW "\",\"workload\":\"cadvisor\","
		   "\"status\":\"migrated\",\"owner\":\"sre\",\"date\":%lld}",
		   (long long)T_CADVISOR - 1000);
	http_result_fini(&r);
	set_status(&r,
		   "{\"feature\":\"" SOFT "\",\"workload\":\"java\","
		   "\"status\":\"migrated\",\"owner\":\"sre\",\"date\":%lld}",
		   (long long)T_SYSTEMD - 5000);
	http_result_fini(&r);
	set_status(&r,
		   "{\"feature\":\"" SOFT "\",\"status\":\"accepted_risk\","
		   "\"owner\":\"sre\",\"date\":%lld}",
		   (long long)T_SYSTEMD - 5000);
	http_result_fini(&r);
	assert_int_equal(count_rows(&fx, "migration_status"), 6);

	http(&fx, "GET", "/api/v1/migration-reuse", fx.viewer, NULL, 0, NULL,
	     &r);
	assert_int_equal(r.status, 200);
	arr = json_object_get(r.json, "reused");
	assert_int_equal(json_array_size(arr), 2);
	e = entry(arr, SOFT, "systemd");
	assert_non_null(e);
	assert_int_equal(GETI(e, "hosts"), 1);
	assert_int_equal(GETI(e, "last_seen"), T_SYSTEMD);
	assert_string_equal(GETS(e, "ops"), "write");
	e = entry(arr, OOM, NULL);
	assert_non_null(e);
	assert_int_equal(GETI(e, "last_seen"), T_KUBELET);
	assert_string_equal(GETS(e, "ops"), "register_event");
	http_result_fini(&r);

	/* Only news: uses after what the caller already saw. */
	snprintf(path, sizeof(path), "/api/v1/migration-reuse?after=%lld",
		 (long long)T_KUBELET);
	http(&fx, "GET", path, fx.viewer, NULL, 0, NULL, &r);
	arr = json_object_get(r.json, "reused");
	assert_int_equal(json_array_size(arr), 1);
	assert_non_null(entry(arr, SOFT, "systemd"));
	http_result_fini(&r);
	http(&fx, "GET", "/api/v1/migration-reuse?after=x", fx.viewer, NULL, 0,
	     NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);

	/* The list carries the same finding. */
	http(&fx, "GET", "/api/v1/migration-status", fx.viewer, NULL, 0, NULL,
	     &r);
	arr = json_object_get(r.json, "statuses");
	assert_int_equal(json_array_size(arr), 6);
	e = json_object_get(entry(arr, SOFT, "systemd"), "seen_again");
	assert_int_equal(GETI(e, "hosts"), 1);
	assert_true(json_is_null(
		json_object_get(entry(arr, MEMSW, "cadvisor"), "seen_again")));
	http_result_fini(&r);
}

/* The member of @arr whose @key is @val, or NULL. */
static json_t *by(json_t *arr, const char *key, const char *val)
{
	json_t *x;
	size_t i;

	json_array_foreach(arr, i, x)
	{
		if (GETS(x, key) && !strcmp(GETS(x, key), val))
			return x;
	}
	return NULL;
}

/* Readiness shows the status of a feature and of a workload (set above). */
static void test_readiness(void **state)
{
	struct http_result r;
	json_t *soft, *w;

	(void)state;
	http(&fx, "GET", "/api/v1/readiness?target=debian-12-6.12", fx.viewer,
	     NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	soft = by(json_object_get(json_object_get(r.json, "breaks"),
				  "features"),
		  "id", SOFT);
	assert_non_null(soft);
	assert_string_equal(GETS(json_object_get(soft, "migration"), "status"),
			    "accepted_risk");
	w = by(json_object_get(soft, "workloads"), "comm", "systemd");
	assert_non_null(w);
	assert_string_equal(GETS(json_object_get(w, "migration"), "status"),
			    "migrated");
	assert_string_equal(GETS(json_object_get(w, "migration"), "owner"),
			    "sre");
	http_result_fini(&r);
}

/*
 * The store's own rules: a status it cannot hold is -EINVAL; past the cap
 * a new pair is refused and nothing grows, replacing one still works.
 */
static void test_store_rules_and_cap(void **state)
{
	struct twl_migration_status m = { .feature = SOFT,
					  .status = "blocked",
					  .owner = "o",
					  .author = "a",
					  .date = 1,
					  .now = 2 };
	char w[32];
	int64_t i, have = count_rows(&fx, "migration_status");

	(void)state;
	assert_int_equal(twl_store_migration_status_set(fx.store, &m), -EINVAL);
	m.status = "done";
	assert_int_equal(twl_store_migration_status_set(fx.store, &m), -EINVAL);
	m.status = "migrating";
	for (i = have; i < TWL_STORE_MAX_MIGRATION_STATUS; i++) {
		snprintf(w, sizeof(w), "w%lld", (long long)i);
		m.workload = w;
		assert_int_equal(twl_store_migration_status_set(fx.store, &m),
				 0);
	}
	m.workload = "one-more";
	assert_int_equal(twl_store_migration_status_set(fx.store, &m), -EDQUOT);
	m.workload = w;
	m.status = "migrated";
	assert_int_equal(twl_store_migration_status_set(fx.store, &m), 0);
	assert_int_equal(count_rows(&fx, "migration_status"),
			 TWL_STORE_MAX_MIGRATION_STATUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_list_delete),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_readiness),
		cmocka_unit_test(test_store_rules_and_cap),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
