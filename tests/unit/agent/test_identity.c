// SPDX-License-Identifier: GPL-2.0
/* Host identity: hashed machine id, random id kept once, boot id checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_test.h"
#include "identity.h"

#define MID "0123456789abcdef0123456789abcdef"

static void test_hash(void **state)
{
	char a[65], b[65], c[65];

	assert_int_equal(twl_host_id_from_machine_id(MID "\n", "k1", a), 0);
	assert_int_equal(twl_host_id_from_machine_id("  " MID, "k1", b), 0);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 64);
	assert_null(strstr(a, MID)); /* the machine id does not leak */
	assert_int_equal(twl_host_id_from_machine_id(MID, "k2", c), 0);
	assert_string_not_equal(a,
				c); /* a different key gives a different id */
	assert_int_equal(twl_host_id_from_machine_id(" \n", "k1", c), -ENODATA);
}

static void setup_files(const char *dir, const char *mid)
{
	test_write(dir, "machine-id", mid);
	test_write(dir, "boot_id", "2F6D7A1E-8A4B-4C1D-9E0F-1A2B3C4D5E6F\n");
	test_write(dir, "mountinfo",
		   "31 26 0:28 / /x/memory rw - cgroup cgroup rw,memory\n");
	test_mkdir(dir, "state");
}

static void cfg_for(const char *dir, struct twl_identity_cfg *ic,
		    char paths[5][512])
{
	snprintf(paths[0], 512, "%s/machine-id", dir);
	snprintf(paths[1], 512, "%s/boot_id", dir);
	snprintf(paths[2], 512, "%s/state", dir);
	snprintf(paths[3], 512, "%s/mountinfo", dir);
	memset(ic, 0, sizeof(*ic));
	ic->machine_id_path = paths[0];
	ic->boot_id_path = paths[1];
	ic->host_id_key = "twilight-agent";
	ic->state_dir = paths[2];
	ic->mountinfo = paths[3];
	ic->cgroup_root = "/x";
	ic->send_hostname = true;
}

static void test_load_with_machine_id(void **state)
{
	char *dir = test_mkdtemp(), paths[5][512], want[65];
	struct twl_identity_cfg ic;
	struct twl_identity id;

	setup_files(dir, MID "\n");
	cfg_for(dir, &ic, paths);
	assert_int_equal(twl_identity_load(&ic, &id), 0);
	assert_int_equal(
		twl_host_id_from_machine_id(MID, "twilight-agent", want), 0);
	assert_string_equal(id.host_id, want);
	assert_string_equal(id.boot_id, "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f");
	assert_string_equal(id.cgroup_mode, "v1");
	assert_true(strlen(id.kernel) > 0);
	assert_true(strlen(id.hostname) > 0);
	assert_null(id.labels);
	ic.send_hostname = false;
	ic.labels = &(struct twl_labels){ .n = 0 };
	assert_int_equal(twl_identity_load(&ic, &id), 0);
	assert_string_equal(id.hostname, "");
	assert_false(id.host_id_ephemeral);
	assert_ptr_equal(id.labels, ic.labels);
	test_rmtree(dir);
}

static void test_random_id_kept(void **state)
{
	char *dir = test_mkdtemp(), paths[5][512], first[65];
	char *other = test_mkdtemp(), opaths[5][512];
	struct twl_identity_cfg ic, oc;
	struct twl_identity id;
	char *hid;

	/* Empty machine id (small guests): random id, created once. */
	setup_files(dir, "");
	cfg_for(dir, &ic, paths);
	hid = test_path(paths[2], "host-id");
	assert_int_equal(twl_identity_load(&ic, &id), 0);
	assert_int_equal(access(hid, F_OK), 0);
	snprintf(first, sizeof(first), "%s", id.host_id);
	assert_int_equal(twl_identity_load(&ic, &id), 0);
	assert_string_equal(id.host_id, first);

	/* Another host without machine id gets another id. */
	setup_files(other, "");
	cfg_for(other, &oc, opaths);
	assert_int_equal(twl_identity_load(&oc, &id), 0);
	assert_string_not_equal(id.host_id, first);

	/* Corrupt host-id file: an error, not a silent new identity. */
	test_write(paths[2], "host-id", "not hex\n");
	assert_int_equal(twl_identity_load(&ic, &id), -EINVAL);
	free(hid);
	test_rmtree(dir);
	test_rmtree(other);
}

static void test_read_only_writes_nothing(void **state)
{
	char *dir = test_mkdtemp(), paths[5][512];
	struct twl_identity_cfg ic;
	struct twl_identity id;
	char *hid;

	setup_files(dir, "");
	cfg_for(dir, &ic, paths);
	ic.read_only = true;
	hid = test_path(paths[2], "host-id");
	assert_int_equal(twl_identity_load(&ic, &id), 0);
	assert_true(id.host_id_ephemeral);
	assert_int_equal(strlen(id.host_id), 64);
	assert_int_equal(access(hid, F_OK), -1);
	free(hid);
	test_rmtree(dir);
}

static void test_bad_boot_id(void **state)
{
	char *dir = test_mkdtemp(), paths[5][512];
	struct twl_identity_cfg ic;
	struct twl_identity id;

	setup_files(dir, MID);
	cfg_for(dir, &ic, paths);
	test_write(dir, "boot_id", "not a boot id!\n");
	assert_int_equal(twl_identity_load(&ic, &id), -EINVAL);
	test_write(dir, "boot_id", "");
	assert_int_equal(twl_identity_load(&ic, &id), -EINVAL);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_load_with_machine_id),
		cmocka_unit_test(test_random_id_kept),
		cmocka_unit_test(test_read_only_writes_nothing),
		cmocka_unit_test(test_bad_boot_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
