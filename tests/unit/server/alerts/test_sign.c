// SPDX-License-Identifier: GPL-2.0
/*
 * Webhook signatures and the retry schedule (server/alerts/sign.c). The
 * expected HMACs were computed apart, with Python's hmac module.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "alerts/sign.h"

static const char secret[] = "0123456789abcdef-secret";
static const char body[] = "{\"kind\":\"new_use\"}";

static void test_signature_known(void **state)
{
	char sig[TWL_WEBHOOK_SIG_CAP];

	(void)state;
	assert_int_equal(twl_webhook_sign(secret, 1700000000, body,
					  strlen(body), sig),
			 0);
	assert_string_equal(sig, "sha256=a39d3e7c43e4ff9eb3733c46ec523256d294c"
				 "45bfbbb8d8df2b3fb68fe775a89");
	/* the timestamp is signed: a replay under another time fails */
	assert_int_equal(twl_webhook_sign(secret, 1700000001, body,
					  strlen(body), sig),
			 0);
	assert_string_equal(sig, "sha256=ff3104bfba54d782185c8a2325b5dffc3c7c2"
				 "dfc2e876371fbd76e211a79f009");
}

static void test_signature_differs(void **state)
{
	char a[TWL_WEBHOOK_SIG_CAP], b[TWL_WEBHOOK_SIG_CAP];

	(void)state;
	assert_int_equal(twl_webhook_sign(secret, 5, body, strlen(body), a), 0);
	assert_int_equal(twl_webhook_sign("another-secret-0123", 5, body,
					  strlen(body), b),
			 0);
	assert_string_not_equal(a, b);
	assert_int_equal(twl_webhook_sign(secret, 5, body, strlen(body) - 1, b),
			 0);
	assert_string_not_equal(a, b);
	assert_int_equal(strlen(a), TWL_WEBHOOK_SIG_CAP - 1);
}

static void test_signature_refused(void **state)
{
	char sig[TWL_WEBHOOK_SIG_CAP];

	(void)state;
	assert_int_equal(twl_webhook_sign("", 1, body, 3, sig), -EINVAL);
	assert_int_equal(twl_webhook_sign(NULL, 1, body, 3, sig), -EINVAL);
	assert_int_equal(twl_webhook_sign(secret, 1, NULL, 3, sig), -EINVAL);
}

static void test_backoff_schedule(void **state)
{
	static const int64_t want[] = { 5, 20, 80, 320, 1280 };
	unsigned i;

	(void)state;
	for (i = 1; i < TWL_WEBHOOK_ATTEMPTS; i++)
		assert_int_equal(twl_webhook_backoff(5, i), want[i - 1]);
	/* after the last attempt: give up */
	assert_int_equal(twl_webhook_backoff(5, TWL_WEBHOOK_ATTEMPTS), -1);
	assert_int_equal(twl_webhook_backoff(5, 0), -1);
	assert_int_equal(twl_webhook_backoff(0, 1), -1);
	/* capped */
	assert_int_equal(twl_webhook_backoff(600, 3), TWL_WEBHOOK_BACKOFF_MAX);
	assert_int_equal(twl_webhook_backoff(3600, 1), TWL_WEBHOOK_BACKOFF_MAX);
	assert_int_equal(twl_webhook_backoff(1, 5), 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature_known),
		cmocka_unit_test(test_signature_differs),
		cmocka_unit_test(test_signature_refused),
		cmocka_unit_test(test_backoff_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
