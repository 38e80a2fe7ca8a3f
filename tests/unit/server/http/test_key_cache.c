// SPDX-License-Identifier: GPL-2.0
/*
 * Host-key cache (server/http/key_cache.c): hits within the ttl only, a
 * revoked host's entries gone at once, a look-up older than a revocation
 * never cached, memory bounded whatever the number of keys.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/key_cache.h"

/* A key hash (64 hex digits) made from @i. */
static void hash_of(unsigned i, char out[65])
{
	uint64_t x = i * 0x9e3779b97f4a7c15ULL + 1;

	for (int k = 0; k < 64; k++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		out[k] = "0123456789abcdef"[x >> 60];
	}
	out[64] = 0;
}

static void test_ttl(void **state)
{
	struct twl_key_cache *kc = twl_key_cache_new(10);
	char h[65], other[65], host[65];

	assert_non_null(kc);
	hash_of(1, h);
	hash_of(2, other);
	assert_false(twl_key_cache_get(kc, h, 100.0, host));
	twl_key_cache_put(kc, h, "host-a", 100.0, twl_key_cache_gen(kc));
	assert_true(twl_key_cache_get(kc, h, 109.9, host));
	assert_string_equal(host, "host-a");
	assert_false(twl_key_cache_get(kc, other, 100.0, host));
	/* an entry is trusted for the ttl from its look-up, no longer */
	assert_false(twl_key_cache_get(kc, h, 110.0, host));
	twl_key_cache_put(kc, h, "host-a", 110.0, twl_key_cache_gen(kc));
	assert_true(twl_key_cache_get(kc, h, 119.0, host));
	twl_key_cache_free(kc);
	assert_null(twl_key_cache_new(0));
	twl_key_cache_free(NULL);
}

static void test_forget_host(void **state)
{
	struct twl_key_cache *kc = twl_key_cache_new(10);
	char a1[65], a2[65], b[65], host[65];
	unsigned long gen;

	assert_non_null(kc);
	hash_of(10, a1);
	hash_of(11, a2);
	hash_of(12, b);
	gen = twl_key_cache_gen(kc);
	twl_key_cache_put(kc, a1, "host-a", 0.5, gen);
	twl_key_cache_put(kc, a2, "host-a", 0.5, gen);
	twl_key_cache_put(kc, b, "host-b", 0.5, gen);
	twl_key_cache_forget_host(kc, "host-a");
	assert_false(twl_key_cache_get(kc, a1, 1.0, host));
	assert_false(twl_key_cache_get(kc, a2, 1.0, host));
	assert_true(twl_key_cache_get(kc, b, 1.0, host));
	assert_string_equal(host, "host-b");
	/* a look-up begun before a revocation is not cached after it */
	twl_key_cache_put(kc, a1, "host-a", 1.0, gen);
	assert_false(twl_key_cache_get(kc, a1, 1.0, host));
	twl_key_cache_put(kc, a1, "host-a", 1.0, twl_key_cache_gen(kc));
	assert_true(twl_key_cache_get(kc, a1, 1.0, host));
	twl_key_cache_free(kc);
}

/*
 * 100,000 keys put into a fixed table: the last ones put are found, the
 * table holds what it can, and a key pushed out is looked up again
 * (a miss), never answered with another key's host.
 */
static void test_bounded(void **state)
{
	struct twl_key_cache *kc = twl_key_cache_new(60);
	char h[65], host[65], want[32];
	unsigned found = 0;

	assert_non_null(kc);
	for (unsigned i = 0; i < 100000; i++) {
		hash_of(1000 + i, h);
		snprintf(want, sizeof(want), "host-%u", i);
		twl_key_cache_put(kc, h, want, 1.0 + i * 1e-6,
				  twl_key_cache_gen(kc));
	}
	for (unsigned i = 0; i < 100000; i++) {
		hash_of(1000 + i, h);
		snprintf(want, sizeof(want), "host-%u", i);
		if (twl_key_cache_get(kc, h, 2.0, host)) {
			assert_string_equal(host, want);
			found++;
		}
	}
	hash_of(1000 + 99999, h);
	assert_true(twl_key_cache_get(kc, h, 2.0, host));
	assert_true(found >= 10000 && found <= 4096 * 4);
	twl_key_cache_free(kc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_forget_host),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
