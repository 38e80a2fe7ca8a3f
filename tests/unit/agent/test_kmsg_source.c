// SPDX-License-Identifier: GPL-2.0
/*
 * kmsg source: sequence tracking, EPIPE (records overwritten) through a
 * scripted reader, saved logs read through textlog (dumps, dmesg, journal
 * JSON with its boots, gzip, a corrupt gzip), failures kept with their
 * line numbers, FIFOs with split writes, over-long lines, resume points
 * and the records skipped before them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "agent_test.h"
#include "kmsg_source.h"

static struct twl_log_record rec;

static void test_seq_track(void **state)
{
	struct twl_seq_track t;

	twl_seq_track_init(&t);
	assert_true(twl_seq_track_accept(&t, 1));
	assert_true(twl_seq_track_accept(&t, 2));
	assert_true(twl_seq_track_accept(&t, 3));
	assert_int_equal(t.lost, 0);
	assert_true(twl_seq_track_accept(&t, 5));
	assert_int_equal(t.lost, 1);

	/* Resume after 10: old records skipped, a gap after 10 is lost. */
	twl_seq_track_init(&t);
	twl_seq_track_resume(&t, 10);
	assert_false(twl_seq_track_accept(&t, 5));
	assert_false(twl_seq_track_accept(&t, 10));
	assert_true(twl_seq_track_accept(&t, 11));
	assert_true(twl_seq_track_accept(&t, 14));
	assert_int_equal(t.lost, 2);

	/* Records 11..14 were overwritten while the agent was down. */
	twl_seq_track_init(&t);
	twl_seq_track_resume(&t, 10);
	assert_true(twl_seq_track_accept(&t, 15));
	assert_int_equal(t.lost, 4);

	/* First run on a boot: nothing before the first record counts as lost. */
	twl_seq_track_init(&t);
	assert_true(twl_seq_track_accept(&t, 500));
	assert_int_equal(t.lost, 0);
}

/* A scripted reader: each step is a record to return or an error. */
struct step {
	const char *data;
	ssize_t err; /* used when data is NULL: 0 = EOF, or -errno */
};

struct script {
	const struct step *steps;
	size_t n, i;
};

static ssize_t script_read(void *ctx, char *buf, size_t cap)
{
	struct script *s = ctx;
	const struct step *st;
	size_t len;

	if (s->i >= s->n)
		return 0;
	st = &s->steps[s->i++];
	if (!st->data)
		return st->err;
	len = strlen(st->data);
	/* /dev/kmsg fails a read into a buffer smaller than the record. */
	if (len > cap)
		return -EINVAL;
	memcpy(buf, st->data, len);
	return (ssize_t)len;
}

static const struct twl_kmsg_source_ops script_ops = { .read = script_read };

static void test_epipe_counts_lost(void **state)
{
	static const struct step steps[] = {
		{ "6,1,100,-;first\n", 0 },
		{ "6,2,200,-;second\n", 0 },
		{ NULL, -EPIPE }, /* kernel overwrote 3..6 */
		{ "6,7,700,-;seventh\n SUBSYSTEM=mem\n", 0 },
		{ NULL, -EAGAIN },
		{ "6,8,800,-;eighth\n", 0 },
		{ "garbage\n", 0 },
		{ NULL, 0 },
	};
	struct script sc = { steps, sizeof(steps) / sizeof(steps[0]), 0 };
	struct twl_kmsg_source *s =
		twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	struct twl_kmsg_source_stats st;

	assert_non_null(s);
	assert_int_equal(twl_kmsg_source_fd(s), -1);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.k.seq, 1);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.k.seq, 2);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.k.seq, 7);
	assert_string_equal(rec.k.text, "seventh");
	twl_kmsg_source_stats(s, &st);
	assert_int_equal(st.lost, 4);
	assert_int_equal(st.epipe, 1);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 0); /* EAGAIN: poll */
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.k.seq, 8);
	assert_int_equal(twl_kmsg_source_next(s, &rec), -ENODATA);
	twl_kmsg_source_stats(s, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.parse_failures, 1);
	assert_int_equal(st.lost, 4);
	assert_true(st.have_last_seq);
	assert_int_equal(st.last_seq, 8);
	twl_kmsg_source_free(s);
}

static void test_epipe_after_resume(void **state)
{
	/* Saved position 20; the kernel already dropped 21..29. */
	static const struct step steps[] = {
		{ NULL, -EPIPE },
		{ "6,30,100,-;x\n", 0 },
		{ NULL, 0 },
	};
	struct script sc = { steps, 3, 0 };
	struct twl_kmsg_source *s =
		twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	struct twl_kmsg_source_stats st;

	assert_non_null(s);
	twl_kmsg_source_resume(s, 20);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.k.seq, 30);
	twl_kmsg_source_stats(s, &st);
	assert_int_equal(st.lost, 9);
	twl_kmsg_source_free(s);
}

static void test_read_error_surfaces(void **state)
{
	static const struct step steps[] = { { NULL, -EIO } };
	struct script sc = { steps, 1, 0 };
	struct twl_kmsg_source *s =
		twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);

	assert_non_null(s);
	assert_int_equal(twl_kmsg_source_next(s, &rec), -EIO);
	twl_kmsg_source_free(s);
	assert_null(twl_kmsg_source_new(TWL_SRC_LINES, NULL, NULL));
}

/* Read every record of @path; returns the count, seqs in @seqs. */
static size_t read_all(const char *path, uint64_t resume, bool use_resume,
		       uint64_t *seqs, size_t cap,
		       struct twl_kmsg_source_stats *st)
{
	struct twl_kmsg_source *s = twl_kmsg_source_open(path);
	size_t n = 0;
	int ret;

	assert_non_null(s);
	if (use_resume)
		twl_kmsg_source_resume(s, resume);
	while ((ret = twl_kmsg_source_next(s, &rec)) == 1) {
		if (n < cap)
			seqs[n] = rec.k.seq;
		n++;
	}
	assert_int_equal(ret, -ENODATA);
	twl_kmsg_source_stats(s, st);
	twl_kmsg_source_free(s);
	return n;
}

/* Records skipped as handled before the resume point, by seq. */
static uint64_t skipped_seqs[8];
static size_t n_skipped;

static void on_skip(void *ctx, const struct twl_log_record *r)
{
	(void)ctx;
	if (n_skipped < 8)
		skipped_seqs[n_skipped] = r->k.seq;
	n_skipped++;
}

static void test_kmsg_dump_file(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "dump");
	const struct twl_kmsg_failure *fl;
	struct twl_kmsg_source_stats st;
	struct twl_kmsg_source *s;
	uint64_t seqs[16];
	FILE *f;
	size_t i;

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("6,1,100,-;Linux version 6.1\n", f);
	fputs(" SUBSYSTEM=cpu\n DEVICE=+cpu:0\n", f);
	fputs("\n", f);
	fputs("12,2,150,-;a line user space wrote\n", f);
	fputs("not a record\n", f);
	/* An over-long line (longer than textlog's 64 KiB) is one failure. */
	for (i = 0; i < TWL_LOG_LINE_MAX + 100; i++)
		fputc('z', f);
	fputc('\n', f);
	fputs("4,3,200,-;soft_limit_in_bytes is deprecated\r\n", f);
	fputs("4,4,300,-,caller=T12;last line without newline", f);
	assert_int_equal(fclose(f), 0);

	/* The user-space record (seq 2) is not the kernel's: not returned, not lost. */
	assert_int_equal(read_all(path, 0, false, seqs, 16, &st), 3);
	assert_int_equal(seqs[0], 1);
	assert_int_equal(seqs[1], 3);
	assert_int_equal(seqs[2], 4);
	assert_int_equal(st.parse_failures, 2);
	assert_int_equal(st.format, TWL_LOG_KMSG);
	assert_int_equal(st.lost, 0);
	assert_true(st.have_first_seq);
	assert_int_equal(st.first_seq, 1);

	/* Resume after seq 2: only 3 and 4 are new; 1 went to the skip hook. */
	assert_int_equal(read_all(path, 2, true, seqs, 16, &st), 2);
	assert_int_equal(seqs[0], 3);
	assert_int_equal(st.skipped, 2);

	/* The failures, by line: the file and what to look at. */
	s = twl_kmsg_source_open(path);
	assert_non_null(s);
	n_skipped = 0;
	twl_kmsg_source_on_skip(s, on_skip, NULL);
	twl_kmsg_source_resume(s, 3);
	while (twl_kmsg_source_next(s, &rec) == 1)
		assert_int_equal(rec.k.seq, 4);
	assert_int_equal(n_skipped, 2);
	assert_int_equal(skipped_seqs[0], 1);
	assert_int_equal(skipped_seqs[1], 3);
	assert_string_equal(twl_kmsg_source_path(s), path);
	assert_int_equal(twl_kmsg_source_fd(s), -1);
	assert_int_equal(twl_kmsg_source_failures(s, &fl), 2);
	assert_int_equal(fl[0].line, 6);
	assert_non_null(strstr(fl[0].why, "/dev/kmsg"));
	assert_int_equal(fl[1].line, 7);
	assert_int_equal(fl[1].err, -E2BIG);
	twl_kmsg_source_free(s);
	free(path);
	test_rmtree(dir);
}

/* A dmesg file: one form per file; a line of another form is a failure. */
static void test_dmesg_file(void **state)
{
	char *dir = test_mkdtemp(), *path;
	const struct twl_kmsg_failure *fl;
	struct twl_kmsg_source_stats st;
	struct twl_kmsg_source *s;
	int ret, n = 0;

	test_write(
		dir, "dmesg",
		"[    0.000000] Linux version 6.1.0\n"
		"[   41.233567] [  T312] soft_limit_in_bytes is deprecated and will be removed.\n"
		"[   75.000000] Per memcg swappiness does not exist in cgroup v2. See x there\n"
		" \n"
		"<4>[   80.000000] raw form in the middle\n"
		"[   81.000000] after it\n");
	path = test_path(dir, "dmesg");
	s = twl_kmsg_source_open(path);
	assert_non_null(s);
	while ((ret = twl_kmsg_source_next(s, &rec)) == 1) {
		n++;
		assert_false(rec.k.has_seq);
		assert_int_equal(rec.format, TWL_LOG_DMESG);
		assert_string_equal(rec.boot_id, "");
		if (n == 2) {
			assert_string_equal(rec.k.caller, "T312");
			assert_int_equal(rec.k.mono_us, 41233567);
		}
		if (n == 3)
			assert_string_equal(
				rec.k.text,
				"Per memcg swappiness does not exist "
				"in cgroup v2. See x there\n");
	}
	assert_int_equal(ret, -ENODATA);
	assert_int_equal(n, 4);
	twl_kmsg_source_stats(s, &st);
	assert_int_equal(st.format, TWL_LOG_DMESG);
	assert_int_equal(st.parse_failures, 1);
	assert_int_equal(twl_kmsg_source_failures(s, &fl), 1);
	assert_int_equal(fl[0].line, 5);
	twl_kmsg_source_free(s);
	free(path);
	test_rmtree(dir);
}

/* journalctl -o json: each record with its boot, verified, its wall time. */
static void test_journal_json_file(void **state)
{
	char *dir = test_mkdtemp(), *path;
	struct twl_kmsg_source *s;

	test_write(
		dir, "k.json",
		"{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\","
		"\"PRIORITY\":\"4\",\"_BOOT_ID\":\"b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2\","
		"\"_SOURCE_MONOTONIC_TIMESTAMP\":\"5500000\","
		"\"__REALTIME_TIMESTAMP\":\"1796446798000040\",\"MESSAGE\":\"x\"}\n");
	path = test_path(dir, "k.json");
	s = twl_kmsg_source_open(path);
	assert_non_null(s);
	assert_int_equal(twl_kmsg_source_next(s, &rec), 1);
	assert_int_equal(rec.format, TWL_LOG_JOURNAL_JSON);
	assert_string_equal(rec.boot_id, "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2");
	assert_true(rec.verified);
	assert_true(rec.has_wall);
	assert_int_equal(rec.k.mono_us, 5500000);
	assert_int_equal(twl_kmsg_source_next(s, &rec), -ENODATA);
	twl_kmsg_source_free(s);
	free(path);
	test_rmtree(dir);
}

/* A gzip file cut short: the records before the cut, then one failure that says so. */
static void test_gzip_cut(void **state)
{
	char *dir = test_mkdtemp(), *plain = test_path(dir, "k.log"),
	     *gz = test_path(dir, "k.log.gz"), cmd[8192], *text = NULL;
	const struct twl_kmsg_failure *fl;
	struct twl_kmsg_source_stats st;
	struct twl_kmsg_source *s;
	size_t len;
	int n = 0, ret;
	FILE *f = fopen(plain, "w");

	assert_non_null(f);
	for (int i = 0; i < 2000; i++)
		fprintf(f, "[%5d.000000] record %d is a line of some length\n",
			i, i);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "gzip -9 -c '%s' > '%s'", plain, gz);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(twl_read_file(gz, 1 << 20, &text, &len), 0);
	f = fopen(gz, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len / 2, f), len / 2);
	assert_int_equal(fclose(f), 0);
	free(text);
	s = twl_kmsg_source_open(gz);
	assert_non_null(s);
	while ((ret = twl_kmsg_source_next(s, &rec)) == 1) {
		char want[64];

		snprintf(want, sizeof(want),
			 "record %d is a line of some length", n++);
		assert_string_equal(rec.k.text, want);
	}
	assert_int_equal(ret, -ENODATA);
	assert_true(n > 10 && n < 2000);
	twl_kmsg_source_stats(s, &st);
	assert_int_equal(st.read_error, -EIO);
	/* The line the cut went through, then what stopped the reading. */
	assert_int_equal(twl_kmsg_source_failures(s, &fl), 2);
	assert_int_equal(fl[0].line, (unsigned long)n + 1);
	assert_int_equal(fl[1].err, -EIO);
	assert_true(fl[1].line > 10);
	assert_true(fl[1].why[0] != '\0');
	assert_int_equal(twl_kmsg_source_next(s, &rec), -ENODATA);
	twl_kmsg_source_free(s);
	free(plain);
	free(gz);
	test_rmtree(dir);
}

static void test_fifo_split_writes(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "fifo");
	struct twl_kmsg_source *s;
	uint64_t seqs[8];
	size_t n = 0;
	pid_t pid;
	int ret, status;

	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY);
		static const char *const parts[] = {
			"6,10,1,-;one\n6,11,2,-;tw",
			"o\n SUBSYSTEM=x\n6,1",
			"2,3,-;three\n",
			"6,14,4,-;four (13 was never written)\n",
		};
		size_t i;

		if (fd < 0)
			_exit(1);
		for (i = 0; i < 4; i++) {
			if (write(fd, parts[i], strlen(parts[i])) < 0)
				_exit(1);
			usleep(20000);
		}
		close(fd);
		_exit(0);
	}
	s = twl_kmsg_source_open(path); /* waits for the writer */
	assert_non_null(s);
	for (;;) {
		struct pollfd pfd = { .fd = twl_kmsg_source_fd(s),
				      .events = POLLIN };

		ret = twl_kmsg_source_next(s, &rec);
		if (ret == 1) {
			if (n < 8)
				seqs[n] = rec.k.seq;
			n++;
			continue;
		}
		if (ret != 0)
			break;
		assert_true(poll(&pfd, 1, 5000) > 0);
	}
	assert_int_equal(ret, -ENODATA);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(n, 4);
	assert_int_equal(seqs[1], 11);
	assert_int_equal(seqs[2], 12);
	{
		struct twl_kmsg_source_stats st;

		twl_kmsg_source_stats(s, &st);
		assert_int_equal(st.lost, 1);
		assert_int_equal(st.parse_failures, 0);
	}
	twl_kmsg_source_free(s);
	free(path);
	test_rmtree(dir);
}

static void test_open_errors(void **state)
{
	char *dir = test_mkdtemp();
	char *missing = test_path(dir, "missing");

	errno = 0;
	assert_null(twl_kmsg_source_open(missing));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(twl_kmsg_source_open(dir));
	assert_int_equal(errno, EISDIR);
	free(missing);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_track),
		cmocka_unit_test(test_epipe_counts_lost),
		cmocka_unit_test(test_epipe_after_resume),
		cmocka_unit_test(test_read_error_surfaces),
		cmocka_unit_test(test_kmsg_dump_file),
		cmocka_unit_test(test_dmesg_file),
		cmocka_unit_test(test_journal_json_file),
		cmocka_unit_test(test_gzip_cut),
		cmocka_unit_test(test_fifo_split_writes),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
