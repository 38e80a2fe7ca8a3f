// SPDX-License-Identifier: GPL-2.0
/*
 * Peer keys (server/http/peer.c): IPv4 addresses count alone, also mapped
 * into IPv6; IPv6 addresses count by their /64; loopback is recognised in
 * every form.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "http/peer.h"

static void v6(const char *text, struct twl_peer *p)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };

	assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
	assert_int_equal(twl_peer_of((struct sockaddr *)&a, p), 0);
}

static void test_v4(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct twl_peer p;

	inet_pton(AF_INET, "192.0.2.7", &a.sin_addr);
	assert_int_equal(twl_peer_of((struct sockaddr *)&a, &p), 0);
	assert_string_equal(p.text, "192.0.2.7");
	assert_string_equal(p.key, "192.0.2.7");
	assert_false(p.loopback);
	inet_pton(AF_INET, "127.0.0.144", &a.sin_addr);
	twl_peer_of((struct sockaddr *)&a, &p);
	assert_string_equal(p.key, "127.0.0.144");
	assert_true(p.loopback);
	/* the same address mapped into IPv6 (a dual-stack listener) */
	v6("::ffff:192.0.2.7", &p);
	assert_string_equal(p.key, "192.0.2.7");
	assert_false(p.loopback);
	v6("::ffff:127.0.0.1", &p);
	assert_true(p.loopback);
}

static void test_v6_by_64(void **state)
{
	struct twl_peer a, b, c;

	v6("2001:db8:1:2::1", &a);
	v6("2001:db8:1:2:ffff:ffff:ffff:fffe", &b);
	v6("2001:db8:1:3::1", &c);
	assert_string_equal(a.key, "2001:db8:1:2::/64");
	assert_string_equal(a.key, b.key);
	assert_string_not_equal(a.key, c.key);
	assert_string_equal(a.text, "2001:db8:1:2::1");
	assert_false(a.loopback);
	v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", &a);
	assert_string_equal(a.key, "ffff:ffff:ffff:ffff::/64");
	assert_true(strlen(a.key) < TWL_PEER_KEY_MAX);
	v6("::1", &a);
	assert_true(a.loopback);
	/* ::1 shares its /64 with no other address anyone can use */
	assert_string_equal(a.key, "0:0:0:0::/64");
}

static void test_other_family(void **state)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	struct twl_peer p;

	assert_int_equal(twl_peer_of(&sa, &p), -EAFNOSUPPORT);
	assert_string_equal(p.key, "?");
	assert_false(p.loopback);
	assert_int_equal(twl_peer_of(NULL, &p), -EAFNOSUPPORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_v6_by_64),
		cmocka_unit_test(test_other_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
