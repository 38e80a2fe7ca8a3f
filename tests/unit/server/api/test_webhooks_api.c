// SPDX-License-Identifier: GPL-2.0
/*
 * Webhook administration (server/api/webhooks.c): what a POST must hold,
 * admins only, the secret never answered back, deletion, the delivery
 * log's parameters and the cap on webhooks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "store/store_alerts.h"

#define SECRET "0123456789abcdef-secret"

static int setup(void **state)
{
	static struct fixture f;

	fixture_start(&f, NULL);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(*state);
	return 0;
}

static void post(struct fixture *f, const char *body, long status,
		 const char *field)
{
	struct http_result r;

	http(f, "POST", "/api/v1/webhooks", f->admin, body, strlen(body), NULL,
	     &r);
	if (r.status != status)
		fail_msg("%s: %ld, want %ld: %s", body, r.status, status,
			 r.body ? r.body : "");
	if (field)
		assert_string_equal(
			json_string_value(json_object_get(r.json, "field")) ?:
				"(none)",
			field);
	http_result_fini(&r);
}

static void test_refused(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	const char *ok =
		"{\"url\":\"https://127.0.0.1:9/h\",\"secret\":\"" SECRET "\"}";

	post(f, "{", 400, NULL);
	post(f, "[]", 400, NULL);
	post(f, "{\"url\":\"http://127.0.0.1/h\",\"secret\":\"" SECRET "\"}",
	     400, "url");
	post(f, "{\"url\":\"https:///h\",\"secret\":\"" SECRET "\"}", 400,
	     "url");
	post(f, "{\"url\":\"https://a b\",\"secret\":\"" SECRET "\"}", 400,
	     "url");
	post(f, "{\"url\":\"https://h\",\"secret\":\"short\"}", 400, "secret");
	post(f, "{\"url\":\"https://h\",\"secret\":\"with a space 0123456\"}",
	     400, "secret");
	post(f, "{\"url\":\"https://h\"}", 400, "secret");
	post(f, "{\"url\":\"https://h\",\"secret\":\"" SECRET "\",\"x\":1}",
	     400, "x");
	/* viewers may not add, list or read the log */
	http(f, "POST", "/api/v1/webhooks", f->viewer, ok, strlen(ok), NULL,
	     &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/webhooks/deliveries", f->viewer, NULL, 0, NULL,
	     &r);
	assert_int_equal(r.status, 403);
	http_result_fini(&r);
	assert_int_equal(count_rows(f, "webhooks"), 0);
}

static void test_add_list_delete(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	const char *ok =
		"{\"url\":\"https://127.0.0.1:9/h\",\"secret\":\"" SECRET "\"}";
	char path[64];
	json_int_t id;
	int i;

	http(f, "POST", "/api/v1/webhooks", f->admin, ok, strlen(ok), NULL, &r);
	assert_int_equal(r.status, 201);
	assert_null(strstr(r.body, SECRET));
	id = json_integer_value(json_object_get(r.json, "id"));
	http_result_fini(&r);
	http(f, "GET", "/api/v1/webhooks", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, SECRET));
	assert_int_equal(json_array_size(json_object_get(r.json, "webhooks")),
			 1);
	http_result_fini(&r);

	/* the cap */
	for (i = 1; i < TWL_STORE_MAX_WEBHOOKS; i++)
		post(f, ok, 201, NULL);
	post(f, ok, 409, NULL);

	snprintf(path, sizeof(path), "/api/v1/webhooks/%lld", (long long)id);
	http(f, "DELETE", path, f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	http(f, "DELETE", path, f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	http(f, "DELETE", "/api/v1/webhooks/x", f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 404);
	http_result_fini(&r);
	assert_int_equal(count_rows(f, "webhooks"), TWL_STORE_MAX_WEBHOOKS - 1);
}

static void test_deliveries_params(void **state)
{
	struct fixture *f = *state;
	struct http_result r;

	http(f, "GET", "/api/v1/webhooks/deliveries?limit=0", f->admin, NULL, 0,
	     NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/webhooks/deliveries?limit=1001", f->admin, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/webhooks/deliveries?webhook=-1", f->admin, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
	http(f, "GET", "/api/v1/webhooks/deliveries?webhook=3&limit=5",
	     f->admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(json_is_array(json_object_get(r.json, "deliveries")));
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_list_delete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_deliveries_params, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
