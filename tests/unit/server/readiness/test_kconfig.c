// SPDX-License-Identifier: GPL-2.0
/* The .config parser (server/readiness/kconfig.c): what it takes, what it
 * refuses and why. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "readiness/kconfig.h"

static int parse(const char *text, size_t len, json_t **syms, char *rel,
		 char *err)
{
	return twl_kconfig_parse(text, len, syms, rel, TWL_KCONFIG_MAX_RELEASE,
				 err, 256);
}

static void test_values(void **state)
{
	static const char text[] =
		"#\n# Automatically generated file; DO NOT EDIT.\n"
		"# Linux/x86 6.12.118 Kernel Configuration\n#\n"
		"CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
		"CONFIG_MEMCG=y\n# CONFIG_MEMCG_V1 is not set\r\n"
		"CONFIG_BLK_CGROUP=m\nCONFIG_HZ=250\nCONFIG_BASE=0x10\n"
		"CONFIG_NEG=-1\n\nCONFIG_OFF=n\n# a comment\n";
	char rel[TWL_KCONFIG_MAX_RELEASE], err[256];
	json_t *s;

	assert_int_equal(parse(text, strlen(text), &s, rel, err), 0);
	assert_string_equal(rel, "6.12.118");
	assert_int_equal(json_object_size(s), 4);
	assert_true(json_is_true(json_object_get(s, "CONFIG_MEMCG")));
	assert_true(json_is_true(json_object_get(s, "CONFIG_BLK_CGROUP")));
	assert_true(json_is_false(json_object_get(s, "CONFIG_MEMCG_V1")));
	assert_true(json_is_false(json_object_get(s, "CONFIG_OFF")));
	assert_null(json_object_get(s, "CONFIG_HZ"));
	json_decref(s);
}

static void expect_bad(const char *text, size_t len, int rc, const char *why)
{
	char rel[TWL_KCONFIG_MAX_RELEASE], err[256];
	json_t *s = (json_t *)1;

	assert_int_equal(parse(text, len, &s, rel, err), rc);
	assert_null(s);
	if (!strstr(err, why))
		fail_msg("error \"%s\" does not say \"%s\"", err, why);
}

static void test_garbage(void **state)
{
	char *big;

	expect_bad("", 0, -EINVAL, "no CONFIG_ symbol");
	expect_bad("# only comments\n", 16, -EINVAL, "no CONFIG_ symbol");
	expect_bad("CONFIG_A=y\nhello\n", 17, -EINVAL, "line 2: expected");
	expect_bad("CONFIG_A=maybe\n", 15, -EINVAL, "line 1: the value");
	expect_bad("CONFIG_=y\n", 10, -EINVAL, "line 1");
	expect_bad("CONFIG_A B=y\n", 13, -EINVAL, "line 1");
	expect_bad("CONFIG_A=y\0\n", 12, -EINVAL, "NUL");
	expect_bad("{\"json\": true}", 14, -EINVAL, "line 1");
	big = malloc(TWL_KCONFIG_MAX_LINE + 20);
	assert_non_null(big);
	memset(big, 'A', TWL_KCONFIG_MAX_LINE + 20);
	memcpy(big, "CONFIG_X=\"", 10);
	expect_bad(big, TWL_KCONFIG_MAX_LINE + 20, -EINVAL, "longer than");
	free(big);
	expect_bad("x", TWL_KCONFIG_MAX_BYTES + 1, -EFBIG, "at most");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
