// SPDX-License-Identifier: GPL-2.0
/*
 * Text logs (agent/textlog.h): every form of the corpus in data/logs/ (the
 * same real warnings as dmesg, journalctl, syslog, journal JSON and export
 * files, see make-corpus there) is detected per file and read back with
 * the right texts, times, levels, boots and origin; lines that are not the
 * kernel's are not records; bad input (CRLF, NUL bytes, overlong lines,
 * junk, truncated and corrupt gzip) is reported by line and loses nothing
 * before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include <twilight/match.h>
#include <twilight/util.h>

#include "agent_test.h"
#include "textlog.h"

static const char *data_dir; /* tests/unit/agent/data/logs */

#define A "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define B "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
#define SOFT                                                                    \
	"soft_limit_in_bytes is deprecated and will be removed. Please report " \
	"your usecase to linux-mm@kvack.org if you depend on this functionality."
#define OOM                                                                  \
	"oom_control is deprecated and will be removed. Please report your " \
	"usecase to linux-mm-@kvack.org if you depend on this functionality. "
#define SWAP1                                                                   \
	"Per memcg swappiness does not exist in cgroup v2. See memory.reclaim " \
	"or memory.swap.max there"
#define REMOUNT \
	"option changes via remount are deprecated (pid=4242 comm=mount)"
#define MOVE                                                                     \
	"Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please " \
	"report your usecase to linux-mm@kvack.org if you depend on this "       \
	"functionality."
#define LINUX_A                                                              \
	"Linux version 6.12.0-twl-a (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP " \
	"PREEMPT_DYNAMIC"
#define LINUX_B                                                              \
	"Linux version 6.12.1-twl-b (gcc (Debian 12.2.0-14) 12.2.0) #2 SMP " \
	"PREEMPT_DYNAMIC"

/* Boot A started at 2026-12-04T04:59:58Z, B a day later; journald got each record 40 us late. */
#define BASE_A (1796360398LL * 1000000)
#define BASE_B (BASE_A + 86400LL * 1000000)

/* The events of the corpus (make-corpus RECORDS), as their forms show them. */
enum ev {
	E_LINUX_A,
	E_SOFT_A,
	E_SYSTEMD, /* user space in the kernel buffer: "systemd[1]: ..." */
	E_SPOOF, /* "<14>kernel: MOVE" written to /dev/kmsg, as journald shows it */
	E_SPOOF_RAW, /* the same as dmesg shows it */
	E_OOM,
	E_SWAP, /* the whole text: "...there\n " */
	E_SWAP1, /* its first line (syslog(2) splits it) */
	E_SWAP2, /* its second line: " " */
	E_REMOUNT,
	E_MOVE,
	E_BLOB,
	E_LINUX_B,
	E_SOFT_B,
	E_END = -1,
};

static const struct event {
	const char *boot;
	int64_t mono;
	int level, facility;
	const char *text;
} events[] = {
	[E_LINUX_A] = { A, 0, 5, 0, LINUX_A },
	[E_SOFT_A] = { A, 3018562, 4, 0, SOFT },
	[E_SYSTEMD] = { A, 3650000, 6, 3,
			"systemd[1]: Started Journal Service." },
	[E_SPOOF] = { A, 3700000, 6, 1, MOVE },
	[E_SPOOF_RAW] = { A, 3700000, 6, 1, "kernel: " MOVE },
	[E_OOM] = { A, 61500000, 4, 0, OOM },
	[E_SWAP] = { A, 62000000, 6, 0, SWAP1 "\n " },
	[E_SWAP1] = { A, 62000000, 6, 0, SWAP1 },
	[E_SWAP2] = { A, 62000000, 6, 0, " " },
	[E_REMOUNT] = { A, 70250000, 4, 0, REMOUNT },
	[E_MOVE] = { A, 75000000, 4, 0, MOVE },
	[E_BLOB] = { A, 80000000, 4, 0,
		     "usb 1-1: descriptor \xff\xfe is deprecated" },
	[E_LINUX_B] = { B, 0, 5, 0, LINUX_B },
	[E_SOFT_B] = { B, 5500000, 4, 0, SOFT },
};

/* What a form tells about each record. */
enum {
	F_MONO = 1 << 0, /* the kernel's stamp */
	F_LEVEL = 1 << 1,
	F_FACILITY = 1 << 2, /* facility known (0 for every record) */
	F_WALL_SEC = 1 << 3, /* receive time, whole seconds */
	F_WALL_US = 1 << 4, /* receive time, microseconds */
	F_YEAR = 1 << 5, /* the year was guessed */
	F_VERIFIED = 1 << 6,
	F_BOOT = 1 << 7, /* every record names its boot */
	F_BOOT_B = 1 << 8, /* only after journalctl's "-- Boot B --" line */
	F_HOST = 1 << 9, /* "web01" */
};

struct corpus_case {
	const char *file;
	enum twl_log_format fmt;
	const char *source;
	unsigned flags;
	int recs[16]; /* enum ev, ending with E_END */
	uint64_t other, user_kmsg, missed;
	unsigned long fail_line; /* the one failure's line, or 0 for none */
};

#define JCTL_RECS                                                       \
	{                                                               \
		E_LINUX_A, E_SOFT_A, E_SPOOF, E_OOM, E_SWAP, E_REMOUNT, \
			E_MOVE, E_LINUX_B, E_SOFT_B, E_END              \
	}

static const struct corpus_case cases[] = {
	/* journalctl -k first: the current boot only, no "-- Boot" line. */
	{ "jctl-k-short.txt",
	  TWL_LOG_JCTL_SHORT,
	  "journalctl_short",
	  F_WALL_SEC | F_YEAR | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_SPOOF, E_OOM, E_SWAP, E_REMOUNT, E_MOVE,
	    E_END },
	  1,
	  0,
	  0,
	  10 },
	{ "dmesg-t.txt",
	  TWL_LOG_DMESG_T,
	  "dmesg",
	  0,
	  { E_LINUX_A, E_SOFT_A, E_SYSTEMD, E_SPOOF_RAW, E_OOM, E_SWAP,
	    E_REMOUNT, E_MOVE, E_BLOB, E_END },
	  0,
	  0,
	  0,
	  0 },
	{ "dmesg-t-multiline.txt",
	  TWL_LOG_DMESG_T,
	  "dmesg",
	  0,
	  { E_SWAP, E_END },
	  0,
	  0,
	  0,
	  0 },
	{ "jctl-short.txt", TWL_LOG_JCTL_SHORT, "journalctl_short",
	  F_WALL_SEC | F_YEAR | F_HOST | F_BOOT_B, JCTL_RECS, 1, 0, 0, 10 },
	{ "jctl-iso.txt", TWL_LOG_JCTL_ISO, "journalctl_iso",
	  F_WALL_SEC | F_HOST | F_BOOT_B, JCTL_RECS, 1, 0, 0, 10 },
	{ "jctl-precise.txt", TWL_LOG_JCTL_PRECISE, "journalctl_precise",
	  F_WALL_US | F_YEAR | F_HOST | F_BOOT_B, JCTL_RECS, 1, 0, 0, 10 },
	{ "jctl-monotonic.txt", TWL_LOG_JCTL_MONOTONIC, "journalctl_monotonic",
	  F_MONO | F_HOST | F_BOOT_B, JCTL_RECS, 1, 0, 0, 10 },
	{ "dmesg.txt",
	  TWL_LOG_DMESG,
	  "dmesg",
	  F_MONO,
	  { E_LINUX_A, E_SOFT_A, E_SYSTEMD, E_SPOOF_RAW, E_OOM, E_SWAP1,
	    E_SWAP2, E_REMOUNT, E_MOVE, E_BLOB, E_END },
	  0,
	  0,
	  0,
	  0 },
	{ "dmesg-multiline.txt",
	  TWL_LOG_DMESG,
	  "dmesg",
	  F_MONO,
	  { E_SWAP, E_END },
	  0,
	  0,
	  0,
	  0 },
	{ "dmesg-x.txt",
	  TWL_LOG_DMESG_X,
	  "dmesg_x",
	  F_MONO | F_LEVEL | F_FACILITY,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_BLOB, E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "dmesg-r.txt",
	  TWL_LOG_DMESG_RAW,
	  "dmesg_raw",
	  F_MONO | F_LEVEL | F_FACILITY,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_BLOB, E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "boot-a.kmsg",
	  TWL_LOG_KMSG,
	  "kmsg",
	  F_MONO | F_LEVEL | F_FACILITY,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP, E_REMOUNT, E_MOVE, E_BLOB,
	    E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "journal.json",
	  TWL_LOG_JOURNAL_JSON,
	  "journal_json",
	  F_MONO | F_LEVEL | F_FACILITY | F_WALL_US | F_VERIFIED | F_BOOT |
		  F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP, E_REMOUNT, E_MOVE, E_BLOB,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  2,
	  3,
	  0 },
	{ "journal.export",
	  TWL_LOG_JOURNAL_EXPORT,
	  "journal_export",
	  F_MONO | F_LEVEL | F_FACILITY | F_WALL_US | F_VERIFIED | F_BOOT |
		  F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP, E_REMOUNT, E_MOVE, E_BLOB,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  2,
	  3,
	  0 },
	/* imklog: the kernel's stamp kept, multi-line records split; a JSON line inside. */
	{ "syslog-3164.log",
	  TWL_LOG_SYSLOG_RFC3164,
	  "syslog_rfc3164",
	  F_MONO | F_WALL_SEC | F_YEAR | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  10 },
	{ "kern.log.2.gz",
	  TWL_LOG_SYSLOG_RFC3164,
	  "syslog_rfc3164",
	  F_MONO | F_WALL_SEC | F_YEAR | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  10 },
	/* imjournal: no stamp, "#012" for the newline. */
	{ "syslog-3164-nostamp.log",
	  TWL_LOG_SYSLOG_RFC3164,
	  "syslog_rfc3164",
	  F_WALL_SEC | F_YEAR | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP, E_REMOUNT, E_MOVE, E_LINUX_B,
	    E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "syslog-iso.log",
	  TWL_LOG_SYSLOG_RFC5424,
	  "syslog_rfc5424",
	  F_MONO | F_WALL_US | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "syslog-iso-nostamp.log",
	  TWL_LOG_SYSLOG_RFC5424,
	  "syslog_rfc5424",
	  F_WALL_US | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP, E_REMOUNT, E_MOVE, E_LINUX_B,
	    E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  0 },
	{ "syslog-5424.log",
	  TWL_LOG_SYSLOG_RFC5424,
	  "syslog_rfc5424",
	  F_MONO | F_LEVEL | F_FACILITY | F_WALL_US | F_HOST,
	  { E_LINUX_A, E_SOFT_A, E_OOM, E_SWAP1, E_SWAP2, E_REMOUNT, E_MOVE,
	    E_LINUX_B, E_SOFT_B, E_END },
	  2,
	  0,
	  0,
	  0 },
};

/* Failures seen through on_failure. */
struct fails {
	unsigned n;
	unsigned long line[8];
	int err[8];
	char why[8][128];
	char path[PATH_MAX];
};

static void on_failure(void *ctx, const char *path, unsigned long line, int err,
		       const char *why)
{
	struct fails *f = ctx;

	if (f->n < 8) {
		f->line[f->n] = line;
		f->err[f->n] = err;
		snprintf(f->why[f->n], sizeof(f->why[0]), "%s", why);
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->n++;
}

static char *corpus_path(const char *name)
{
	char *p = malloc(PATH_MAX);

	assert_non_null(p);
	snprintf(p, PATH_MAX, "%s/%s", data_dir, name);
	return p;
}

static int64_t receive_time(const struct event *e)
{
	return (e->boot[0] == 'a' ? BASE_A : BASE_B) + e->mono + 40;
}

static void check_record(const struct corpus_case *c, const struct event *e,
			 const struct twl_log_record *r)
{
	unsigned f = c->flags;

	if (r->k.text_len != strlen(e->text) || strcmp(r->k.text, e->text))
		fail_msg("%s line %lu: text \"%s\", want \"%s\"", c->file,
			 r->line, r->k.text, e->text);
	assert_int_equal(r->format, c->fmt);
	assert_string_equal(twl_log_format_source(r->format), c->source);
	assert_int_equal(r->has_mono, !!(f & F_MONO));
	if (f & F_MONO)
		assert_int_equal(r->k.mono_us, e->mono);
	assert_int_equal(r->has_level, !!(f & F_LEVEL));
	if (f & F_LEVEL)
		assert_int_equal(r->k.level, e->level);
	assert_int_equal(r->k.facility, f & F_FACILITY ? 0 : -1);
	assert_int_equal(r->facility_verified, !!(f & F_VERIFIED));
	assert_int_equal(r->verified, !!(f & F_VERIFIED));
	assert_string_equal(twl_log_origin(r),
			    f & F_VERIFIED ? "journal" : "unverified");
	assert_int_equal(r->has_wall, !!(f & (F_WALL_SEC | F_WALL_US)));
	if (f & F_WALL_US)
		assert_int_equal(r->wall_us, receive_time(e));
	if (f & F_WALL_SEC)
		assert_int_equal(r->wall_us,
				 receive_time(e) / 1000000 * 1000000);
	assert_int_equal(r->year_guessed, !!(f & F_YEAR));
	if (f & F_BOOT || (f & F_BOOT_B && e->boot[0] == 'b'))
		assert_string_equal(r->boot_id, e->boot);
	else
		assert_string_equal(r->boot_id, "");
	assert_string_equal(r->host, f & F_HOST ? "web01" : "");
	assert_true(r->line > 0);
}

static void run_case(const struct corpus_case *c)
{
	struct fails fl = { 0 };
	struct twl_log_reader_opts o = { .on_failure = on_failure, .ctx = &fl };
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_log_stats st;
	char *path = corpus_path(c->file);
	struct twl_log_reader *rd;
	size_t i = 0;
	int ret;

	/* Yearless stamps are placed before the reference: early 2027. */
	o.ref = (time_t)1799000000;
	rd = twl_log_reader_open(path, &o);
	assert_non_null(r);
	if (!rd)
		fail_msg("%s: %s", path, strerror(errno));
	if (twl_log_reader_format(rd) != c->fmt)
		fail_msg("%s: detected %s, want %s", c->file,
			 twl_log_format_name(twl_log_reader_format(rd)),
			 twl_log_format_name(c->fmt));
	while ((ret = twl_log_reader_next(rd, r)) == 1) {
		if (c->recs[i] == E_END)
			fail_msg("%s: extra record \"%s\" at line %lu", c->file,
				 r->k.text, r->line);
		check_record(c, &events[c->recs[i]], r);
		i++;
	}
	assert_int_equal(ret, -ENODATA);
	assert_int_equal(twl_log_reader_next(rd, r), -ENODATA);
	if (c->recs[i] != E_END)
		fail_msg("%s: %zu records, missing \"%s\"", c->file, i,
			 events[c->recs[i]].text);
	twl_log_reader_stats(rd, &st);
	assert_int_equal(st.records, i);
	assert_int_equal(st.other, c->other);
	assert_int_equal(st.user_kmsg, c->user_kmsg);
	assert_int_equal(st.missed, c->missed);
	assert_int_equal(st.failures, c->fail_line ? 1 : 0);
	assert_int_equal(fl.n, st.failures);
	if (c->fail_line) {
		assert_int_equal(fl.line[0], c->fail_line);
		assert_string_equal(fl.path, path);
	}
	twl_log_reader_free(rd);
	free(path);
	free(r);
}

static void test_corpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* The corpus warnings are the catalog's: a form that mangles a text fails here. */
static void test_corpus_matches_catalog(void **state)
{
	static const int warned[] = { E_SOFT_A,	 E_OOM,	 E_SWAP,  E_SWAP1,
				      E_REMOUNT, E_MOVE, E_SOFT_B };

	(void)state;
	for (size_t i = 0; i < sizeof(warned) / sizeof(warned[0]); i++) {
		const char *t = events[warned[i]].text;

		if (twl_match_text(t, strlen(t), NULL) != 1)
			fail_msg("not a catalog text: \"%s\"", t);
	}
}

/* ---- Bad input ---- */

/* Read @path to the end: records' texts into @texts (up to @max), the last return in *@ret. */
static size_t read_all(const char *path, const struct twl_log_reader_opts *o,
		       char (*texts)[TWL_KMSG_TEXT_MAX + 1], size_t max,
		       struct twl_log_stats *st, int *ret)
{
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_log_reader *rd = twl_log_reader_open(path, o);
	size_t n = 0;

	assert_non_null(r);
	if (!rd)
		fail_msg("%s: %s", path, strerror(errno));
	while ((*ret = twl_log_reader_next(rd, r)) == 1) {
		if (n < max)
			memcpy(texts[n], r->k.text, r->k.text_len + 1);
		n++;
	}
	twl_log_reader_stats(rd, st);
	twl_log_reader_free(rd);
	free(r);
	return n;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static char texts[32][TWL_KMSG_TEXT_MAX + 1];

static void test_bad_lines(void **state)
{
	struct fails fl = { 0 };
	struct twl_log_reader_opts o = { .on_failure = on_failure, .ctx = &fl };
	char *dir = test_mkdtemp(), *path = test_path(dir, "bad.dmesg");
	size_t big = 100 * 1024, n = 0;
	char *buf = malloc(big + 4096);
	struct twl_log_stats st;
	int ret;

	(void)state;
	assert_non_null(buf);
	n += (size_t)sprintf(buf + n, "[    3.018562] %s\r\n", SOFT);
	memcpy(buf + n, "[    4.000000] bad\0byte\r\n", 25);
	n += 25;
	memset(buf + n, 'x', big); /* line 3: longer than 64 KiB */
	n += big;
	buf[n++] = '\n';
	n += (size_t)sprintf(buf + n, "\x01\x02\xff junk\n");
	n += (size_t)sprintf(buf + n, "[   61.500000] %s\r\n", OOM);
	n += (size_t)sprintf(buf + n, "[   70.250000] %s", REMOUNT);
	write_bytes(path, buf, n);

	assert_int_equal(read_all(path, &o, texts, 32, &st, &ret), 3);
	assert_int_equal(ret, -ENODATA);
	assert_string_equal(texts[0], SOFT); /* CR removed */
	assert_string_equal(texts[1], OOM);
	assert_string_equal(texts[2], REMOUNT); /* no final newline */
	assert_int_equal(st.failures, 3);
	assert_int_equal(st.lines, 6);
	assert_int_equal(fl.n, 3);
	assert_int_equal(fl.line[0], 2);
	assert_string_equal(fl.why[0], "control byte in a dmesg line");
	assert_int_equal(fl.line[1], 3);
	assert_int_equal(fl.err[1], -E2BIG);
	assert_int_equal(fl.line[2], 4);
	free(buf);
	free(path);
	test_rmtree(dir);
}

/* Bytes zlib can inflate from @gz[0..@n) before it fails (independent of the reader). */
static size_t inflatable(const unsigned char *gz, size_t n, char *out,
			 size_t cap)
{
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)n;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	return cap - zs.avail_out;
}

/*
 * syslog-3164.log cut or damaged as gzip @gz[0..@n): the reader returns
 * every record in the text zlib can inflate (lines 3, 4 and 10 are not
 * records), then -EIO with the line where the text broke.
 */
static void check_broken_gzip(const char *dir, const unsigned char *gz,
			      size_t n, const char *plain, size_t plain_len,
			      char (*full)[TWL_KMSG_TEXT_MAX + 1])
{
	struct fails fl = { 0 };
	struct twl_log_reader_opts o = { .on_failure = on_failure, .ctx = &fl };
	char *path = test_path(dir, "kern.log.9.gz");
	char *out = malloc(plain_len + 1);
	size_t avail, lines = 0, i, got, want = 0;
	struct twl_log_stats st;
	unsigned long eline;
	int ret;

	assert_non_null(out);
	write_bytes(path, gz, n);
	avail = inflatable(gz, n, out, plain_len);
	assert_memory_equal(out, plain, avail);
	for (i = 0; i < avail; i++)
		lines += plain[i] == '\n';
	/* Kernel records among the whole lines (lines 3, 4 and 10 are not). */
	for (i = 1; i <= lines; i++)
		want += i != 3 && i != 4 && i != 10;
	got = read_all(path, &o, texts, 32, &st, &ret);
	if (got != want)
		fail_msg("%zu compressed bytes: %zu records, want %zu", n, got,
			 want);
	for (i = 0; i < got; i++)
		assert_string_equal(texts[i], full[i]);
	assert_int_equal(ret, -EIO);
	{
		struct twl_log_reader *rd = twl_log_reader_open(path, &o);
		struct twl_log_record *r = malloc(sizeof(*r));

		while (twl_log_reader_next(rd, r) == 1)
			;
		assert_true(strlen(twl_log_reader_error(rd, &eline)) > 0);
		assert_int_equal(eline, lines + 1);
		free(r);
		twl_log_reader_free(rd);
	}
	free(out);
	free(path);
}

static char full[32][TWL_KMSG_TEXT_MAX + 1];

static void test_broken_gzip(void **state)
{
	char *dir = test_mkdtemp(), *src = corpus_path("syslog-3164.log");
	char *plain = NULL, *gz_path = test_path(dir, "whole.gz");
	size_t plain_len, nfull, cap, k;
	struct twl_log_stats st;
	unsigned char *gz;
	uLongf gz_len;
	gzFile g;
	int ret;

	(void)state;
	assert_int_equal(twl_read_file(src, 1 << 20, &plain, &plain_len), 0);
	nfull = read_all(src, NULL, full, 32, &st, &ret);
	assert_int_equal(nfull, 9);
	/* A real gzip file of it, a few hundred bytes. */
	g = gzopen(gz_path, "wb9");
	assert_non_null(g);
	assert_int_equal(gzwrite(g, plain, (unsigned)plain_len),
			 (int)plain_len);
	assert_int_equal(gzclose(g), Z_OK);
	gz = NULL;
	assert_int_equal(twl_read_file(gz_path, 1 << 20, (char **)&gz, &k), 0);
	gz_len = k;
	cap = (size_t)gz_len;
	/* Cut anywhere: every record before the cut, then -EIO. */
	for (k = 20; k < cap - 8; k += cap / 9)
		check_broken_gzip(dir, gz, k, plain, plain_len, full);
	/* A wrong CRC at the end: everything was good text, then -EIO. */
	gz[cap - 6] ^= 0xff;
	check_broken_gzip(dir, gz, cap, plain, plain_len, full);
	free(gz);
	free(plain);
	free(gz_path);
	free(src);
	test_rmtree(dir);
}

/* Two gzip members in one file (cat a.gz b.gz) read as one text. */
static void test_gzip_members(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "two.gz");
	char line[512];
	struct twl_log_stats st;
	gzFile g;
	int ret, i;

	(void)state;
	for (i = 0; i < 2; i++) {
		g = gzopen(path, i ? "ab" : "wb");
		assert_non_null(g);
		snprintf(line, sizeof(line),
			 "Dec  %d 05:00:01 web01 kernel: [    3.018562] %s\n",
			 4 + i, i ? OOM : SOFT);
		assert_true(gzputs(g, line) > 0);
		assert_int_equal(gzclose(g), Z_OK);
	}
	assert_int_equal(read_all(path, NULL, texts, 32, &st, &ret), 2);
	assert_int_equal(ret, -ENODATA);
	assert_string_equal(texts[0], SOFT);
	assert_string_equal(texts[1], OOM);
	free(path);
	test_rmtree(dir);
}

/* Export files: binary fields, NUL in MESSAGE, oversize and cut fields, no final blank line. */
static void test_export_edges(void **state)
{
	struct fails fl = { 0 };
	struct twl_log_reader_opts o = { .on_failure = on_failure, .ctx = &fl };
	char *dir = test_mkdtemp(), *path = test_path(dir, "edge.export");
	static const char head[] = "__REALTIME_TIMESTAMP=1796360401018602\n"
				   "_TRANSPORT=kernel\nSYSLOG_FACILITY=0\n";
	size_t n = 0, big = 200 * 1024;
	char *buf = malloc(big + 8192);
	struct twl_log_stats st;
	uint64_t len;
	int ret;

	(void)state;
	assert_non_null(buf);
	/* 1: binary MESSAGE with a NUL byte: a failure at its entry's line 1. */
	n += (size_t)sprintf(buf + n, "%s", head);
	len = 5;
	n += (size_t)sprintf(buf + n, "MESSAGE\n");
	memcpy(buf + n, &len, 8), n += 8;
	memcpy(buf + n, "a\0b\nc\n\n", 7), n += 7;
	/* 2: a 200 KiB binary MESSAGE: too long, skipped whole. */
	n += (size_t)sprintf(buf + n, "%s", head);
	len = big;
	n += (size_t)sprintf(buf + n, "MESSAGE\n");
	memcpy(buf + n, &len, 8), n += 8;
	memset(buf + n, '\n', big), n += big;
	n += (size_t)sprintf(buf + n, "\n\n");
	/* 3: a good record at the end without the blank line. */
	n += (size_t)sprintf(buf + n, "%sMESSAGE=%s\n", head, SOFT);
	write_bytes(path, buf, n);
	assert_int_equal(read_all(path, &o, texts, 32, &st, &ret), 1);
	assert_int_equal(ret, -ENODATA);
	assert_string_equal(texts[0], SOFT);
	assert_int_equal(st.failures, 2);
	assert_int_equal(fl.line[0], 1);
	assert_string_equal(fl.why[0], "NUL byte in MESSAGE");
	assert_int_equal(fl.line[1],
			 8); /* the NUL entry's data held a newline */
	assert_int_equal(fl.err[1], -E2BIG);

	/* A binary field cut by the end of the file: what came before, then -EBADMSG. */
	n = (size_t)sprintf(buf, "%sMESSAGE=%s\n\n%sMESSAGE\n", head, OOM,
			    head);
	len = 100;
	memcpy(buf + n, &len, 8), n += 8;
	memcpy(buf + n, "short", 5), n += 5;
	write_bytes(path, buf, n);
	assert_int_equal(read_all(path, NULL, texts, 32, &st, &ret), 1);
	assert_string_equal(texts[0], OOM);
	assert_int_equal(ret, -EBADMSG);
	free(buf);
	free(path);
	test_rmtree(dir);
}

/* JSON lines: null (omitted) MESSAGE, several values, not an object. */
static void test_json_edges(void **state)
{
	struct fails fl = { 0 };
	struct twl_log_reader_opts o = { .on_failure = on_failure,
					 .ctx = &fl,
					 .format = TWL_LOG_JOURNAL_JSON };
	char *dir = test_mkdtemp(), *path = test_path(dir, "edge.json");
	struct twl_log_stats st;
	int ret;

	(void)state;
	test_write(
		dir, "edge.json",
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"MESSAGE\":null}\n"
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"MESSAGE\":[\"" SOFT
		"\",\"second\"],\"PRIORITY\":\"4\"}\n"
		"[\"not an object\"]\n"
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"MESSAGE\":[79,79,77]}\n"
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"MESSAGE\":[0]}\n"
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"x\",\"MESSAGE\":\"m\"}\n");
	assert_int_equal(read_all(path, &o, texts, 32, &st, &ret), 2);
	assert_string_equal(texts[0], SOFT);
	assert_string_equal(texts[1], "OOM");
	assert_int_equal(st.failures, 3);
	assert_int_equal(fl.line[0], 1);
	assert_true(strstr(fl.why[0], "omitted") != NULL);
	assert_int_equal(fl.line[1], 3);
	assert_int_equal(fl.line[2], 5);
	/* A malformed facility is never the kernel's. */
	assert_int_equal(st.user_kmsg, 1);
	free(path);
	test_rmtree(dir);
}

static int parse1(enum twl_log_format f, const char *line, time_t ref,
		  struct twl_log_record *r, struct twl_log_parse *res)
{
	struct twl_log_ctx ctx = { .ref = ref };

	return twl_log_parse_line(f, line, strlen(line), &ctx, r, res);
}

/* 2027-01-02T00:00:00Z and 2027-03-01T00:00:00Z. */
#define JAN2_2027 ((time_t)1798848000)
#define MAR1_2027 ((time_t)1803945600)

static void test_year(void **state)
{
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_log_parse res;

	(void)state;
	assert_non_null(r);
	/* New Year inside the file: December is last year's. */
	assert_int_equal(parse1(TWL_LOG_SYSLOG_RFC3164,
				"Dec 31 23:59:59 h kernel: x", JAN2_2027, r,
				&res),
			 0);
	assert_int_equal(r->wall_us, (JAN2_2027 - 86400 - 1) * 1000000LL);
	assert_true(r->year_guessed);
	assert_int_equal(parse1(TWL_LOG_SYSLOG_RFC3164,
				"Jan  1 00:00:01 h kernel: x", JAN2_2027, r,
				&res),
			 0);
	assert_int_equal(r->wall_us, (JAN2_2027 - 86400 + 1) * 1000000LL);
	/* Within a day after the reference still counts as this year (skew). */
	assert_int_equal(parse1(TWL_LOG_SYSLOG_RFC3164,
				"Jan  2 12:00:00 h kernel: x", JAN2_2027, r,
				&res),
			 0);
	assert_int_equal(r->wall_us, (JAN2_2027 + 43200) * 1000000LL);
	/* Feb 29 goes back to the last leap year, 2024-02-29T12:00:00Z. */
	assert_int_equal(parse1(TWL_LOG_JCTL_SHORT,
				"Feb 29 12:00:00 h kernel: x", MAR1_2027, r,
				&res),
			 0);
	assert_int_equal(r->wall_us, 1709208000LL * 1000000);
	/* Local time: the same line five hours later in UTC under EST. */
	setenv("TZ", "EST5", 1);
	tzset();
	assert_int_equal(parse1(TWL_LOG_JCTL_SHORT,
				"Dec 31 19:00:00 h kernel: x", JAN2_2027, r,
				&res),
			 0);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(r->wall_us, (JAN2_2027 - 86400) * 1000000LL);
	/* ISO times carry their offset. */
	assert_int_equal(parse1(TWL_LOG_JCTL_ISO,
				"2027-01-01T01:00:00+0100 h kernel: x", 0, r,
				&res),
			 0);
	assert_int_equal(r->wall_us, (JAN2_2027 - 86400) * 1000000LL);
	assert_false(r->year_guessed);
	free(r);
}

/* Which lines are the kernel's, line by line. */
static void test_kernel_lines(void **state)
{
	static const struct {
		enum twl_log_format f;
		const char *line;
		enum twl_log_kind kind;
		const char *text, *host;
	} t[] = {
		{ TWL_LOG_JCTL_SHORT, "Dec 04 05:00:01 kernel: " SOFT,
		  TWL_LINE_RECORD, SOFT, "" }, /* --no-hostname */
		{ TWL_LOG_JCTL_SHORT,
		  "Dec 04 05:00:01 web01 kernel[123]: " SOFT, TWL_LINE_OTHER,
		  NULL, NULL },
		{ TWL_LOG_SYSLOG_RFC3164,
		  "Dec  4 05:00:01 web01 containerd[1234]: kernel: " SOFT,
		  TWL_LINE_OTHER, NULL, NULL },
		{ TWL_LOG_SYSLOG_RFC3164, "Dec  4 05:00:01 web01 no tag here",
		  TWL_LINE_OTHER, NULL, NULL },
		{ TWL_LOG_SYSLOG_RFC3164,
		  "<13>Dec  4 05:00:01 web01 kernel: " SOFT, TWL_LINE_OTHER,
		  NULL, NULL }, /* facility user */
		{ TWL_LOG_SYSLOG_RFC3164,
		  "<4>Dec  4 05:00:01 web01 kernel: " SOFT, TWL_LINE_RECORD,
		  SOFT, "web01" },
		{ TWL_LOG_SYSLOG_RFC3164,
		  "Dec  4 05:00:01 web01 kernel: [    3.018562][  T812] " SOFT,
		  TWL_LINE_RECORD, SOFT, "web01" },
		{ TWL_LOG_SYSLOG_RFC5424,
		  "<4>1 2026-12-04T05:00:01Z web01 kernel - - "
		  "[meta x=\"a\\]b\" y=\"2\"][more] \xef\xbb\xbf" SOFT,
		  TWL_LINE_RECORD, SOFT, "web01" },
		{ TWL_LOG_SYSLOG_RFC5424,
		  "<4>1 2026-12-04T05:00:01Z - kernel 77 - - " SOFT,
		  TWL_LINE_OTHER, NULL, NULL },
		{ TWL_LOG_SYSLOG_RFC5424,
		  "2026-12-04T05:00:01.5Z web01 kernel: x#011y#134z#0123",
		  TWL_LINE_RECORD, "x\ty#134z\n3", "web01" },
		{ TWL_LOG_JCTL_MONOTONIC, "[    3.018562] web01 kernel: " SOFT,
		  TWL_LINE_RECORD, SOFT, "web01" },
		{ TWL_LOG_JCTL_SHORT,
		  "-- Boot 0123456789abcdef0123456789abcdef --", TWL_LINE_META,
		  NULL, NULL },
		{ TWL_LOG_DMESG_X, "kern  :warn  : " SOFT, TWL_LINE_RECORD,
		  SOFT, "" }, /* dmesg -x -t */
		{ TWL_LOG_DMESG_X, "authpriv:notice: [    1.000000] x",
		  TWL_LINE_OTHER, NULL, NULL },
		{ TWL_LOG_DMESG_RAW, "<14>[    3.700000] kernel: " MOVE,
		  TWL_LINE_OTHER, NULL, NULL },
	};
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_log_parse res;
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int ret = parse1(t[i].f, t[i].line, JAN2_2027, r, &res);

		if (ret || res.kind != t[i].kind)
			fail_msg("line %zu: ret %d kind %d (%s)", i, ret,
				 res.kind, res.why ? res.why : "");
		if (t[i].kind != TWL_LINE_RECORD)
			continue;
		assert_string_equal(r->k.text, t[i].text);
		assert_string_equal(r->host, t[i].host);
	}
	assert_int_equal(parse1(TWL_LOG_JCTL_SHORT,
				"-- Boot 0123456789abcdef0123456789abcdef --",
				0, r, &res),
			 0);
	assert_string_equal(r->boot_id, "0123456789abcdef0123456789abcdef");
	free(r);
}

/* Lines that are not of the file's form are failures, never records. */
static void test_unplaceable_lines(void **state)
{
	static const struct {
		enum twl_log_format f;
		const char *line;
	} t[] = {
		{ TWL_LOG_SYSLOG_RFC3164,
		  "{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"MESSAGE\":\"x\"}" },
		{ TWL_LOG_SYSLOG_RFC3164,
		  "Dec 04 05:00:01.123 web01 kernel: x" },
		{ TWL_LOG_SYSLOG_RFC3164, "Dec 32 05:00:01 web01 kernel: x" },
		{ TWL_LOG_JCTL_SHORT, "Dec  4 05:00:01 web01 kernel: x" },
		{ TWL_LOG_JCTL_SHORT,
		  "Dec 04 05:00:01 web01 kernel: [36B blob data]" },
		{ TWL_LOG_SYSLOG_RFC5424,
		  "2026-12-04T05:00:01+0000 web01 kernel: x" },
		{ TWL_LOG_SYSLOG_RFC5424,
		  "<4>1 2026-12-04T05:00:01Z web01 kernel - - [x" },
		{ TWL_LOG_JCTL_ISO,
		  "2026-02-30T05:00:01+0000 web01 kernel: x" },
		{ TWL_LOG_DMESG, "kernel: x" },
		{ TWL_LOG_DMESG_RAW, "<4>no stamp" },
		{ TWL_LOG_DMESG, "[    1.000000] \\x00" },
		{ TWL_LOG_KMSG, "not,a;record" },
		{ TWL_LOG_JOURNAL_JSON, "{\"MESSAGE\":" },
	};
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_log_parse res;
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (parse1(t[i].f, t[i].line, JAN2_2027, r, &res) >= 0)
			fail_msg("line %zu placed as kind %d: %s", i, res.kind,
				 t[i].line);
		assert_non_null(res.why);
	}
	free(r);
}

/* Detection: free text is dmesg -t; an empty file is nothing. */
static void test_detect_fallback(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "free.txt");
	struct twl_log_reader *rd;
	struct twl_log_stats st;
	int ret;

	(void)state;
	test_write(dir, "free.txt",
		   "usb 1-1: new high-speed USB device number 2\n"
		   "[drm] Initialized\n" SOFT "\n");
	assert_int_equal(read_all(path, NULL, texts, 32, &st, &ret), 3);
	assert_string_equal(texts[1], "[drm] Initialized");
	rd = twl_log_reader_open(path, NULL);
	assert_int_equal(twl_log_reader_format(rd), TWL_LOG_DMESG_T);
	twl_log_reader_free(rd);
	test_write(dir, "free.txt", "\n\n");
	rd = twl_log_reader_open(path, NULL);
	assert_int_equal(twl_log_reader_format(rd), TWL_LOG_NONE);
	twl_log_reader_free(rd);
	assert_int_equal(read_all(path, NULL, texts, 32, &st, &ret), 0);
	assert_int_equal(ret, -ENODATA);
	assert_null(twl_log_reader_open(dir, NULL));
	assert_int_equal(errno, EISDIR);
	free(path);
	test_rmtree(dir);
}

/* Forms that read alike: the evidence in the lines decides. */
static void test_detect_ties(void **state)
{
	static const struct {
		const char *text;
		enum twl_log_format f;
	} t[] = {
		/* Day >= 10: both forms read it; the kernel's stamp is imklog's. */
		{ "Dec 14 05:00:01 web01 kernel: [    3.018562] " SOFT "\n",
		  TWL_LOG_SYSLOG_RFC3164 },
		{ "Dec 14 05:00:01 web01 kernel: " SOFT "\n"
		  "-- Boot b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2 --\n"
		  "Dec 15 05:00:01 web01 kernel: " SOFT "\n",
		  TWL_LOG_JCTL_SHORT },
		/* No evidence: the syslog file, the commoner one on disk. */
		{ "Dec 14 05:00:01 web01 kernel: " SOFT "\n",
		  TWL_LOG_SYSLOG_RFC3164 },
		{ "Dec 04 05:00:01 web01 kernel: " SOFT "\n",
		  TWL_LOG_JCTL_SHORT },
		/* journalctl from v255 prints "+00:00" too. */
		{ "2026-12-04T05:00:01+00:00 web01 kernel: " SOFT "\n"
		  "-- Boot b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2 --\n",
		  TWL_LOG_JCTL_ISO },
		{ "2026-12-04T05:00:01+00:00 web01 kernel: " SOFT "\n",
		  TWL_LOG_SYSLOG_RFC5424 },
		{ "[    3.018562] web01 kernel: " SOFT "\n"
		  "[    3.500000] web01 systemd[1]: Started.\n",
		  TWL_LOG_JCTL_MONOTONIC },
		{ "[    3.018562] usb 1-1: new device\n"
		  "[    3.500000] systemd[1]: Started.\n",
		  TWL_LOG_DMESG },
	};
	char *dir = test_mkdtemp(), *path = test_path(dir, "tie.log");

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct twl_log_reader *rd;

		test_write(dir, "tie.log", t[i].text);
		rd = twl_log_reader_open(path, NULL);
		assert_non_null(rd);
		if (twl_log_reader_format(rd) != t[i].f)
			fail_msg("case %zu: %s, want %s", i,
				 twl_log_format_name(twl_log_reader_format(rd)),
				 twl_log_format_name(t[i].f));
		twl_log_reader_free(rd);
	}
	free(path);
	test_rmtree(dir);
}

/* The benchmark hook counts what the reader returns. */
static void test_count_file(void **state)
{
	char *path = corpus_path("jctl-short.txt");
	enum twl_log_format f;
	struct twl_log_stats st;

	(void)state;
	assert_int_equal(twl_log_count_file(path, TWL_LOG_NONE, &st, &f), 0);
	assert_int_equal(f, TWL_LOG_JCTL_SHORT);
	assert_int_equal(st.records, 9);
	assert_int_equal(st.failures, 1);
	assert_int_equal(st.other, 1);
	assert_int_equal(st.lines, 13);
	free(path);
	assert_int_equal(twl_log_count_file("/nonexistent/x", TWL_LOG_NONE, &st,
					    NULL),
			 -ENOENT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_corpus_matches_catalog),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_broken_gzip),
		cmocka_unit_test(test_gzip_members),
		cmocka_unit_test(test_export_edges),
		cmocka_unit_test(test_json_edges),
		cmocka_unit_test(test_year),
		cmocka_unit_test(test_kernel_lines),
		cmocka_unit_test(test_unplaceable_lines),
		cmocka_unit_test(test_detect_fallback),
		cmocka_unit_test(test_detect_ties),
		cmocka_unit_test(test_count_file),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
		return 2;
	}
	data_dir = argv[1];
	/* journalctl and syslog stamps without a zone are local time: UTC here. */
	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
