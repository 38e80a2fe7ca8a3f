// SPDX-License-Identifier: GPL-2.0
/*
 * twl_json_decode (common/src/json_decode.c) against its contract: it
 * accepts exactly what json_loadb(JSON_REJECT_DUPLICATES) accepts and
 * builds json_equal() trees. Every case states the expected verdict
 * and is also run through jansson, so a case whose expectation is wrong
 * about jansson fails too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/json_decode.h>

struct jcase {
	const char *text;
	size_t len; /* 0: strlen */
	int ok;
};

#define OK(s)                       \
	{                           \
		s, sizeof(s) - 1, 1 \
	}
#define BAD(s)                      \
	{                           \
		s, sizeof(s) - 1, 0 \
	}

static const struct jcase cases[] = {
	OK("{}"),
	OK("[]"),
	OK(" \t\r\n{ \"a\" : 1 , \"b\" : [ true , false , null ] } \n"),
	OK("[0, -0, 1, -1, 9223372036854775807, -9223372036854775808]"),
	/* 18 digits take the unchecked path, 19 the checked one */
	OK("[999999999999999999, -999999999999999999, 1000000000000000000,"
	   " -1000000000000000000, 1733270400]"),
	OK("[0.5, -0.0, 1e3, 1E+3, 1e-3, 2.5e-400, 12345678901234567890.0]"),
	OK("[1e308]"),
	OK("[\"\", \"plain\", \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]"),
	OK("[\"\\u00e9\\u20AC\\ud834\\udd1e\", \"caf\xc3\xa9\", \"\xf0\x9f\x98\x80\"]"),
	OK("{\"k\\u00e9y\": \"v\", \"k\xc3\xa9y2\": {\"\\n\": [\"\\u0041\"]}}"),
	OK("[\"\x7f\"]"),
	OK("{\"a\":{\"a\":{\"a\":1}}}"),
	OK("{\"a\":1,\"A\":2,\"a \":3}"),
	BAD(""),
	BAD("   "),
	BAD("1"),
	BAD("\"s\""),
	BAD("true"),
	BAD("null"),
	BAD("{"),
	BAD("["),
	BAD("{\"a\"}"),
	BAD("{\"a\":}"),
	BAD("{\"a\":1,}"),
	BAD("[1,]"),
	BAD("[,1]"),
	BAD("[1 2]"),
	BAD("{\"a\":1 \"b\":2}"),
	BAD("{a:1}"),
	BAD("{'a':1}"),
	BAD("{\"a\":1}x"),
	BAD("{\"a\":1}{}"),
	BAD("{\"a\":1,\"a\":2}"),
	BAD("{\"\\u0061\":1,\"a\":2}"),
	BAD("[01]"),
	BAD("[-01]"),
	BAD("[-]"),
	BAD("[+1]"),
	BAD("[1.]"),
	BAD("[.5]"),
	BAD("[1e]"),
	BAD("[1e+]"),
	BAD("[0x10]"),
	BAD("[NaN]"),
	BAD("[Infinity]"),
	BAD("[1e309]"),
	BAD("[-1e309]"),
	BAD("[9223372036854775808]"),
	BAD("[-9223372036854775809]"),
	BAD("[99999999999999999999999]"),
	BAD("[tru]"),
	BAD("[truex]"),
	BAD("[nul]"),
	BAD("[True]"),
	BAD("[\"unterminated]"),
	BAD("[\"tab\there\"]"),
	BAD("[\"new\nline\"]"),
	BAD("[\"\\x41\"]"),
	BAD("[\"\\u12\"]"),
	BAD("[\"\\u12G4\"]"),
	BAD("[\"\\u0000\"]"),
	BAD("{\"\\u0000\":1}"),
	BAD("[\"\\ud834\"]"),
	BAD("[\"\\ud834x\"]"),
	BAD("[\"\\ud834\\u0041\"]"),
	BAD("[\"\\udd1e\"]"),
	BAD("[\"\\"),
	BAD("[\"\xff\"]"),
	BAD("[\"\xc3\"]"),
	BAD("[\"\xc3\\n\"]"),
	BAD("[\"\xc0\xaf\"]"),
	BAD("[\"\xed\xa0\x80\"]"),
	BAD("[\"\xf4\x90\x80\x80\"]"),
	BAD("[\"\xe2\x82\"]"),
	BAD("[\xc3\xa9]"),
	BAD("\xef\xbb\xbf{}"),
	{ "[\"a\0b\"]", 7, 0 },
	{ "[1]\0", 4, 0 },
	{ "{\"a\":1}", 6, 0 }, /* cut short by the length */
};

static void check(const char *text, size_t len, int ok)
{
	json_error_t jerr;
	struct twl_json_err err;
	json_t *want, *got;

	want = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	got = twl_json_decode(text, len, &err);
	if (!!want != ok)
		fail_msg("case %.*s: jansson %s it (%s), the table says %s",
			 (int)len, text, want ? "accepts" : "rejects",
			 want ? "" : jerr.text, ok ? "accept" : "reject");
	if (!!got != ok)
		fail_msg("case %.*s: twl_json_decode %s it (%s)", (int)len,
			 text, got ? "accepts" : "rejects",
			 got ? "" : err.text);
	if (got && !json_equal(got, want))
		fail_msg("case %.*s: trees differ", (int)len, text);
	if (!got) {
		assert_true(err.text[0] != '\0');
		assert_true(err.line >= 1 && err.column >= 1);
		assert_true(err.offset <= len);
	}
	json_decref(want);
	json_decref(got);
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(cases[i].text, cases[i].len, cases[i].ok);
}

/*
 * Strings are scanned eight bytes at a time while no byte may end or
 * escape them: every special byte (and its neighbours in value) at every
 * position of strings of 0-23 bytes starting at every offset of a word,
 * against jansson.
 */
static void test_string_words(void **state)
{
	static const char *const bytes[] = {
		"\"",	"\\n",	    "\\u0041", "\x1f",	   "\x01",
		" ",	"!",	    "#",       "[",	   "]",
		"\x7f", "\xc3\xa9", "\xff",    "\xe2\x82", "\x80",
	};
	char text[64];

	(void)state;
	for (int lead = 0; lead < 8; lead++)
		for (int len = 0; len < 24; len++)
			for (int at = 0; at <= len; at++)
				for (size_t b = 0;
				     b < sizeof(bytes) / sizeof(bytes[0]);
				     b++) {
					json_error_t jerr;
					json_t *want;
					int n;

					n = snprintf(
						text, sizeof(text),
						"[%*s\"%.*s%s%.*s\"]", lead, "",
						at, "aaaaaaaaaaaaaaaaaaaaaaaa",
						bytes[b], len - at,
						"bbbbbbbbbbbbbbbbbbbbbbbb");
					assert_true(n > 0 &&
						    n < (int)sizeof(text));
					want = json_loadb(
						text, (size_t)n,
						JSON_REJECT_DUPLICATES, &jerr);
					check(text, (size_t)n, want != NULL);
					json_decref(want);
				}
}

/* Nesting: jansson counts every value; 2048 levels pass, 2049 do not. */
static void test_depth(void **state)
{
	size_t n = 2100;
	char *buf = malloc(2 * n + 2);

	(void)state;
	assert_non_null(buf);
	for (size_t depth = 2046; depth <= 2050; depth++) {
		memset(buf, '[', depth);
		buf[depth] = '1';
		memset(buf + depth + 1, ']', depth);
		check(buf, 2 * depth + 1, depth + 1 <= 2048);
		/* empty innermost array: the arrays themselves count */
		memset(buf, '[', depth);
		memset(buf + depth, ']', depth);
		check(buf, 2 * depth, depth <= 2048);
	}
	free(buf);
}

/*
 * twl_json_decode_nested(): arrays and objects count, scalars do not, in
 * arrays and in member values alike; within the cap the tree is the same.
 */
static void test_nested_cap(void **state)
{
	static const struct {
		const char *text;
		int ok; /* with a cap of 3 */
	} t[] = {
		{ "[[[1]]]", 1 },
		{ "[[[[]]]]", 0 },
		{ "{\"a\":{\"b\":[\"x\",{}]}}", 0 },
		{ "{\"a\":{\"b\":[\"x\",2]}}", 1 },
		{ "[[[1]],[[[2]]]]", 0 },
		{ "[[[1,2]],{\"c\":[3]}]", 1 },
	};
	struct twl_json_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *full =
			twl_json_decode(t[i].text, strlen(t[i].text), NULL);
		json_t *got = twl_json_decode_nested(
			t[i].text, strlen(t[i].text), 3, &err);

		assert_non_null(full);
		if (!!got != t[i].ok)
			fail_msg("case %s: %s with a cap of 3", t[i].text,
				 got ? "accepted" : "rejected");
		if (got)
			assert_true(json_equal(got, full));
		else
			assert_non_null(strstr(err.text, "nesting"));
		json_decref(full);
		json_decref(got);
	}
}

/* Long numbers and strings with escapes far apart: scratch and heap paths. */
static void test_long_tokens(void **state)
{
	size_t n = 5000;
	char *buf = malloc(n + 64), *p = buf;

	(void)state;
	assert_non_null(buf);
	p += sprintf(p, "[1.");
	memset(p, '7', 300);
	p += 300;
	p += sprintf(p, ", \"");
	for (int i = 0; i < 200; i++)
		p += sprintf(p, "ab\\n\\u00e9");
	p += sprintf(p, "\"]");
	check(buf, (size_t)(p - buf), 1);
	p = buf;
	p += sprintf(p, "{\"");
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "k\\t");
	p += sprintf(p, "\": \"x\\\"y\", \"k\": 1}");
	check(buf, (size_t)(p - buf), 1);
	free(buf);
}

/*
 * The documented difference (json_decode.h): jansson skips one NUL byte
 * after a number or literal; twl_json_decode rejects it.
 */
static void test_nul_after_token(void **state)
{
	static const struct jcase quirk[] = {
		{ "[1\0]", 4, 0 },
		{ "{\"a\":true\0}", 11, 0 },
		{ "[null\0,2.5\0]", 12, 0 },
	};
	json_error_t jerr;
	struct twl_json_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(quirk) / sizeof(quirk[0]); i++) {
		json_t *j = json_loadb(quirk[i].text, quirk[i].len,
				       JSON_REJECT_DUPLICATES, &jerr);

		assert_non_null(j); /* if jansson is fixed, drop this note */
		json_decref(j);
		assert_null(twl_json_decode(quirk[i].text, quirk[i].len, &err));
	}
}

/* The error position is that of the offending byte. */
static void test_error_position(void **state)
{
	struct twl_json_err err;

	(void)state;
	assert_null(twl_json_decode("{\n  \"a\": 1,\n  \"a\": 2}", 22, &err));
	assert_int_equal(err.line, 3);
	assert_int_equal(err.column, 3);
	assert_string_equal(err.text, "duplicate object key");
	assert_null(twl_json_decode(NULL, 0, &err));
	/* err is optional */
	assert_null(twl_json_decode("[", 1, NULL));
	{
		json_t *v = twl_json_decode("[1]", 3, NULL);

		assert_non_null(v);
		json_decref(v);
	}
}

/*
 * twl_json_parser_bool(), which the report fast path reads usage[].value's
 * "unlimited" with: the two literals after any whitespace, nothing else;
 * a failure sticks and is reported at the offending byte.
 */
static void test_parser_bool(void **state)
{
	static const struct {
		const char *text;
		int ok;
		bool value;
		char next; /* what follows the literal */
	} t[] = {
		{ "true,", 1, true, ',' },   { " \n\tfalse}", 1, false, '}' },
		{ "truex", 1, true, 'x' },   { "tru", 0, false, 0 },
		{ "True", 0, false, 0 },     { "fals", 0, false, 0 },
		{ "null", 0, false, 0 },     { "1", 0, false, 0 },
		{ "\"true\"", 0, false, 0 }, { "", 0, false, 0 },
	};
	struct twl_json_parser ps;
	struct twl_json_err err;
	bool v;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		twl_json_parser_init(&ps, t[i].text, strlen(t[i].text), 4,
				     &err);
		v = !t[i].value;
		if ((twl_json_parser_bool(&ps, &v) == 0) != t[i].ok)
			fail_msg("case %s: %s", t[i].text,
				 t[i].ok ? "rejected" : "accepted");
		if (t[i].ok) {
			assert_true(v == t[i].value);
			assert_int_equal(twl_json_parser_peek(&ps), t[i].next);
		} else {
			assert_true(err.text[0] != '\0');
			assert_int_equal(twl_json_parser_peek(&ps), -1);
		}
		twl_json_parser_fini(&ps);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_string_words),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_nested_cap),
		cmocka_unit_test(test_long_tokens),
		cmocka_unit_test(test_nul_after_token),
		cmocka_unit_test(test_error_position),
		cmocka_unit_test(test_parser_bool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
