// SPDX-License-Identifier: GPL-2.0
/*
 * agent/bpf/twl_bpf_decide.c and the health it feeds: which controllers'
 * v1 interfaces a kernel has built, decided from its BTF (synthetic BTF
 * built here with libbpf, both polarities), and loading around a program
 * that fails alone (a fake loader). Nothing is loaded into any kernel.
 *
 * With two arguments, VMLINUX and CONFIG (a real kernel image with BTF and
 * its .config), the decision from the image's BTF is checked against the
 * config instead; a missing file fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <cmocka.h>
#include <jansson.h>

#include <twilight/wire.h>

#include "twl_bpf.h"
#include "twl_bpf_decide.h"
#include "twl_bpf_internal.h"

/* A BTF holding exactly the functions @names (NULL-terminated). */
static struct btf *btf_with(const char *const *names)
{
	struct btf *btf = btf__new_empty();
	int int_id, proto;

	assert_non_null(btf);
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	assert_true(int_id > 0);
	proto = btf__add_func_proto(btf, int_id);
	assert_true(proto > 0);
	for (; *names; names++)
		assert_true(btf__add_func(btf, *names, BTF_FUNC_STATIC, proto) >
			    0);
	return btf;
}

/*
 * Debian 6.12 without CONFIG_MEMCG_V1 and CONFIG_CPUSETS_V1: memcg's and
 * cpuset's cores, the functions that stay (cgroup_file_open,
 * vmpressure_register_event), the v1 freezer, blkcg and cgroup core.
 */
static const char *const no_v1[] = { "mem_cgroup_css_alloc",
				     "cpuset_css_alloc",
				     "cgroup_file_open",
				     "vmpressure_register_event",
				     "freezer_write",
				     "blkcg_reset_stats",
				     "cgroup_release_agent_write",
				     NULL };

/* 6.1 (or 6.12 with both v1 options): the v1 handlers are there. */
static const char *const with_v1[] = { "mem_cgroup_css_alloc",
				       "mem_cgroup_write",
				       "cpuset_css_alloc",
				       "cpuset_write_s64",
				       "cgroup_file_open",
				       "vmpressure_register_event",
				       NULL };

static void test_memory_not_built(void **state)
{
	struct btf *btf = btf_with(no_v1);
	char reason[160];

	(void)state;
	assert_false(twl_ctl_v1_built(TWL_CTL_MEMORY, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"mem_cgroup_write absent from the kernel's BTF: CONFIG_MEMCG_V1 is not set");
	assert_false(twl_ctl_v1_built(TWL_CTL_CPUSET, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"cpuset_write_s64 absent from the kernel's BTF: CONFIG_CPUSETS_V1 is not set");
	assert_true(twl_ctl_v1_built(TWL_CTL_FREEZER, twl_btf_has_func, btf,
				     reason, sizeof(reason)));
	assert_string_equal(reason, "freezer_write is in the kernel's BTF");
	assert_true(twl_ctl_v1_built(TWL_CTL_BLKIO, twl_btf_has_func, btf,
				     reason, sizeof(reason)));
	assert_true(twl_ctl_v1_built(TWL_CTL_CGROUP, twl_btf_has_func, btf,
				     reason, sizeof(reason)));
	btf__free(btf);
}

static void test_memory_built(void **state)
{
	struct btf *btf = btf_with(with_v1);
	char reason[160];

	(void)state;
	assert_true(twl_ctl_v1_built(TWL_CTL_MEMORY, twl_btf_has_func, btf,
				     reason, sizeof(reason)));
	assert_string_equal(reason, "mem_cgroup_write is in the kernel's BTF");
	assert_true(twl_ctl_v1_built(TWL_CTL_CPUSET, twl_btf_has_func, btf,
				     reason, sizeof(reason)));
	/* no freezer, blkcg or cgroup core in this BTF: the core's config */
	assert_false(twl_ctl_v1_built(TWL_CTL_FREEZER, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"freezer_write absent from the kernel's BTF: CONFIG_CGROUP_FREEZER is not set");
	assert_false(twl_ctl_v1_built(TWL_CTL_BLKIO, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"blkcg_reset_stats absent from the kernel's BTF: CONFIG_BLK_CGROUP is not set");
	btf__free(btf);
}

static void test_no_controller_core(void **state)
{
	static const char *const none[] = { "cgroup_file_open", NULL };
	struct btf *btf = btf_with(none);
	char reason[160];

	(void)state;
	assert_false(twl_ctl_v1_built(TWL_CTL_MEMORY, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"mem_cgroup_write absent from the kernel's BTF: CONFIG_MEMCG is not set");
	assert_false(twl_ctl_v1_built(TWL_CTL_CPUSET, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_string_equal(
		reason,
		"cpuset_write_s64 absent from the kernel's BTF: CONFIG_CPUSETS is not set");
	assert_false(twl_ctl_v1_built(TWL_CTL_CGROUP, twl_btf_has_func, btf,
				      reason, sizeof(reason)));
	assert_false(twl_ctl_v1_built(TWL_CTL_NR, twl_btf_has_func, btf, reason,
				      sizeof(reason)));
	assert_null(twl_ctl_name(TWL_CTL_NR));
	btf__free(btf);
}

/* The fake loader: fails when a program of @bad is on, else @fail_all. */
struct fake {
	bool bad[TWL_BPF_MAX_PROGS];
	int fail_all;
	int calls;
	bool last_on[TWL_BPF_MAX_PROGS];
};

static int fake_load(void *ctx, const bool *on, size_t n)
{
	struct fake *f = ctx;
	size_t i;
	int err = f->fail_all;

	f->calls++;
	for (i = 0; i < n; i++) {
		f->last_on[i] = on[i];
		if (on[i] && f->bad[i])
			err = -EACCES;
	}
	return err;
}

static void test_degrade_one_refused(void **state)
{
	bool want[6] = { true, true, false, true, true, true };
	struct fake f = { .bad = { [3] = true } };
	int errs[6];
	size_t i;

	(void)state;
	assert_int_equal(twl_bpf_load_degrading(6, want, fake_load, &f, errs),
			 0);
	/* the whole set, each of the five alone, the set without 3 */
	assert_int_equal(f.calls, 1 + 5 + 1);
	for (i = 0; i < 6; i++) {
		assert_int_equal(errs[i], i == 3 ? -EACCES : 0);
		assert_int_equal(f.last_on[i], want[i] && i != 3);
	}
}

static void test_degrade_cases(void **state)
{
	bool want[3] = { true, true, true };
	struct fake ok = { 0 }, perm = { .fail_all = -EPERM },
		    all = { .fail_all = -ENOMEM };
	int errs[3];

	(void)state;
	assert_int_equal(twl_bpf_load_degrading(3, want, fake_load, &ok, errs),
			 0);
	assert_int_equal(ok.calls, 1);
	/* no privilege: every program would fail alike, tried once */
	assert_int_equal(twl_bpf_load_degrading(3, want, fake_load, &perm,
						errs),
			 -EPERM);
	assert_int_equal(perm.calls, 1);
	/* a failure that is no program's own: every one says so */
	assert_int_equal(twl_bpf_load_degrading(3, want, fake_load, &all, errs),
			 -ENOMEM);
	assert_int_equal(errs[0], -ENOMEM);
	assert_int_equal(errs[2], -ENOMEM);
	assert_int_equal(twl_bpf_load_degrading(TWL_BPF_MAX_PROGS + 1, want,
						fake_load, &ok, errs),
			 -E2BIG);
}

/* @b's health after planning against @btf; checked by the wire validator. */
static json_t *health_after_plan(struct twl_bpf *b, const struct btf *btf)
{
	bool want[P_NR];
	struct twl_verr err;
	json_t *doc, *health = json_object();

	twl_bpf_plan(b, btf, want);
	assert_int_equal(twl_bpf_health(b, health), 0);
	doc = json_pack(
		"{s:i, s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:O}",
		"v", 2, "batch_id", "0123456789abcdef", "seq", 1, "sent_time",
		1764732000, "host", "host_id", "abcdef", "hostname", "h",
		"boot_id", "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f", "kernel",
		"6.12.0", "cgroup_mode", "v2", "agent_version", "0.1.0",
		"catalog_version", 1, "health", health);
	assert_non_null(doc);
	if (twl_report_validate(doc, &err))
		fail_msg("health is not valid wire: %s at %s: %s", err.code,
			 err.field, err.reason);
	json_decref(doc);
	return health;
}

static json_t *entry_named(json_t *arr, const char *name)
{
	size_t i;
	json_t *e;

	json_array_foreach(
		arr, i,
		e) if (!strcmp(json_string_value(json_object_get(e, "name")),
			       name)) return e;
	fail_msg("no entry %s", name);
	return NULL;
}

static const char *member(json_t *e, const char *k)
{
	return json_string_value(json_object_get(e, k));
}

static void test_health_not_built(void **state)
{
	struct twl_bpf_cfg cfg = { .enable = false };
	struct twl_bpf *b = twl_bpf_open(&cfg);
	struct btf *btf = btf_with(no_v1);
	json_t *h, *c, *p;
	char *text;

	(void)state;
	assert_non_null(b);
	h = health_after_plan(b, btf);
	c = json_object_get(h, "controllers");
	assert_int_equal(json_array_size(c), TWL_CTL_NR);
	assert_string_equal(member(entry_named(c, "memory"), "state"),
			    "not_built");
	assert_string_equal(
		member(entry_named(c, "memory"), "reason"),
		"mem_cgroup_write absent from the kernel's BTF: CONFIG_MEMCG_V1 is not set");
	assert_string_equal(member(entry_named(c, "cpuset"), "state"),
			    "not_built");
	assert_string_equal(member(entry_named(c, "freezer"), "state"),
			    "unavailable");
	p = json_object_get(h, "probes");
	assert_string_equal(member(entry_named(p, "fexit/mem_cgroup_reset"),
				   "state"),
			    "not_built");
	assert_string_equal(
		member(entry_named(p, "fexit/mem_cgroup_reset"), "reason"),
		"memory v1 not built: mem_cgroup_write absent from the kernel's BTF: CONFIG_MEMCG_V1 is not set");
	/* present without v1, but nothing to count: not loaded */
	assert_string_equal(
		member(entry_named(p, "fexit/vmpressure_register_event"),
		       "state"),
		"not_built");
	assert_string_equal(
		member(entry_named(p, "fexit/cgroup_file_open"), "reason"),
		"not loaded, it counts memory v1 files only and memory v1 is not built: mem_cgroup_write absent from the kernel's BTF: CONFIG_MEMCG_V1 is not set");
	assert_true(twl_bpf_nothing_to_count(b));
	text = json_dumps(h, JSON_INDENT(1));
	printf("health on a kernel without CONFIG_MEMCG_V1 (BPF off in this test):\n%s\n",
	       text);
	free(text);
	json_decref(h);
	btf__free(btf);
	twl_bpf_free(b);
}

static void test_health_built(void **state)
{
	struct twl_bpf_cfg cfg = { .enable = false };
	struct twl_bpf *b = twl_bpf_open(&cfg);
	struct btf *btf = btf_with(with_v1);
	json_t *h, *m;

	(void)state;
	h = health_after_plan(b, btf);
	m = entry_named(json_object_get(h, "controllers"), "memory");
	/* built, but nothing attached in this test */
	assert_string_equal(member(m, "state"), "unavailable");
	assert_false(twl_bpf_nothing_to_count(b));
	assert_string_equal(member(entry_named(json_object_get(h, "probes"),
					       "fexit/mem_cgroup_write"),
				   "state"),
			    "unavailable");
	/* absent from this BTF while memory v1 is built: inlined or renamed */
	assert_string_equal(
		member(entry_named(json_object_get(h, "probes"),
				   "fexit/mem_cgroup_reset"),
		       "reason"),
		"function mem_cgroup_reset not in this kernel's BTF (inlined or renamed)");
	json_decref(h);
	btf__free(btf);
	twl_bpf_free(b);
}

/* 'y', 'n' ("is not set") or 0 (the symbol is absent) for @sym in @cfg. */
static char config_of(const char *cfg, const char *sym)
{
	char y[96], n[96];

	snprintf(y, sizeof(y), "\n%s=y\n", sym);
	snprintf(n, sizeof(n), "\n# %s is not set\n", sym);
	return strstr(cfg, y) ? 'y' : strstr(cfg, n) ? 'n' : 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	buf = calloc(1, 1 << 22);
	assert_non_null(buf);
	buf[0] = '\n';
	n = fread(buf + 1, 1, (1 << 22) - 2, f);
	fclose(f);
	assert_true(n > 0 && n < (1 << 22) - 2);
	return buf;
}

static const char *real_vmlinux, *real_config;

/* The decision from a real image's BTF agrees with its .config. */
static void test_real_kernel(void **state)
{
	char *cfg = slurp(real_config);
	struct btf *btf = btf__parse(real_vmlinux, NULL);
	bool expect[TWL_CTL_NR], got;
	char reason[160];
	size_t c;

	(void)state;
	if (!btf)
		fail_msg("cannot parse BTF of %s: %s", real_vmlinux,
			 strerror(errno));
	expect[TWL_CTL_MEMORY] = config_of(cfg, "CONFIG_MEMCG") == 'y' &&
				 config_of(cfg, "CONFIG_MEMCG_V1") != 'n';
	expect[TWL_CTL_CPUSET] = config_of(cfg, "CONFIG_CPUSETS") == 'y' &&
				 config_of(cfg, "CONFIG_CPUSETS_V1") != 'n';
	expect[TWL_CTL_FREEZER] = config_of(cfg, "CONFIG_CGROUP_FREEZER") ==
				  'y';
	expect[TWL_CTL_BLKIO] = config_of(cfg, "CONFIG_BLK_CGROUP") == 'y';
	expect[TWL_CTL_CGROUP] = config_of(cfg, "CONFIG_CGROUPS") == 'y';
	for (c = 0; c < TWL_CTL_NR; c++) {
		got = twl_ctl_v1_built((enum twl_ctl)c, twl_btf_has_func, btf,
				       reason, sizeof(reason));
		printf("%s: %s (%s)\n", twl_ctl_name((enum twl_ctl)c),
		       got ? "built" : "not built", reason);
		if (got != expect[c])
			fail_msg("%s: BTF says %s, config says %s",
				 twl_ctl_name((enum twl_ctl)c),
				 got ? "built" : "not built",
				 expect[c] ? "built" : "not built");
	}
	btf__free(btf);
	free(cfg);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_not_built),
		cmocka_unit_test(test_memory_built),
		cmocka_unit_test(test_no_controller_core),
		cmocka_unit_test(test_degrade_one_refused),
		cmocka_unit_test(test_degrade_cases),
		cmocka_unit_test(test_health_not_built),
		cmocka_unit_test(test_health_built),
	};
	const struct CMUnitTest real[] = {
		cmocka_unit_test(test_real_kernel),
	};

	if (argc == 3) {
		real_vmlinux = argv[1];
		real_config = argv[2];
		return cmocka_run_group_tests(real, NULL, NULL);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: %s [VMLINUX CONFIG]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
