// SPDX-License-Identifier: GPL-2.0
/*
 * Pure parts of the transport: answer classification, Retry-After and
 * gzip. No network here (see tests/integration/agent-transport).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

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
		{ 400, "{\"error\":\"too_long\",\"field\":\"usage[0].cgroup\"}",
		  TWL_V_QUARANTINE },
		{ 422, "{\"error\":\"unknown_feature\"}", TWL_V_QUARANTINE },
		{ 422, "{\"error\":\"invalid_utf8\"}", TWL_V_QUARANTINE },
		/* another body under a batch id this host used: content */
		{ 409, "{\"error\":\"batch_conflict\",\"field\":\"batch_id\"}",
		  TWL_V_QUARANTINE },
		/* No verdict on the content: kept and retried. */
		{ 400, "not json", TWL_V_RETRY },
		{ 400, "", TWL_V_RETRY },
		{ 400, "[\"unsupported_version\"]", TWL_V_RETRY },
		{ 400, "{\"error\":\"bad_request\"}", TWL_V_RETRY },
		{ 400, "{\"error\":7}", TWL_V_RETRY },
		{ 422, "", TWL_V_RETRY },
		{ 404, "", TWL_V_RETRY },
		{ 404, "{\"error\":\"not_found\"}", TWL_V_RETRY },
		{ 404, "{\"error\":\"too_long\"}", TWL_V_RETRY },
		{ 405, "", TWL_V_RETRY },
		{ 409, "{\"error\":\"too_many\"}", TWL_V_RETRY },
		{ 409, "", TWL_V_RETRY }, /* a proxy's 409 */
		{ 400, "{\"error\":\"batch_conflict\"}", TWL_V_RETRY },
		{ 418, "", TWL_V_RETRY },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_error_code),
		cmocka_unit_test(test_gzip_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
