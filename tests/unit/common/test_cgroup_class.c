// SPDX-License-Identifier: GPL-2.0
/*
 * twl_cgroup_classify() (common/src/cgroup_class.c) on paths as real
 * hosts spell them: Docker with the cgroupfs and systemd drivers,
 * Kubernetes pods of each QoS class and their containers with both
 * drivers (containerd, CRI-O, dockershim, kind's nested kubelet), podman,
 * LXC, machines, systemd units and slices, the root and odd paths. Each
 * row gives the kind, its name and the wire v1 place (usage[].container).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/cgroup_class.h>

#define ID "3f1e9d0c7b6a5948372615f4e3d2c1b0a9f8e7d6c5b4a3928170f6e5d4c3b2a1"
#define UID "0f1e2d3c-aaaa-bbbb-cccc-1234567890ab"
#define UIDS "0f1e2d3c_aaaa_bbbb_cccc_1234567890ab" /* systemd's spelling */

struct ccase {
	const char *path, *kind, *name, *place;
};

static const struct ccase cases[] = {
	/* the root */
	{ "/", "root", "", "" },
	{ "", "root", "", "" },
	{ "//", "root", "", "" },
	/* Docker: cgroupfs and systemd drivers */
	{ "/docker/" ID, "docker", ID, "docker:" ID },
	{ "/system.slice/docker-" ID ".scope", "docker", ID, "docker:" ID },
	{ "/docker", "other", "", "" },
	{ "/system.slice/docker.service", "systemd_unit", "docker.service",
	  "systemd:docker.service" },
	/* Kubernetes, systemd driver: QoS slices, pods, containers */
	{ "/kubepods.slice", "kubernetes", "", "systemd:kubepods.slice" },
	{ "/kubepods.slice/kubepods-besteffort.slice", "kubernetes", "",
	  "systemd:kubepods-besteffort.slice" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDS
	  ".slice",
	  "kubernetes", UIDS, "systemd:kubepods-besteffort-pod" UIDS ".slice" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDS
	  ".slice/cri-containerd-" ID ".scope",
	  "kubernetes", ID, "cri-containerd:" ID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDS
	  ".slice/cri-containerd-" ID ".scope",
	  "kubernetes", ID, "cri-containerd:" ID },
	{ "/kubepods.slice/kubepods-pod" UIDS ".slice", "kubernetes", UIDS,
	  "systemd:kubepods-pod" UIDS ".slice" },
	{ "/kubepods.slice/kubepods-pod" UIDS ".slice/cri-containerd-" ID
	  ".scope",
	  "kubernetes", ID, "cri-containerd:" ID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDS
	  ".slice/crio-" ID ".scope",
	  "kubernetes", ID, "crio:" ID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDS
	  ".slice/crio-conmon-" ID ".scope",
	  "kubernetes", UIDS, "systemd:crio-conmon-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDS
	  ".slice/docker-" ID ".scope",
	  "kubernetes", ID, "docker:" ID },
	/* Kubernetes, cgroupfs driver */
	{ "/kubepods", "kubernetes", "", "" },
	{ "/kubepods/besteffort", "kubernetes", "", "" },
	{ "/kubepods/besteffort/pod" UID, "kubernetes", UID, "" },
	{ "/kubepods/besteffort/pod" UID "/" ID, "kubernetes", ID,
	  "cri-containerd:" ID },
	{ "/kubepods/burstable/pod" UID "/" ID, "kubernetes", ID,
	  "cri-containerd:" ID },
	{ "/kubepods/pod" UID, "kubernetes", UID, "" },
	{ "/kubepods/pod" UID "/" ID, "kubernetes", ID, "cri-containerd:" ID },
	{ "/kubepods/burstable/pod" UID "/crio-" ID, "kubernetes", ID, "" },
	/* kind: a kubelet inside a container, pods below its slice */
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UIDS
	  ".slice/cri-containerd-" ID ".scope",
	  "kubernetes", ID, "cri-containerd:" ID },
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" UIDS
	  ".slice",
	  "kubernetes", UIDS, "systemd:kubelet-kubepods-pod" UIDS ".slice" },
	/* other runtimes outside kubepods */
	{ "/system.slice/cri-containerd-" ID ".scope", "container", ID,
	  "cri-containerd:" ID },
	{ "/system.slice/crio-" ID ".scope", "container", ID, "crio:" ID },
	{ "/machine.slice/libpod-" ID ".scope", "container", ID, "podman:" ID },
	{ "/machine.slice/libpod-" ID ".scope/container", "container", ID,
	  "podman:" ID },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
	  ".scope",
	  "container", ID, "podman:" ID },
	{ "/machine.slice/libpod-conmon-" ID ".scope", "container",
	  "libpod-conmon-" ID ".scope", "systemd:libpod-conmon-" ID ".scope" },
	{ "/lxc/web1", "container", "web1", "lxc:web1" },
	{ "/lxc/web1/init.scope", "container", "web1", "lxc:web1" },
	{ "/lxc.payload.web2", "container", "web2", "lxc:web2" },
	{ "/lxc.payload.web2/init.scope", "container", "web2", "lxc:web2" },
	{ "/lxc", "other", "", "" },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope", "container",
	  "machine-qemu\\x2d1\\x2dvm1.scope",
	  "systemd:machine-qemu\\x2d1\\x2dvm1.scope" },
	{ "/machine.slice/systemd-nspawn@box.service/payload", "container",
	  "systemd-nspawn@box.service", "systemd:systemd-nspawn@box.service" },
	{ "/machine.slice", "systemd_slice", "machine.slice",
	  "systemd:machine.slice" },
	/* systemd units and slices */
	{ "/system.slice/nginx.service", "systemd_unit", "nginx.service",
	  "systemd:nginx.service" },
	{ "/system.slice/nginx.service/worker", "systemd_unit", "nginx.service",
	  "systemd:nginx.service" },
	{ "/system.slice/system-getty.slice/getty@tty1.service", "systemd_unit",
	  "getty@tty1.service", "systemd:getty@tty1.service" },
	{ "/init.scope", "systemd_unit", "init.scope", "systemd:init.scope" },
	{ "/system.slice", "systemd_slice", "system.slice",
	  "systemd:system.slice" },
	{ "/user.slice", "systemd_slice", "user.slice", "systemd:user.slice" },
	{ "/user.slice/user-1000.slice", "systemd_slice", "user-1000.slice",
	  "systemd:user-1000.slice" },
	{ "/user.slice/user-1000.slice/session-3.scope", "systemd_unit",
	  "session-3.scope", "systemd:session-3.scope" },
	{ "/user.slice/user-1000.slice/user@1000.service", "systemd_unit",
	  "user@1000.service", "systemd:user@1000.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice",
	  "systemd_slice", "app.slice", "systemd:user@1000.service" },
	{ "/-.slice", "systemd_slice", "-.slice", "" },
	/* odd paths */
	{ "/plain/group", "other", "", "" },
	{ "//docker//" ID "/", "docker", ID, "docker:" ID },
	{ "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
	  "other", "", "" },
	{ "/docker/" ID "0", "other", "", "" },
	{ "/docker/3F1E9D0C7B6A5948372615F4E3D2C1B0A9F8E7D6C5B4A3928170F6E5D4C3B2A1",
	  "other", "", "" },
	{ "/system.slice/docker-xyz.scope", "systemd_unit", "docker-xyz.scope",
	  "systemd:docker-xyz.scope" },
	{ "/system.slice/docker-" ID ".scope.bak", "systemd_slice",
	  "system.slice", "systemd:system.slice" },
	{ "/.../b/c.service", "systemd_unit", "c.service",
	  "systemd:c.service" },
	{ "(unknown cgroup 4:1234)", "other", "", "" },
	{ "h:0123456789abcdef0123456789abcdef", "other", "", "" },
	{ "/pod" UID, "other", "", "" },
	{ "/a.service.d", "other", "", "" },
	{ "/caf\xc3\xa9.service", "systemd_unit", "caf\xc3\xa9.service",
	  "systemd:caf\xc3\xa9.service" },
};

static void test_table(void **state)
{
	struct twl_cgroup_class cls;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ccase *c = &cases[i];

		memset(&cls, 0x5a, sizeof(cls));
		if (twl_cgroup_classify(c->path, &cls))
			fail_msg("%s: classify failed", c->path);
		if (strcmp(twl_cgroup_kind_name(cls.kind), c->kind) ||
		    strcmp(cls.name, c->name) || strcmp(cls.place, c->place))
			fail_msg(
				"%s: got %s \"%s\" \"%s\", expected %s \"%s\" \"%s\"",
				c->path, twl_cgroup_kind_name(cls.kind),
				cls.name, cls.place, c->kind, c->name,
				c->place);
		/* the kind alone, as the server reads it, is the same */
		if (strcmp(twl_cgroup_kind_name(twl_cgroup_kind_of(c->path)),
			   c->kind))
			fail_msg("%s: kind alone %s, expected %s", c->path,
				 twl_cgroup_kind_name(
					 twl_cgroup_kind_of(c->path)),
				 c->kind);
	}
	assert_int_equal(twl_cgroup_classify(NULL, &cls), 0);
	assert_int_equal(cls.kind, TWL_CGROUP_ROOT);
	assert_int_equal(twl_cgroup_kind_of(NULL), TWL_CGROUP_ROOT);
}

/* Names over a kernfs name's 255 bytes: the kind stays, name and place "". */
static void test_long_names(void **state)
{
	char path[600];
	struct twl_cgroup_class cls;

	(void)state;
	memset(path, 'a', sizeof(path));
	memcpy(path, "/system.slice/", 14);
	snprintf(path + 14 + 255 - 8, 9, ".service");
	assert_int_equal(twl_cgroup_classify(path, &cls), 0);
	assert_int_equal(cls.kind, TWL_CGROUP_SYSTEMD_UNIT);
	assert_int_equal(strlen(cls.name), 255);
	assert_int_equal(strlen(cls.place), 255 + 8);
	memset(path + 14, 'a', 300);
	snprintf(path + 14 + 256 - 8, 9, ".service");
	assert_int_equal(twl_cgroup_classify(path, &cls), -ENAMETOOLONG);
	assert_int_equal(cls.kind, TWL_CGROUP_SYSTEMD_UNIT);
	assert_int_equal(twl_cgroup_kind_of(path), TWL_CGROUP_SYSTEMD_UNIT);
	assert_string_equal(cls.name, "");
	assert_string_equal(cls.place, "");
}

/* Only the first TWL_CGROUP_MAX_DEPTH components count. */
static void test_depth(void **state)
{
	char path[8 * (TWL_CGROUP_MAX_DEPTH + 2)];
	struct twl_cgroup_class cls;
	size_t i, o = 0;

	(void)state;
	for (i = 0; i < TWL_CGROUP_MAX_DEPTH - 1; i++)
		o += (size_t)sprintf(path + o, "/a");
	sprintf(path + o, "/x.scope");
	assert_int_equal(twl_cgroup_classify(path, &cls), 0);
	assert_string_equal(cls.name, "x.scope");
	assert_int_equal(twl_cgroup_kind_of(path), TWL_CGROUP_SYSTEMD_UNIT);
	sprintf(path + o, "/a/x.scope");
	assert_int_equal(twl_cgroup_classify(path, &cls), 0);
	assert_int_equal(cls.kind, TWL_CGROUP_OTHER);
	assert_int_equal(twl_cgroup_kind_of(path), TWL_CGROUP_OTHER);
}

/* The names array is the enum's spelling, and parse is its inverse. */
static void test_names(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < TWL_CGROUP_N_KINDS; k++) {
		assert_non_null(twl_cgroup_kind_names[k]);
		assert_int_equal(
			twl_cgroup_kind_parse(twl_cgroup_kind_names[k]), k);
	}
	assert_null(twl_cgroup_kind_names[TWL_CGROUP_N_KINDS]);
	assert_int_equal(twl_cgroup_kind_parse("Docker"), -1);
	assert_int_equal(twl_cgroup_kind_parse(NULL), -1);
	assert_string_equal(twl_cgroup_kind_name(TWL_CGROUP_N_KINDS), "other");
	assert_string_equal(twl_cgroup_kind_name((enum twl_cgroup_kind) - 1),
			    "other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
