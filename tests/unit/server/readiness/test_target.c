// SPDX-License-Identifier: GPL-2.0
/*
 * Targets (server/readiness/target.c, target_dir.c): the shipped ones are
 * valid, and what a target removes is the catalog's config symbols read
 * against the target's config, not a list kept here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/catalog.h>

#include "readiness/target.h"
#include "readiness/target_dir.h"

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
	if (!out)
		fail_msg("no shipped target %s", name);
	return out;
}

static int in_list(const json_t *arr, const char *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		if (!strcmp(json_string_value(json_object_get(v, "id")), id))
			return 1;
	}
	return 0;
}

/* Every catalog feature whose config symbol is @off is removed by @name,
 * and no other. */
static void expect_removed(const char *name, const char *const *off)
{
	json_t *t = shipped(name), *plan = twl_target_plan(t);
	const struct twl_feature *f;
	size_t i, j, n = 0;

	assert_non_null(plan);
	for (i = 0; (f = twl_catalog_at(i)); i++) {
		int want = 0;

		for (j = 0; off[j]; j++)
			want |= f->config && !strcmp(f->config, off[j]);
		n += want;
		if (want != in_list(json_object_get(plan, "removed"), f->id))
			fail_msg("%s: %s removed should be %d", name, f->id,
				 want);
	}
	assert_true(n > 0);
	json_decref(plan);
	json_decref(t);
}

static void test_shipped_valid(void **state)
{
	json_t *doc = twl_targets_shipped(), *t;
	char err[160];
	size_t i;

	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "targets")), 3);
	json_array_foreach(json_object_get(doc, "targets"), i, t)
	{
		assert_int_equal(twl_target_check(t, err, sizeof(err)), 0);
		assert_non_null(
			json_string_value(json_object_get(t, "source")));
	}
	json_array_foreach(json_object_get(doc, "deadlines"), i, t)
	{
		assert_non_null(
			json_string_value(json_object_get(t, "runtime")));
		assert_non_null(
			json_string_value(json_object_get(t, "source")));
		assert_true(
			json_array_size(json_object_get(t, "cgroup_modes")));
	}
	assert_int_equal(json_array_size(json_object_get(doc, "deadlines")), 2);
	json_decref(doc);
}

static void test_plans(void **state)
{
	static const char *const debian[] = { "CONFIG_MEMCG_V1",
					      "CONFIG_CPUSETS_V1", NULL };
	static const char *const u611[] = { "CONFIG_MEMCG_V1", NULL };
	json_t *t = shipped("debian-12-6.12"), *plan = twl_target_plan(t);

	expect_removed("debian-12-6.12", debian);
	expect_removed("upstream-6.11-defaults", u611);
	expect_removed("upstream-6.15", debian);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(plan, "interfaces"),
				    "memcg_v1.interface")),
			    "memory");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(plan, "interfaces"),
				    "cpuset_v1.interface")),
			    "cpuset");
	/* swapaccount= stopped working in v6.1: no-op, not removed */
	assert_true(in_list(json_object_get(plan, "no_op"),
			    "memcg_v1.swapaccount"));
	json_decref(plan);
	json_decref(t);
	/* 6.11 has no CONFIG_CPUSETS_V1: stated as unknown, cpuset kept */
	t = shipped("upstream-6.11-defaults");
	plan = twl_target_plan(t);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(plan, "unstated"), 0)),
			    "CONFIG_CPUSETS_V1");
	json_decref(plan);
	json_decref(t);
	/* 6.15 warns about the v1 freezer, whose config it keeps */
	t = shipped("upstream-6.15");
	plan = twl_target_plan(t);
	assert_true(
		in_list(json_object_get(plan, "warns"), "cgroup_v1.freezer"));
	json_decref(plan);
	json_decref(t);
}

static void test_check(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"name\": \"x\", \"kernel\": \"6.12\"}",
		"{\"name\": \"X\", \"kernel\": \"6.12\", \"config\": {}}",
		"{\"name\": \".x\", \"kernel\": \"6.12\", \"config\": {}}",
		"{\"name\": \"x\", \"kernel\": \"six\", \"config\": {}}",
		"{\"name\": \"x\", \"kernel\": \"6.12\", \"config\": {\"A\": true}}",
		("{\"name\": \"x\", \"kernel\": \"6.12\","
		 " \"config\": {\"CONFIG_A\": \"y\"}}"),
	};
	char err[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *t = json_loads(bad[i], 0, NULL);

		assert_non_null(t);
		if (twl_target_check(t, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
		json_decref(t);
	}
	assert_int_equal(twl_kernel_version("v6.15"), 6015);
	assert_int_equal(twl_kernel_version("6.1.0-28-amd64"), 6001);
	assert_int_equal(twl_kernel_version("6"), -1);
	assert_int_equal(twl_kernel_version("6.x"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_valid),
		cmocka_unit_test(test_plans),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
