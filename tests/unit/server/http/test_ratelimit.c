// SPDX-License-Identifier: GPL-2.0
/*
 * Rate limiter (server/http/ratelimit.c): bursts, refill, bounded keys,
 * and the tolerance of N servers each limiting locally (the operator's
 * guide, "Running on PostgreSQL").
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

/*
 * Two servers, each with its own buckets, one host sending @n reports a
 * second (simulated: the clock is an argument) for @secs seconds through
 * a balancer that alternates them (@spread) or sends all to the first:
 * the reports accepted.
 */
static unsigned two_servers(double rate, double burst, unsigned n, int secs,
			    bool spread)
{
	struct twl_ratelimit *rl[2] = { twl_ratelimit_new(rate, burst),
					twl_ratelimit_new(rate, burst) };
	unsigned ok = 0, i;

	assert_non_null(rl[0]);
	assert_non_null(rl[1]);
	for (i = 0; i < n * (unsigned)secs; i++) {
		double now = 1000.0 + (double)i / n;

		ok += !twl_ratelimit_take(rl[spread ? i % 2 : 0], "h", now);
	}
	twl_ratelimit_free(rl[0]);
	twl_ratelimit_free(rl[1]);
	return ok;
}

/*
 * The documented tolerance of the local model: over T seconds a host gets
 * at most N x (burst + rate x T) reports from N servers, and reaches it
 * when its reports are spread; sent to one server, one limit holds.
 */
static void test_ratelimit_two_servers(void **state)
{
	const double rate = 1, burst = 30;
	const int secs = 100;
	unsigned one, spread;

	(void)state;
	/* a burst at one instant: N x burst */
	assert_int_equal(two_servers(rate, burst, 1000, 1, true) -
				 two_servers(rate, burst, 1000, 1, false),
			 (unsigned)burst);
	one = two_servers(rate, burst, 10, secs, false);
	spread = two_servers(rate, burst, 10, secs, true);
	assert_true(one <= burst + rate * secs);
	assert_true(spread <= 2 * (burst + rate * secs));
	/* spread, the host does exceed one limit: the tolerance is real */
	assert_true(spread > burst + rate * secs);
	assert_true(spread >= 2 * (burst + rate * (secs - 1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_ratelimit_two_servers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
