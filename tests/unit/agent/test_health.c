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

/* boots[] and the journal's counters, as the wire has them; a bounded boot list. */
static void test_boots(void **state)
{
	static struct twl_health h;
	struct twl_health_boot *b;
	json_t *o, *arr;
	char id[40];

	b = twl_health_boot(&h, "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f");
	assert_non_null(b);
	strcpy(b->kernel, "6.1.0");
	b->have_kmsg_seq = true;
	b->first_kmsg_seq = 57;
	/* The journal names the same boot without dashes, in capitals. */
	assert_ptr_equal(
		twl_health_boot(&h, "2F6D7A1E8A4B4C1D9E0F1A2B3C4D5E6F"), b);
	b->have_journal_us = true;
	b->first_journal_us = 0;
	b->start_covered = true;
	b = twl_health_boot(&h, "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2");
	b->have_journal_us = true;
	b->first_journal_us = 500000000;
	h.have_journal = true;
	h.journal_missed = 3;
	h.journal_errors = 1;
	o = twl_health_to_json(&h);
	assert_non_null(o);
	arr = json_object_get(o, "boots");
	assert_int_equal(json_array_size(arr), 2);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(arr, 0), "first_kmsg_seq")),
			 57);
	assert_true(json_is_true(
		json_object_get(json_array_get(arr, 0), "start_covered")));
	assert_null(json_object_get(json_array_get(arr, 1), "first_kmsg_seq"));
	assert_null(json_object_get(json_array_get(arr, 1), "kernel"));
	assert_false(json_is_true(
		json_object_get(json_array_get(arr, 1), "start_covered")));
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(arr, 1), "first_journal_us")),
			 500000000);
	assert_int_equal(
		json_integer_value(json_object_get(o, "journal_missed")), 3);
	assert_int_equal(
		json_integer_value(json_object_get(o, "journal_errors")), 1);
	json_decref(o);
	for (int i = 2; i < TWL_HEALTH_MAX_BOOTS; i++) {
		snprintf(id, sizeof(id), "%032x", i);
		assert_non_null(twl_health_boot(&h, id));
	}
	assert_null(twl_health_boot(&h, "ffffffffffffffffffffffffffffffff"));
	/* Nothing known about the journal: its members are absent. */
	memset(&h, 0, sizeof(h));
	o = twl_health_to_json(&h);
	assert_null(json_object_get(o, "boots"));
	assert_null(json_object_get(o, "journal_missed"));
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_boots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
