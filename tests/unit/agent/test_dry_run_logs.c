// SPDX-License-Identifier: GPL-2.0
/*
 * The acceptance corpus (data/logs, the same warnings in every form
 * textlog reads) through the real binary: twilight-agent --kmsg-file FILE
 * --dry-run prints one valid report per file in which each warning has its
 * catalog id, time, origin, source, boot and kernel; the lines it cannot
 * place are named in the summary by file and line. dmesg -t and
 * journalctl -k come first: the forms operators paste most.
 * Usage: test_agent_dry_run_logs AGENT_BINARY DATA_DIR/logs
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "agent_test.h"
#include "tu_agent_run.h"

static const char *agent_bin, *data_dir;

#define A "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define B "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
/* Boot A started at 2026-12-04T04:59:58Z, B a day later; journald got each record 40 us late. */
#define BASE_A 1796360398LL
#define BASE_B (BASE_A + 86400)
/* Yearless stamps are placed before the file's mtime: set to early 2027. */
#define MTIME 1799000000

/* The warnings of the corpus (make-corpus RECORDS) and their catalog ids. */
enum ev { SOFT_A, SPOOF, OOM, SWAP, REMOUNT, MOVE, SOFT_B, END = -1 };

static const struct event {
	char boot; /* 'a' or 'b' */
	uint64_t mono;
	const char *feature;
} events[] = {
	[SOFT_A] = { 'a', 3018562, "memcg_v1.soft_limit" },
	/* "<14>kernel: MOVE" by user space: text forms cannot tell it apart. */
	[SPOOF] = { 'a', 3700000, "memcg_v1.move_charge" },
	[OOM] = { 'a', 61500000, "memcg_v1.oom_control" },
	[SWAP] = { 'a', 62000000, "memcg_v1.swappiness" },
	[REMOUNT] = { 'a', 70250000, "cgroup_v1.remount" },
	[MOVE] = { 'a', 75000000, "memcg_v1.move_charge" },
	[SOFT_B] = { 'b', 5500000, "memcg_v1.soft_limit" },
};

enum time_kind {
	T_WALL, /* the receive time the line carries */
	T_MONO, /* only the kernel's stamp: this machine's boot + stamp */
	T_NONE, /* no time at all: this machine's boot */
};

enum boot_kind {
	B_HOST, /* the log names no boot: the host's */
	B_RECORD, /* every record names its boot (journal JSON, export) */
	B_AFTER, /* journalctl's "-- Boot B --": B's records named */
};

struct log_case {
	const char *file, *source, *origin;
	enum time_kind time;
	enum boot_kind boot;
	bool mono; /* the kernel's stamp is in the form */
	int warnings[10]; /* enum ev, ending with END */
	size_t unknown;
	unsigned long fail_line; /* the one line that cannot be placed, or 0 */
};

#define AB_JCTL                                                      \
	{                                                            \
		SOFT_A, SPOOF, OOM, SWAP, REMOUNT, MOVE, SOFT_B, END \
	}
#define AB_KERNEL                                             \
	{                                                     \
		SOFT_A, OOM, SWAP, REMOUNT, MOVE, SOFT_B, END \
	}
#define A_KERNEL                                      \
	{                                             \
		SOFT_A, OOM, SWAP, REMOUNT, MOVE, END \
	}

static const struct log_case cases[] = {
	{ "dmesg-t.txt", "dmesg", "unverified", T_NONE, B_HOST, false, A_KERNEL,
	  2, 0 },
	{ "jctl-k-short.txt",
	  "journalctl_short",
	  "unverified",
	  T_WALL,
	  B_HOST,
	  false,
	  { SOFT_A, SPOOF, OOM, SWAP, REMOUNT, MOVE, END },
	  0,
	  10 },
	{ "dmesg-t-multiline.txt",
	  "dmesg",
	  "unverified",
	  T_NONE,
	  B_HOST,
	  false,
	  { SWAP, END },
	  0,
	  0 },
	{ "jctl-short.txt", "journalctl_short", "unverified", T_WALL, B_AFTER,
	  false, AB_JCTL, 0, 10 },
	{ "jctl-iso.txt", "journalctl_iso", "unverified", T_WALL, B_AFTER,
	  false, AB_JCTL, 0, 10 },
	{ "jctl-precise.txt", "journalctl_precise", "unverified", T_WALL,
	  B_AFTER, false, AB_JCTL, 0, 10 },
	{ "jctl-monotonic.txt", "journalctl_monotonic", "unverified", T_MONO,
	  B_AFTER, true, AB_JCTL, 0, 10 },
	{ "dmesg.txt", "dmesg", "unverified", T_MONO, B_HOST, true, A_KERNEL, 2,
	  0 },
	{ "dmesg-multiline.txt",
	  "dmesg",
	  "unverified",
	  T_MONO,
	  B_HOST,
	  true,
	  { SWAP, END },
	  0,
	  0 },
	{ "dmesg-x.txt", "dmesg_x", "unverified", T_MONO, B_HOST, true,
	  A_KERNEL, 1, 0 },
	{ "dmesg-r.txt", "dmesg_raw", "unverified", T_MONO, B_HOST, true,
	  A_KERNEL, 1, 0 },
	{ "boot-a.kmsg", "kmsg", "kmsg", T_MONO, B_HOST, true, A_KERNEL, 1, 0 },
	{ "journal.json", "journal_json", "journal", T_WALL, B_RECORD, true,
	  AB_KERNEL, 1, 0 },
	{ "journal.export", "journal_export", "journal", T_WALL, B_RECORD, true,
	  AB_KERNEL, 1, 0 },
	{ "syslog-3164.log", "syslog_rfc3164", "unverified", T_WALL, B_HOST,
	  true, AB_KERNEL, 0, 10 },
	{ "kern.log.2.gz", "syslog_rfc3164", "unverified", T_WALL, B_HOST, true,
	  AB_KERNEL, 0, 10 },
	{ "syslog-3164-nostamp.log", "syslog_rfc3164", "unverified", T_WALL,
	  B_HOST, false, AB_KERNEL, 0, 0 },
	{ "syslog-iso.log", "syslog_rfc5424", "unverified", T_WALL, B_HOST,
	  true, AB_KERNEL, 0, 0 },
	{ "syslog-iso-nostamp.log", "syslog_rfc5424", "unverified", T_WALL,
	  B_HOST, false, AB_KERNEL, 0, 0 },
	{ "syslog-5424.log", "syslog_rfc5424", "unverified", T_WALL, B_HOST,
	  true, AB_KERNEL, 0, 0 },
};

static const char *str_at(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "(absent)";
}

static long long int_at(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* The corpus file copied into @dir with the reference mtime; its path. */
static char *copy_file(const char *dir, const char *name)
{
	char src[PATH_MAX], *text = NULL, *dst = test_path(dir, name);
	struct timeval tv[2] = { { MTIME, 0 }, { MTIME, 0 } };
	size_t len;
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s", data_dir, name);
	assert_int_equal(twl_read_file(src, 1 << 20, &text, &len), 0);
	f = fopen(dst, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(utimes(dst, tv), 0);
	free(text);
	return dst;
}

/* Where the agent puts a record with only a kernel stamp: this boot + the stamp. */
static int64_t boot_plus(uint64_t mono_us)
{
	return (twl_boot_time_ns() / 1000 + (int64_t)mono_us) / 1000000;
}

static void check_time(const struct log_case *c, const struct event *e,
		       json_t *w)
{
	long long got = int_at(w, "time");
	int64_t want;

	if (c->time == T_WALL) {
		want = (e->boot == 'a' ? BASE_A : BASE_B) +
		       (int64_t)(e->mono + 40) / 1000000;
		if (got != want)
			fail_msg("%s: %s at %llu us: time %lld, want %lld",
				 c->file, e->feature,
				 (unsigned long long)e->mono, got,
				 (long long)want);
		return;
	}
	/* Two reads of the boot time may differ by a rounding second. */
	want = boot_plus(c->time == T_MONO ? e->mono : 0);
	if (got < want - 1 || got > want + 1)
		fail_msg("%s: %s: time %lld, want this boot + stamp, %lld",
			 c->file, e->feature, got, (long long)want);
}

/* The boot and kernel a record of @e carries in this form. */
static void check_boot(const struct log_case *c, const struct event *e,
		       json_t *w, json_t *host)
{
	bool own = c->boot == B_RECORD ||
		   (c->boot == B_AFTER && e->boot == 'b');

	if (!own) {
		assert_string_equal(str_at(w, "boot_id"),
				    str_at(host, "boot_id"));
		assert_string_equal(str_at(w, "kernel"),
				    str_at(host, "kernel"));
		return;
	}
	assert_string_equal(str_at(w, "boot_id"), e->boot == 'a' ? A : B);
	assert_string_equal(str_at(w, "kernel"),
			    e->boot == 'a' ? "6.12.0-twl-a" : "6.12.1-twl-b");
}

static void check_warnings(const struct log_case *c, json_t *doc)
{
	json_t *ws = json_object_get(doc, "warnings"), *w;
	json_t *host = json_object_get(doc, "host");
	size_t i = 0;

	json_array_foreach(ws, i, w)
	{
		const struct event *e;

		if (c->warnings[i] == END)
			fail_msg("%s: extra warning %s \"%s\"", c->file,
				 str_at(w, "feature"), str_at(w, "text"));
		e = &events[c->warnings[i]];
		if (strcmp(str_at(w, "feature"), e->feature))
			fail_msg("%s: warning %zu is %s, want %s", c->file, i,
				 str_at(w, "feature"), e->feature);
		assert_string_equal(str_at(w, "origin"), c->origin);
		assert_string_equal(str_at(w, "source"), c->source);
		assert_int_equal(int_at(w, "mono_us"), c->mono ? e->mono : 0);
		check_time(c, e, w);
		check_boot(c, e, w, host);
	}
	if (c->warnings[i] != END)
		fail_msg("%s: %zu warnings, %s at %llu us missing", c->file, i,
			 events[c->warnings[i]].feature,
			 (unsigned long long)events[c->warnings[i]].mono);
}

static void run_case(const struct log_case *c)
{
	char *dir = test_mkdtemp(), *path = copy_file(dir, c->file);
	const char *args[] = { "--dry-run", "--kmsg-file", path, NULL };
	char want[PATH_MAX + 64];
	struct twl_verr verr;
	struct run r;
	json_t *doc, *u;
	size_t i;

	run_agent_bin(agent_bin, dir, args, &r);
	if (r.status != 0)
		fail_msg("%s: dry run exited %d: %s", c->file, r.status, r.err);
	doc = twl_report_parse(r.out, r.out_len, &verr);
	if (!doc)
		fail_msg("%s: invalid report: %s at %s: %s", c->file, verr.code,
			 verr.field, verr.reason);
	check_warnings(c, doc);
	u = json_object_get(doc, "unknown");
	if (json_array_size(u) != c->unknown)
		fail_msg("%s: %zu unknown texts, want %zu", c->file,
			 json_array_size(u), c->unknown);
	for (i = 0; i < json_array_size(u); i++)
		assert_string_equal(str_at(json_array_get(u, i), "origin"),
				    c->origin);
	assert_int_equal(int_at(json_object_get(doc, "health"),
				"parse_failures"),
			 c->fail_line ? 1 : 0);
	/* The summary names the line that could not be placed. */
	snprintf(want, sizeof(want), "dry run: %s line %lu: ", path,
		 c->fail_line);
	if (c->fail_line && !strstr(r.err, want))
		fail_msg("%s: the summary does not say \"%s\":\n%s", c->file,
			 want, r.err);
	if (!c->fail_line && strstr(r.err, " line "))
		fail_msg("%s: a failure where none is: %s", c->file, r.err);
	json_decref(doc);
	run_free(&r);
	free(path);
	test_rmtree(dir);
}

static void test_corpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* A file that is no kernel log at all: every line a failure, named; still exit 0. */
static void test_unplaceable(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "notes.json");
	const char *args[] = { "--dry-run", "--kmsg-file", path, NULL };
	char want[PATH_MAX + 64];
	struct run r;

	(void)state;
	test_write(dir, "notes.json",
		   "{\"MESSAGE\":\"a\"}\n{\"MESSAGE\":\"b\"}\nnot json\n");
	run_agent_bin(agent_bin, dir, args, &r);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "dry run: %s line 3: ", path);
	if (!strstr(r.err, want))
		fail_msg("no \"%s\" in:\n%s", want, r.err);
	run_free(&r);
	free(path);
	test_rmtree(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_unplaceable),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s AGENT_BINARY DATA_DIR\n", argv[0]);
		return 1;
	}
	agent_bin = argv[1];
	data_dir = argv[2];
	/* Yearless stamps are local time: the corpus was written in UTC. */
	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
