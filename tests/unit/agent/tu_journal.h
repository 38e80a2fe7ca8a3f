/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Journal files for tests, made by systemd-journal-remote from export
 * text (never this machine's journal). The test's build defines
 * JOURNAL_REMOTE (the tool's path, "" when missing: the tests fail loudly).
 */
#ifndef TU_JOURNAL_H
#define TU_JOURNAL_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twilight/util.h>

#ifndef JOURNAL_REMOTE
#error "JOURNAL_REMOTE: the build names systemd-journal-remote (tests/unit/agent/CMakeLists.txt)"
#endif

/* The machine the test journals belong to (_MACHINE_ID, the directory name). */
#define MACHINE "0123456789abcdef0123456789abcdef"

/* Two boots and when the first began (Unix us), and two warnings' texts. */
#define A "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define B "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
#define BASE_A (1796360398LL * 1000000)
#define SOFT                                                                    \
	"soft_limit_in_bytes is deprecated and will be removed. Please report " \
	"your usecase to linux-mm@kvack.org if you depend on this functionality."
#define MOVE                                                                     \
	"Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please " \
	"report your usecase to linux-mm@kvack.org if you depend on this "       \
	"functionality."

/* Export text under construction. */
struct exp {
	struct twl_buf b;
};

static inline void exp_field(struct exp *e, const char *key, const char *val,
			     size_t len)
{
	if (memchr(val, '\n', len) || memchr(val, '\0', len)) {
		uint64_t n = len;

		assert_int_equal(twl_buf_printf(&e->b, "%s\n", key), 0);
		assert_int_equal(twl_buf_append(&e->b, &n, 8), 0);
		assert_int_equal(twl_buf_append(&e->b, val, len), 0);
		assert_int_equal(twl_buf_append(&e->b, "\n", 1), 0);
	} else {
		assert_int_equal(twl_buf_printf(&e->b, "%s=%.*s\n", key,
						(int)len, val),
				 0);
	}
}

/*
 * A kernel-transport entry of @boot at @mono us (journald got it 40 us
 * later; the boot started at @base); @facility < 0: no facility field.
 */
static inline void exp_kernel(struct exp *e, const char *boot, int64_t base,
			      uint64_t mono, int facility, int prio,
			      const char *msg)
{
	char v[64];

	snprintf(v, sizeof(v), "%lld", (long long)(base + (int64_t)mono + 40));
	exp_field(e, "__REALTIME_TIMESTAMP", v, strlen(v));
	snprintf(v, sizeof(v), "%llu", (unsigned long long)mono + 40);
	exp_field(e, "__MONOTONIC_TIMESTAMP", v, strlen(v));
	exp_field(e, "_BOOT_ID", boot, 32);
	exp_field(e, "_TRANSPORT", "kernel", 6);
	if (facility >= 0) {
		snprintf(v, sizeof(v), "%d", facility);
		exp_field(e, "SYSLOG_FACILITY", v, strlen(v));
	}
	exp_field(e, "SYSLOG_IDENTIFIER", "kernel", 6);
	snprintf(v, sizeof(v), "%d", prio);
	exp_field(e, "PRIORITY", v, strlen(v));
	snprintf(v, sizeof(v), "%llu", (unsigned long long)mono);
	exp_field(e, "_SOURCE_MONOTONIC_TIMESTAMP", v, strlen(v));
	exp_field(e, "MESSAGE", msg, strlen(msg));
	exp_field(e, "_MACHINE_ID", MACHINE, 32);
	exp_field(e, "_HOSTNAME", "web01", 5);
	assert_int_equal(twl_buf_append(&e->b, "\n", 1), 0);
}

/* A boot with its "Linux version" line at 0 and @n numbered warnings. */
static inline void exp_boot(struct exp *e, const char *boot, int64_t base,
			    const char *release, int n)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "Linux version %s (gcc 12.2.0) #1 SMP",
		 release);
	exp_kernel(e, boot, base, 0, 0, 5, msg);
	for (int i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "feature %d is deprecated", i);
		exp_kernel(e, boot, base, 1000000 * (uint64_t)(i + 1), 0, 4,
			   msg);
	}
}

/* systemd-journal-remote -o @path - < @text: a real journal file. */
static inline void make_journal(const char *path, const void *text, size_t len)
{
	int in[2], status;
	pid_t pid;

	if (!JOURNAL_REMOTE[0] || access(JOURNAL_REMOTE, X_OK))
		fail_msg("systemd-journal-remote not found (\"%s\"): install "
			 "systemd-journal-remote (scripts/install-deps)",
			 JOURNAL_REMOTE);
	assert_int_equal(pipe(in), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(null, 2);
		close(in[1]);
		execl(JOURNAL_REMOTE, JOURNAL_REMOTE, "-o", path, "-",
		      (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	assert_int_equal(twl_write_all(in[1], text, len), 0);
	close(in[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("systemd-journal-remote -o %s failed (status %d)",
			 path, status);
}

static inline void make_journal_exp(const char *path, struct exp *e)
{
	make_journal(path, e->b.data, e->b.len);
	twl_buf_fini(&e->b);
}

#endif /* TU_JOURNAL_H */
