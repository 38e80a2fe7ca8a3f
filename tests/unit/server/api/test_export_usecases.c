// SPDX-License-Identifier: GPL-2.0
/*
 * The export's use cases (server/api/export_usecases.c), pure: grouped by
 * intent and by what sets the knob in a fixed order, a plain list when no
 * use case says either, one plain line for a feature in use without any.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include <twilight/util.h>

#include "api/export_usecases.h"

/* The text of feature @f_json's use cases, compared with @want. */
static void expect_text(const char *f_json, const char *want)
{
	json_error_t err;
	json_t *f = json_loads(f_json, 0, &err);
	struct twl_buf b;

	if (!f)
		fail_msg("bad test JSON: %s", err.text);
	twl_buf_init(&b, 1 << 20);
	assert_int_equal(twl_export_use_cases(&b, f), 0);
	assert_int_equal(twl_buf_append(&b, "", 0), 0);
	if (strcmp(b.data, want))
		fail_msg("got:\n%s\nwant:\n%s", b.data, want);
	twl_buf_fini(&b);
	json_decref(f);
}

/* An annotation created 2025-12-01 by alice. */
#define ANN(fields) "{\"author\":\"alice\",\"created\":1764547200," fields "}"

static void test_grouped(void **state)
{
	(void)state;
	expect_text(
		"{\"hosts_using\":5,\"annotations\":[" ANN("\"text\":\"t1\",\"v2_tried\":\"no\"") "," ANN(
			"\"text\":\"t2\",\"intent\":\"accidental\","
			"\"set_by\":\"kubelet\"") "," ANN("\"text\":\"t3\",\"intent\":\"intentional\","
							  "\"set_by\":\"mysqld\",\"team\":\"db\"") "," ANN("\"text\":\"t4\",\"intent\":\"intentional\","
													   "\"set_by\":\"docker\",\"workload\":\"java\","
													   "\"v2_tried\":\"falls_short\",\"shortfall\":\"s\"") "," ANN("\"text\":\"t5\",\"set_by\":\"runc\","
																				       "\"v2_tried\":\"works\",\"fits\":\"yes\"") "," ANN("\"text\":\"t6\",\"intent\":\"intentional\","
																											  "\"set_by\":\"docker\"") "," ANN("\"text\":\"t7\",\"intent\":\"intentional\"") "]}",
		"  Was the v2 replacement tried: works for 1, falls short for 1, not\n"
		"    tried for 1 (3 of 7 use cases say)\n"
		"  Use cases, by intent and what sets them:\n"
		"    Intentional, set by docker (2):\n"
		"      - [java] (alice, 2025-12-01; v2 replacement tried, falls short: s)\n"
		"        t4\n"
		"      - (alice, 2025-12-01) t6\n"
		"    Intentional, set by mysqld (1):\n"
		"      - (alice, 2025-12-01; team db) t3\n"
		"    Intentional, setter not said (1):\n"
		"      - (alice, 2025-12-01) t7\n"
		"    Accidental (a default nobody chose), set by kubelet (1):\n"
		"      - (alice, 2025-12-01) t2\n"
		"    Set by runc, intent not said (1):\n"
		"      - (alice, 2025-12-01; replacement fits: yes; v2 replacement tried,\n"
		"        works) t5\n"
		"    Intent and setter not said (1):\n"
		"      - (alice, 2025-12-01; v2 replacement not tried) t1\n");
}

/* Free-text use cases read as they always did. */
static void test_plain(void **state)
{
	(void)state;
	expect_text(
		"{\"hosts_using\":1,\"annotations\":[" ANN(
			"\"text\":\"The JVM.\",\"workload\":\"java\","
			"\"fits\":\"partial\"") "]}",
		"  Use cases:\n"
		"    - [java] (alice, 2025-12-01; replacement fits: partial) The "
		"JVM.\n");
}

/* Only the answers given are counted. */
static void test_tried_counts(void **state)
{
	(void)state;
	expect_text(
		"{\"hosts_using\":2,\"annotations\":[" ANN(
			"\"text\":\"a\",\"v2_tried\":\"no\"") "," ANN("\"text\":\"b\"") "]}",
		"  Was the v2 replacement tried: not tried for 1 (1 of 2 use "
		"cases say)\n"
		"  Use cases:\n"
		"    - (alice, 2025-12-01; v2 replacement not tried) a\n"
		"    - (alice, 2025-12-01) b\n");
}

static void test_none_recorded(void **state)
{
	(void)state;
	expect_text(
		"{\"hosts_using\":12,\"annotations\":[]}",
		"  No use case recorded: in use on 12 hosts, and nobody has said "
		"why yet.\n");
	expect_text("{\"hosts_using\":1}",
		    "  No use case recorded: in use on 1 host, and nobody has "
		    "said why yet.\n");
	/* Not in use, nothing to ask. */
	expect_text("{\"hosts_using\":0,\"annotations\":[]}", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_tried_counts),
		cmocka_unit_test(test_none_recorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
