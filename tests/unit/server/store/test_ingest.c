// SPDX-License-Identifier: GPL-2.0
/*
 * A report flattened for the store (server/store/ingest.c), pure: what
 * it carries, unknown messages matched again against the server's
 * catalog, and the hashes of the usage keys, pinned: stored ids depend on
 * them.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "store/ingest.h"

/* Everything the example report holds, flattened; strings never NULL. */
static void test_prepare(void **state)
{
	json_t *r = make_report("0123", "aa01", 7);
	struct twl_ingest *in = NULL;

	(void)state;
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	json_decref(r); /* the flattened report keeps its own reference */
	assert_string_equal(in->batch_id, "aa01");
	assert_int_equal(in->seq, 7);
	assert_int_equal(in->n_warnings, 4);
	assert_int_equal(in->n_unknown, 1);
	assert_int_equal(in->n_usage, 3);
	assert_int_equal(in->n_knobs, 2);
	assert_int_equal(twl_ingest_rows(in), 4 + 1 + 3 + 2);
	assert_true(in->has_census);
	assert_non_null(strstr(in->census_json, "\"knobs\""));
	assert_non_null(in->health_json);
	assert_string_equal(in->warnings[0].feature, "memcg_v1.soft_limit");
	/* not a catalog message: no feature */
	assert_null(in->unknown[0].matched);
	twl_ingest_free(in);

	/* the smallest report: nothing but host and health */
	r = load_example("minimal.json");
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	json_decref(r);
	assert_int_equal(twl_ingest_rows(in), 0);
	assert_false(in->has_census);
	assert_null(in->census_json);
	assert_non_null(in->hostname);
	assert_non_null(in->boot_id);
	twl_ingest_free(in);
	twl_ingest_free(NULL);
}

/*
 * Times from the future are clamped to the receive time + the skew, and
 * counted with the latest as sent; times within the skew stay as sent.
 */
static void test_bound_times(void **state)
{
	const int64_t big = 9007199254740991LL, now = 1764800000;
	json_t *r = make_report("0123", "aa01", 7);
	json_t *u = json_array_get(json_object_get(r, "usage"), 0);
	json_t *w = json_array_get(json_object_get(r, "warnings"), 0);
	struct twl_ingest *in = NULL;

	(void)state;
	json_object_set_new(u, "last_seen", json_integer(big));
	json_object_set_new(w, "time", json_integer(now + 300));
	json_object_set_new(json_object_get(r, "census"), "time",
			    json_integer(now + 301));
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	json_decref(r);
	/* the example's own times (late 2025) are before now + 300 */
	assert_int_equal(twl_ingest_bound_times(in, now), 2);
	assert_int_equal(in->times_clamped, 2);
	assert_int_equal(in->time_sent_max, big);
	assert_int_equal(in->usage[0].last_seen, now + TWL_INGEST_SKEW_S);
	assert_true(in->usage[0].first_seen <= in->usage[0].last_seen);
	assert_int_equal(in->warnings[0].time, now + 300); /* within */
	assert_int_equal(in->census_time, now + 300);
	/* the census document stored as sent keeps the original */
	assert_non_null(strstr(in->census_json, "1764800301"));
	/* and everything is in the past of a later receive time */
	assert_int_equal(twl_ingest_bound_times(in, big), 2);
	twl_ingest_free(in);
}

/*
 * An agent with an older catalog reports a catalog message as unknown,
 * its digits replaced by '#': the server matches it to its feature.
 */
static void test_unknown_matched(void **state)
{
	json_t *r = make_report("0123", "aa02", 1);
	json_t *w = json_array_get(json_object_get(r, "warnings"), 0);
	json_t *u = json_array_get(json_object_get(r, "unknown"), 0);
	char text[512];
	struct twl_ingest *in = NULL;

	(void)state;
	snprintf(text, sizeof(text), "%s",
		 json_string_value(json_object_get(w, "text")));
	for (char *p = text; *p; p++)
		if (isdigit((unsigned char)*p))
			*p = '#';
	json_object_set_new(u, "text", json_string(text));
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	json_decref(r);
	assert_non_null(in->unknown[0].matched);
	assert_string_equal(in->unknown[0].matched, in->warnings[0].feature);
	twl_ingest_free(in);
}

/*
 * A usage key's id (schema/migrations/004_usage_id.sql) and check (009):
 * FNV-1a as ingest.h says, pinned (computed apart in Python) so that a
 * change is a decision; the id is host_id's 40 bits, then the check's low
 * 24; another host, another id.
 */
static void test_usage_key_hash(void **state)
{
	json_t *r = make_report("0123", "aa03", 1);
	struct twl_ingest *in = NULL, *other = NULL;
	int64_t id0;

	(void)state;
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	assert_int_equal(twl_ingest_prepare(r, "0124", &other), 0);
	json_decref(r);
	assert_int_equal(in->n_usage, 3);
	id0 = in->usage_id[0];
	for (size_t i = 0; i < in->n_usage; i++) {
		int64_t id = in->usage_id[i], check = in->usage_check[i];

		assert_true(id == twl_usage_key_hash("0123", &in->usage[i]));
		assert_true(check ==
			    twl_usage_key_check("0123", &in->usage[i]));
		assert_true((id & 0xffffff) == (check & 0xffffff));
		assert_true((id & ~INT64_C(0xffffff)) ==
			    (id0 & ~INT64_C(0xffffff)));
		assert_true(other->usage_id[i] != id);
	}
	assert_true(id0 == INT64_C(-3940864479740376979));
	assert_true(in->usage_check[0] == INT64_C(3608518302753540205));
	assert_true(in->usage_check[1] == INT64_C(-5345176192915146397));
	twl_ingest_free(in);
	twl_ingest_free(other);
}

/*
 * The checks of a report's entries are computed with the hash state of
 * the previous entry's boot id, feature, file and op reused when they are
 * the same (ingest.c, key_prefix()): entries that share some of those and
 * not others, in an order that returns to earlier ones, get the checks
 * twl_usage_key_check() computes for each alone.
 */
#define BOOT_2 "3f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f"
static void test_usage_key_prefix(void **state)
{
	static const char *const edits[][3] = {
		{ NULL, NULL, NULL }, /* the first entry as it is */
		{ "cgroup", "/a", NULL }, /* same boot, feature, file, op */
		{ "boot_id", BOOT_2, NULL }, /* another boot, same feature */
		{ "cgroup", "/b", NULL }, /* back to the first boot */
		/* another file, then another op */
		{ "file", "memory.kmem.limit_in_bytes", NULL },
		{ "op", "read", NULL },
		{ "boot_id", BOOT_2, "op" }, /* another boot, and op "read" */
		/* another feature */
		{ "feature", "memcg_v1.kmem_limit", NULL },
	};
	size_t n = sizeof(edits) / sizeof(edits[0]);
	json_t *r = make_report("0123", "aa04", 1);
	json_t *arr = json_object_get(r, "usage"), *first;
	struct twl_ingest *in = NULL;

	(void)state;
	first = json_deep_copy(json_array_get(arr, 0));
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_deep_copy(first);

		if (edits[i][0])
			json_object_set_new(e, edits[i][0],
					    json_string(edits[i][1]));
		if (edits[i][2])
			json_object_set_new(e, edits[i][2],
					    json_string("read"));
		json_array_append_new(arr, e);
	}
	json_decref(first);
	assert_int_equal(twl_ingest_prepare(r, "0123", &in), 0);
	json_decref(r);
	assert_int_equal(in->n_usage, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(in->usage_check[i] ==
			    twl_usage_key_check("0123", &in->usage[i]));
		for (size_t j = 0; j < i; j++)
			assert_true(in->usage_check[i] != in->usage_check[j]);
	}
	twl_ingest_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_bound_times),
		cmocka_unit_test(test_unknown_matched),
		cmocka_unit_test(test_usage_key_hash),
		cmocka_unit_test(test_usage_key_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
