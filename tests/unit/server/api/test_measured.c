// SPDX-License-Identifier: GPL-2.0
/*
 * "Not seen" or "not measured" (server/api/measured.c): which catalog
 * features the BPF counters count, and the summary's coverage.kmsg_only
 * and per-feature "measured" from a store-shaped summary document, for a
 * fleet with and without BPF on the memory controller.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/measured.h"
#include "store/export_evidence.h"

#define SOFT "memcg_v1.soft_limit"
#define OOM "memcg_v1.oom_control"
#define SWAPACCOUNT "memcg_v1.swapaccount"
#define FREEZER "cgroup_v1.freezer"
#define CPUSET "cgroup_v1.cpuset_sched_load_balance"
#define REMOUNT "cgroup_v1.remount"

static void test_bpf_counted(void **state)
{
	(void)state;
	/* memory control files, and eventfd targets alone */
	assert_true(twl_export_bpf_measurable(twl_catalog_find(SOFT)));
	assert_true(twl_export_bpf_measurable(twl_catalog_find(OOM)));
	assert_true(twl_export_bpf_measurable(
		twl_catalog_find("memcg_v1.usage_threshold")));
	/* a boot parameter, other controllers, cgroup core */
	assert_false(twl_export_bpf_measurable(twl_catalog_find(SWAPACCOUNT)));
	assert_false(twl_export_bpf_measurable(twl_catalog_find(FREEZER)));
	assert_false(twl_export_bpf_measurable(twl_catalog_find(CPUSET)));
	assert_false(twl_export_bpf_measurable(
		twl_catalog_find("cgroup_v1.blkio_reset_stats")));
	assert_false(twl_export_bpf_measurable(twl_catalog_find(REMOUNT)));
	assert_false(twl_export_bpf_measurable(NULL));
}

/* A summary: @ids' features, the first @nseen of them seen. */
static json_t *summary(const char *const *ids, size_t n, size_t nseen,
		       json_t *coverage)
{
	json_t *doc =
		json_pack("{s:[], s:o*}", "features", "coverage", coverage);
	size_t i;

	assert_non_null(doc);
	for (i = 0; i < n; i++)
		json_array_append_new(
			json_object_get(doc, "features"),
			json_pack("{s:s, s:o}", "id", ids[i], "first_seen",
				  i < nseen ? json_integer(1764559200) :
					      json_null()));
	return doc;
}

static int measured(const json_t *doc, size_t i)
{
	json_t *m = json_object_get(
		json_array_get(json_object_get(doc, "features"), i),
		"measured");

	assert_true(json_is_boolean(m));
	return json_is_true(m);
}

/* twl_summary_measured() on @doc, then its coverage.kmsg_only. */
static json_int_t measure(json_t *doc)
{
	assert_int_equal(twl_summary_measured(doc), 0);
	return json_integer_value(
		json_object_get(json_object_get(doc, "coverage"), "kmsg_only"));
}

static const char *const ids[] = {
	SOFT, FREEZER, OOM, FREEZER, SWAPACCOUNT, "test.unknown_feature"
};

static void test_with_bpf(void **state)
{
	json_t *doc;

	(void)state;
	/* seen: SOFT and a freezer warning; the rest never seen */
	doc = summary(ids, 6, 2,
		      json_pack("{s:i, s:i, s:i, s:i, s:i}", "hosts", 5,
				"bpf_memory", 3, "boot_uncovered", 1,
				"records_lost", 0, "probe_missing", 0));
	assert_int_equal(measure(doc), 2);
	assert_true(measured(doc, 0)); /* seen */
	assert_true(measured(doc, 1)); /* a kernel warning seen */
	assert_true(measured(doc, 2)); /* BPF could have counted it */
	assert_false(measured(doc, 3)); /* not memory, never warned */
	assert_false(measured(doc, 4)); /* no file for BPF to count */
	assert_false(measured(doc, 5)); /* not in the catalog */
	json_decref(doc);
}

static void test_without_bpf(void **state)
{
	json_t *doc;

	(void)state;
	doc = summary(ids, 6, 1,
		      json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "hosts", 4,
				"bpf_memory", 0, "unmeasured", 1,
				"boot_uncovered", 0, "records_lost", 2,
				"probe_missing", 1));
	/* one host has neither BPF nor a log source: not kernel log only */
	assert_int_equal(measure(doc), 3);
	assert_true(measured(doc, 0)); /* seen counts whatever the coverage */
	assert_false(measured(doc, 2)); /* memory, but no host counts by BPF */
	assert_false(measured(doc, 1));
	json_decref(doc);
	/* no coverage at all (a backend without it): nothing counted by BPF */
	doc = summary(ids, 3, 0, NULL);
	assert_int_equal(twl_summary_measured(doc), 0);
	assert_null(json_object_get(doc, "coverage"));
	assert_false(measured(doc, 0));
	assert_false(measured(doc, 2));
	json_decref(doc);
}

static void test_not_a_summary(void **state)
{
	json_t *doc = json_pack("{s:{}}", "features");

	(void)state;
	assert_int_equal(twl_summary_measured(doc), -EINVAL);
	assert_int_equal(twl_summary_measured(NULL), -EINVAL);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bpf_counted),
		cmocka_unit_test(test_with_bpf),
		cmocka_unit_test(test_without_bpf),
		cmocka_unit_test(test_not_a_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
