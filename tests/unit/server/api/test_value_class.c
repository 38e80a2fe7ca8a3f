// SPDX-License-Identifier: GPL-2.0
/*
 * Value classes (server/api/value_class.c): bytes in IEC units at their
 * edges, and the class lines of each kind from a store-shaped "values"
 * document, compared exactly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/value_class.h"

static void expect_bytes(int64_t v, const char *want)
{
	char out[32];

	assert_string_equal(twl_value_bytes(v, out, sizeof(out)), want);
}

static void test_bytes(void **state)
{
	(void)state;
	expect_bytes(0, "0 B");
	expect_bytes(1023, "1023 B");
	expect_bytes(1536, "1.5 KiB");
	expect_bytes(4096, "4 KiB");
	expect_bytes(268435456, "256 MiB");
	expect_bytes(8LL << 30, "8 GiB");
	/* a page above 256 MiB is not 256 MiB */
	expect_bytes(268435456 + 4096, "256.0 MiB");
	/* 1000000000 written, rounded down to pages by the kernel */
	expect_bytes(999997440, "953.7 MiB");
	/* would round to 1024.0 KiB */
	expect_bytes(1048575, "1.0 MiB");
	expect_bytes(1048576 - 4096, "1020 KiB");
	/* the wire's largest finite value, and the census's largest */
	expect_bytes((1LL << 53) - 1, "8.0 PiB");
	expect_bytes(1LL << 53, "8 PiB");
	expect_bytes(INT64_MAX, "8.0 EiB");
	expect_bytes(-1, "unlimited");
}

/* The lines of the values document @json, compared with @want (NULL-ended). */
static void expect_classes(const char *json, const char *const *want)
{
	json_error_t err;
	json_t *v = json_loads(json, 0, &err), *arr;
	size_t i;

	if (!v)
		fail_msg("bad test JSON: %s", err.text);
	arr = twl_value_classes(v);
	assert_non_null(arr);
	for (i = 0; want[i]; i++) {
		const char *got = json_string_value(json_array_get(arr, i));

		if (!got || strcmp(got, want[i]))
			fail_msg("line %zu: got \"%s\", want \"%s\"", i,
				 got ? got : "(none)", want[i]);
	}
	if (json_array_size(arr) != i)
		fail_msg("%zu lines, want %zu; extra: %s", json_array_size(arr),
			 i, json_string_value(json_array_get(arr, i)));
	json_decref(arr);
	json_decref(v);
}

static void test_bytes_classes(void **state)
{
	(void)state;
	expect_classes(
		"{\"kind\":\"bytes\",\"name\":\"soft_limit_in_bytes\","
		"\"written\":{\"cgroups\":233,\"hosts\":12,\"processes\":9,"
		"\"min\":268435456,\"max\":8589934592,"
		"\"set\":{\"cgroups\":230,\"hosts\":12,\"processes\":7},"
		"\"unlimited\":{\"cgroups\":5,\"hosts\":2,\"processes\":3}},"
		"\"configured\":{\"cgroups\":1,\"hosts\":1,\"min\":536870912,"
		"\"max\":536870912}}",
		(const char *const[]){
			"soft_limit_in_bytes set on 230 cgroups on 12 hosts: "
			"256 MiB-8 GiB; reset to unlimited by 3 processes",
			"soft_limit_in_bytes configured on 1 cgroup on 1 host "
			"(census): 512 MiB",
			NULL });
	/* unlimited only: no range, and one of each */
	expect_classes(
		"{\"kind\":\"bytes\",\"name\":\"soft_limit_in_bytes\","
		"\"written\":{\"cgroups\":2,\"hosts\":1,\"processes\":1,"
		"\"min\":null,\"max\":null,"
		"\"set\":{\"cgroups\":0,\"hosts\":0,\"processes\":0},"
		"\"unlimited\":{\"cgroups\":2,\"hosts\":1,\"processes\":1}},"
		"\"configured\":{\"cgroups\":0,\"hosts\":0,\"min\":null,"
		"\"max\":null}}",
		(const char *const[]){
			"soft_limit_in_bytes only reset to unlimited: 2 cgroups "
			"on 1 host, by 1 process",
			NULL });
	/* a limit of 0 is a value, not nothing */
	expect_classes(
		"{\"kind\":\"bytes\",\"name\":\"kmem.limit_in_bytes\","
		"\"written\":{\"min\":0,\"max\":0,"
		"\"set\":{\"cgroups\":1,\"hosts\":1,\"processes\":1},"
		"\"unlimited\":{\"cgroups\":0}}}",
		(const char *const[]){ "kmem.limit_in_bytes set on 1 cgroup on "
				       "1 host: 0 B",
				       NULL });
	/* nothing written or configured */
	expect_classes(
		"{\"kind\":\"bytes\",\"name\":\"soft_limit_in_bytes\","
		"\"written\":{\"set\":{\"cgroups\":0},\"unlimited\":"
		"{\"cgroups\":0}},\"configured\":{\"cgroups\":0,\"min\":null}}",
		(const char *const[]){ NULL });
}

static void test_boolean_classes(void **state)
{
	(void)state;
	expect_classes(
		"{\"kind\":\"boolean\",\"name\":\"oom_kill_disable\","
		"\"written\":{\"values\":[{\"value\":1,\"cgroups\":4,"
		"\"hosts\":2,\"processes\":5,\"names\":[\"a\",\"b\",\"c\"]}],"
		"\"values_more\":false},"
		"\"configured\":{\"cgroups\":3,\"hosts\":1,\"values\":"
		"[{\"value\":1,\"cgroups\":3,\"hosts\":1}]},"
		"\"listeners\":{\"processes\":2,\"hosts\":1,\"cgroups\":2}}",
		(const char *const[]){
			"oom_kill_disable=1 written on 4 cgroups on 2 hosts by "
			"a, b, c and 2 more",
			"oom_kill_disable=1 on 3 cgroups on 1 host (census)",
			"notification listeners: 2 processes on 1 host",
			NULL });
	expect_classes(
		"{\"kind\":\"boolean\",\"name\":\"use_hierarchy\","
		"\"written\":{\"values\":[{\"value\":0,\"cgroups\":1,"
		"\"hosts\":1,\"processes\":1,\"names\":[\"systemd\"]}]}}",
		(const char *const[]){ "use_hierarchy=0 written on 1 cgroup on "
				       "1 host by systemd",
				       NULL });
	/* listeners alone, on a feature whose writes are not shown */
	expect_classes("{\"kind\":\"none\",\"name\":null,\"listeners\":"
		       "{\"processes\":1,\"hosts\":1,\"cgroups\":1}}",
		       (const char *const[]){
			       "notification listeners: 1 process on 1 host",
			       NULL });
}

static void test_list_classes(void **state)
{
	(void)state;
	expect_classes(
		"{\"kind\":\"integer\",\"name\":\"swappiness\","
		"\"written\":{\"cgroups\":4,\"hosts\":2,\"processes\":2,"
		"\"values\":[{\"value\":0,\"cgroups\":3,\"hosts\":2},"
		"{\"value\":10,\"cgroups\":1,\"hosts\":1}],"
		"\"values_more\":false},"
		"\"configured\":{\"cgroups\":2,\"hosts\":1,\"values\":"
		"[{\"value\":30,\"cgroups\":2,\"hosts\":1}],"
		"\"values_more\":true}}",
		(const char *const[]){
			"swappiness written: 0 on 3 cgroups, 10 on 1 cgroup; "
			"by 2 processes on 2 hosts",
			"swappiness configured (census): 30 on 2 cgroups, more "
			"values; on 1 host",
			NULL });
	expect_classes(
		"{\"kind\":\"bitmask\",\"name\":\"move_charge_at_immigrate\","
		"\"written\":{\"cgroups\":3,\"hosts\":1,\"processes\":1,"
		"\"values\":[{\"value\":0,\"cgroups\":1},"
		"{\"value\":1,\"cgroups\":2},{\"value\":3,\"cgroups\":1},"
		"{\"value\":9007199254740992,\"cgroups\":1}]}}",
		(const char *const[]){
			"move_charge_at_immigrate written: 0x0 (no bits) on 1 "
			"cgroup, 0x1 (bit 0) on 2 cgroups, 0x3 (bits 0,1) on 1 "
			"cgroup, 0x20000000000000 (bit 53) on 1 cgroup; by 1 "
			"process on 1 host",
			NULL });
}

static void test_bad_and_long(void **state)
{
	char name[701], json[8192];
	size_t pos;
	json_t *v, *arr;
	const char *line;

	(void)state;
	v = json_pack("{s:s}", "kind", "size");
	errno = 0;
	assert_null(twl_value_classes(v));
	assert_int_equal(errno, EINVAL);
	json_decref(v);
	assert_null(twl_value_classes(NULL));
	/* 700 bytes of name and 16 values of 33: cut at a whole item */
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	pos = (size_t)snprintf(json, sizeof(json),
			       "{\"kind\":\"integer\",\"name\":\"%s\","
			       "\"written\":{\"values\":[",
			       name);
	for (int i = 0; i < 16; i++)
		pos += (size_t)snprintf(json + pos, sizeof(json) - pos,
					"%s{\"value\":%lld,\"cgroups\":1}",
					i ? "," : "",
					(long long)(INT64_MAX - i));
	snprintf(json + pos, sizeof(json) - pos, "]}}");
	v = json_loads(json, 0, NULL);
	assert_non_null(v);
	arr = twl_value_classes(v);
	assert_non_null(arr);
	line = json_string_value(json_array_get(arr, 0));
	assert_non_null(line);
	assert_true(strlen(line) < TWL_VALUE_CLASS_MAX);
	assert_string_equal(line + strlen(line) - 3, "...");
	assert_non_null(
		strstr(line, " written: 9223372036854775807 on 1 cgroup"));
	json_decref(arr);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_bytes_classes),
		cmocka_unit_test(test_boolean_classes),
		cmocka_unit_test(test_list_classes),
		cmocka_unit_test(test_bad_and_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
