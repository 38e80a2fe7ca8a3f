// SPDX-License-Identifier: GPL-2.0
/*
 * A batch checked with the wire validator before it is spooled: the
 * entries the server would refuse are dropped and counted, the rest of
 * the batch (warnings first of all) is kept; and the daemon's sink
 * (hooks.c) spools what the check made of it. Batches are made from
 * schema/examples/full-v2.json.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "agent_test.h"
#include "batch_check.h"
#include "hooks.h"
#include "sender.h"
#include "spool.h"
#include "startup.h"

/* schema/examples/@name as text (free() it), its length in *@n. */
static char *read_example(const char *name, size_t *n)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char path[PATH_MAX], *text = NULL;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/schema/examples/%s", src, name);
	if (twl_read_file(path, 1 << 20, &text, n))
		fail_msg("cannot read %s", path);
	return text;
}

/* full-v2.json without health.entries_dropped. */
static json_t *base_doc(void)
{
	size_t n;
	char *text = read_example("full-v2.json", &n);
	json_t *doc = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);

	assert_non_null(doc);
	free(text);
	json_object_del(json_object_get(doc, "health"), "entries_dropped");
	return doc;
}

static char *dump(json_t *doc)
{
	char *s = json_dumps(doc, JSON_COMPACT);

	assert_non_null(s);
	return s;
}

/* A string of @n bytes of 'x' (free() it). */
static char *long_string(size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

/*
 * The base with usage[1].cgroup over the wire's 1024 bytes, usage[3].comm
 * over its 64 and census.knobs[0].cgroup over 1024: three entries the
 * server would refuse (and the whole batch with them).
 */
static json_t *bad_doc(void)
{
	json_t *doc = base_doc();
	json_t *usage = json_object_get(doc, "usage");
	json_t *knobs =
		json_object_get(json_object_get(doc, "census"), "knobs");
	char *cg = long_string(1500), *comm = long_string(65);

	assert_int_equal(json_array_size(usage), 5);
	assert_true(json_array_size(knobs) >= 1);
	json_object_set_new(json_array_get(usage, 1), "cgroup",
			    json_string(cg));
	json_object_set_new(json_array_get(usage, 3), "comm",
			    json_string(comm));
	json_object_set_new(json_array_get(knobs, 0), "cgroup",
			    json_string(cg));
	free(cg);
	free(comm);
	return doc;
}

static json_t *checked_doc(const struct twl_batch_check *bc)
{
	struct twl_verr verr;
	json_t *doc;

	assert_non_null(bc->json);
	assert_int_equal(bc->len, strlen(bc->json));
	doc = twl_report_parse(bc->json, bc->len, &verr);
	if (!doc)
		fail_msg("the checked batch is invalid: %s at %s: %s",
			 verr.code, verr.field, verr.reason);
	return doc;
}

static json_int_t dropped_member(json_t *doc)
{
	json_t *v = json_object_get(json_object_get(doc, "health"),
				    "entries_dropped");

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* A valid batch goes through as it is. */
static void test_valid_unchanged(void **state)
{
	json_t *doc = base_doc();
	char *text = dump(doc);
	struct twl_batch_check bc;

	assert_int_equal(twl_batch_check(text, strlen(text), 0, &bc), 0);
	assert_null(bc.json);
	assert_int_equal(bc.dropped, 0);
	assert_false(bc.invalid);
	twl_batch_check_fini(&bc);
	free(text);
	json_decref(doc);
}

/* Only the three bad entries go; warnings and the other entries stay. */
static void test_drops_only_offending(void **state)
{
	json_t *want = base_doc(), *doc = bad_doc(), *got, *usage;
	char *text = dump(doc);
	struct twl_batch_check bc;

	assert_int_equal(twl_batch_check(text, strlen(text), 5, &bc), 0);
	assert_int_equal(bc.dropped, 3);
	assert_false(bc.invalid);
	assert_string_equal(bc.first.code, TWL_VERR_TOO_LONG);
	assert_non_null(strstr(bc.first.field, bc.first_entry));
	got = checked_doc(&bc);
	assert_true(json_equal(json_object_get(got, "warnings"),
			       json_object_get(want, "warnings")));
	assert_true(json_equal(json_object_get(got, "unknown"),
			       json_object_get(want, "unknown")));
	usage = json_object_get(got, "usage");
	assert_int_equal(json_array_size(usage), 3);
	assert_true(
		json_equal(json_array_get(usage, 0),
			   json_array_get(json_object_get(want, "usage"), 0)));
	assert_true(
		json_equal(json_array_get(usage, 1),
			   json_array_get(json_object_get(want, "usage"), 2)));
	assert_true(
		json_equal(json_array_get(usage, 2),
			   json_array_get(json_object_get(want, "usage"), 4)));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(got, "census"), "knobs")),
			 json_array_size(json_object_get(
				 json_object_get(want, "census"), "knobs")) -
				 1);
	/* The agent's count so far (5) and this batch's three. */
	assert_int_equal(dropped_member(got), 8);
	twl_batch_check_fini(&bc);
	json_decref(got);
	json_decref(doc);
	json_decref(want);
	free(text);
}

/* An error outside an entry cannot be mended: spooled as it is. */
static void test_not_an_entry(void **state)
{
	json_t *doc = base_doc();
	char *name = long_string(300), *text;
	struct twl_batch_check bc;

	json_object_set_new(json_object_get(doc, "host"), "hostname",
			    json_string(name));
	text = dump(doc);
	assert_int_equal(twl_batch_check(text, strlen(text), 0, &bc), 0);
	assert_true(bc.invalid);
	assert_null(bc.json);
	assert_int_equal(bc.dropped, 0);
	assert_string_equal(bc.why.field, "host.hostname");
	twl_batch_check_fini(&bc);
	assert_int_equal(twl_batch_check("{not json", 9, 0, &bc), 0);
	assert_true(bc.invalid);
	assert_null(bc.json);
	assert_string_equal(bc.why.code, TWL_VERR_INVALID_JSON);
	twl_batch_check_fini(&bc);
	free(text);
	free(name);
	json_decref(doc);
}

/* The count goes on in later valid batches; a version 1 batch has none. */
static void test_count_carried(void **state)
{
	json_t *doc = base_doc(), *got;
	char *text = dump(doc), *v1;
	struct twl_batch_check bc;
	size_t n;

	assert_int_equal(twl_batch_check(text, strlen(text), 2, &bc), 0);
	assert_int_equal(bc.dropped, 0);
	got = checked_doc(&bc);
	assert_int_equal(dropped_member(got), 2);
	json_decref(got);
	twl_batch_check_fini(&bc);

	v1 = read_example("full.json", &n);
	assert_int_equal(twl_batch_check(v1, n, 2, &bc), 0);
	got = checked_doc(&bc);
	assert_null(json_object_get(json_object_get(got, "health"),
				    "entries_dropped"));
	json_decref(got);
	twl_batch_check_fini(&bc);
	free(v1);
	free(text);
	json_decref(doc);
}

/* Past TWL_BATCH_CHECK_MAX_DROPS the batch is left as it is then. */
static void test_drops_bounded(void **state)
{
	json_t *doc = base_doc(), *usage = json_object_get(doc, "usage");
	json_t *bad = json_deep_copy(json_array_get(usage, 0));
	char *comm = long_string(65), *text;
	struct twl_batch_check bc;

	json_object_set_new(bad, "comm", json_string(comm));
	for (int i = 0; i < TWL_BATCH_CHECK_MAX_DROPS + 10; i++)
		json_array_append(usage, bad);
	text = dump(doc);
	assert_int_equal(twl_batch_check(text, strlen(text), 0, &bc), 0);
	assert_int_equal(bc.dropped, TWL_BATCH_CHECK_MAX_DROPS);
	assert_true(bc.invalid);
	assert_non_null(bc.json);
	assert_string_equal(bc.why.code, TWL_VERR_TOO_LONG);
	twl_batch_check_fini(&bc);
	free(text);
	free(comm);
	json_decref(bad);
	json_decref(doc);
}

/*
 * The daemon's sink (hooks.c) spools the checked batch, not the one it was
 * given, and the sender counts the drops for the next batches.
 */
static void test_sink_spools_checked_batch(void **state)
{
	char *dir = test_mkdtemp(), *spool = test_path(dir, "spool");
	char *st_dir = test_path(dir, "state"), *ca = test_path(dir, "ca.pem");
	struct twl_sender_cfg sc = {
		.server_url = "https://127.0.0.1:1",
		.ca_file = ca,
		.state_dir = st_dir,
		.spool_dir = spool,
		.host_id =
			"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
		.hostname = "h",
	};
	struct twl_spool_opts so = { .dir = spool, .max_bytes = 1 << 20 };
	struct twl_agent a = { 0 };
	struct twl_pump_cfg pc = { 0 };
	struct twl_sender_stats st;
	json_t *doc = bad_doc(), *got;
	char *text = dump(doc), *json = NULL;
	struct twl_spool *sp;
	struct twl_verr verr;
	uint64_t id;
	size_t len;

	assert_int_equal(mkdir(st_dir, 0700), 0);
	a.sender = twl_sender_new(&sc);
	assert_non_null(a.sender);
	twl_agent_hooks(&a, &pc);
	assert_int_equal(pc.sink(pc.sink_ctx, text, strlen(text)), 0);
	twl_sender_stats(a.sender, &st);
	assert_int_equal(st.entries_dropped, 3);
	twl_sender_free(a.sender);

	sp = twl_spool_open(&so);
	assert_non_null(sp);
	assert_int_equal(twl_spool_oldest(sp, &id), 0);
	assert_int_equal(twl_spool_load(sp, id, &json, &len), 0);
	got = twl_report_parse(json, len, &verr);
	if (!got)
		fail_msg("the spooled batch is invalid: %s at %s: %s",
			 verr.code, verr.field, verr.reason);
	assert_int_equal(json_array_size(json_object_get(got, "warnings")), 3);
	assert_int_equal(json_array_size(json_object_get(got, "usage")), 3);
	assert_int_equal(dropped_member(got), 3);
	json_decref(got);
	free(json);
	twl_spool_close(sp);
	json_decref(doc);
	free(text);
	free(ca);
	free(st_dir);
	free(spool);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_unchanged),
		cmocka_unit_test(test_drops_only_offending),
		cmocka_unit_test(test_not_an_entry),
		cmocka_unit_test(test_count_carried),
		cmocka_unit_test(test_drops_bounded),
		cmocka_unit_test(test_sink_spools_checked_batch),
	};

	twl_log_init("test_batch_check", LOG_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
