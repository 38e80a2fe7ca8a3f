// SPDX-License-Identifier: GPL-2.0
/*
 * The journal source through the daemon (agent/daemon.c, startup.c,
 * journal_source.c), run in a child process on journal files this test
 * makes with systemd-journal-remote in a temp dir (journal-dir; never this
 * machine's journal). The live kernel log is a /dev/kmsg dump of the
 * current boot (kmsg-path): the daemon reads it through, runs one journal
 * step, spools, stops. Checked: earlier boots are backfilled once with
 * their boot id and kernel; the same warning on /dev/kmsg and in the
 * journal is sent once; restarts in the middle of a long backfill and
 * after the journal grew repeat nothing and skip nothing; a corrupt file
 * is skipped and counted in health; a journal directory that cannot be
 * listed is logged; a journal and a kmsg buffer that both start late
 * leave the boot's start "not covered"; journal = false reads nothing.
 * The server URL is a closed port: batches stay in the spool.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "agent_test.h"
#include "spool.h"
#include "startup.h"
#include "tu_daemon.h"
#include "tu_journal.h"

#define C "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3" /* the current boot */
#define C_UUID "c3c3c3c3-c3c3-c3c3-c3c3-c3c3c3c3c3c3"
#define BASE_B (BASE_A + 86400LL * 1000000)
#define BASE_C (BASE_B + 86400LL * 1000000)

#define OOM                                                                  \
	"oom_control is deprecated and will be removed. Please report your " \
	"usecase to linux-mm-@kvack.org if you depend on this functionality. "
#define REMOUNT \
	"option changes via remount are deprecated (pid=4242 comm=mount)"

/* The test's tree: config, boot id, machine id, journal dir, kmsg dump. */
static char *setup(bool journal)
{
	char *dir = test_mkdtemp(), conf[8192];

	test_mkdir(dir, "state");
	test_mkdir(dir, "journal");
	test_mkdir(dir, "journal/" MACHINE);
	test_write(dir, "ca.pem", "placeholder: the server is never reached\n");
	test_write(dir, "token", "token\n");
	test_write(dir, "boot_id", C_UUID "\n");
	test_write(dir, "machine-id", MACHINE "\n");
	test_write(dir, "mountinfo", "");
	snprintf(conf, sizeof(conf),
		 "server-url = https://127.0.0.1:9\nca-file = %s/ca.pem\n"
		 "enroll-token-file = %s/token\nstate-dir = %s/state\n"
		 "spool-dir = %s/state/spool\nbpf = false\nlog-level = debug\n"
		 "kmsg-path = %s/kmsg\nboot-id-path = %s/boot_id\n"
		 "machine-id-path = %s/machine-id\nmountinfo = %s/mountinfo\n"
		 "cgroup-root = %s\njournal = %s\njournal-dir = %s/journal\n"
		 "journal-boots = 4\n",
		 dir, dir, dir, dir, dir, dir, dir, dir, dir,
		 journal ? "true" : "false", dir);
	test_write(dir, "agent.conf", conf);
	return dir;
}

/* A journal file @name in the test's machine directory, from @e. */
static void journal_file(const char *dir, const char *name, struct exp *e)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/journal/%s/%s", dir, MACHINE, name);
	make_journal_exp(path, e);
}

/* One daemon run to its end (the kmsg dump read through); its exit status. */
static int run_daemon(const char *dir)
{
	char *conf = test_path(dir, "agent.conf");
	struct loader l = { .path = conf };
	struct twl_run_opts o = { .config_path = conf,
				  .load_config = load,
				  .load_ctx = &l };
	int ret = wait_exit(start_daemon(dir, &o));

	free(conf);
	return ret;
}

/* Every spooled batch, oldest first. */
struct spool {
	size_t n;
	json_t *docs[32];
};

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void spool_load(const char *dir, struct spool *sp)
{
	char *spool = test_path(dir, "state/spool");
	struct dirent **list;
	int n = scandir(spool, &list, NULL, by_name);

	memset(sp, 0, sizeof(*sp));
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		struct twl_spool_hdr h;
		char *path, *text = NULL;
		size_t len;

		if (strstr(list[i]->d_name, ".batch") && sp->n < 32) {
			path = test_path(spool, list[i]->d_name);
			assert_int_equal(
				twl_read_file(path, 16 << 20, &text, &len), 0);
			assert_int_equal(twl_spool_hdr_decode((uint8_t *)text,
							      len, &h, NULL),
					 0);
			sp->docs[sp->n] = json_loadb(text + TWL_SPOOL_HDR_LEN,
						     h.length, 0, NULL);
			assert_non_null(sp->docs[sp->n]);
			sp->n++;
			free(text);
			free(path);
		}
		free(list[i]);
	}
	free(list);
	free(spool);
}

static void spool_free(struct spool *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		json_decref(sp->docs[i]);
	sp->n = 0;
}

/* Warnings in the spool with @feature of @boot at @mono_us (kernel into @kernel). */
static int count_warning(const struct spool *sp, const char *feature,
			 const char *boot, uint64_t mono_us,
			 const char **kernel)
{
	int n = 0;

	for (size_t i = 0; i < sp->n; i++) {
		json_t *w;
		size_t k;

		json_array_foreach(json_object_get(sp->docs[i], "warnings"), k,
				   w)
		{
			if (strcmp(json_string_value(
					   json_object_get(w, "feature")),
				   feature) ||
			    strcmp(json_string_value(
					   json_object_get(w, "boot_id")),
				   boot) ||
			    (uint64_t)json_integer_value(
				    json_object_get(w, "mono_us")) != mono_us)
				continue;
			n++;
			if (kernel)
				*kernel = json_string_value(
					json_object_get(w, "kernel"));
		}
	}
	return n;
}

static size_t total_warnings(const struct spool *sp)
{
	size_t n = 0;

	for (size_t i = 0; i < sp->n; i++)
		n += json_array_size(json_object_get(sp->docs[i], "warnings"));
	return n;
}

/* health.boots[] entry of @boot in the newest batch. */
static json_t *boot_health(const struct spool *sp, const char *boot)
{
	json_t *b, *h = json_object_get(sp->docs[sp->n - 1], "health");
	size_t i;

	json_array_foreach(json_object_get(h, "boots"), i, b)
	{
		const char *id =
			json_string_value(json_object_get(b, "boot_id"));

		if (!strcmp(id, boot))
			return b;
	}
	fail_msg("no health.boots entry for %s", boot);
	return NULL;
}

static long long health_int(const struct spool *sp, const char *key)
{
	json_t *h = json_object_get(sp->docs[sp->n - 1], "health");

	if (!json_object_get(h, key))
		fail_msg("health has no %s", key);
	return (long long)json_integer_value(json_object_get(h, key));
}

/* journald's note that it lost @n kernel records of @boot. */
static void exp_missed(struct exp *e, const char *boot, int64_t base,
		       uint64_t mono, int n)
{
	char v[64];

	snprintf(v, sizeof(v), "%lld", (long long)(base + (int64_t)mono));
	exp_field(e, "__REALTIME_TIMESTAMP", v, strlen(v));
	snprintf(v, sizeof(v), "%llu", (unsigned long long)mono);
	exp_field(e, "__MONOTONIC_TIMESTAMP", v, strlen(v));
	exp_field(e, "_BOOT_ID", boot, 32);
	exp_field(e, "_TRANSPORT", "driver", 6);
	exp_field(e, "MESSAGE_ID", "e9bf28e6e834481bb6f48f548ad13606", 32);
	snprintf(v, sizeof(v), "Missed %d kernel messages", n);
	exp_field(e, "MESSAGE", v, strlen(v));
	assert_int_equal(twl_buf_append(&e->b, "\n", 1), 0);
}

/*
 * Two earlier boots and the current one: the earlier boots' warnings come
 * once, with their ids and kernels; the current boot's warning that
 * /dev/kmsg also holds goes out once; health says every start is covered
 * and counts journald's missed records. A second run sends nothing again;
 * after the journal grew, a third sends only the new record.
 */
static void test_backfill_once(void **state)
{
	char *dir = setup(true);
	const char *kernel = NULL;
	struct exp e = { 0 };
	struct spool sp;
	json_t *b;

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_boot(&e, A, BASE_A, "6.1.0-a", 0);
	exp_kernel(&e, A, BASE_A, 3000000, 0, 4, SOFT);
	exp_boot(&e, B, BASE_B, "6.2.0-b", 0);
	exp_missed(&e, B, BASE_B, 3500000, 3);
	exp_kernel(&e, B, BASE_B, 4000000, 0, 4, MOVE);
	exp_boot(&e, C, BASE_C, "6.3.0-c", 0);
	exp_kernel(&e, C, BASE_C, 5000000, 0, 4, OOM);
	exp_kernel(&e, C, BASE_C, 6000000, 0, 4, REMOUNT);
	journal_file(dir, "system@1.journal", &e);
	test_write(dir, "kmsg",
		   "5,0,0,-;Linux version 6.3.0-c\n4,1,5000000,-;" OOM "\n");

	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(count_warning(&sp, "memcg_v1.soft_limit", A, 3000000,
				       &kernel),
			 1);
	assert_string_equal(kernel, "6.1.0-a");
	assert_int_equal(count_warning(&sp, "memcg_v1.move_charge", B, 4000000,
				       &kernel),
			 1);
	assert_string_equal(kernel, "6.2.0-b");
	/* This boot's records carry the host's boot id (as /dev/kmsg's do). */
	assert_int_equal(count_warning(&sp, "memcg_v1.oom_control", C_UUID,
				       5000000, NULL),
			 1);
	assert_int_equal(count_warning(&sp, "cgroup_v1.remount", C_UUID,
				       6000000, NULL),
			 1);
	assert_int_equal(total_warnings(&sp), 4);
	b = boot_health(&sp, C_UUID);
	assert_int_equal(
		json_integer_value(json_object_get(b, "first_kmsg_seq")), 0);
	assert_int_equal(
		json_integer_value(json_object_get(b, "first_journal_us")), 0);
	assert_true(json_is_true(json_object_get(b, "start_covered")));
	b = boot_health(&sp, A);
	assert_string_equal(json_string_value(json_object_get(b, "kernel")),
			    "6.1.0-a");
	assert_true(json_is_true(json_object_get(b, "start_covered")));
	assert_null(json_object_get(b, "first_kmsg_seq"));
	assert_int_equal(health_int(&sp, "journal_missed"), 3);
	assert_int_equal(health_int(&sp, "journal_errors"), 0);
	spool_free(&sp);

	/* A restart: nothing is sent again. */
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(total_warnings(&sp), 4);
	spool_free(&sp);

	/* The journal grew (a new file): only the new record goes out. */
	twl_buf_init(&e.b, 1 << 20);
	exp_kernel(&e, C, BASE_C, 9000000, 0, 4, SOFT);
	journal_file(dir, "system.journal", &e);
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(count_warning(&sp, "memcg_v1.soft_limit", C_UUID,
				       9000000, NULL),
			 1);
	assert_int_equal(total_warnings(&sp), 5);
	spool_free(&sp);
	test_rmtree(dir);
}

/*
 * A backfill longer than one journal step, stopped after each step (the
 * daemon stops once the dump is read): every run goes on where the last
 * one's spooled batch left it; each warning goes out exactly once.
 */
static void test_restart_mid_backfill(void **state)
{
	enum { N = 2 * TWL_AGENT_JOURNAL_STEP + 500 };
	static const uint64_t at[] = { 100, TWL_AGENT_JOURNAL_STEP + 100,
				       2 * TWL_AGENT_JOURNAL_STEP + 100 };
	char *dir = setup(true), msg[64];
	struct exp e = { 0 };
	struct spool sp;
	size_t k;
	int run;

	(void)state;
	twl_buf_init(&e.b, 8 << 20);
	exp_boot(&e, A, BASE_A, "6.1.0-a", 0);
	for (uint64_t i = 1; i < N; i++) {
		bool warn = i == at[0] || i == at[1] || i == at[2];

		snprintf(msg, sizeof(msg), "filler record %llu",
			 (unsigned long long)i);
		exp_kernel(&e, A, BASE_A, i * 1000, 0, 6, warn ? SOFT : msg);
	}
	exp_kernel(&e, C, BASE_C, 7000000, 0, 4, MOVE);
	journal_file(dir, "system.journal", &e);
	test_write(dir, "kmsg", "5,0,0,-;Linux version 6.3.0-c\n");

	for (run = 1; run <= 4; run++) {
		assert_int_equal(run_daemon(dir), 0);
		spool_load(dir, &sp);
		/* Run r has sent the first r warnings of A, each once. */
		for (k = 0; k < 3; k++)
			assert_int_equal(count_warning(&sp,
						       "memcg_v1.soft_limit", A,
						       at[k] * 1000, NULL),
					 k < (size_t)run ? 1 : 0);
		assert_int_equal(count_warning(&sp, "memcg_v1.move_charge",
					       C_UUID, 7000000, NULL),
				 run >= 3 ? 1 : 0);
		spool_free(&sp);
	}
	test_rmtree(dir);
}

/* A corrupt journal file is skipped and counted; the good one is read. */
static void test_corrupt_file(void **state)
{
	char *dir = setup(true), path[PATH_MAX], *text = NULL, *log;
	struct exp e = { 0 };
	struct spool sp;
	size_t len;

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_boot(&e, C, BASE_C, "6.3.0-c", 0);
	exp_kernel(&e, C, BASE_C, 5000000, 0, 4, OOM);
	journal_file(dir, "system.journal", &e);
	snprintf(path, sizeof(path), "%s/journal/%s/system.journal", dir,
		 MACHINE);
	assert_int_equal(twl_read_file(path, 64 << 20, &text, &len), 0);
	memcpy(text, "GARBAGE!", 8); /* the header's signature */
	snprintf(path, sizeof(path), "%s/journal/%s/system@bad.journal", dir,
		 MACHINE);
	{
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, len, f), len);
		assert_int_equal(fclose(f), 0);
	}
	free(text);
	test_write(dir, "kmsg", "5,0,0,-;Linux version 6.3.0-c\n");
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(count_warning(&sp, "memcg_v1.oom_control", C_UUID,
				       5000000, NULL),
			 1);
	assert_int_equal(health_int(&sp, "journal_errors"), 1);
	spool_free(&sp);
	log = test_path(dir, "log");
	assert_int_equal(twl_read_file(log, 1 << 20, &text, &len), 0);
	if (!strstr(text, "journal: skipping ") ||
	    !strstr(text, "system@bad.journal"))
		fail_msg("the corrupt file is not named in the log:\n%s", text);
	free(text);
	free(log);
	test_rmtree(dir);
}

/*
 * The journal holds this boot only from 500 s on and /dev/kmsg from
 * record 57: the start of the boot is not covered, in health and in the
 * log. An earlier boot without its "Linux version" line: kernel unknown.
 */
static void test_start_not_covered(void **state)
{
	char *dir = setup(true), *log, *text = NULL;
	const char *kernel = NULL;
	struct exp e = { 0 };
	struct spool sp;
	size_t len;
	json_t *b;

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_kernel(&e, B, BASE_B, 800000000, 0, 4, MOVE);
	exp_kernel(&e, C, BASE_C, 500000000, 0, 4, SOFT);
	journal_file(dir, "system.journal", &e);
	test_write(dir, "kmsg", "6,57,499000000,-;late\n");
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	b = boot_health(&sp, C_UUID);
	assert_int_equal(
		json_integer_value(json_object_get(b, "first_kmsg_seq")), 57);
	assert_int_equal(
		json_integer_value(json_object_get(b, "first_journal_us")),
		500000000);
	assert_false(json_is_true(json_object_get(b, "start_covered")));
	b = boot_health(&sp, B);
	assert_false(json_is_true(json_object_get(b, "start_covered")));
	assert_null(json_object_get(b, "kernel"));
	assert_int_equal(count_warning(&sp, "memcg_v1.move_charge", B,
				       800000000, &kernel),
			 1);
	assert_string_equal(kernel, "unknown");
	spool_free(&sp);
	log = test_path(dir, "log");
	assert_int_equal(twl_read_file(log, 1 << 20, &text, &len), 0);
	if (!strstr(text, "this boot " C_UUID) ||
	    !strstr(text, "its start is NOT covered; /dev/kmsg from record 57"))
		fail_msg("the log does not say the start is not covered:\n%s",
			 text);
	free(text);
	free(log);
	test_rmtree(dir);
}

/*
 * The journal's directory cannot be listed (a symlink loop): the daemon
 * says so with what to check, and /dev/kmsg's records still go out.
 */
static void test_journal_unreadable(void **state)
{
	char *dir = setup(true), path[PATH_MAX], *log, *text = NULL;
	struct spool sp;
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%s/journal/%s", dir, MACHINE);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(symlink(MACHINE, path), 0);
	test_write(dir, "kmsg", "4,1,5000000,-;" OOM "\n");
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(count_warning(&sp, "memcg_v1.oom_control", C_UUID,
				       5000000, NULL),
			 1);
	spool_free(&sp);
	log = test_path(dir, "log");
	assert_int_equal(twl_read_file(log, 1 << 20, &text, &len), 0);
	if (!strstr(text, "journal: cannot read ") ||
	    !strstr(text, "group systemd-journal"))
		fail_msg("the unreadable journal is not in the log:\n%s", text);
	free(text);
	free(log);
	test_rmtree(dir);
}

/* journal = false: the journal is not read, only /dev/kmsg. */
static void test_journal_off(void **state)
{
	char *dir = setup(false), path[PATH_MAX];
	struct exp e = { 0 };
	struct spool sp;
	struct stat st;

	(void)state;
	twl_buf_init(&e.b, 1 << 20);
	exp_boot(&e, A, BASE_A, "6.1.0-a", 0);
	exp_kernel(&e, A, BASE_A, 3000000, 0, 4, SOFT);
	journal_file(dir, "system.journal", &e);
	test_write(dir, "kmsg", "4,1,5000000,-;" OOM "\n");
	assert_int_equal(run_daemon(dir), 0);
	spool_load(dir, &sp);
	assert_int_equal(total_warnings(&sp), 1);
	assert_null(json_object_get(json_object_get(sp.docs[0], "health"),
				    "journal_errors"));
	spool_free(&sp);
	snprintf(path, sizeof(path), "%s/state/%s", dir,
		 TWL_JOURNAL_STATE_FILE);
	assert_int_not_equal(stat(path, &st), 0);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_backfill_once, kill_children),
		cmocka_unit_test_teardown(test_restart_mid_backfill,
					  kill_children),
		cmocka_unit_test_teardown(test_corrupt_file, kill_children),
		cmocka_unit_test_teardown(test_start_not_covered,
					  kill_children),
		cmocka_unit_test_teardown(test_journal_unreadable,
					  kill_children),
		cmocka_unit_test_teardown(test_journal_off, kill_children),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
