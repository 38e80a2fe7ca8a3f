// SPDX-License-Identifier: GPL-2.0
/*
 * Pure parts of the transport: answer classification, Retry-After, gzip,
 * 413 batch splitting (halves stay valid reports), host key and token
 * files. No network here (see tests/integration/agent-transport).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include <twilight/wire.h>

#include "enroll.h"
#include "sender.h"
#include "transport.h"
#include "tu_common.h"

static struct twl_http_result *mkres(long status, const char *body)
{
	static struct twl_http_result r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	snprintf(r.body, sizeof(r.body), "%s", body);
	r.body_len = strlen(r.body);
	return &r;
}

static void test_classify_table(void **state)
{
	static const struct {
		long status;
		const char *body;
		enum twl_verdict want;
	} cases[] = {
		{ 200, "", TWL_V_DELIVERED },
		{ 201, "{}", TWL_V_DELIVERED },
		{ 204, "", TWL_V_DELIVERED },
		{ 0, "", TWL_V_RETRY }, /* network error */
		{ 408, "", TWL_V_RETRY },
		{ 429, "{\"error\":\"rate\"}", TWL_V_RETRY },
		{ 500, "", TWL_V_RETRY },
		{ 503, "", TWL_V_RETRY },
		{ 599, "", TWL_V_RETRY },
		{ 400, "{\"error\":\"unsupported_version\",\"field\":\"v\"}",
		  TWL_V_RETRY },
		{ 301, "",
		  TWL_V_RETRY }, /* redirects are not followed nor trusted */
		{ 401, "", TWL_V_KEY_REJECTED },
		{ 403, "{\"error\":\"forbidden\"}", TWL_V_KEY_REJECTED },
		{ 413, "", TWL_V_SPLIT },
		{ 400, "{\"error\":\"unknown_field\",\"field\":\"x\"}",
		  TWL_V_QUARANTINE },
		{ 400, "not json", TWL_V_QUARANTINE },
		{ 400, "[\"unsupported_version\"]", TWL_V_QUARANTINE },
		{ 422, "{\"error\":\"unknown_feature\"}", TWL_V_QUARANTINE },
		{ 404, "", TWL_V_QUARANTINE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum twl_verdict v =
			twl_classify(mkres(cases[i].status, cases[i].body));

		if (v != cases[i].want)
			fail_msg("status %ld body %s: got %d want %d",
				 cases[i].status, cases[i].body, v,
				 cases[i].want);
	}
}

static void test_retry_after(void **state)
{
	const int64_t now = 1764732000; /* Wed, 03 Dec 2025 03:20:00 GMT */
	uint64_t ms = 12345;

	assert_int_equal(twl_retry_after_ms("7", now, 3600000, &ms), 0);
	assert_int_equal(ms, 7000);
	assert_int_equal(twl_retry_after_ms("0", now, 3600000, &ms), 0);
	assert_int_equal(ms, 0);
	/* Capped, and no overflow on absurd values. */
	assert_int_equal(twl_retry_after_ms("99999999999999999999999", now,
					    3600000, &ms),
			 0);
	assert_int_equal(ms, 3600000);
	/* HTTP date, 90 s in the future / in the past. */
	assert_int_equal(twl_retry_after_ms("Wed, 03 Dec 2025 03:21:30 GMT",
					    now, 3600000, &ms),
			 0);
	assert_int_equal(ms, 90000);
	assert_int_equal(twl_retry_after_ms("Wed, 03 Dec 2025 03:00:00 GMT",
					    now, 3600000, &ms),
			 0);
	assert_int_equal(ms, 0);
	assert_int_equal(twl_retry_after_ms("", now, 3600000, &ms), -EINVAL);
	assert_int_equal(twl_retry_after_ms("soon", now, 3600000, &ms),
			 -EINVAL);
	assert_int_equal(twl_retry_after_ms("12abc", now, 3600000, &ms),
			 -EINVAL);
	assert_int_equal(twl_retry_after_ms("-5", now, 3600000, &ms), -EINVAL);
}

static void test_error_code(void **state)
{
	char out[16];

	assert_string_equal(twl_error_code("{\"error\":\"too_many\"}", 20, out,
					   sizeof(out)),
			    "too_many");
	assert_string_equal(
		twl_error_code("{\"error\":5}", 11, out, sizeof(out)), "");
	assert_string_equal(twl_error_code("<html>", 6, out, sizeof(out)), "");
	/* Truncated to the buffer, still NUL-terminated. */
	assert_string_equal(
		twl_error_code("{\"error\":\"a_very_long_error_code\"}", 34,
			       out, sizeof(out)),
		"a_very_long_err");
}

static void test_gzip_roundtrip(void **state)
{
	const char *in =
		"{\"v\":1,\"batch_id\":\"abc\",\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";
	unsigned char *gz = NULL, out[256];
	size_t gzlen = 0;
	z_stream zs = { 0 };

	assert_int_equal(twl_gzip(in, strlen(in), &gz, &gzlen), 0);
	assert_true(gzlen > 18);
	assert_int_equal(gz[0], 0x1f); /* gzip magic, not raw zlib */
	assert_int_equal(gz[1], 0x8b);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)gzlen;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, strlen(in));
	assert_memory_equal(out, in, strlen(in));
	inflateEnd(&zs);
	free(gz);
}

static char *load_example(const char *name, size_t *len)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char *path = NULL, *buf;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	assert_true(asprintf(&path, "%s/schema/examples/%s", src, name) > 0);
	buf = tu_slurp(path, len);
	if (!buf)
		fail_msg("cannot read %s", path);
	free(path);
	return buf;
}

static size_t units_of(json_t *doc)
{
	json_t *census = json_object_get(doc, "census");
	size_t n = json_array_size(json_object_get(doc, "warnings")) +
		   json_array_size(json_object_get(doc, "unknown")) +
		   json_array_size(json_object_get(doc, "usage"));

	if (json_is_object(census)) {
		size_t k = json_array_size(json_object_get(census, "knobs"));

		n += k ? k : 1;
	}
	return n;
}

/*
 * Split recursively down to single elements: every half is a valid report,
 * ids are fresh and deterministic, and the leaves hold each element once.
 */
static void split_down(const char *json, size_t *leaves, json_t *all_items)
{
	struct twl_verr err;
	char *a = NULL, *b = NULL, *a2 = NULL, *b2 = NULL;
	json_t *doc = twl_report_parse(json, strlen(json), &err);
	int ret;

	if (!doc)
		fail_msg("half is not a valid report: %s at %s: %s", err.code,
			 err.field, err.reason);
	ret = twl_report_split(json, strlen(json), &a, &b);
	if (units_of(doc) < 2) {
		const char *arrs[] = { "warnings", "unknown", "usage" };

		assert_int_equal(ret, -E2BIG);
		for (size_t i = 0; i < 3; i++) {
			json_t *arr = json_object_get(doc, arrs[i]);

			if (json_array_size(arr))
				json_array_append(all_items,
						  json_array_get(arr, 0));
		}
		if (json_is_object(json_object_get(doc, "census")))
			json_array_append(all_items,
					  json_object_get(doc, "census"));
		(*leaves)++;
		json_decref(doc);
		return;
	}
	assert_int_equal(ret, 0);
	/* Same input, same halves (ids derived, not random). */
	assert_int_equal(twl_report_split(json, strlen(json), &a2, &b2), 0);
	assert_string_equal(a, a2);
	assert_string_equal(b, b2);
	{
		json_t *ja = json_loads(a, 0, NULL),
		       *jb = json_loads(b, 0, NULL);
		const char *ida =
			json_string_value(json_object_get(ja, "batch_id"));
		const char *idb =
			json_string_value(json_object_get(jb, "batch_id"));
		const char *id0 =
			json_string_value(json_object_get(doc, "batch_id"));

		assert_non_null(ida);
		assert_non_null(idb);
		assert_string_not_equal(ida, idb);
		assert_string_not_equal(ida, id0);
		assert_string_not_equal(idb, id0);
		assert_int_equal(units_of(ja) + units_of(jb), units_of(doc));
		assert_true(units_of(ja) >= 1 && units_of(jb) >= 1);
		assert_true(units_of(ja) < units_of(doc) &&
			    units_of(jb) < units_of(doc));
		/* Host and health go to both halves. */
		assert_true(json_equal(json_object_get(ja, "host"),
				       json_object_get(doc, "host")));
		assert_true(json_equal(json_object_get(jb, "health"),
				       json_object_get(doc, "health")));
		json_decref(ja);
		json_decref(jb);
	}
	split_down(a, leaves, all_items);
	split_down(b, leaves, all_items);
	free(a);
	free(b);
	free(a2);
	free(b2);
	json_decref(doc);
}

static void test_split_full_example(void **state)
{
	size_t len = 0, leaves = 0;
	char *json = load_example("full.json", &len);
	json_t *doc = json_loads(json, 0, NULL), *items = json_array();
	size_t n_w, n_u, n_us, n_k;

	assert_non_null(doc);
	n_w = json_array_size(json_object_get(doc, "warnings"));
	n_u = json_array_size(json_object_get(doc, "unknown"));
	n_us = json_array_size(json_object_get(doc, "usage"));
	n_k = json_array_size(
		json_object_get(json_object_get(doc, "census"), "knobs"));
	assert_true(n_w + n_u + n_us + n_k >=
		    4); /* the example exercises every array */
	split_down(json, &leaves, items);
	assert_int_equal(leaves, n_w + n_u + n_us + n_k);
	/* Every warning, unknown and usage element comes out exactly once. */
	{
		const char *arrs[] = { "warnings", "unknown", "usage" };

		for (size_t i = 0; i < 3; i++) {
			json_t *arr = json_object_get(doc, arrs[i]);

			for (size_t j = 0; j < json_array_size(arr); j++) {
				int hits = 0;

				for (size_t m = 0; m < json_array_size(items);
				     m++)
					hits += json_equal(
						json_array_get(items, m),
						json_array_get(arr, j));
				assert_int_equal(hits, 1);
			}
		}
	}
	json_decref(items);
	json_decref(doc);
	free(json);
}

static void test_split_refuses(void **state)
{
	char *a = (char *)1, *b = (char *)1;
	const char *one =
		"{\"v\":1,\"batch_id\":\"ab\",\"warnings\":[1],\"unknown\":[],\"usage\":[]}";

	assert_int_equal(twl_report_split(one, strlen(one), &a, &b), -E2BIG);
	assert_null(a);
	assert_null(b);
	assert_int_equal(twl_report_split("[]", 2, &a, &b), -EINVAL);
	assert_int_equal(twl_report_split("{\"warnings\":[1,2]}", 18, &a, &b),
			 -EINVAL);
	assert_int_equal(twl_report_split("{bad", 4, &a, &b), -EINVAL);
}

static void test_secret_valid(void **state)
{
	char big[TWL_HOST_KEY_MAX + 2];

	assert_true(twl_secret_valid("abc-DEF_123.~", 13));
	assert_false(twl_secret_valid("", 0));
	assert_false(twl_secret_valid("a b", 3));
	assert_false(twl_secret_valid("a\r\nX-Evil: 1", 12));
	assert_false(twl_secret_valid("caf\xc3\xa9", 5));
	memset(big, 'k', sizeof(big));
	assert_true(twl_secret_valid(big, TWL_HOST_KEY_MAX));
	assert_false(twl_secret_valid(big, TWL_HOST_KEY_MAX + 1));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_hostkey_files(void **state)
{
	char *dir = tu_mkdtemp("hostkey"), *path = NULL, *key = NULL;
	struct stat st;

	assert_non_null(dir);
	assert_int_equal(twl_hostkey_load(dir, &key), -ENOENT);
	assert_int_equal(twl_hostkey_store(dir, "bad key"), -EINVAL);
	assert_int_equal(twl_hostkey_store(dir, "k-0123456789"), 0);
	assert_true(asprintf(&path, "%s/host.key", dir) > 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(twl_hostkey_load(dir, &key), 0);
	assert_string_equal(key, "k-0123456789");
	free(key);
	write_text(path, "  tok-with-spaces-around \n\n");
	assert_int_equal(twl_read_secret(path, &key), 0);
	assert_string_equal(key, "tok-with-spaces-around");
	free(key);
	write_text(path, "two words\n");
	assert_int_equal(twl_read_secret(path, &key), -EINVAL);
	assert_null(key);
	write_text(path, "\n");
	assert_int_equal(twl_hostkey_load(dir, &key), -EINVAL);
	assert_int_equal(twl_hostkey_forget(dir), 0);
	assert_int_equal(twl_hostkey_forget(dir), 0);
	/* A missing state directory is created (0700). */
	{
		char *sub = NULL;

		assert_true(asprintf(&sub, "%s/sub", dir) > 0);
		assert_int_equal(twl_hostkey_store(sub, "k-sub"), 0);
		assert_int_equal(stat(sub, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0700);
		assert_int_equal(twl_hostkey_load(sub, &key), 0);
		assert_string_equal(key, "k-sub");
		free(key);
		free(sub);
	}
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_error_code),
		cmocka_unit_test(test_gzip_roundtrip),
		cmocka_unit_test(test_split_full_example),
		cmocka_unit_test(test_split_refuses),
		cmocka_unit_test(test_secret_valid),
		cmocka_unit_test(test_hostkey_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
