// SPDX-License-Identifier: GPL-2.0
/* Health: /proc status parsing and the wire object. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "health.h"

static void test_parse_status(void **state)
{
	static const char st[] =
		"Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t    5120 kB\n"
		"RssAnon:\t    1536 kB\nRssFile:\t 3584 kB\n";
	long rss, anon;

	assert_int_equal(
		twl_health_parse_status(st, sizeof(st) - 1, &rss, &anon), 0);
	assert_int_equal(rss, 5120);
	assert_int_equal(anon, 1536);
	assert_int_equal(
		twl_health_parse_status("VmRSS:\t12 kB", 12, &rss, &anon), 0);
	assert_int_equal(rss, 12);
	assert_int_equal(anon, -1);
	assert_int_equal(twl_health_parse_status("Name: x\n", 8, &rss, &anon),
			 -ENODATA);
	/* "VmRSSX:" is not "VmRSS:". */
	assert_int_equal(twl_health_parse_status("VmRSSX:\t5 kB\n", 13, &rss,
						 &anon),
			 -ENODATA);
}

static void test_json(void **state)
{
	struct twl_health h = { .records_lost = 3,
				.parse_failures = 1,
				.have_sender = true,
				.spool_bytes = 4096,
				.spool_files = 1,
				.send_failures = 2,
				.key_rejected = true };
	json_t *o;
	long rss, anon, cpu;

	/* Invalid UTF-8 from a library error message is cut, not sent. */
	strcpy(h.last_error, "connect failed \xff\xfe");
	o = twl_health_to_json(&h);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "records_lost")),
			 3);
	assert_int_equal(
		json_integer_value(json_object_get(o, "send_failures")), 2);
	assert_true(json_is_true(json_object_get(o, "key_rejected")));
	assert_string_equal(json_string_value(json_object_get(o, "last_error")),
			    "connect failed ");
	assert_true(json_integer_value(json_object_get(o, "rss_kb")) > 0);
	json_decref(o);
	assert_int_equal(
		twl_health_self("/proc/self/status", &rss, &anon, &cpu), 0);
	assert_true(rss > 0 && anon > 0 && cpu >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
