// SPDX-License-Identifier: GPL-2.0
/* Rate limiter (server/http/ratelimit.c): bursts, refill, bounded keys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/ratelimit.h"

static void test_ratelimit(void **state)
{
	struct twl_ratelimit *rl = twl_ratelimit_new(1.0, 3);

	assert_non_null(rl);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 100.0), 1);
	assert_int_equal(twl_ratelimit_take(rl, "other", 100.0), 0);
	assert_int_equal(twl_ratelimit_take(rl, "h", 101.1), 0);
	/* many keys: memory stays bounded, fresh keys still get their burst */
	for (int i = 0; i < 100000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(twl_ratelimit_take(rl, k, 200.0), 0);
	}
	twl_ratelimit_free(rl);
	assert_null(twl_ratelimit_new(0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratelimit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
