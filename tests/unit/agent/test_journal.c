// SPDX-License-Identifier: GPL-2.0
/*
 * The journal source (agent/journal.h) on journal FILES this test makes
 * with systemd-journal-remote from export text (never this machine's
 * journal): kernel records of two boots, the /dev/kmsg spoof, journald's
 * "Missed" notes, rotated, truncated and corrupt files, a boot whose start
 * the journal no longer holds, the choice of boots, resuming from cursors;
 * plus the journal state file and the record dedup set.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "agent_test.h"
#include "journal.h"
#include "record_dedup.h"
#include "tu_journal.h"

static const char *data_dir; /* tests/unit/agent/data/logs */

/* The corpus's two boots (data/logs/journal-input.export) as a journal file. */
static char *corpus_journal(const char *dir)
{
	char src[PATH_MAX], *text = NULL, *path = test_path(dir, "c.journal");
	size_t len;

	snprintf(src, sizeof(src), "%s/journal-input.export", data_dir);
	assert_int_equal(twl_read_file(src, 1 << 20, &text, &len), 0);
	make_journal(path, text, len);
	free(text);
	return path;
}

static void write_file_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* ---- Reading ---- */

struct file_errors {
	unsigned n;
	char path[4][PATH_MAX];
	int err[4];
};

static void on_file_error(void *ctx, const char *path, int err)
{
	struct file_errors *fe = ctx;

	if (fe->n < 4) {
		snprintf(fe->path[fe->n], PATH_MAX, "%s", path);
		fe->err[fe->n] = err;
	}
	fe->n++;
}

/* Every entry of @j: records' texts into @texts, BOOT_ENDs as "<end>". */
static size_t drain(struct twl_journal *j, char (*texts)[TWL_KMSG_TEXT_MAX + 1],
		    size_t max, bool commit)
{
	struct twl_journal_entry *e = malloc(sizeof(*e));
	size_t n = 0;
	int ret;

	assert_non_null(e);
	while ((ret = twl_journal_next(j, e)) == 1) {
		if (n < max)
			snprintf(texts[n], TWL_KMSG_TEXT_MAX + 1, "%s",
				 e->kind == TWL_JOURNAL_RECORD ? e->rec.k.text :
								 "<end>");
		n++;
		if (commit)
			assert_int_equal(twl_journal_commit(j, e), 0);
	}
	assert_int_equal(ret, -ENODATA);
	free(e);
	return n;
}

static char texts[64][TWL_KMSG_TEXT_MAX + 1];

static void test_two_boots(void **state)
{
	char *dir = test_mkdtemp(), *path = corpus_journal(dir);
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files,
				      .current_boot = "b2b2b2b2-b2b2-b2b2-b2b2-"
						      "b2b2b2b2b2b2",
				      .max_earlier_boots = 4 };
	struct twl_journal_entry *e = malloc(sizeof(*e));
	struct twl_journal_boot boots[4];
	struct twl_journal_stats st;
	struct twl_journal *j;
	static const struct {
		const char *boot;
		uint64_t mono;
		int prio;
		const char *start;
	} want[] = {
		{ A, 0, 5, "Linux version 6.12.0-twl-a" },
		{ A, 3018562, 4, SOFT },
		{ A, 61500000, 4, "oom_control is deprecated" },
		{ A, 62000000, 6, "Per memcg swappiness" },
		{ A, 70250000, 4, "option changes via remount" },
		{ A, 75000000, 4, MOVE },
		{ A, 80000000, 4,
		  "usb 1-1: descriptor \xff\xfe is deprecated" },
		{ B, 0, 5, "Linux version 6.12.1-twl-b" },
		{ B, 5500000, 4, SOFT },
	};
	size_t i = 0;

	(void)state;
	assert_non_null(e);
	j = twl_journal_open(&o);
	assert_non_null(j);
	while (twl_journal_next(j, e) == 1) {
		assert_true(i < sizeof(want) / sizeof(want[0]));
		assert_int_equal(e->kind, TWL_JOURNAL_RECORD);
		if (strncmp(e->rec.k.text, want[i].start,
			    strlen(want[i].start)))
			fail_msg("record %zu: \"%s\"", i, e->rec.k.text);
		/* The /dev/kmsg spoof at 3.7 s (facility 1) is never a record. */
		assert_int_not_equal(e->rec.k.mono_us, 3700000);
		assert_true(e->rec.verified);
		assert_string_equal(twl_log_origin(&e->rec), "journal");
		assert_int_equal(e->rec.format, TWL_LOG_JOURNAL);
		assert_string_equal(twl_log_format_source(e->rec.format),
				    "journal");
		assert_true(e->rec.has_mono);
		assert_int_equal(e->rec.k.mono_us, want[i].mono);
		assert_int_equal(e->rec.k.level, want[i].prio);
		assert_int_equal(e->rec.k.facility, 0);
		assert_string_equal(e->rec.boot_id, want[i].boot);
		assert_string_equal(e->boot_id, want[i].boot);
		assert_string_equal(e->kernel, want[i].boot[0] == 'a' ?
						       "6.12.0-twl-a" :
						       "6.12.1-twl-b");
		assert_int_equal(e->rec.wall_us,
				 (want[i].boot[0] == 'a' ?
					  BASE_A :
					  BASE_A + 86400LL * 1000000) +
					 (int64_t)want[i].mono + 40);
		assert_string_equal(e->rec.host, "web01");
		assert_true(strlen(e->cursor) > 10);
		i++;
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	assert_int_equal(twl_journal_boots(j, boots, 4), 2);
	assert_string_equal(boots[0].boot_id, A);
	assert_string_equal(boots[0].kernel, "6.12.0-twl-a");
	assert_true(boots[0].start_covered);
	assert_int_equal(boots[0].first_mono_us, 0);
	assert_false(boots[0].current);
	assert_int_equal(boots[0].records, 7);
	assert_int_equal(boots[0].user_kmsg, 2); /* systemd[1] and the spoof */
	assert_int_equal(boots[0].missed, 0);
	assert_string_equal(boots[1].boot_id, B);
	assert_true(boots[1].current);
	assert_int_equal(boots[1].missed, 3);
	assert_int_equal(boots[1].records, 2);
	twl_journal_stats(j, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.file_errors, 0);
	assert_int_equal(st.records, 9);
	assert_int_equal(st.missed, 3);
	assert_int_equal(st.user_kmsg, 2);
	assert_true(twl_journal_state(j)->backfilled);
	twl_journal_free(j);
	free(e);
	free(path);
	test_rmtree(dir);
}

/* A restart mid-way resumes after the last commit: nothing repeats or is skipped. */
static void test_resume(void **state)
{
	char *dir = test_mkdtemp(), *path = corpus_journal(dir);
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files,
				      .current_boot = B,
				      .max_earlier_boots = 4 };
	struct twl_journal_entry *e = malloc(sizeof(*e));
	struct twl_journal_state st;
	static char all[16][TWL_KMSG_TEXT_MAX + 1];
	struct twl_journal *j;
	size_t n_all, n, k;

	(void)state;
	assert_non_null(e);
	j = twl_journal_open(&o);
	n_all = drain(j, all, 16, false);
	twl_journal_free(j);
	assert_int_equal(n_all, 9);
	/* First run: three entries handled and saved, then a crash. */
	j = twl_journal_open(&o);
	for (k = 0; k < 3; k++) {
		assert_int_equal(twl_journal_next(j, e), 1);
		assert_string_equal(e->rec.k.text, all[k]);
		assert_int_equal(twl_journal_commit(j, e), 0);
	}
	assert_int_equal(twl_journal_next(j, e), 1); /* read, never committed */
	assert_int_equal(twl_journal_state_save(dir, twl_journal_state(j)), 0);
	assert_false(twl_journal_state(j)->backfilled);
	twl_journal_free(j);
	/* Second run from the saved state: the rest, from the 4th on. */
	assert_int_equal(twl_journal_state_load(dir, &st), 0);
	assert_int_equal(st.n, 1);
	o.state = &st;
	j = twl_journal_open(&o);
	n = drain(j, texts, 64, true);
	assert_int_equal(n, n_all - 3);
	for (k = 0; k < n; k++)
		assert_string_equal(texts[k], all[k + 3]);
	assert_int_equal(twl_journal_state_save(dir, twl_journal_state(j)), 0);
	twl_journal_free(j);
	/* Third run: everything was handled; nothing comes again. */
	assert_int_equal(twl_journal_state_load(dir, &st), 0);
	assert_true(st.backfilled);
	assert_int_equal(st.n, 2);
	j = twl_journal_open(&o);
	assert_int_equal(drain(j, texts, 64, true), 0);
	twl_journal_free(j);
	free(e);
	free(path);
	test_rmtree(dir);
}

/*
 * Entries after a boot's last record (journald's "Missed" note here) end
 * in a BOOT_END to commit, so a restart does not count them again.
 */
static void test_boot_end(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "t.journal");
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files, .current_boot = A };
	struct twl_journal_boot boot;
	struct twl_journal_state st;
	struct twl_journal *j;
	struct exp e = { 0 };
	char v[32];

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_boot(&e, A, BASE_A, "6.1.0-x", 1);
	snprintf(v, sizeof(v), "%lld", BASE_A + 9000000);
	exp_field(&e, "__REALTIME_TIMESTAMP", v, strlen(v));
	exp_field(&e, "__MONOTONIC_TIMESTAMP", "9000000", 7);
	exp_field(&e, "_BOOT_ID", A, 32);
	exp_field(&e, "_TRANSPORT", "driver", 6);
	exp_field(&e, "MESSAGE_ID", "e9bf28e6e834481bb6f48f548ad13606", 32);
	exp_field(&e, "MESSAGE", "Missed 7 kernel messages", 24);
	assert_int_equal(twl_buf_append(&e.b, "\n", 1), 0);
	/* A kernel entry with a NUL byte in MESSAGE: counted, not a record. */
	exp_kernel(&e, A, BASE_A, 9500000, 0, 4, "x");
	e.b.len -= strlen("MESSAGE=x\n_MACHINE_ID=" MACHINE
			  "\n_HOSTNAME=web01\n\n");
	exp_field(&e, "MESSAGE", "bad\0byte", 8);
	assert_int_equal(twl_buf_append(&e.b, "\n", 1), 0);
	make_journal_exp(path, &e);

	j = twl_journal_open(&o);
	assert_int_equal(drain(j, texts, 64, true), 3);
	assert_string_equal(texts[1], "feature 0 is deprecated");
	assert_string_equal(texts[2], "<end>");
	twl_journal_boots(j, &boot, 1);
	assert_int_equal(boot.missed, 7);
	assert_int_equal(boot.failures, 1);
	st = *twl_journal_state(j);
	twl_journal_free(j);
	o.state = &st;
	j = twl_journal_open(&o);
	assert_int_equal(drain(j, texts, 64, true), 0);
	twl_journal_boots(j, &boot, 1);
	assert_int_equal(boot.missed, 0);
	assert_int_equal(boot.failures, 0);
	twl_journal_free(j);
	free(path);
	test_rmtree(dir);
}

/* The spoof alone: "<14>kernel: ..." written to /dev/kmsg is no record. */
static void test_spoof(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "s.journal");
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files, .current_boot = A };
	struct twl_journal_stats st;
	struct twl_journal *j;
	struct exp e = { 0 };

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_kernel(&e, A, BASE_A, 100, 1, 6, SOFT); /* user space, facility 1 */
	exp_kernel(&e, A, BASE_A, 200, 3, 4, SOFT); /* a daemon, facility 3 */
	exp_kernel(&e, A, BASE_A, 300, 0, 4, MOVE); /* the kernel */
	make_journal_exp(path, &e);
	j = twl_journal_open(&o);
	assert_int_equal(drain(j, texts, 64, false), 1);
	assert_string_equal(texts[0], MOVE);
	twl_journal_stats(j, &st);
	assert_int_equal(st.user_kmsg, 2);
	twl_journal_free(j);
	free(path);
	test_rmtree(dir);
}

/* One boot over a rotated (archived) file and the active one, read via the directory. */
static void test_rotated(void **state)
{
	char *dir = test_mkdtemp(), sub[PATH_MAX], p1[PATH_MAX + 128],
	     p2[PATH_MAX + 128], p3[PATH_MAX + 128];
	const char *dirs[] = { dir, NULL };
	struct twl_journal_opts o = { .dirs = dirs,
				      .machine_id = MACHINE,
				      .current_boot = A };
	struct twl_journal_stats st;
	struct twl_journal *j;
	struct exp e = { 0 };
	char msg[64];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/%s", dir, MACHINE);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(p1, sizeof(p1),
		 "%s/system@0123456789abcdef0123456789abcdef-"
		 "0000000000000001-0006286aa76f5640.journal",
		 sub);
	snprintf(p2, sizeof(p2), "%s/system.journal", sub);
	twl_buf_init(&e.b, 1 << 20);
	exp_boot(&e, A, BASE_A, "6.1.0-x", 3);
	make_journal_exp(p1, &e);
	twl_buf_init(&e.b, 1 << 20);
	for (int i = 3; i < 6; i++) {
		snprintf(msg, sizeof(msg), "feature %d is deprecated", i);
		exp_kernel(&e, A, BASE_A, 1000000 * (uint64_t)(i + 1), 0, 4,
			   msg);
	}
	make_journal_exp(p2, &e);
	/* Another host's journal (journal-remote's remote/) is not read. */
	snprintf(p3, sizeof(p3), "%s/remote", dir);
	assert_int_equal(mkdir(p3, 0755), 0);
	snprintf(p3, sizeof(p3), "%s/remote/remote-web02.journal", dir);
	twl_buf_init(&e.b, 1 << 20);
	exp_kernel(&e, A, BASE_A, 99000000, 0, 4, SOFT);
	make_journal_exp(p3, &e);

	j = twl_journal_open(&o);
	assert_non_null(j);
	assert_int_equal(drain(j, texts, 64, false), 7);
	for (int i = 0; i < 6; i++) {
		snprintf(msg, sizeof(msg), "feature %d is deprecated", i);
		assert_string_equal(texts[i + 1], msg);
	}
	twl_journal_stats(j, &st);
	assert_int_equal(st.files, 2);
	twl_journal_free(j);
	test_rmtree(dir);
}

/* A truncated and a corrupt file are reported and skipped; the good one is read. */
static void test_bad_files(void **state)
{
	char *dir = test_mkdtemp(), *good = corpus_journal(dir);
	char *trunc = test_path(dir, "trunc.journal");
	char *bad = test_path(dir, "bad.journal");
	const char *files[] = { trunc, good, bad, NULL };
	struct file_errors fe = { 0 };
	struct twl_journal_opts o = { .files = files,
				      .current_boot = B,
				      .max_earlier_boots = 1,
				      .on_file_error = on_file_error,
				      .ctx = &fe };
	struct twl_journal_stats st;
	struct twl_journal *j;
	char *text = NULL;
	size_t len;

	(void)state;
	assert_int_equal(twl_read_file(good, 64 << 20, &text, &len), 0);
	write_file_bytes(trunc, text, 4096);
	memcpy(text, "GARBAGE!", 8); /* the header's signature */
	write_file_bytes(bad, text, len);
	free(text);
	j = twl_journal_open(&o);
	assert_non_null(j);
	assert_int_equal(drain(j, texts, 64, false), 9);
	twl_journal_stats(j, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.file_errors, 2);
	assert_int_equal(fe.n, 2);
	assert_string_equal(fe.path[0], trunc);
	assert_string_equal(fe.path[1], bad);
	assert_true(fe.err[0] < 0 && fe.err[1] < 0);
	twl_journal_free(j);
	/*
	 * Nothing usable at all: an empty read, not an error, and the earlier
	 * boots are not given up (the journal may be readable next time).
	 */
	files[1] = bad;
	fe.n = 0;
	j = twl_journal_open(&o);
	assert_non_null(j);
	assert_int_equal(drain(j, texts, 64, false), 0);
	assert_false(twl_journal_state(j)->backfilled);
	twl_journal_free(j);
	free(trunc);
	free(bad);
	free(good);
	test_rmtree(dir);
}

/* The journal holds a boot only from 500 s on: its start is not covered. */
static void test_start_not_covered(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "late.journal");
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files, .current_boot = A };
	struct twl_journal_boot boot;
	struct twl_journal *j;
	struct exp e = { 0 };

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_kernel(&e, A, BASE_A, 500000000, 0, 4, SOFT);
	make_journal_exp(path, &e);
	j = twl_journal_open(&o);
	assert_int_equal(twl_journal_boots(j, &boot, 1), 1);
	assert_false(boot.start_covered);
	assert_int_equal(boot.first_mono_us, 500000000);
	assert_int_equal(boot.first_wall_us, BASE_A + 500000040);
	assert_string_equal(boot.kernel, "");
	assert_int_equal(drain(j, texts, 64, false), 1);
	twl_journal_free(j);
	free(path);
	test_rmtree(dir);
}

static const char *const ids[] = {
	"c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0",
	"c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",
	"c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2",
	"c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
};

/* Earlier boots: the newest ones, on the first backfill only; boots with a cursor always. */
static void test_choice(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "m.journal");
	const char *files[] = { path, NULL };
	struct twl_journal_opts o = { .files = files,
				      .current_boot = ids[3],
				      .max_earlier_boots = 1 };
	struct twl_journal_boot boots[8];
	struct twl_journal_state st = { 0 };
	struct twl_journal_stats jst;
	struct twl_journal *j;
	struct exp e = { 0 };
	char rel[16];

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	for (int i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "6.%d.0", i);
		exp_boot(&e, ids[i], BASE_A + i * 86400LL * 1000000, rel, 1);
	}
	make_journal_exp(path, &e);
	j = twl_journal_open(&o);
	assert_int_equal(twl_journal_boots(j, boots, 8), 2);
	assert_string_equal(boots[0].boot_id, ids[2]);
	assert_string_equal(boots[0].kernel, "6.2.0");
	assert_string_equal(boots[1].boot_id, ids[3]);
	assert_true(boots[1].current);
	twl_journal_free(j);
	/*
	 * Backfilled before, with a cursor for boot 0 from a file vacuumed
	 * since: boot 0 (from the cursor's place, its start) and the current.
	 */
	st.backfilled = true;
	assert_int_equal(
		twl_journal_state_set(&st, ids[0],
				      "s=00000000000000000000000000000000;"
				      "i=1;b=c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0;"
				      "m=0;t=0;x=0"),
		0);
	o.state = &st;
	j = twl_journal_open(&o);
	assert_int_equal(twl_journal_boots(j, boots, 8), 2);
	assert_string_equal(boots[0].boot_id, ids[0]);
	assert_string_equal(boots[1].boot_id, ids[3]);
	assert_int_equal(drain(j, texts, 64, false), 4);
	twl_journal_free(j);
	/* A cursor sd-journal cannot parse: that boot from its head, counted. */
	assert_int_equal(twl_journal_state_set(&st, ids[0], "s=1;i=1"), 0);
	j = twl_journal_open(&o);
	assert_int_equal(drain(j, texts, 64, false), 4);
	twl_journal_stats(j, &jst);
	assert_int_equal(jst.read_errors, 1);
	twl_journal_free(j);
	/* No current boot, nothing asked for: nothing read. */
	o.current_boot = NULL;
	j = twl_journal_open(&o);
	assert_int_equal(twl_journal_boots(j, boots, 8), 1);
	twl_journal_free(j);
	o.current_boot = "not-a-boot-id";
	assert_null(twl_journal_open(&o));
	assert_int_equal(errno, EINVAL);
	free(path);
	test_rmtree(dir);
}

/* ---- The state file ---- */

static void test_state_file(void **state)
{
	char *dir = test_mkdtemp();
	struct twl_journal_state st = { 0 }, back;
	char id[33];

	(void)state;
	/* No file: an empty state. */
	assert_int_equal(twl_journal_state_load(dir, &back), 0);
	assert_int_equal(back.n, 0);
	assert_false(back.backfilled);
	st.backfilled = true;
	assert_int_equal(twl_journal_state_set(&st, A, "s=a;i=1"), 0);
	assert_int_equal(twl_journal_state_set(&st, B, "s=b;i=2"), 0);
	assert_int_equal(twl_journal_state_set(&st, A, "s=a;i=3"), 0);
	assert_int_equal(st.n, 2);
	assert_int_equal(twl_journal_state_save(dir, &st), 0);
	assert_int_equal(twl_journal_state_load(dir, &back), 0);
	assert_true(back.backfilled);
	assert_int_equal(back.n, 2);
	assert_string_equal(twl_journal_state_cursor(&back, A), "s=a;i=3");
	assert_string_equal(twl_journal_state_cursor(&back, B), "s=b;i=2");
	assert_null(twl_journal_state_cursor(&back, ids[0]));
	/* Bounded: the 17th boot pushes out the oldest. */
	for (int i = 0; i < TWL_JOURNAL_MAX_BOOTS; i++) {
		snprintf(id, sizeof(id), "%032x", i);
		assert_int_equal(twl_journal_state_set(&st, id, "s=x"), 0);
	}
	assert_int_equal(st.n, TWL_JOURNAL_MAX_BOOTS);
	assert_null(twl_journal_state_cursor(&st, A));
	assert_null(twl_journal_state_cursor(&st, B));
	/* Bad input. */
	assert_int_equal(twl_journal_state_set(&st, "xyz", "s=x"), -EINVAL);
	assert_int_equal(twl_journal_state_set(&st, A, ""), -EINVAL);
	assert_int_equal(twl_journal_state_set(&st, A, "has space"), -EINVAL);
	test_write(dir, TWL_JOURNAL_STATE_FILE,
		   "{\"boots\":[{\"boot_id\":1}]}");
	assert_int_equal(twl_journal_state_load(dir, &back), -EINVAL);
	assert_int_equal(back.n, 0);
	test_write(dir, TWL_JOURNAL_STATE_FILE, "not json");
	assert_int_equal(twl_journal_state_load(dir, &back), -EINVAL);
	test_write(dir, TWL_JOURNAL_STATE_FILE,
		   "{\"backfilled\":false,\"future\":1,\"boots\":[]}");
	assert_int_equal(twl_journal_state_load(dir, &back), 0);
	test_rmtree(dir);
}

/* ---- Record identity ---- */

static void test_dedup(void **state)
{
	struct twl_dedup *d = twl_dedup_new(3);

	(void)state;
	assert_non_null(d);
	assert_false(twl_dedup_seen(d, A, 3018562, 0, SOFT, strlen(SOFT)));
	/* The journal's copy of the kmsg record: same boot (dashes, case), µs, text. */
	assert_true(twl_dedup_seen(d, "A1A1A1A1-a1a1-a1a1-a1a1-a1a1a1a1a1a1",
				   3018562, 0, SOFT "\n ", strlen(SOFT) + 2));
	assert_false(twl_dedup_seen(d, B, 3018562, 0, SOFT, strlen(SOFT)));
	assert_false(twl_dedup_seen(d, A, 3018563, 0, SOFT, strlen(SOFT)));
	assert_int_equal(twl_dedup_count(d), 3);
	/* Full: the oldest (A at 3018562) is forgotten first. */
	assert_false(twl_dedup_seen(d, A, 1, 0, "x", 1));
	assert_int_equal(twl_dedup_count(d), 3);
	assert_true(twl_dedup_seen(d, B, 3018562, 0, SOFT, strlen(SOFT)));
	assert_false(twl_dedup_seen(d, A, 3018562, 0, SOFT, strlen(SOFT)));
	assert_false(twl_dedup_seen(d, "", 5, 0, "y", 1));
	assert_true(twl_dedup_seen(d, "", 5, 0, "y", 1));
	twl_dedup_free(d);
	twl_dedup_free(NULL);
	assert_null(twl_dedup_new(0));
	assert_int_equal(errno, EINVAL);
}

/* Against a plain list: many keys with colliding index slots, evictions on every step. */
static void test_dedup_model(void **state)
{
	enum { CAP = 50, N = 20000, KEYS = 120 };
	struct twl_dedup *d = twl_dedup_new(CAP);
	uint64_t ring[CAP];
	size_t n = 0, head = 0, i, k;
	uint64_t x = 1;

	(void)state;
	assert_non_null(d);
	for (i = 0; i < N; i++) {
		bool want = false;
		uint64_t key;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		key = (x >> 33) % KEYS;
		for (k = 0; k < n; k++)
			want |= ring[(head + k) % CAP] == key;
		if (twl_dedup_seen(d, A, key, 0, "t", 1) != want)
			fail_msg("step %zu key %llu: want %d", i,
				 (unsigned long long)key, want);
		if (want)
			continue;
		if (n == CAP) {
			head = (head + 1) % CAP;
			n--;
		}
		ring[(head + n++) % CAP] = key;
	}
	twl_dedup_free(d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_boots),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_boot_end),
		cmocka_unit_test(test_spoof),
		cmocka_unit_test(test_rotated),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_start_not_covered),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_state_file),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_dedup_model),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
		return 2;
	}
	data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
