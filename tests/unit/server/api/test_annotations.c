// SPDX-License-Identifier: GPL-2.0
/*
 * Structured use cases (server/api/annotations.c and the SQLite store)
 * through the real API of an in-process server: the optional fields
 * stored and listed, old free-text requests unchanged, each bad field
 * refused with a 400 naming it and nothing stored; the linux-mm export of
 * a fleet posted through the real ingest API groups them and says which
 * feature in use has no use case recorded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"

#define HOST "9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
#define SOFT "memcg_v1.soft_limit"

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	fixture_start(&fx, NULL);
	post_full_report(&fx, HOST, "0000000000000000000000000000000b",
			 (int64_t)time(NULL) - FULL_JSON_SENT - 3600);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_stop(&fx);
	return 0;
}

static long post_ann(const char *body, struct http_result *r)
{
	http(&fx, "POST", "/api/v1/annotations", fx.admin, body, strlen(body),
	     NULL, r);
	return r->status;
}

#define GETS(o, k) json_string_value(json_object_get((o), (k)))

static void refused(const char *fields, const char *code, const char *field)
{
	struct http_result r;
	int64_t before = count_rows(&fx, "annotations");
	char body[2048];

	snprintf(body, sizeof(body),
		 "{\"feature\":\"" SOFT "\",\"text\":\"x\"%s}", fields);
	post_ann(body, &r);
	if (r.status != 400)
		fail_msg("%s: status %ld, want 400", body, r.status);
	assert_string_equal(GETS(r.json, "error"), code);
	assert_string_equal(GETS(r.json, "field"), field);
	http_result_fini(&r);
	assert_int_equal(count_rows(&fx, "annotations"), before);
}

static void test_fields(void **state)
{
	struct http_result r;
	json_t *a;

	(void)state;
	assert_int_equal(
		post_ann("{\"feature\":\"" SOFT "\",\"workload\":\"java\","
			 "\"text\":\"Batch jobs yield memory.\","
			 "\"intent\":\"accidental\",\"set_by\":"
			 "\"docker --memory-reservation\",\"v2_tried\":"
			 "\"falls_short\",\"shortfall\":\"memory.low does not"
			 " reclaim early\",\"team\":\"payments\"}",
			 &r),
		201);
	assert_string_equal(GETS(r.json, "set_by"),
			    "docker --memory-reservation");
	http_result_fini(&r);
	/* The contract before the fields: free text only, fields null. */
	assert_int_equal(post_ann("{\"feature\":\"" SOFT "\",\"text\":\"Old.\","
				  "\"fits\":\"no\"}",
				  &r),
			 201);
	assert_true(json_is_null(json_object_get(r.json, "team")));
	http_result_fini(&r);

	http(&fx, "GET", "/api/v1/annotations?feature=" SOFT, fx.viewer, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 200);
	a = json_array_get(json_object_get(r.json, "annotations"), 0);
	assert_string_equal(GETS(a, "intent"), "accidental");
	assert_string_equal(GETS(a, "v2_tried"), "falls_short");
	assert_string_equal(GETS(a, "shortfall"),
			    "memory.low does not reclaim early");
	assert_string_equal(GETS(a, "team"), "payments");
	a = json_array_get(json_object_get(r.json, "annotations"), 1);
	assert_string_equal(GETS(a, "text"), "Old.");
	assert_true(json_is_null(json_object_get(a, "intent")));
	assert_true(json_is_null(json_object_get(a, "v2_tried")));
	http_result_fini(&r);
}

static void test_refused(void **state)
{
	char longer[200];

	(void)state;
	refused(",\"intent\":\"maybe\"", "out_of_range", "intent");
	refused(",\"intent\":1", "wrong_type", "intent");
	refused(",\"v2_tried\":\"yes\"", "out_of_range", "v2_tried");
	refused(",\"shortfall\":\"x\"", "out_of_range", "shortfall");
	refused(",\"v2_tried\":\"works\",\"shortfall\":\"x\"", "out_of_range",
		"shortfall");
	refused(",\"team\":\"a\\nb\"", "invalid_text", "team");
	refused(",\"team\":[]", "wrong_type", "team");
	refused(",\"set_by\":\"   \"", "out_of_range", "set_by");
	memset(longer, 'k', sizeof(longer));
	snprintf(longer, sizeof(longer), ",\"set_by\":\"%0129d\"", 0);
	refused(longer, "too_long", "set_by");
	refused(",\"owner\":\"x\"", "unknown_field", "owner");
}

/* The export groups the use cases and names the feature without one. */
static void test_export(void **state)
{
	struct http_result r;
	char *text;

	(void)state;
	http(&fx, "GET", "/api/v1/export/linux-mm?teams=show", fx.viewer, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 200);
	text = strndup(r.body, r.len);
	assert_non_null(text);
	if (!strstr(text, "  Use cases, by intent and what sets them:\n"
			  "    Accidental (a default nobody chose), set by"
			  " docker\n      --memory-reservation (1):\n"
			  "      - [java] (t-admin, ") ||
	    !strstr(text, "    Intent and setter not said (1):\n") ||
	    !strstr(text, "  No use case recorded: in use on 1 host, and"
			  " nobody has said why yet.\n") ||
	    !strstr(text, "team payments; v2 replacement\n")) {
		fprintf(stderr, "%s", text);
		fail_msg("export lacks the grouped use cases");
	}
	free(text);
	http_result_fini(&r);
	http(&fx, "GET", "/api/v1/export/linux-mm?format=json", fx.viewer, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"v2_tried\": \"falls_short\""));
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
