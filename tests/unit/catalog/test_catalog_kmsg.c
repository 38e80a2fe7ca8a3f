// SPDX-License-Identifier: GPL-2.0
/*
 * Deprecation texts from docs/kernel-facts.md section 1, one or more for
 * every warning feature of the catalog, written as the kernel writes them
 * to /dev/kmsg (prefix, \xNN escapes), decoded by the agent's record parser
 * (agent/kmsg_parse.c) and matched against the generated catalog: each must
 * yield its feature id. The same records with a user-space facility must
 * yield nothing.
 *
 * The texts below are typed from docs/kernel-facts.md (which cites the
 * upstream commits), not taken from schema/catalog.json, so a wrong catalog
 * text fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kmsg_parse.h"
#include "kmsg_record.h"
#include <twilight/catalog.h>
#include <twilight/match.h>

struct ref_text {
	const char *id;
	int level;
	const char *text; /* decoded text, printk's final newline stripped */
	const char *field[2][2]; /* expected fields {name, value} */
};

#define DEP \
	"Please report your usecase to linux-mm@kvack.org if you depend on this functionality."
#define DEP_TYPO \
	"Please report your usecase to linux-mm-@kvack.org if you depend on this functionality."

static const struct ref_text refs[] = {
	{ .id = "memcg_v1.kmem_tcp_limit",
	  .level = 4,
	  .text = "kmem.tcp.limit_in_bytes is deprecated and will be removed. " DEP },
	{ .id = "memcg_v1.soft_limit",
	  .level = 4,
	  .text = "soft_limit_in_bytes is deprecated and will be removed. " DEP },
	/* oom_control: v6.12-13 (typo, trailing space), v6.14+ (typo), fixed */
	{ .id = "memcg_v1.oom_control",
	  .level = 4,
	  .text = "oom_control is deprecated and will be removed. " DEP_TYPO
		  " " },
	{ .id = "memcg_v1.oom_control",
	  .level = 4,
	  .text = "oom_control is deprecated and will be removed. " DEP_TYPO },
	{ .id = "memcg_v1.oom_control",
	  .level = 4,
	  .text = "oom_control is deprecated and will be removed. " DEP },
	{ .id = "memcg_v1.pressure_level",
	  .level = 4,
	  .text = "pressure_level is deprecated and will be removed. " DEP_TYPO
		  " " },
	{ .id = "memcg_v1.pressure_level",
	  .level = 4,
	  .text = "pressure_level is deprecated and will be removed. " DEP_TYPO },
	{ .id = "memcg_v1.pressure_level",
	  .level = 4,
	  .text = "pressure_level is deprecated and will be removed. " DEP },
	{ .id = "memcg_v1.kmem_limit",
	  .level = 4,
	  .text = "kmem.limit_in_bytes is deprecated and will be removed. Writing any value to this file has no effect. " DEP },
	{ .id = "memcg_v1.kmem_limit",
	  .level = 4,
	  .text = "kmem.limit_in_bytes is deprecated and will be removed. " DEP },
	{ .id = "memcg_v1.move_charge",
	  .level = 4,
	  .text = "Cgroup memory moving (move_charge_at_immigrate) is deprecated. " DEP },
	{ .id = "memcg_v1.non_hierarchical",
	  .level = 4,
	  .text = "Non-hierarchical mode is deprecated. " DEP },
	/* "\n " inside the record: /dev/kmsg shows "\x0a " */
	{ .id = "memcg_v1.swappiness",
	  .level = 6,
	  .text = "Per memcg swappiness does not exist in cgroup v2. See memory.reclaim or memory.swap.max there\n " },
	{ .id = "memcg_v1.swapaccount",
	  .level = 4,
	  .text = "The swapaccount=0 commandline option is deprecated in favor of configuring swap control via cgroupfs. " DEP },
	/* v6.1 to v6.7, for any value (b25806dcd3d5) */
	{ .id = "memcg_v1.swapaccount",
	  .level = 4,
	  .text = "The swapaccount= commandline option is deprecated. " DEP },
	/* 6.12 stable since 6.12.110: the soft limit made inert */
	{ .id = "memcg_v1.soft_limit",
	  .level = 4,
	  .text = "soft_limit_in_bytes is deprecated and will be removed. Writing any value to this file has no effect. " DEP },
	/* cpuset_write_u64(): every flag file has its own once-flag */
	{ .id = "cgroup_v1.cpuset_legacy_flags",
	  .level = 6,
	  .text = "cpuset.mem_hardwall is deprecated",
	  .field = { { "file", "mem_hardwall" } } },
	{ .id = "cgroup_v1.remount",
	  .level = 4,
	  .text = "option changes via remount are deprecated (pid=312 comm=mount)",
	  .field = { { "pid", "312" }, { "comm", "mount" } } },
	{ .id = "cgroup_v1.remount",
	  .level = 4,
	  .text = "option changes via remount are deprecated (pid=1 comm=systemd)",
	  .field = { { "pid", "1" }, { "comm", "systemd" } } },
	{ .id = "cgroup_v1.cpuset_sched_load_balance",
	  .level = 6,
	  .text = "cpuset.sched_load_balance is deprecated, use cpuset.cpus.partition instead",
	  .field = { { "file", "sched_load_balance" } } },
	{ .id = "cgroup_v1.cpuset_memory_pressure",
	  .level = 6,
	  .text = "cpuset.memory_pressure_enabled is deprecated, use memory.pressure with CONFIG_PSI instead",
	  .field = { { "file", "memory_pressure_enabled" } } },
	/* docs/kernel-facts.md 1.2: cpuset_write_u64(), cpuset-v1.c */
	{ .id = "cgroup_v1.cpuset_legacy_flags",
	  .level = 6,
	  .text = "cpuset.memory_migrate is deprecated",
	  .field = { { "file", "memory_migrate" } } },
	/* sched_relax_domain_level: cpuset_write_s64(); the exact text wins
	 * over the cpuset.{file} template, which matches it too */
	{ .id = "cgroup_v1.cpuset_relax_domain_level",
	  .level = 6,
	  .text = "cpuset.sched_relax_domain_level is deprecated" },
	/* block/blk-cgroup.c, blkcg_reset_stats() */
	{ .id = "cgroup_v1.blkio_reset_stats",
	  .level = 6,
	  .text = "blkio.reset_stats is deprecated" },
	{ .id = "cgroup_v1.freezer",
	  .level = 6,
	  .text = "Freezing with imperfect legacy cgroup freezer. See cgroup.freeze of cgroup v2" },
	{ .id = "cgroup_v1.proc_cgroups",
	  .level = 6,
	  .text = "/proc/cgroups lists only v1 controllers, use cgroup.controllers of root cgroup for v2 info" },
};

/* What the agent does with one record: kernel facility, then the catalog. */
static const struct twl_feature *classify(const struct twl_kmsg_record *r,
					  struct twl_match *m)
{
	if (!twl_kmsg_is_kernel(r))
		return NULL;
	return twl_match_text(r->text, r->text_len, m) ? m->feature : NULL;
}

static size_t trimmed(const char *s, size_t n)
{
	while (n > 0 && strchr(" \t\r\n", s[n - 1]))
		n--;
	return n;
}

static void check_one(const struct ref_text *ref, const char *caller,
		      unsigned long long seq)
{
	static char raw[TWL_KMSG_RECORD_MAX];
	static struct twl_kmsg_record rec;
	struct twl_match m;
	const struct twl_feature *f;
	size_t n = kmsg_record(raw, sizeof(raw), ref->level, seq, caller,
			       ref->text);

	assert_int_equal(twl_kmsg_parse_record(raw, n, &rec), 0);
	assert_int_equal(rec.level, ref->level);
	assert_string_equal(twl_kmsg_origin(&rec), "kmsg");
	assert_memory_equal(rec.text, ref->text, strlen(ref->text));
	f = classify(&rec, &m);
	if (!f)
		fail_msg("no catalog match for %s text \"%s\"", ref->id,
			 ref->text);
	assert_string_equal(f->id, ref->id);
	assert_ptr_equal(twl_catalog_find(ref->id), f);
	assert_true(m.message < f->n_messages);
	assert_int_equal(f->messages[m.message].level, ref->level);
	if (f->messages[m.message].match == TWL_MATCH_EXACT) {
		/* the variant that matched is this text, trailing whitespace aside */
		size_t tl = trimmed(ref->text, strlen(ref->text));

		assert_int_equal(trimmed(f->messages[m.message].text,
					 strlen(f->messages[m.message].text)),
				 tl);
		assert_memory_equal(f->messages[m.message].text, ref->text, tl);
	}
	for (size_t k = 0; k < 2 && ref->field[k][0]; k++) {
		assert_true(k < m.n_fields);
		assert_string_equal(m.fields[k].name, ref->field[k][0]);
		assert_string_equal(m.fields[k].value, ref->field[k][1]);
	}
	if (!ref->field[0][0])
		assert_int_equal(m.n_fields, 0);

	/* The same record from user space (facility 1 = user, or 3 = daemon). */
	for (int fac = 1; fac <= 3; fac += 2) {
		n = kmsg_record(raw, sizeof(raw), fac * 8 + ref->level, seq + 1,
				caller, ref->text);
		assert_int_equal(twl_kmsg_parse_record(raw, n, &rec), 0);
		assert_int_equal(rec.facility, fac);
		assert_null(classify(&rec, &m));
	}
}

static void test_reference_texts_as_kmsg_records(void **state)
{
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		check_one(&refs[i], NULL, 100 + 2 * i);
}

static void test_reference_texts_with_caller_id(void **state)
{
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		check_one(&refs[i], "T4242", 1000 + 2 * i);
}

/* The swappiness record really is escaped as "\x0a " on the wire. */
static void test_swappiness_escape_on_the_wire(void **state)
{
	char raw[512];
	const struct ref_text *sw = NULL;

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (!strcmp(refs[i].id, "memcg_v1.swappiness"))
			sw = &refs[i];
	assert_non_null(sw);
	size_t n = kmsg_record(raw, sizeof(raw), 6, 7, NULL, sw->text);

	raw[n] = '\0';
	assert_non_null(strstr(raw, "max there\\x0a \n"));
}

/* Every feature that warns is covered by at least one reference text. */
static void test_every_warning_feature_is_covered(void **state)
{
	const struct twl_feature *f;

	for (size_t i = 0; (f = twl_catalog_at(i)); i++) {
		bool seen = false;

		for (size_t j = 0; j < sizeof(refs) / sizeof(refs[0]); j++)
			seen = seen || !strcmp(refs[j].id, f->id);
		if (f->warns && !seen)
			fail_msg(
				"feature %s warns but no reference text covers it",
				f->id);
		if (!f->warns && seen)
			fail_msg(
				"feature %s is silent but a reference text matched it",
				f->id);
	}
}

/* dmesg output has no facility: the match stands, origin is "unverified". */
static void test_dmesg_lines(void **state)
{
	static const char *const lines[][2] = {
		{ "[   12.345678] Per memcg swappiness does not exist in cgroup v2. See memory.reclaim or memory.swap.max there",
		  "memcg_v1.swappiness" },
		{ "[    3.000001] [T812] option changes via remount are deprecated (pid=812 comm=mount)",
		  "cgroup_v1.remount" },
		{ "[ 1234.500000] oom_control is deprecated and will be removed. " DEP_TYPO
		  " ",
		  "memcg_v1.oom_control" },
		{ "<4>[   99.000000] soft_limit_in_bytes is deprecated and will be removed. " DEP,
		  "memcg_v1.soft_limit" },
	};
	static struct twl_kmsg_record rec;
	struct twl_match m;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_equal(twl_kmsg_parse_line(TWL_FMT_UNKNOWN,
						     lines[i][0],
						     strlen(lines[i][0]), &rec),
				 0);
		assert_int_equal(twl_match_text(rec.text, rec.text_len, &m), 1);
		assert_string_equal(m.feature->id, lines[i][1]);
	}
	/* plain dmesg: unverified origin */
	assert_int_equal(twl_kmsg_parse_line(TWL_FMT_UNKNOWN, lines[0][0],
					     strlen(lines[0][0]), &rec),
			 0);
	assert_string_equal(twl_kmsg_origin(&rec), "unverified");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_texts_as_kmsg_records),
		cmocka_unit_test(test_reference_texts_with_caller_id),
		cmocka_unit_test(test_swappiness_escape_on_the_wire),
		cmocka_unit_test(test_every_warning_feature_is_covered),
		cmocka_unit_test(test_dmesg_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
