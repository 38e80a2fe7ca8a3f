// SPDX-License-Identifier: GPL-2.0
/* Agent state file: round trip, corruption, boot changes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agent_test.h"
#include "state.h"

static void test_round_trip(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, TWL_STATE_FILE);
	struct twl_state st = { .boot_id =
					"2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
				.have_last_seq = true,
				.last_seq = 123456789012ULL,
				.have_first_seq = true,
				.first_seq = 57,
				.host_seq = 42 };
	struct twl_state got;
	struct stat sb;

	assert_int_equal(twl_state_load(dir, &got), 0); /* missing: empty */
	assert_false(got.have_last_seq);
	assert_int_equal(got.host_seq, 0);
	assert_int_equal(twl_state_save(dir, &st), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(twl_state_load(dir, &got), 0);
	assert_string_equal(got.boot_id, st.boot_id);
	assert_true(got.have_last_seq);
	assert_int_equal(got.last_seq, 123456789012ULL);
	assert_true(got.have_first_seq);
	assert_int_equal(got.first_seq, 57);
	assert_int_equal(got.host_seq, 42);

	/* Same boot: position applies. Other boot: forgotten, host_seq kept. */
	assert_true(twl_state_for_boot(&got, st.boot_id));
	assert_false(twl_state_for_boot(
		&got, "0b0b0b0b-0000-4000-8000-000000000000"));
	assert_false(got.have_last_seq);
	assert_false(got.have_first_seq);
	assert_int_equal(got.host_seq, 42);
	assert_string_equal(got.boot_id,
			    "0b0b0b0b-0000-4000-8000-000000000000");
	free(path);
	test_rmtree(dir);
}

static void test_corrupt(void **state)
{
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"{\"boot_id\": 5}",
		"{\"boot_id\": \"NOT-HEX\"}",
		"{\"last_kmsg_seq\": -1}",
		"{\"first_kmsg_seq\": \"1\"}",
		"{\"host_seq\": \"x\"}",
		"{\"host_seq\": 1, \"host_seq\": 2}",
	};
	char *dir = test_mkdtemp();
	struct twl_state got;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		test_write(dir, TWL_STATE_FILE, bad[i]);
		if (twl_state_load(dir, &got) != -EINVAL)
			fail_msg("state \"%s\" was accepted", bad[i]);
		assert_false(got.have_last_seq);
	}
	test_write(
		dir, TWL_STATE_FILE,
		"{\"boot_id\":\"ab\",\"last_kmsg_seq\":null,\"host_seq\":3,\"future\":1}");
	assert_int_equal(twl_state_load(dir, &got), 0);
	assert_false(got.have_last_seq);
	assert_int_equal(got.host_seq, 3);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
