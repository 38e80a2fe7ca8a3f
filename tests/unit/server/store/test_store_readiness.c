// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (twl_read_readiness(), on SQLite store_sqlite_
 * readiness.c) on a fleet stored through the ingest path from validated
 * wire documents, against the shipped targets (schema/targets.json) and
 * against targets made from Debian's real linux-config-6.12 files, which
 * kernel/fetch downloads (apt-get download, never installed) into the
 * kernel cache outside the repository. Without them the test fails.
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

#include <twilight/util.h>
#include <twilight/wire.h>

#include "harness.h"
#include "readiness_fleet.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"
#include "store/store.h"
#include "store/store_read.h"

#define NOW 1764732000LL

static struct twl_store *store;
static char tmpdir[64];

/* Store @r (host @hid) through the store's ingest function. */
static void ingest(const char *hid, json_t *r, void *ctx)
{
	struct twl_verr err;

	if (twl_report_validate(r, &err))
		fail_msg("test report invalid: %s %s %s", err.code, err.field,
			 err.reason);
	assert_int_equal(twl_store_write_begin(store), 0);
	assert_int_equal(twl_store_ingest(store, hid, r, NOW), 0);
	assert_int_equal(twl_store_write_end(store, true), 0);
	json_decref(r);
}

static int group_setup(void **state)
{
	char path[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/twl-readiness-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.db", tmpdir);
	assert_int_equal(twl_store_open(path, &store), 0);
	fleet_seed(NOW, ingest, NULL);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[128];

	twl_store_close(store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* The shipped target @name. */
static json_t *shipped(const char *name)
{
	json_t *doc = twl_targets_shipped(), *t, *out = NULL;
	size_t i;

	assert_non_null(doc);
	json_array_foreach(json_object_get(doc, "targets"), i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")),
			    name))
			out = json_incref(t);
	}
	json_decref(doc);
	assert_non_null(out);
	return out;
}

/* twl_read_readiness() for target @t, as the API asks it. */
static json_t *readiness(const json_t *t, unsigned limit)
{
	json_t *plan = twl_target_plan(t), *ids = json_array(), *v, *out;
	struct twl_readiness_query q = { .since = NOW - 30 * 86400,
					 .limit = limit };
	size_t i;

	assert_non_null(plan);
	json_array_foreach(json_object_get(plan, "removed"), i, v)
		json_array_append(ids, json_object_get(v, "id"));
	q.removed_json = json_dumps(ids, JSON_COMPACT);
	q.interfaces_json =
		json_dumps(json_object_get(plan, "interfaces"), JSON_COMPACT);
	assert_int_equal(twl_read_readiness(store, &q, &out), 0);
	free((char *)q.removed_json);
	free((char *)q.interfaces_json);
	json_decref(ids);
	json_decref(plan);
	return out;
}

/* The fleet (readiness_fleet.h) on the Debian 6.12 target. */
static void test_debian_612(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 100);

	fleet_check_debian_612(doc);
	json_decref(doc);
	json_decref(t);
}

/* A page of one host still counts every host. */
static void test_limit_keeps_counts(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 1);

	assert_int_equal(fleet_num(doc, "breaks", "count"), 5);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(doc, "breaks"), "hosts")),
			 1);
	json_decref(doc);
	json_decref(t);
}

/* A target that removes nothing of what the fleet uses: the measured
 * hosts are ready; kmsg-6 and kmsg-7 (whose warning no longer counts)
 * are not measured. */
static void test_nothing_removed(void **state)
{
	json_t *t = json_pack("{s:s, s:s, s:{s:b}}", "name", "old", "kernel",
			      "6.1", "config", "CONFIG_MEMCG_V1", 1);
	json_t *doc = readiness(t, 100);

	assert_int_equal(fleet_num(doc, "breaks", "count"), 0);
	assert_int_equal(fleet_num(doc, "ready", "count"), 6);
	assert_int_equal(fleet_num(doc, "not_measured", "count"), 2);
	json_decref(doc);
	json_decref(t);
}

/* Debian's real .config files give the shipped target's answer. */
static void test_real_debian_configs(void **state)
{
	static const char *const flavours[] = { "amd64_none_amd64",
						"amd64_none_cloud-amd64",
						"amd64_rt_amd64" };
	json_t *ship = shipped("debian-12-6.12"), *want = readiness(ship, 100);
	json_t *splan = twl_target_plan(ship);
	char err[256], *text;

	for (size_t i = 0; i < 3; i++) {
		json_t *t, *got, *plan;
		size_t len;

		text = debian_config(flavours[i], &len);
		assert_int_equal(twl_target_from_kconfig("debian-up", text, len,
							 NULL, "uploaded", &t,
							 err, sizeof(err)),
				 0);
		free(text);
		assert_string_equal(
			json_string_value(json_object_get(t, "kernel")),
			"6.12.118");
		plan = twl_target_plan(t);
		assert_true(json_equal(json_object_get(plan, "removed"),
				       json_object_get(splan, "removed")));
		got = readiness(t, 100);
		assert_true(json_equal(got, want));
		json_decref(got);
		json_decref(plan);
		json_decref(t);
	}
	json_decref(splan);
	json_decref(want);
	json_decref(ship);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_612),
		cmocka_unit_test(test_limit_keeps_counts),
		cmocka_unit_test(test_nothing_removed),
		cmocka_unit_test(test_real_debian_configs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
