// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of a usage entry (common/src/workload.c, docs/workloads.md):
 * its kinds from the classifier, the names only where allowed, hashed
 * writer paths, and the key and order every grouping uses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/workload.h>

#define ID "3f1e9d0c7b6a5948372615f4e3d2c1b0a9f8e7d6c5b4a3928170f6e5d4c3b2a1"
#define POD_CG                                                               \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2" \
	".slice/cri-containerd-" ID ".scope"

/* A usage entry as twl_wire_decode() gives it: strings never NULL. */
static struct twl_wire_usage entry(const char *comm, const char *writer,
				   const char *container, const char *cgroup,
				   const char *target_kind, const char *image)
{
	return (struct twl_wire_usage){
		.boot_id = "b",
		.feature = "memcg_v1.soft_limit",
		.file = "memory.soft_limit_in_bytes",
		.op = "write",
		.use = "configures",
		.cgroup = cgroup,
		.target_kind = target_kind,
		.comm = comm,
		.writer_cgroup = writer,
		.container = container,
		.image = image,
		.value = { .unit = "", .source = "" },
	};
}

struct wcase {
	struct twl_wire_usage u;
	unsigned allow;
	const char *key;
};

static void test_cases(void **state)
{
	const struct wcase t[] = {
		/* kinds only: the default of a redacted export */
		{ entry("runc", "/system.slice/containerd.service", "", POD_CG,
			"", "registry.example.org/app:1"),
		  0, "runc|systemd_unit||kubernetes|" },
		{ entry("runc", "/system.slice/containerd.service", "", POD_CG,
			"", "registry.example.org/app:1"),
		  TWL_WORKLOAD_PLACE_NAME | TWL_WORKLOAD_IMAGE,
		  "runc|systemd_unit|containerd.service|kubernetes|registry.example.org/app:1" },
		/* target_kind as sent wins over the path (hashed there) */
		{ entry("java", "/docker/" ID, "docker:" ID, "h:0123", "docker",
			""),
		  TWL_WORKLOAD_PLACE_NAME, "java|docker|" ID "|docker|" },
		{ entry("java", "/docker/" ID, "docker:" ID, "h:0123", "", ""),
		  0, "java|docker||other|" },
		/* hashed writer paths keep the kind their container says */
		{ entry("java", "h:77", "docker:h:99", "/", "", ""),
		  TWL_WORKLOAD_PLACE_NAME, "java|docker|h:99|root|" },
		{ entry("lxc-start", "h:77", "lxc:h:98", "", "", ""),
		  TWL_WORKLOAD_PLACE_NAME, "lxc-start|container|h:98|root|" },
		{ entry("sh", "h:77", "systemd:h:97", "", "", ""),
		  TWL_WORKLOAD_PLACE_NAME, "sh|other||root|" },
		{ entry("sh", "h:77", "", "", "", ""), 0, "sh|other||root|" },
		/* the root, slices; names and images escaped */
		{ entry("systemd", "/", "", "/user.slice", "", ""),
		  TWL_WORKLOAD_PLACE_NAME, "systemd|root||systemd_slice|" },
		{ entry("a|b\\c", "/system.slice/x|y.service", "", "/", "",
			"i|j"),
		  TWL_WORKLOAD_PLACE_NAME | TWL_WORKLOAD_IMAGE,
		  "a\\|b\\\\c|systemd_unit|x\\|y.service|root|i\\|j" },
		{ entry("", "/", "", "", "", ""), TWL_WORKLOAD_IMAGE,
		  "|root||root|" },
	};
	struct twl_workload w;
	char key[TWL_WORKLOAD_KEY_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(twl_workload_of(&t[i].u, t[i].allow, &w), 0);
		assert_true(twl_workload_key(&w, key, sizeof(key)) > 0);
		if (strcmp(key, t[i].key))
			fail_msg("case %zu: key %s, expected %s", i, key,
				 t[i].key);
	}
}

/* Equal workloads have equal keys and compare equal; one field differs. */
static void test_order(void **state)
{
	struct twl_wire_usage u = entry("runc", "/system.slice/a.service", "",
					"/kubepods/pod1", "", "img");
	struct twl_workload a, b;
	char ka[TWL_WORKLOAD_KEY_MAX], kb[TWL_WORKLOAD_KEY_MAX];

	(void)state;
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_IMAGE, &a), 0);
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_IMAGE, &b), 0);
	assert_int_equal(twl_workload_cmp(&a, &b), 0);
	twl_workload_key(&a, ka, sizeof(ka));
	twl_workload_key(&b, kb, sizeof(kb));
	assert_string_equal(ka, kb);
	u.cgroup = "/system.slice";
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_IMAGE, &b), 0);
	assert_true(twl_workload_cmp(&a, &b) != 0);
	assert_true(twl_workload_cmp(&a, &b) == -twl_workload_cmp(&b, &a));
	twl_workload_key(&b, kb, sizeof(kb));
	assert_string_not_equal(ka, kb);
	/* names not allowed: two units are one workload */
	u.cgroup = "/kubepods/pod1";
	u.writer_cgroup = "/system.slice/b.service";
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_IMAGE, &b), 0);
	assert_int_equal(twl_workload_cmp(&a, &b), 0);
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_PLACE_NAME, &b), 0);
	assert_int_equal(twl_workload_of(&u, 0, &a), 0);
	assert_true(twl_workload_cmp(&a, &b) < 0);
}

/* The largest workload fits TWL_WORKLOAD_KEY_MAX; smaller buffers fail. */
static void test_key_bounds(void **state)
{
	char comm[TWL_WIRE_MAX_COMM + 1], image[TWL_WIRE_MAX_IMAGE + 1];
	char writer[TWL_CGROUP_NAME_MAX + 2], key[TWL_WORKLOAD_KEY_MAX];
	char longer[TWL_CGROUP_NAME_MAX + 3];
	struct twl_wire_usage u;
	struct twl_workload w;
	int n;

	(void)state;
	memset(comm, '|', sizeof(comm) - 1);
	comm[sizeof(comm) - 1] = '\0';
	memset(image, '\\', sizeof(image) - 1);
	image[sizeof(image) - 1] = '\0';
	writer[0] = '/';
	memset(writer + 1, '|', sizeof(writer) - 2);
	memcpy(writer + sizeof(writer) - 9, ".service", 9);
	u = entry(comm, writer, "", "/a.slice", "systemd_slice", image);
	assert_int_equal(
		twl_workload_of(
			&u, TWL_WORKLOAD_PLACE_NAME | TWL_WORKLOAD_IMAGE, &w),
		0);
	n = twl_workload_key(&w, key, sizeof(key));
	assert_true(n > 0 && (size_t)n < sizeof(key));
	assert_int_equal(twl_workload_key(&w, key, (size_t)n), -ENOSPC);
	assert_string_equal(key, "");
	assert_int_equal(twl_workload_key(&w, key, 0), -ENOSPC);
	assert_int_equal(twl_workload_key(&w, key, (size_t)n + 1), n);
	/* a writer path whose name is over 255 bytes: kinds, no name */
	longer[0] = '/';
	memset(longer + 1, 'x', sizeof(longer) - 2);
	memcpy(longer + sizeof(longer) - 9, ".service", 9);
	u.writer_cgroup = longer;
	assert_int_equal(twl_workload_of(&u, TWL_WORKLOAD_PLACE_NAME, &w),
			 -ENAMETOOLONG);
	assert_int_equal(w.place_kind, TWL_CGROUP_SYSTEMD_UNIT);
	assert_string_equal(w.place_name, "");
	assert_string_equal(w.comm, comm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_key_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
