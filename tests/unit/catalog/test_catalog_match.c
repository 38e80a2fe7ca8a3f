// SPDX-License-Identifier: GPL-2.0
/*
 * Matcher edge cases: near-misses, truncated texts, trailing whitespace,
 * template fields (too long, empty, odd bytes), non-deprecation lines,
 * "deprecat" in any case, digit normalisation, and the control-file maps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/match.h>

#define SOFT \
	"soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."
#define REMOUNT "option changes via remount are deprecated (pid="

static const char *match_id(const char *text, size_t len)
{
	struct twl_match m;

	if (!twl_match_text(text, len, &m)) {
		assert_null(m.feature);
		assert_int_equal(m.n_fields, 0);
		return NULL;
	}
	assert_non_null(m.feature);
	return m.feature->id;
}

static const char *match_str(const char *text)
{
	return match_id(text, strlen(text));
}

/* Every catalog message, instantiated, matches its own feature. */
static void test_every_catalog_message_matches_itself(void **state)
{
	const struct twl_feature *f;
	char buf[2048];
	size_t total = 0;

	for (size_t i = 0; (f = twl_catalog_at(i)); i++) {
		for (size_t j = 0; j < f->n_messages; j++) {
			const struct twl_catalog_message *msg = &f->messages[j];
			struct twl_match m;
			size_t n = 0;

			for (size_t k = 0; k <= msg->n_fields; k++) {
				memcpy(buf + n, msg->literals[k],
				       msg->literal_lens[k]);
				n += msg->literal_lens[k];
				if (k < msg->n_fields)
					n += (size_t)sprintf(buf + n, "v%zu",
							     k);
			}
			assert_int_equal(twl_match_text(buf, n, &m), 1);
			assert_ptr_equal(m.feature, f);
			assert_int_equal(m.n_fields, msg->n_fields);
			for (size_t k = 0; k < msg->n_fields; k++) {
				char want[24];

				snprintf(want, sizeof(want), "v%zu", k);
				assert_string_equal(m.fields[k].name,
						    msg->field_names[k]);
				assert_string_equal(m.fields[k].value, want);
			}
			/* with NULL out, same answer */
			assert_int_equal(twl_match_text(buf, n, NULL), 1);
			total++;
		}
	}
	assert_true(total >= 20);
}

static void test_near_misses(void **state)
{
	char buf[512];

	assert_string_equal(match_str(SOFT), "memcg_v1.soft_limit");
	/* one byte changed, anywhere */
	for (size_t i = 0; i < strlen(SOFT); i++) {
		strcpy(buf, SOFT);
		buf[i] = buf[i] == 'x' ? 'y' : 'x';
		assert_null(match_str(buf));
	}
	/* case differs */
	assert_null(match_str(
		"Soft_limit_in_bytes is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."));
	/* leading space, or a prefix glued on */
	assert_null(match_str(" " SOFT));
	assert_null(match_str("memcg: " SOFT));
	/* extra text after an exact message */
	assert_null(match_str(SOFT " Really."));
	assert_null(match_str(SOFT "x"));
	/* the typo variant with a different typo */
	assert_null(match_str(
		"oom_control is deprecated and will be removed. Please report your usecase to linux-mm--@kvack.org if you depend on this functionality."));
	/* a cpuset line with another ending */
	assert_null(match_str(
		"cpuset.sched_load_balance is deprecated, use something else instead"));
	assert_null(match_str(
		"cpuset. is deprecated, use cpuset.cpus.partition instead"));
}

static void test_truncated_texts(void **state)
{
	size_t n = strlen(SOFT);

	/* every proper prefix fails, down to nothing */
	for (size_t k = 0; k < n; k++)
		assert_null(match_id(SOFT, k));
	assert_string_equal(match_id(SOFT, n), "memcg_v1.soft_limit");
	/* len is honoured: bytes past it are not read as part of the text */
	assert_null(match_id(SOFT "garbage", n - 1));
	assert_string_equal(match_id(SOFT "garbage", n), "memcg_v1.soft_limit");
	/* truncated template */
	assert_null(match_str(REMOUNT "312 comm=mount"));
	assert_null(match_str(REMOUNT "312"));
	assert_null(match_str(REMOUNT));
	assert_null(match_str("opti"));
	assert_null(match_str(""));
	assert_null(match_id(NULL, 10));
}

static void test_trailing_whitespace(void **state)
{
	assert_string_equal(match_str(SOFT "\n"), "memcg_v1.soft_limit");
	assert_string_equal(match_str(SOFT " \t\r\n "), "memcg_v1.soft_limit");
	assert_string_equal(match_str(REMOUNT "5 comm=mount)\n"),
			    "cgroup_v1.remount");
	/* whitespace is only ignored at the end */
	assert_null(match_str(
		"soft_limit_in_bytes  is deprecated and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality."));
	/* the swappiness line: kmsg form, dmesg form, bare */
	const char *sw =
		"Per memcg swappiness does not exist in cgroup v2. See memory.reclaim or memory.swap.max there";
	char buf[256];

	snprintf(buf, sizeof(buf), "%s\n ", sw);
	assert_string_equal(match_str(buf), "memcg_v1.swappiness");
	assert_string_equal(match_str(sw), "memcg_v1.swappiness");
	/* but not with the escape left undecoded */
	snprintf(buf, sizeof(buf), "%s\\x0a ", sw);
	assert_null(match_str(buf));
}

static void test_template_fields(void **state)
{
	char buf[700], comm[400];
	struct twl_match m;

	/* comm may contain ')' and spaces: the last literal anchors at the end */
	assert_int_equal(twl_match_text(REMOUNT "77 comm=a) b)",
					strlen(REMOUNT "77 comm=a) b)"), &m),
			 1);
	assert_int_equal(m.n_fields, 2);
	assert_string_equal(m.fields[0].name, "pid");
	assert_string_equal(m.fields[0].value, "77");
	assert_string_equal(m.fields[1].name, "comm");
	assert_string_equal(m.fields[1].value, "a) b");
	/* empty fields do not match */
	assert_null(match_str(REMOUNT " comm=mount)"));
	assert_null(match_str(REMOUNT "5 comm=)"));
	/* longest accepted field: TWL_MATCH_FIELD_MAX - 1 bytes */
	for (size_t len = TWL_MATCH_FIELD_MAX - 2;
	     len <= TWL_MATCH_FIELD_MAX + 200; len++) {
		memset(comm, 'c', len);
		comm[len] = '\0';
		snprintf(buf, sizeof(buf), REMOUNT "9 comm=%s)", comm);
		int rc = twl_match_text(buf, strlen(buf), &m);

		if (len < TWL_MATCH_FIELD_MAX) {
			assert_int_equal(rc, 1);
			assert_int_equal(strlen(m.fields[1].value), len);
		} else {
			assert_int_equal(rc, 0);
			assert_null(m.feature);
		}
	}
	/* too long first field */
	memset(comm, '1', 200);
	comm[200] = '\0';
	snprintf(buf, sizeof(buf), REMOUNT "%s comm=x)", comm);
	assert_null(match_str(buf));
	/* a NUL byte inside a field */
	static const char nul[] = REMOUNT "1 comm=a\0b)";
	assert_null(match_id(nul, sizeof(nul) - 1));
	/* control bytes are carried as they are */
	assert_int_equal(twl_match_text(REMOUNT "1 comm=a\tb)",
					strlen(REMOUNT "1 comm=a\tb)"), &m),
			 1);
	assert_string_equal(m.fields[1].value, "a\tb");
	/* cpuset: the field sits in the middle */
	assert_int_equal(
		twl_match_text(
			"cpuset.x is deprecated, use cpuset.cpus.partition instead",
			strlen("cpuset.x is deprecated, use cpuset.cpus.partition instead"),
			&m),
		1);
	assert_string_equal(m.feature->id,
			    "cgroup_v1.cpuset_sched_load_balance");
	assert_string_equal(m.fields[0].value, "x");
}

/* The number of literal bytes, as the generator computed it. */
static size_t literal_bytes(const struct twl_catalog_message *msg)
{
	size_t n = 0;

	for (size_t k = 0; k <= msg->n_fields; k++)
		n += msg->literal_lens[k];
	return n;
}

/*
 * When an exact text of one feature is also matched by a template of
 * another, the more specific message (more literal bytes) wins, in the
 * per-line matcher and in the normalised one alike.
 */
static void test_most_specific_wins(void **state)
{
	static const char relax[] =
		"cpuset.sched_relax_domain_level is deprecated";
	static const char migrate[] = "cpuset.memory_migrate is deprecated";
	const struct twl_feature *f;
	struct twl_match m;

	for (size_t i = 0; (f = twl_catalog_at(i)); i++)
		for (size_t j = 0; j < f->n_messages; j++)
			assert_int_equal(f->messages[j].specificity,
					 literal_bytes(&f->messages[j]));
	assert_int_equal(twl_match_text(relax, strlen(relax), &m), 1);
	assert_string_equal(m.feature->id,
			    "cgroup_v1.cpuset_relax_domain_level");
	assert_int_equal(m.n_fields, 0);
	assert_int_equal(twl_match_normalized(relax, strlen(relax), &m), 1);
	assert_string_equal(m.feature->id,
			    "cgroup_v1.cpuset_relax_domain_level");
	/* the template still takes every other cpuset file */
	assert_int_equal(twl_match_text(migrate, strlen(migrate), &m), 1);
	assert_string_equal(m.feature->id, "cgroup_v1.cpuset_legacy_flags");
	assert_string_equal(m.fields[0].value, "memory_migrate");
	assert_int_equal(twl_match_normalized(migrate, strlen(migrate), &m), 1);
	assert_string_equal(m.feature->id, "cgroup_v1.cpuset_legacy_flags");
	/* a near miss of the exact text falls back to the template */
	assert_string_equal(
		match_str("cpuset.sched_relax_domain_levels is deprecated"),
		"cgroup_v1.cpuset_legacy_flags");
}

static void test_non_deprecation_lines(void **state)
{
	static const char *const lines[] = {
		"Linux version 6.1.0-twilight (root@build) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP",
		"Memory cgroup out of memory: Killed process 4242 (stress) total-vm:10240kB",
		"oom_control",
		"soft_limit_in_bytes",
		"cgroup: cgroup2: unknown option \"nsdelegate\"",
		"option changes via mount are fine",
		"EXT4-fs (vda): mounted filesystem with ordered data mode.",
		"\xff\xfe\xfd\xfc binary garbage \x01\x02",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_null(match_str(lines[i]));
		assert_false(twl_text_mentions_deprecation(lines[i],
							   strlen(lines[i])));
	}
}

static void test_mentions_deprecation(void **state)
{
	static const char *const yes[] = {
		"foo is deprecated",
		"DEPRECATED",
		"Deprecation notice",
		"undeprecate",
		"deprecat",
		"xx dEpReCaTiOn",
		"sysfs: the foo interface is Deprecated and will go away",
	};
	static const char *const no[] = {
		"depreca", "deprec at",	      "deprecxted",
		"",	   "d e p r e c a t", "DEPRECA",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!twl_text_mentions_deprecation(yes[i], strlen(yes[i])))
			fail_msg("\"%s\" not detected", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (twl_text_mentions_deprecation(no[i], strlen(no[i])))
			fail_msg("\"%s\" wrongly detected", no[i]);
	/* bounded by len */
	assert_false(twl_text_mentions_deprecation("is deprecated", 10));
	assert_true(twl_text_mentions_deprecation("is deprecated", 11));
	assert_false(twl_text_mentions_deprecation(NULL, 5));
	/* catalog lines that say so are detected too */
	assert_true(twl_text_mentions_deprecation(SOFT, strlen(SOFT)));
}

static bool naive_mentions(const char *t, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i++)
		if (!strncasecmp(t + i, "deprecat", 8))
			return true;
	return false;
}

/* The skipping search agrees with a naive one on many near-miss strings. */
static void test_mentions_deprecation_exhaustive(void **state)
{
	static const char alpha[] = "deprcatDEPRCAT x";
	char buf[48];
	unsigned seed = 12345;
	size_t hits = 0;

	for (int iter = 0; iter < 200000; iter++) {
		size_t n = (seed = seed * 1103515245u + 12345u) % 40;

		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
		}
		/* plant the word sometimes, at a random place and case */
		if (n >= 8 && (seed >> 8) % 3 == 0) {
			size_t at = (seed >> 4) % (n - 7);

			memcpy(buf + at, (seed & 1) ? "DePrEcAt" : "deprecat",
			       8);
		}
		bool want = naive_mentions(buf, n);

		hits += want;
		if (twl_text_mentions_deprecation(buf, n) != want)
			fail_msg("disagrees on \"%.*s\" (want %d)", (int)n, buf,
				 want);
	}
	assert_true(hits > 1000);
}

static void test_normalize_digits(void **state)
{
	char out[64];

	assert_int_equal(twl_normalize_digits("pid=312 comm=mount", 18, out,
					      sizeof(out)),
			 18);
	assert_string_equal(out, "pid=### comm=mount");
	assert_int_equal(twl_normalize_digits("v6.1.0 at 0x1f", 14, out,
					      sizeof(out)),
			 14);
	assert_string_equal(out, "v#.#.# at #x#f");
	/* len is honoured */
	assert_int_equal(twl_normalize_digits("123456", 3, out, sizeof(out)),
			 3);
	assert_string_equal(out, "###");
	/* truncation to cap - 1 */
	assert_int_equal(twl_normalize_digits("abc123", 6, out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(twl_normalize_digits("abc123", 6, out, 1), 0);
	assert_string_equal(out, "");
	out[0] = 'z';
	assert_int_equal(twl_normalize_digits("abc", 3, out, 0), 0);
	assert_int_equal(out[0], 'z');
	/* truncation never cuts a UTF-8 sequence ("é" is 2 bytes, "€" 3) */
	assert_int_equal(twl_normalize_digits("a\xc3\xa9", 3, out, 3), 1);
	assert_string_equal(out, "a");
	assert_int_equal(twl_normalize_digits("1\xe2\x82\xac", 4, out, 4), 1);
	assert_string_equal(out, "#");
	assert_int_equal(twl_normalize_digits("1\xe2\x82\xac", 4, out, 5), 4);
	assert_string_equal(out, "#\xe2\x82\xac");
	assert_int_equal(twl_normalize_digits(NULL, 5, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

/* Texts normalised for unknown[] still match through twl_match_normalized(). */
static void test_match_normalized(void **state)
{
	const struct twl_feature *f;
	char buf[2048], norm[2048];
	struct twl_match m;
	size_t with_digits = 0;

	for (size_t i = 0; (f = twl_catalog_at(i)); i++) {
		for (size_t j = 0; j < f->n_messages; j++) {
			const struct twl_catalog_message *msg = &f->messages[j];
			size_t n = 0;

			for (size_t k = 0; k <= msg->n_fields; k++) {
				memcpy(buf + n, msg->literals[k],
				       msg->literal_lens[k]);
				n += msg->literal_lens[k];
				if (k < msg->n_fields)
					n += (size_t)sprintf(buf + n, "%zu",
							     40 + k);
			}
			assert_int_equal(twl_normalize_digits(buf, n, norm,
							      sizeof(norm)),
					 n);
			assert_int_equal(twl_match_normalized(norm, n, &m), 1);
			assert_ptr_equal(m.feature, f);
			for (size_t k = 0; k < msg->n_fields; k++)
				assert_string_equal(m.fields[k].value, "##");
			if (msg->n_fields == 0 && memcmp(buf, norm, n)) {
				with_digits++;
				/* the per-line matcher does not do this */
				assert_int_equal(twl_match_text(norm, n, NULL),
						 0);
			}
		}
	}
	/* swapaccount=0, "cgroup v2" (swappiness, freezer), "v1" (proc_cgroups) */
	assert_true(with_digits >= 4);
	assert_string_equal(
		twl_match_normalized(
			"option changes via remount are deprecated (pid=### comm=kworker/#:#)\n",
			strlen("option changes via remount are deprecated (pid=### comm=kworker/#:#)\n"),
			&m) ?
			m.feature->id :
			"none",
		"cgroup_v1.remount");
	assert_string_equal(m.fields[1].value, "kworker/#:#");
	/* '#' only stands for a digit */
	assert_int_equal(twl_match_normalized("The swapaccount=# commandline",
					      29, &m),
			 0);
	assert_null(m.feature);
	snprintf(buf, sizeof(buf), "%s", SOFT);
	buf[0] = '#';
	assert_int_equal(twl_match_normalized(buf, strlen(buf), NULL), 0);
	buf[0] = 's';
	assert_int_equal(twl_match_normalized(buf, strlen(buf), NULL), 1);
	assert_int_equal(twl_match_normalized(NULL, 3, &m), 0);
}

/* Every control file of the v1 memory controller maps to one feature. */
static void test_control_files(void **state)
{
	static const char *const map[][2] = {
		{ "memory.kmem.tcp.limit_in_bytes", "memcg_v1.kmem_tcp_limit" },
		{ "memory.soft_limit_in_bytes", "memcg_v1.soft_limit" },
		{ "memory.oom_control", "memcg_v1.oom_control" },
		{ "memory.pressure_level", "memcg_v1.pressure_level" },
		{ "memory.kmem.limit_in_bytes", "memcg_v1.kmem_limit" },
		{ "memory.move_charge_at_immigrate", "memcg_v1.move_charge" },
		{ "memory.use_hierarchy", "memcg_v1.non_hierarchical" },
		{ "memory.swappiness", "memcg_v1.swappiness" },
		{ "memory.memsw.usage_in_bytes", "memcg_v1.memsw" },
		{ "memory.memsw.max_usage_in_bytes", "memcg_v1.memsw" },
		{ "memory.memsw.limit_in_bytes", "memcg_v1.memsw" },
		{ "memory.memsw.failcnt", "memcg_v1.memsw" },
		{ "memory.force_empty", "memcg_v1.force_empty" },
		{ "memory.kmem.usage_in_bytes", "memcg_v1.kmem_usage" },
		{ "memory.kmem.failcnt", "memcg_v1.kmem_usage" },
		{ "memory.kmem.max_usage_in_bytes", "memcg_v1.kmem_usage" },
		{ "memory.kmem.tcp.usage_in_bytes", "memcg_v1.kmem_tcp_usage" },
		{ "memory.kmem.tcp.failcnt", "memcg_v1.kmem_tcp_usage" },
		{ "memory.kmem.tcp.max_usage_in_bytes",
		  "memcg_v1.kmem_tcp_usage" },
		{ "memory.kmem.slabinfo", "memcg_v1.kmem_slabinfo" },
		/* the v1 controller's own files, deprecated with it */
		{ "memory.usage_in_bytes", "memcg_v1.interface" },
		{ "memory.limit_in_bytes", "memcg_v1.interface" },
		{ "memory.max_usage_in_bytes", "memcg_v1.interface" },
		{ "memory.failcnt", "memcg_v1.interface" },
		{ "memory.stat", "memcg_v1.interface" },
		{ "memory.numa_stat", "memcg_v1.interface" },
		{ "cpuset.sched_relax_domain_level",
		  "cgroup_v1.cpuset_relax_domain_level" },
		/* cpuset's own v1 files (catalog version 3) */
		{ "cpuset.cpus", "cpuset_v1.interface" },
		{ "cpuset.effective_mems", "cpuset_v1.interface" },
		{ "cpuset.memory_pressure", "cpuset_v1.interface" },
		{ "cpuset.memory_pressure_enabled",
		  "cgroup_v1.cpuset_memory_pressure" },
		{ "blkio.reset_stats", "cgroup_v1.blkio_reset_stats" },
	};
	static const char *const events[][2] = {
		{ "memory.oom_control", "memcg_v1.oom_control" },
		{ "memory.pressure_level", "memcg_v1.pressure_level" },
		{ "memory.usage_in_bytes", "memcg_v1.usage_threshold" },
		{ "memory.memsw.usage_in_bytes", "memcg_v1.usage_threshold" },
	};
	/* files that belong to no feature */
	static const char *const plain[] = {
		"cgroup.event_control",
		"cgroup.procs",
		"tasks",
		"memory.soft_limit_in_byte",
		/* cgroup v2 names of cpuset files */
		"cpuset.cpus.effective",
		"cpuset.cpus.partition",
		"",
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		const struct twl_feature *f = twl_catalog_find_file(map[i][0]);

		if (!f)
			fail_msg("%s maps to no feature", map[i][0]);
		assert_string_equal(f->id, map[i][1]);
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		const struct twl_feature *f =
			twl_catalog_find_event_file(events[i][0]);

		assert_non_null(f);
		assert_string_equal(f->id, events[i][1]);
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_null(twl_catalog_find_file(plain[i]));
	assert_null(twl_catalog_find_file(NULL));
	assert_null(twl_catalog_find_event_file("memory.soft_limit_in_bytes"));
	assert_null(twl_catalog_find_event_file(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_catalog_message_matches_itself),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_truncated_texts),
		cmocka_unit_test(test_trailing_whitespace),
		cmocka_unit_test(test_template_fields),
		cmocka_unit_test(test_most_specific_wins),
		cmocka_unit_test(test_non_deprecation_lines),
		cmocka_unit_test(test_mentions_deprecation),
		cmocka_unit_test(test_mentions_deprecation_exhaustive),
		cmocka_unit_test(test_normalize_digits),
		cmocka_unit_test(test_match_normalized),
		cmocka_unit_test(test_control_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
