// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven tests of the kmsg/dmesg parser: every message variant of the
 * compiled catalog in every input form must parse, decode and match its
 * feature; malformed records must be rejected with the right error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/match.h>

#include "agent_test.h"
#include "kmsg_parse.h"

static struct twl_kmsg_record rec;

/* A concrete kernel text for catalog message @m (templates get sample fields). */
static void render(const struct twl_catalog_message *m, char *out, size_t cap)
{
	size_t i, o = 0;

	if (m->n_fields == 0) {
		snprintf(out, cap, "%s", m->text);
		return;
	}
	for (i = 0; i <= m->n_fields; i++) {
		o += (size_t)snprintf(out + o, cap - o, "%.*s",
				      (int)m->literal_lens[i], m->literals[i]);
		if (i < m->n_fields) {
			const char *f = m->field_names[i];
			const char *v =
				!strcmp(f, "pid")  ? "312" :
				!strcmp(f, "comm") ? "mount" :
				!strcmp(f, "file") ? "sched_load_balance" :
						     "v1";

			o += (size_t)snprintf(out + o, cap - o, "%s", v);
		}
	}
}

/* Trailing whitespace is not significant to the matcher: compare without it. */
static size_t trimmed(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t'))
		n--;
	return n;
}

static void expect_match(const struct twl_kmsg_record *r,
			 const struct twl_feature *f, const char *text,
			 const char *what)
{
	struct twl_match m;

	if (trimmed(r->text, r->text_len) != trimmed(text, strlen(text)) ||
	    memcmp(r->text, text, trimmed(text, strlen(text))))
		fail_msg(
			"%s: decoded text differs:\n got  \"%s\"\n want \"%s\"",
			what, r->text, text);
	if (twl_match_text(r->text, r->text_len, &m) != 1)
		fail_msg("%s: \"%s\" matched no catalog entry (want %s)", what,
			 r->text, f->id);
	if (strcmp(m.feature->id, f->id))
		fail_msg("%s: matched %s, want %s", what, m.feature->id, f->id);
}

static void test_every_catalog_variant(void **state)
{
	size_t fi, mi, variants = 0;

	assert_true(twl_catalog_count() > 0);
	for (fi = 0; fi < twl_catalog_count(); fi++) {
		const struct twl_feature *f = twl_catalog_at(fi);

		for (mi = 0; mi < f->n_messages; mi++) {
			const struct twl_catalog_message *m = &f->messages[mi];
			char text[1200], esc[4000], line[4200], what[128],
				first[1200];
			size_t n;

			render(m, text, sizeof(text));
			test_kmsg_escape(text, esc, sizeof(esc));

			/* /dev/kmsg record, with and without caller id and dictionary. */
			n = (size_t)snprintf(line, sizeof(line),
					     "%d,%zu,%llu,-;%s\n", m->level,
					     100 + variants,
					     5140900ULL + variants, esc);
			snprintf(what, sizeof(what), "%s[%zu] kmsg", f->id, mi);
			assert_int_equal(twl_kmsg_parse_record(line, n, &rec),
					 0);
			assert_int_equal(rec.facility, 0);
			assert_int_equal(rec.level, m->level);
			assert_true(rec.has_seq);
			assert_int_equal(rec.seq, 100 + variants);
			assert_int_equal(rec.mono_us, 5140900ULL + variants);
			assert_string_equal(twl_kmsg_origin(&rec), "kmsg");
			expect_match(&rec, f, text, what);

			n = (size_t)snprintf(
				line, sizeof(line),
				"%d,7,42,-,caller=T4711;%s\n SUBSYSTEM=cgroup\n "
				"DEVICE=+cgroup:memory\n",
				m->level, esc);
			snprintf(what, sizeof(what), "%s[%zu] kmsg+caller+dict",
				 f->id, mi);
			assert_int_equal(twl_kmsg_parse_record(line, n, &rec),
					 0);
			assert_string_equal(rec.caller, "T4711");
			expect_match(&rec, f, text, what);

			/* dmesg shows only the first line of a multi-line text. */
			snprintf(first, sizeof(first), "%s", text);
			first[strcspn(first, "\n")] = '\0';
			{
				static const char *const forms[] = {
					"[   12.345678] ",
					"[   12.345678] [  T312] ",
					"[   12.345678][  T312] ",
					"<4>[   12.345678] ",
					"<4>[   12.345678] [    T1] ",
				};
				size_t k;

				for (k = 0;
				     k < sizeof(forms) / sizeof(forms[0]);
				     k++) {
					n = (size_t)snprintf(line, sizeof(line),
							     "%s%s", forms[k],
							     first);
					snprintf(what, sizeof(what),
						 "%s[%zu] dmesg form %zu",
						 f->id, mi, k);
					assert_int_equal(
						twl_kmsg_detect(line, n),
						k >= 3 ? TWL_FMT_DMESG_RAW :
							 TWL_FMT_DMESG);
					assert_int_equal(
						twl_kmsg_parse_line(
							TWL_FMT_UNKNOWN, line,
							n, &rec),
						0);
					assert_int_equal(rec.mono_us, 12345678);
					assert_false(rec.has_seq);
					assert_int_equal(rec.facility,
							 k >= 3 ? 0 : -1);
					assert_string_equal(
						twl_kmsg_origin(&rec),
						"unverified");
					if (k == 1 || k == 2)
						assert_string_equal(rec.caller,
								    "T312");
					expect_match(&rec, f, first, what);
				}
			}
			variants++;
		}
	}
	/* The catalog has at least the 13 memcg/cgroup v1 texts plus variants. */
	assert_true(variants >= 13);
}

static void test_escapes(void **state)
{
	static const char rec1[] =
		"6,9,10,-;there\\x0a tab\\x09 back\\x5cslash \\xc3\\xa9";
	size_t n = 0;
	char out[32];

	assert_int_equal(twl_kmsg_parse_record(rec1, sizeof(rec1) - 1, &rec),
			 0);
	assert_string_equal(rec.text, "there\n tab\t back\\slash \xc3\xa9");
	assert_int_equal(rec.text_len,
			 strlen("there\n tab\t back\\slash \xc3\xa9"));
	/* dmesg quoting: \xNN decoded, a lone backslash kept. */
	assert_int_equal(twl_kmsg_unescape("a\\b\\x41", 7, false, out,
					   sizeof(out), &n),
			 0);
	assert_string_equal(out, "a\\bA");
	assert_int_equal(twl_kmsg_unescape("a\\b", 3, true, out, sizeof(out),
					   &n),
			 -EINVAL);
	assert_int_equal(twl_kmsg_unescape("abcdef", 6, true, out, 4, &n),
			 -E2BIG);
}

struct bad_case {
	const char *name;
	const char *in;
	size_t len; /* 0 = strlen */
	int want;
};

static void test_malformed_records(void **state)
{
	static const struct bad_case cases[] = {
		{ "empty", "", 0, -EINVAL },
		{ "truncated after pri", "4", 0, -EINVAL },
		{ "truncated after seq", "4,12,", 0, -EINVAL },
		{ "truncated before flag", "4,12,345,", 0, -EINVAL },
		{ "no semicolon", "4,12,345,-", 0, -EINVAL },
		{ "bad flag", "4,12,345,x;text", 0, -EINVAL },
		{ "letters in seq", "4,1a,345,-;text", 0, -EINVAL },
		{ "negative ts", "4,1,-5,-;text", 0, -EINVAL },
		{ "seq overflow", "4,99999999999999999999999,1,-;t", 0,
		  -EINVAL },
		{ "pri too large", "99999,1,1,-;t", 0, -EINVAL },
		{ "bad caller", "4,1,1,-,caller=X1;t", 0, -EINVAL },
		{ "field without =", "4,1,1,-,caller;t", 0, -EINVAL },
		{ "bad escape letter", "4,1,1,-;a\\qb", 0, -EINVAL },
		{ "bad escape hex", "4,1,1,-;a\\xZZ", 0, -EINVAL },
		{ "truncated escape", "4,1,1,-;abc\\x4", 0, -EINVAL },
		{ "escape at end", "4,1,1,-;abc\\", 0, -EINVAL },
		{ "escaped NUL", "4,1,1,-;a\\x00b", 0, -EINVAL },
		{ "binary control byte", "4,1,1,-;a\x01\x02", 0, -EINVAL },
		{ "raw NUL", "4,1,1,-;a\0b", 10, -EINVAL },
		{ "dict line without space", "4,1,1,-;t\nSUBSYSTEM=x\n", 0,
		  -EINVAL },
		{ "dict line without =", "4,1,1,-;t\n garbage\n", 0, -EINVAL },
		{ "dmesg line as record", "[   1.000000] text", 0, -EINVAL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		int ret = twl_kmsg_parse_record(c->in, len, &rec);

		if (ret != c->want)
			fail_msg("case \"%s\": got %d, want %d", c->name, ret,
				 c->want);
	}
}

static void test_overlong(void **state)
{
	static char big[TWL_KMSG_RECORD_MAX + 64];
	size_t n;

	/* Over the record cap. */
	n = (size_t)snprintf(big, sizeof(big), "4,1,1,-;");
	memset(big + n, 'a', sizeof(big) - n - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(twl_kmsg_parse_record(big, strlen(big), &rec), -E2BIG);
	assert_int_equal(twl_dmesg_parse_line(big, strlen(big), &rec), -E2BIG);
	/* Within the record cap but the decoded text is over its cap. */
	n = (size_t)snprintf(big, sizeof(big), "4,1,1,-;");
	memset(big + n, 'b', TWL_KMSG_TEXT_MAX + 1);
	big[n + TWL_KMSG_TEXT_MAX + 1] = '\0';
	assert_int_equal(twl_kmsg_parse_record(big, strlen(big), &rec), -E2BIG);
	/* Exactly at the text cap is fine. */
	big[n + TWL_KMSG_TEXT_MAX] = '\0';
	assert_int_equal(twl_kmsg_parse_record(big, strlen(big), &rec), 0);
	assert_int_equal(rec.text_len, TWL_KMSG_TEXT_MAX);
}

static void test_malformed_dmesg(void **state)
{
	static const struct bad_case cases[] = {
		{ "no closing bracket", "[   12.345678 text", 0, -EINVAL },
		{ "no fraction", "[   12] text", 0, -EINVAL },
		{ "letters", "[  abc.def] text", 0, -EINVAL },
		{ "fraction too long", "[ 1.1234567890] text", 0, -EINVAL },
		{ "raw without time", "<4>text", 0, -EINVAL },
		{ "raw unterminated", "<4[ 1.0] text", 0, -EINVAL },
		{ "not a dmesg line", "hello", 0, -EINVAL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int ret = twl_dmesg_parse_line(c->in, strlen(c->in), &rec);

		if (ret != c->want)
			fail_msg("case \"%s\": got %d, want %d", c->name, ret,
				 c->want);
	}
}

static void test_facility_and_detect(void **state)
{
	static const char user[] =
		"12,5,100,-;soft_limit_in_bytes is deprecated and will be removed. Please report "
		"your usecase to linux-mm@kvack.org if you depend on this functionality.";
	static const char raw_user[] =
		"<12>[    1.000000] Non-hierarchical mode is deprecated.";

	/* A line user space wrote (facility 1) parses, but is not the kernel's. */
	assert_int_equal(twl_kmsg_parse_record(user, sizeof(user) - 1, &rec),
			 0);
	assert_int_equal(rec.facility, 1);
	assert_int_equal(rec.level, 4);
	assert_false(twl_kmsg_is_kernel(&rec));
	assert_int_equal(
		twl_dmesg_parse_line(raw_user, sizeof(raw_user) - 1, &rec), 0);
	assert_int_equal(rec.facility, 1);
	assert_false(twl_kmsg_is_kernel(&rec));

	assert_int_equal(twl_kmsg_detect("6,1,2,-;x", 9), TWL_FMT_KMSG);
	assert_int_equal(twl_kmsg_detect("6,1,2,c;x", 9), TWL_FMT_KMSG);
	assert_int_equal(twl_kmsg_detect("[ 1.0] x", 8), TWL_FMT_DMESG);
	assert_int_equal(twl_kmsg_detect("<6>[ 1.0] x", 11), TWL_FMT_DMESG_RAW);
	assert_int_equal(twl_kmsg_detect("Dec 3 kernel: x", 15),
			 TWL_FMT_UNKNOWN);
	assert_int_equal(twl_kmsg_detect("6,1,2", 5), TWL_FMT_UNKNOWN);
	assert_int_equal(twl_kmsg_detect("", 0), TWL_FMT_UNKNOWN);
	assert_int_equal(twl_kmsg_parse_line(TWL_FMT_UNKNOWN, "hello", 5, &rec),
			 -EINVAL);
}

static void test_timestamps(void **state)
{
	assert_int_equal(twl_dmesg_parse_line("[    0.000001] a", 16, &rec), 0);
	assert_int_equal(rec.mono_us, 1);
	assert_int_equal(twl_dmesg_parse_line("[12345.5] a", 11, &rec), 0);
	assert_int_equal(rec.mono_us, 12345500000ULL);
	assert_int_equal(twl_dmesg_parse_line("[1.123456789] a", 15, &rec), 0);
	assert_int_equal(rec.mono_us, 1123456);
	assert_string_equal(rec.text, "a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_catalog_variant),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_malformed_dmesg),
		cmocka_unit_test(test_facility_and_detect),
		cmocka_unit_test(test_timestamps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
