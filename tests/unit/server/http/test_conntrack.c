// SPDX-License-Identifier: GPL-2.0
/*
 * Connections per peer key (server/http/conntrack.c): exact counts (no
 * key ever counts against another), the per-key maximum, a full table,
 * and removal that keeps every other key findable (checked against a
 * plain array under many random adds and removes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/conntrack.h"

static void test_exact(void **state)
{
	struct twl_conntrack *ct = twl_conntrack_new(64);

	assert_non_null(ct);
	for (int i = 0; i < 16; i++)
		assert_int_equal(twl_conntrack_add(ct, "127.0.0.144", 16), 0);
	assert_int_equal(twl_conntrack_add(ct, "127.0.0.144", 16), -EUSERS);
	assert_int_equal(twl_conntrack_count(ct, "127.0.0.144"), 16);
	/* another address is not affected, whatever its hash */
	assert_int_equal(twl_conntrack_count(ct, "127.0.0.1"), 0);
	assert_int_equal(twl_conntrack_add(ct, "127.0.0.1", 16), 0);
	twl_conntrack_del(ct, "127.0.0.144");
	assert_int_equal(twl_conntrack_count(ct, "127.0.0.144"), 15);
	twl_conntrack_del(ct, "192.0.2.1"); /* never counted: ignored */
	assert_int_equal(twl_conntrack_count(ct, "192.0.2.1"), 0);
	assert_int_equal(twl_conntrack_add(ct, "", 16), -EINVAL);
	twl_conntrack_free(ct);
	twl_conntrack_free(NULL);
}

static void test_full(void **state)
{
	struct twl_conntrack *ct = twl_conntrack_new(4);
	char key[32];

	for (int i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "10.0.0.%d", i);
		assert_int_equal(twl_conntrack_add(ct, key, 2), 0);
	}
	/* a fifth key finds no room; the four keep counting */
	assert_int_equal(twl_conntrack_add(ct, "10.0.0.9", 2), -ENOSPC);
	assert_int_equal(twl_conntrack_add(ct, "10.0.0.1", 2), 0);
	twl_conntrack_del(ct, "10.0.0.3");
	assert_int_equal(twl_conntrack_add(ct, "10.0.0.9", 2), 0);
	twl_conntrack_free(ct);
}

/* Random adds and removes against a plain array of counts. */
static void test_model(void **state)
{
	enum { KEYS = 300, OPS = 200000 };
	struct twl_conntrack *ct = twl_conntrack_new(KEYS);
	unsigned model[KEYS] = { 0 };
	char key[32];

	srand(7);
	for (int op = 0; op < OPS; op++) {
		int k = rand() % KEYS;

		snprintf(key, sizeof(key), "2001:db8:%x:%x::/64", k, k * 7);
		if (rand() % 2) {
			int ret = twl_conntrack_add(ct, key, 3);

			assert_int_equal(ret, model[k] < 3 ? 0 : -EUSERS);
			model[k] += !ret;
		} else {
			twl_conntrack_del(ct, key);
			model[k] -= model[k] > 0;
		}
		if (op % 1000 == 0)
			for (int j = 0; j < KEYS; j++) {
				snprintf(key, sizeof(key),
					 "2001:db8:%x:%x::/64", j, j * 7);
				assert_int_equal(twl_conntrack_count(ct, key),
						 model[j]);
			}
	}
	twl_conntrack_free(ct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
