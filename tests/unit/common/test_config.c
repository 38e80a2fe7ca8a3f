// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration engine: every value parser, every option type with its
 * bounds and units, files (errors with their lines, several at once,
 * repeated keys), flags in every form, lists, aliases with their
 * deprecation notes, required options, and what it prints.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/config.h>

struct t {
	char *name;
	char buf[8];
	char *path;
	char *url;
	bool flag;
	unsigned count;
	uint64_t big;
	double ratio;
	uint64_t size;
	unsigned secs;
	unsigned ms;
	int level;
	char mode[8];
	size_t n_items;
	char items[3][16];
	size_t n_labels;
	char labels[4][24];
	char *req;
	const char *cli_only;
	bool sw;
	char early[32];
	char *secret;
};

#define F(f) TWL_CFG_FIELD(struct t, f)

static const struct twl_cfg_opt opts[] = {
	{ .name = "name",
	  .alias = "old_name",
	  .type = TWL_CFG_STRING,
	  F(name),
	  .help = "A string." },
	{ .name = "buf", .type = TWL_CFG_STRING, F(buf), .help = "Inline." },
	{ .name = "path", .type = TWL_CFG_PATH, F(path), .help = "A path." },
	{ .name = "url", .type = TWL_CFG_URL, F(url), .help = "A URL." },
	{ .name = "flag",
	  .alias = "old_flag",
	  .type = TWL_CFG_BOOL,
	  .def = "false",
	  F(flag),
	  .help = "A bool." },
	{ .name = "count",
	  .type = TWL_CFG_UINT,
	  .def = "5",
	  F(count),
	  .min = 1,
	  .max = 10,
	  .help = "1 to 10." },
	{ .name = "big", .type = TWL_CFG_UINT, F(big), .help = "Any." },
	{ .name = "ratio",
	  .type = TWL_CFG_DOUBLE,
	  .def = "1.5",
	  F(ratio),
	  .dmin = 0.5,
	  .dmax = 10,
	  .help = "0.5 to 10." },
	{ .name = "size",
	  .type = TWL_CFG_SIZE,
	  .def = "1M",
	  F(size),
	  .min = 1024,
	  .max = 1ULL << 30,
	  .help = "1K to 1G." },
	{ .name = "secs",
	  .type = TWL_CFG_SECONDS,
	  .def = "30s",
	  F(secs),
	  .min = 1,
	  .max = 3600,
	  .help = "1s to 1h." },
	{ .name = "ms",
	  .type = TWL_CFG_MILLIS,
	  .def = "2s",
	  F(ms),
	  .min = 10,
	  .max = 60000,
	  .help = "10ms to 1m." },
	{ .name = "level",
	  .type = TWL_CFG_CHOICE,
	  .def = "info",
	  F(level),
	  .min = 3,
	  .choices = "err|warning|notice|info|debug",
	  .help = "A level." },
	{ .name = "mode",
	  .type = TWL_CFG_CHOICE,
	  .def = "keep",
	  F(mode),
	  .choices = "keep|hash|drop",
	  .help = "A mode." },
	{ .name = "item",
	  .type = TWL_CFG_LIST,
	  .def = "a,b",
	  TWL_CFG_LIST_FIELD(struct t, items, n_items),
	  .help = "Items." },
	{ .name = "labels",
	  .type = TWL_CFG_LIST,
	  .flags = TWL_CFG_KV,
	  TWL_CFG_LIST_FIELD(struct t, labels, n_labels),
	  .help = "Labels." },
	{ .name = "req",
	  .type = TWL_CFG_STRING,
	  F(req),
	  .flags = TWL_CFG_REQUIRED,
	  .example = "here",
	  .help = "Needed." },
	{ .name = "cli-only",
	  .type = TWL_CFG_STRING,
	  F(cli_only),
	  .flags = TWL_CFG_CLI,
	  .arg = "FILE",
	  .help = "Flags only." },
	{ .name = "switch",
	  .short_name = 's',
	  .type = TWL_CFG_BOOL,
	  F(sw),
	  .flags = TWL_CFG_CLI | TWL_CFG_SWITCH,
	  .implied = "true",
	  .help = "A switch." },
	{ .name = "early",
	  .short_name = 'e',
	  .type = TWL_CFG_STRING,
	  F(early),
	  .flags = TWL_CFG_EARLY,
	  .help = "Applied first." },
	{ .name = "secret",
	  .type = TWL_CFG_STRING,
	  F(secret),
	  .flags = TWL_CFG_SECRET,
	  .help = "Hidden." },
};

#define N (sizeof(opts) / sizeof(opts[0]))

static struct t obj;
static struct twl_cfg *p;

static int setup(void **state)
{
	memset(&obj, 0, sizeof(obj));
	assert_int_equal(twl_cfg_defaults(opts, N, &obj), 0);
	p = twl_cfg_new("prog");
	assert_non_null(p);
	assert_int_equal(twl_cfg_add(p, opts, N, &obj), 0);
	return 0;
}

static int teardown(void **state)
{
	twl_cfg_free_fields(opts, N, &obj);
	twl_cfg_free(p);
	p = NULL;
	return 0;
}

static int text(const char *s)
{
	return twl_cfg_parse_text(p, "t.conf", s, strlen(s));
}

static int args(unsigned pass, char **rest, int *n_rest, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, n_rest);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return twl_cfg_args(p, argc, argv, pass, rest, n_rest);
}

/* Message @i is an error (or a note) on @line about @key saying @why. */
static void msg_is(size_t i, unsigned line, const char *key, const char *why)
{
	if (i >= p->n_msgs)
		fail_msg("message %zu missing (%zu messages)", i, p->n_msgs);
	assert_int_equal(p->msgs[i].line, line);
	assert_string_equal(p->msgs[i].key, key);
	if (!strstr(p->msgs[i].text, why))
		fail_msg("message %zu \"%s\" lacks \"%s\"", i, p->msgs[i].text,
			 why);
}

static void test_parse_bool(void **state)
{
	static const char *const yes[] = { "true", "YES", "On", "1" };
	static const char *const no[] = { "false", "No", "OFF", "0" };
	static const char *const bad[] = { "", "2", "y", "truee", " true" };
	bool b;
	size_t i;

	for (i = 0; i < 4; i++) {
		b = false;
		assert_int_equal(twl_parse_bool(yes[i], &b), 0);
		assert_true(b);
		assert_int_equal(twl_parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(twl_parse_bool(bad[i], &b), -EINVAL);
}

static void test_parse_numbers(void **state)
{
	uint64_t n = 7;
	double d;

	assert_int_equal(twl_parse_u64("0", 10, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(twl_parse_u64("18446744073709551615", UINT64_MAX, &n),
			 0);
	assert_true(n == UINT64_MAX);
	assert_int_equal(twl_parse_u64("18446744073709551616", UINT64_MAX, &n),
			 -ERANGE);
	assert_int_equal(twl_parse_u64("11", 10, &n), -ERANGE);
	assert_int_equal(twl_parse_u64("-1", 10, &n), -EINVAL);
	assert_int_equal(twl_parse_u64("+1", 10, &n), -EINVAL);
	assert_int_equal(twl_parse_u64(" 1", 10, &n), -EINVAL);
	assert_int_equal(twl_parse_u64("1k", 10, &n), -EINVAL);
	assert_int_equal(twl_parse_u64("", 10, &n), -EINVAL);

	assert_int_equal(twl_parse_double("2.5", &d), 0);
	assert_true(d == 2.5);
	assert_int_equal(twl_parse_double("1e3", &d), 0);
	assert_true(d == 1000);
	assert_int_equal(twl_parse_double(".5", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(twl_parse_double("-2", &d), 0);
	assert_true(d == -2);
	assert_int_equal(twl_parse_double("inf", &d), -EINVAL);
	assert_int_equal(twl_parse_double("nan", &d), -EINVAL);
	assert_int_equal(twl_parse_double("0x10", &d), -EINVAL);
	assert_int_equal(twl_parse_double(" 1", &d), -EINVAL);
	assert_int_equal(twl_parse_double("1.5x", &d), -EINVAL);
	assert_int_equal(twl_parse_double("e", &d), -EINVAL);
	assert_int_equal(twl_parse_double("", &d), -EINVAL);
	assert_int_equal(twl_parse_double("1e999", &d), -ERANGE);
}

static void test_parse_units(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} sizes[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4096b", 4096 },
		{ "512K", 512 << 10 },
		{ "512kib", 512 << 10 },
		{ "2KB", 2048 },
		{ "64M", 64 << 20 },
		{ "64MiB", 64 << 20 },
		{ "1G", 1 << 30 },
		{ "1gib", 1 << 30 },
		{ "2T", 2ULL << 40 },
		{ "1TiB", 1ULL << 40 },
	};
	static const char *const bad_sizes[] = { "",   "M",  "1.5M", "1 M",
						 "-1", "1P", "1Mi",  "12x" };
	uint64_t n;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(twl_parse_size(sizes[i].s, &n), 0);
		assert_true(n == sizes[i].v);
	}
	for (i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
		assert_int_equal(twl_parse_size(bad_sizes[i], &n), -EINVAL);
	assert_int_equal(twl_parse_size("16777216T", &n), -ERANGE);

	/* seconds */
	assert_int_equal(twl_parse_duration("30", 1000, &n), 0);
	assert_int_equal(n, 30);
	assert_int_equal(twl_parse_duration("5m", 1000, &n), 0);
	assert_int_equal(n, 300);
	assert_int_equal(twl_parse_duration("2H", 1000, &n), 0);
	assert_int_equal(n, 7200);
	assert_int_equal(twl_parse_duration("7d", 1000, &n), 0);
	assert_int_equal(n, 7 * 86400);
	assert_int_equal(twl_parse_duration("2000ms", 1000, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(twl_parse_duration("500ms", 1000, &n), -EINVAL);
	/* milliseconds: a bare number is still seconds */
	assert_int_equal(twl_parse_duration("500ms", 1, &n), 0);
	assert_int_equal(n, 500);
	assert_int_equal(twl_parse_duration("2", 1, &n), 0);
	assert_int_equal(n, 2000);
	assert_int_equal(twl_parse_duration("1m", 1, &n), 0);
	assert_int_equal(n, 60000);
	assert_int_equal(twl_parse_duration("5 fortnights", 1, &n), -EINVAL);
	assert_int_equal(twl_parse_duration("1w", 1, &n), -EINVAL);
	assert_int_equal(twl_parse_duration("-1s", 1, &n), -EINVAL);
	assert_int_equal(twl_parse_duration("999999999999999999d", 1, &n),
			 -ERANGE);

	assert_int_equal(twl_parse_choice("hash", "keep|hash|drop"), 1);
	assert_int_equal(twl_parse_choice("DROP", "keep|hash|drop"), 2);
	assert_int_equal(twl_parse_choice("kee", "keep|hash|drop"), -EINVAL);
	assert_int_equal(twl_parse_choice("", "keep||drop"), -EINVAL);
}

static void test_defaults_and_table(void **state)
{
	static const struct twl_cfg_opt bad[] = {
		{ .name = "snake_case",
		  .type = TWL_CFG_BOOL,
		  F(flag),
		  .help = "x" },
		{ .name = "count", .type = TWL_CFG_BOOL, F(count), .help = "x" },
		{ .name = "dup",
		  .alias = "name",
		  .type = TWL_CFG_STRING,
		  F(name),
		  .help = "x" },
		{ .name = "name",
		  .type = TWL_CFG_UINT,
		  .def = "11",
		  F(count),
		  .max = 10,
		  .help = "x" },
		{ .name = "argv",
		  .type = TWL_CFG_STRING,
		  F(cli_only),
		  .help = "x" },
		{ .name = "sw",
		  .type = TWL_CFG_BOOL,
		  F(sw),
		  .flags = TWL_CFG_SWITCH,
		  .help = "x" },
		{ .name = "nohelp", .type = TWL_CFG_BOOL, F(flag) },
	};
	static const char *const want[] = {
		"snake_case: not a kebab-case name",
		"count: its field does not fit a bool",
		"name: name or alias also used by dup",
		"name: default \"11\": 11 is outside the allowed range 0..10",
		"argv: its field does not fit a string",
		"sw: a switch without .implied",
		"nohelp: no help text",
	};
	char why[2048];
	size_t i;

	assert_int_equal(twl_cfg_check_table(opts, N, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(twl_cfg_check_table(bad, sizeof(bad) / sizeof(bad[0]),
					     why, sizeof(why)),
			 -EINVAL);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(why, want[i]))
			fail_msg("table check lacks \"%s\":\n%s", want[i], why);

	assert_null(obj.name);
	assert_false(obj.flag);
	assert_int_equal(obj.count, 5);
	assert_true(obj.ratio == 1.5);
	assert_true(obj.size == 1 << 20);
	assert_int_equal(obj.secs, 30);
	assert_int_equal(obj.ms, 2000);
	assert_int_equal(obj.level, 6);
	assert_string_equal(obj.mode, "keep");
	assert_int_equal(obj.n_items, 2);
	assert_string_equal(obj.items[1], "b");
}

static void test_file_every_type(void **state)
{
	assert_int_equal(text("# comment\n"
			      "; also a comment\n"
			      "\n"
			      "name = \"two words\"\n"
			      "  buf=1234567  \n"
			      "path = /etc/x.conf\n"
			      "url = https://h.example:8443/\n"
			      "flag = yes\n"
			      "count = 10\n"
			      "big = 18446744073709551615\n"
			      "ratio = 2.5\n"
			      "size = 512KiB\n"
			      "secs = 1h\n"
			      "ms = 250ms\n"
			      "level = DEBUG\n"
			      "mode = Hash\n"
			      "item = x, y\n"
			      "item = z\n"
			      "labels = team=payments,env=prod\n"
			      "req = set\r\n"
			      "early = e\n"
			      "secret = s3\n"),
			 0);
	assert_int_equal(p->n_msgs, 0);
	assert_string_equal(obj.name, "two words");
	assert_string_equal(obj.buf, "1234567");
	assert_string_equal(obj.path, "/etc/x.conf");
	assert_string_equal(obj.url, "https://h.example:8443/");
	assert_true(obj.flag);
	assert_int_equal(obj.count, 10);
	assert_true(obj.big == UINT64_MAX);
	assert_true(obj.ratio == 2.5);
	assert_true(obj.size == 512 << 10);
	assert_int_equal(obj.secs, 3600);
	assert_int_equal(obj.ms, 250);
	assert_int_equal(obj.level, 7);
	assert_string_equal(obj.mode, "hash"); /* the table's spelling */
	/* The file's items replace the default's; its repeats add. */
	assert_int_equal(obj.n_items, 3);
	assert_string_equal(obj.items[0], "x");
	assert_string_equal(obj.items[1], "y");
	assert_string_equal(obj.items[2], "z");
	assert_int_equal(obj.n_labels, 2);
	assert_string_equal(obj.labels[0], "team=payments");
	assert_string_equal(obj.labels[1], "env=prod");
	assert_true(twl_cfg_given(p, "count"));
	assert_false(twl_cfg_given(p, "cli-only"));
}

/* Every bad line is one error naming its line and key; good lines apply. */
static void test_file_errors(void **state)
{
	static const struct {
		const char *line, *key, *why;
	} cases[] = {
		{ "buf = 12345678", "buf", "longer than 7 bytes" },
		{ "path = relative/x", "path", "absolute" },
		{ "path =", "path", "must not be empty" },
		{ "url = http://plain.example", "url", "https" },
		{ "flag = maybe", "flag", "true or false" },
		{ "count = 0", "count",
		  "0 is outside the allowed range 1..10" },
		{ "count = 11", "count",
		  "11 is outside the allowed range 1..10" },
		{ "count = 5x", "count", "non-negative integer" },
		{ "big = 18446744073709551616", "big", "out of range" },
		{ "ratio = 0.1", "ratio", "outside the allowed range 0.5..10" },
		{ "ratio = lots", "ratio", "decimal number" },
		{ "size = 512", "size",
		  "512 is outside the allowed range 1K..1G" },
		{ "size = 2G", "size", "2G is outside" },
		{ "size = 5 fortnights", "size", "optional unit" },
		{ "secs = 500ms", "secs", "whole seconds" },
		{ "secs = 2h", "secs",
		  "2h is outside the allowed range 1s..1h" },
		{ "ms = 5ms", "ms",
		  "5ms is outside the allowed range 10ms..1m" },
		{ "level = loud", "level", "err|warning|notice|info|debug" },
		{ "mode = scramble", "mode", "keep|hash|drop" },
		{ "item = a,,b", "item", "empty item" },
		{ "item = a,", "item", "empty item" },
		{ "item = a,b,c,d", "item", "more than 3 items" },
		{ "item = 0123456789abcdef", "item", "longer than 15 bytes" },
		{ "labels = team", "labels", "not key=value" },
		{ "labels = =x", "labels", "not key=value" },
		{ "name = \"unterminated", "name", "unterminated" },
		{ "name = a\tb", "name", "control characters" },
		{ "cli-only = x", "cli-only",
		  "only be given on the command line" },
		{ "switch = true", "switch",
		  "only be given on the command line" },
		{ "no-such-key = 1", "no-such-key",
		  "unknown option (see prog --help)" },
		{ "just some words", "", "key = value" },
		{ "secret = \"a\tb\"", "secret", "bad string: must not" },
	};
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	char buf[8192];
	size_t o = 0;

	for (i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n",
				      cases[i].line);
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "count = 7\n");
	assert_int_equal(twl_cfg_parse_text(p, "t.conf", buf, o), -EINVAL);
	assert_int_equal(p->n_errors, n);
	assert_int_equal(p->n_msgs, n);
	for (i = 0; i < n; i++)
		msg_is(i, (unsigned)i + 1, cases[i].key, cases[i].why);
	/* The secret's value is never echoed. */
	assert_null(strstr(p->msgs[n - 1].text, "a\tb"));
	/* Bad values left the defaults; the good line after them applied. */
	assert_int_equal(obj.count, 7);
	assert_int_equal(obj.n_items, 2);
	assert_string_equal(obj.mode, "keep");
	assert_true(obj.ratio == 1.5);
	assert_true(twl_cfg_failed(p));
}

static void test_file_limits(void **state)
{
	static const char nul[] = "count = 2\nname = a\0b\nbig = 3\n";
	char *big = malloc(5000);

	assert_non_null(big);
	/* A key set twice: the second is an error naming the first line. */
	assert_int_equal(text("count = 2\n\ncount = 3\n"), -EINVAL);
	msg_is(0, 3, "count", "set twice (first on line 1)");
	assert_int_equal(obj.count, 2);
	/* ... also through its alias. */
	assert_int_equal(text("flag = true\nold_flag = false\n"), -EINVAL);
	msg_is(1, 2, "old_flag", "set twice (first on line 1)");
	/* A NUL byte and an over-long line are errors too. */
	assert_int_equal(twl_cfg_parse_text(p, "t.conf", nul, sizeof(nul) - 1),
			 -EINVAL);
	msg_is(2, 2, "", "NUL byte");
	memset(big, 'x', 4999);
	memcpy(big, "name = ", 7);
	big[4999] = '\0';
	assert_int_equal(text(big), -EINVAL);
	msg_is(3, 1, "", "line longer than");
	free(big);
	/* Past TWL_CFG_MAX_MSGS messages are counted, not kept. */
	for (int i = 0; i < TWL_CFG_MAX_MSGS; i++)
		text("nope = 1\n");
	assert_int_equal(p->n_msgs, TWL_CFG_MAX_MSGS);
	assert_int_equal(p->dropped, 4);
	assert_int_equal(p->n_errors, TWL_CFG_MAX_MSGS + 4);
	/* A missing optional file is nothing; a required one is an error. */
	assert_int_equal(
		twl_cfg_load_file(p, "/nonexistent/t.conf", 1024, false), 0);
	assert_int_equal(twl_cfg_load_file(p, "/nonexistent/t.conf", 1024,
					   true),
			 -ENOENT);
}

static void test_alias_note(void **state)
{
	char *rest[4];
	int n_rest;

	assert_int_equal(text("old_name = a\nold_flag = on\n"), 0);
	assert_false(twl_cfg_failed(p));
	assert_int_equal(p->n_msgs, 2);
	assert_true(p->msgs[0].note && p->msgs[1].note);
	msg_is(0, 1, "old_name", "deprecated spelling: write name");
	msg_is(1, 2, "old_flag", "write flag");
	assert_string_equal(obj.name, "a");
	assert_true(obj.flag);
	/* Once per key: the flags that use it again add no note. */
	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "--old_name",
			      "b", "--old_flag=false", NULL),
			 0);
	assert_int_equal(p->n_msgs, 2);
	assert_string_equal(obj.name, "b");
	assert_false(obj.flag);
}

static void test_flags(void **state)
{
	char *rest[16];
	char s_arg[] = "-sx";
	int n_rest = -1;

	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "serve",
			      "--count", "3", "--ratio=2", "--flag", "-s",
			      "--cli-only", "f", "-eE", "--size=2M", "--",
			      "--count", NULL),
			 0);
	assert_int_equal(p->n_msgs, 0);
	assert_int_equal(n_rest, 2);
	assert_string_equal(rest[0], "serve");
	assert_string_equal(rest[1], "--count");
	assert_int_equal(obj.count, 3);
	assert_true(obj.ratio == 2);
	assert_true(obj.flag);
	assert_true(obj.sw);
	assert_string_equal(obj.cli_only, "f");
	assert_string_equal(obj.early, "E");
	assert_true(obj.size == 2 << 20);
	assert_true(twl_cfg_given(p, "cli-only"));

	/* Booleans: --no-key, --key WORD, --key=WORD; a following word that
	 * is no boolean is not taken. */
	assert_int_equal(
		args(TWL_CFG_PASS_ALL, rest, &n_rest, "--no-flag", NULL), 0);
	assert_false(obj.flag);
	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "--flag", "yes",
			      NULL),
			 0);
	assert_true(obj.flag);
	assert_int_equal(n_rest, 0);
	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "--flag=off",
			      "--flag", "serve", NULL),
			 0);
	assert_true(obj.flag);
	assert_int_equal(n_rest, 1);
	assert_int_equal(p->n_msgs, 0);

	/* Problems, all reported in one call. */
	assert_int_equal(args(TWL_CFG_PASS_ALL, NULL, NULL, "--count", "0",
			      "--bogus", "--no-count", s_arg, "--switch=no",
			      "stray", "--name", NULL),
			 -EINVAL);
	assert_int_equal(p->n_errors, 7);
	msg_is(0, 0, "count", "outside the allowed range");
	msg_is(1, 0, "bogus", "unknown option");
	msg_is(2, 0, "no-count", "unknown option");
	msg_is(3, 0, "-s", "takes no value");
	msg_is(4, 0, "switch", "takes no value");
	msg_is(5, 0, "", "unexpected argument \"stray\"");
	msg_is(6, 0, "name", "needs a value");
	assert_true(p->msgs[0].flag);
	assert_int_equal(obj.count, 3);
}

static void test_passes(void **state)
{
	char *rest[8];
	int n_rest = -1;

	/* EARLY applies only early options and reports nothing else. */
	assert_int_equal(args(TWL_CFG_PASS_EARLY, rest, &n_rest, "--count",
			      "99", "--early", "x", "pos", "--bogus", NULL),
			 0);
	assert_string_equal(obj.early, "x");
	assert_int_equal(obj.count, 5);
	assert_int_equal(n_rest, -1);
	assert_int_equal(p->n_msgs, 0);
	/* LATE: the rest, and its problems, but not the early option again. */
	strcpy(obj.early, "from-file");
	assert_int_equal(args(TWL_CFG_PASS_LATE, rest, &n_rest, "--count", "9",
			      "--early", "x", "pos", NULL),
			 0);
	assert_int_equal(obj.count, 9);
	assert_string_equal(obj.early, "from-file");
	assert_int_equal(n_rest, 1);
	assert_int_equal(args(TWL_CFG_PASS_EARLY, rest, &n_rest, "--early",
			      NULL),
			 -EINVAL);
	msg_is(0, 0, "early", "needs a value");
}

static void test_lists(void **state)
{
	char *rest[8];
	int n_rest;

	/* Flags replace the file's items, and add to each other. */
	assert_int_equal(text("item = f1\nitem = f2\n"), 0);
	assert_int_equal(obj.n_items, 2);
	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "--item", "c1",
			      "--item=c2,c3", NULL),
			 0);
	assert_int_equal(obj.n_items, 3);
	assert_string_equal(obj.items[0], "c1");
	assert_string_equal(obj.items[2], "c3");
	/* A bad item, or one too many, adds nothing. */
	assert_int_equal(args(TWL_CFG_PASS_ALL, rest, &n_rest, "--item", "c4",
			      NULL),
			 -EINVAL);
	assert_int_equal(obj.n_items, 3);
	assert_int_equal(twl_cfg_set(p, "item", "x\"y"), -EINVAL);
	msg_is(1, 0, "item", "quote");
	/* A bad first item of a new source keeps the old items too. */
	assert_int_equal(text("item = ok,bad\"\n"), -EINVAL);
	assert_int_equal(obj.n_items, 3);
	assert_string_equal(obj.items[0], "c1");
	/* An empty value empties the list. */
	assert_int_equal(twl_cfg_set(p, "item", ""), 0);
	assert_int_equal(obj.n_items, 0);
	/* The program's own settings add items. */
	assert_int_equal(twl_cfg_set(p, "labels", "a=1"), 0);
	assert_int_equal(twl_cfg_set(p, "labels", " b = 2 "), -EINVAL);
	assert_int_equal(twl_cfg_set(p, "labels", "b= 2,c.d-e_f=x=y"), 0);
	assert_int_equal(obj.n_labels, 3);
	assert_string_equal(obj.labels[1], "b= 2");
	assert_string_equal(obj.labels[2], "c.d-e_f=x=y");
	assert_int_equal(twl_cfg_set(p, "labels", "abcdefghijklmnopqrstuvwx=1"),
			 -EINVAL);
	assert_int_equal(twl_cfg_set(p, "nope", "1"), -ENOENT);
}

static void test_check(void **state)
{
	assert_int_equal(twl_cfg_check(p), -EINVAL);
	assert_int_equal(p->n_errors, 1);
	msg_is(0, 0, "req", "required but not set");
	obj.req = strdup("x");
	/* Fields set directly are held to the same bounds. */
	obj.count = 50;
	obj.ratio = 0;
	obj.secs = 0;
	assert_int_equal(twl_cfg_check(p), -EINVAL);
	assert_int_equal(p->n_errors, 4);
	msg_is(1, 0, "count", "50 is outside the allowed range 1..10");
	msg_is(2, 0, "ratio", "0 is outside");
	msg_is(3, 0, "secs", "0s is outside the allowed range 1s..1h");
	obj.count = 10;
	obj.ratio = 10;
	obj.secs = 3600;
	assert_int_equal(twl_cfg_check(p), 0);
}

/*
 * @fn's output (free() it). The stream's pointers are static: GCC's
 * -Wdangling-pointer takes a local's address in a FILE for a dangling one.
 */
static char *capture(void (*fn)(FILE *f))
{
	static char *out;
	static size_t len;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fn(f);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void print_example(FILE *f)
{
	twl_cfg_print_example(f, opts, N);
}

static void print_values(FILE *f)
{
	twl_cfg_print_values(f, opts, N, &obj);
}

static void print_flags(FILE *f)
{
	twl_cfg_print_flags(f, opts, N);
}

static void print_keys(FILE *f)
{
	twl_cfg_print_keys(f, opts, N);
}

static void print_man_flags(FILE *f)
{
	twl_cfg_print_man(f, opts, N, true);
}

static void print_man_keys(FILE *f)
{
	twl_cfg_print_man(f, opts, N, false);
}

static void print_msgs(FILE *f)
{
	twl_cfg_print_msgs(f, p);
}

/* What is printed parses back: the example, and the values. */
static void test_round_trip(void **state)
{
	char *ex = capture(print_example), *vals;
	struct t copy;
	struct twl_cfg *q;

	assert_non_null(
		strstr(ex, "\n# Needed. (string, required)\nreq = here\n"));
	assert_non_null(strstr(ex, "\n#count = 5\n"));
	assert_non_null(strstr(ex, "\n#name =\n"));
	assert_null(strstr(ex, "cli-only"));
	assert_int_equal(text(ex), 0);
	assert_string_equal(obj.req, "here");
	free(ex);

	assert_int_equal(text("name = n\nsize = 1536K\nms = 1500ms\n"
			      "secs = 120\nlevel = err\nlabels = a=1,b=2\n"
			      "ratio = 0.75\nbig = 3\nsecret = pw\n"),
			 0);
	vals = capture(print_values);
	assert_non_null(strstr(vals, "\nsize = 1536K\n"));
	assert_non_null(strstr(vals, "\nms = 1500ms\n"));
	assert_non_null(strstr(vals, "\nsecs = 2m\n"));
	assert_non_null(strstr(vals, "\nlevel = err\n"));
	assert_non_null(strstr(vals, "\nitem = a,b\n"));
	assert_non_null(strstr(vals, "\nsecret = (secret)\n"));
	assert_null(strstr(vals, "pw"));
	assert_null(strstr(vals, "switch"));
	memset(&copy, 0, sizeof(copy));
	q = twl_cfg_new("prog");
	assert_non_null(q);
	assert_int_equal(twl_cfg_add(q, opts, N, &copy), 0);
	/* (without the secret's placeholder, the argv-only option, and the
	 * unset path and URL, which cannot be empty) */
	*strstr(vals, "secret = ") = '#';
	*strstr(vals, "cli-only = ") = '#';
	*strstr(vals, "path = ") = '#';
	*strstr(vals, "url = ") = '#';
	assert_int_equal(twl_cfg_parse_text(q, "values", vals, strlen(vals)),
			 0);
	assert_true(copy.size == obj.size && copy.ms == obj.ms &&
		    copy.secs == obj.secs && copy.level == obj.level &&
		    copy.ratio == obj.ratio && copy.n_labels == 2);
	twl_cfg_free_fields(opts, N, &copy);
	twl_cfg_free(q);
	free(vals);
}

static void test_docs(void **state)
{
	char *flags = capture(print_flags), *keys = capture(print_keys);
	char *man = capture(print_man_flags), *mkeys = capture(print_man_keys);
	size_t i;

	for (i = 0; i < N; i++) {
		if (!strstr(flags, opts[i].name))
			fail_msg("--help lacks %s", opts[i].name);
		if (!(opts[i].flags & TWL_CFG_CLI) &&
		    !strstr(keys, opts[i].name))
			fail_msg("the keys lack %s", opts[i].name);
	}
	assert_non_null(strstr(flags, "  -s, --switch            A switch.\n"));
	assert_non_null(strstr(
		flags, "      --count N           1 to 10. Default 5.\n"));
	assert_non_null(strstr(
		flags, "      --flag[=BOOL]       A bool. Default false.\n"));
	assert_non_null(strstr(
		keys,
		"  count                integer  default 5\n      1 to 10.\n"));
	assert_non_null(strstr(
		keys,
		"  req                  string   default (none), required\n"));
	assert_non_null(strstr(
		man, ".TP\n.BI \\-\\-count \" N\"\n1 to 10. Default 5.\n"));
	assert_non_null(
		strstr(man, ".TP\n.BR \\-s \", \" \\-\\-switch\nA switch.\n"));
	assert_non_null(strstr(
		man, ".TP\n.BR \\-e \", \" \\-\\-early \" \\fISTRING\\fR\"\n"));
	assert_non_null(
		strstr(man, ".TP\n.BR \\-\\-flag \" [\\fIbool\\fR]\"\n"));
	assert_non_null(strstr(
		mkeys, ".TP\n.BI ms \" duration\"\n10ms to 1m. Default 2s.\n"));
	assert_null(strstr(mkeys, "cli\\-only"));
	free(flags);
	free(keys);
	free(man);
	free(mkeys);
}

static void test_print_msgs(void **state)
{
	char *out;

	text("count = 0\nold_name = x\n");
	args(TWL_CFG_PASS_ALL, NULL, NULL, "--bogus", NULL);
	twl_cfg_error(p, "url", "checked later");
	twl_cfg_error(p, NULL, "no key");
	out = capture(print_msgs);
	assert_string_equal(
		out,
		"t.conf:1: count: bad integer \"0\": 0 is outside the allowed range 1..10\n"
		"t.conf:2: note: old_name: deprecated spelling: write name (the old one still works)\n"
		"prog: command line: --bogus: unknown option (see prog --help)\n"
		"t.conf: url: checked later\n"
		"t.conf: no key\n");
	free(out);
}

static void test_session_limits(void **state)
{
	struct twl_cfg *q = twl_cfg_new(NULL);
	size_t i;

	assert_non_null(q);
	for (i = 0; i < TWL_CFG_MAX_OPTS / N; i++)
		assert_int_equal(twl_cfg_add(q, opts, N, &obj),
				 i < TWL_CFG_MAX_SECTIONS ? 0 : -E2BIG);
	assert_int_equal(twl_cfg_add(q, opts, N, &obj), -E2BIG);
	twl_cfg_free(q);
	twl_cfg_free(NULL);
	twl_cfg_free_fields(opts, N, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_parse_units),
		cmocka_unit_test_setup_teardown(test_defaults_and_table, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_every_type, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_alias_note, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_docs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_msgs, setup,
						teardown),
		cmocka_unit_test(test_session_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
