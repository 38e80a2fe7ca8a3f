// SPDX-License-Identifier: GPL-2.0
/*
 * Spool crash safety: a child spools batches in a loop and reports each id
 * whose twl_sender_submit() returned 0 through a pipe; the parent kills it with
 * SIGKILL at a random moment, reopens the spool and checks that every
 * acknowledged batch is there exactly once and intact, that at most the one
 * batch in flight is there unacknowledged, and that no temp file survives.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "sender.h"
#include "spool.h"
#include "tu_common.h"

#define ITERATIONS 60
#define MAX_K 100000

/* Deterministic payload for (iter, k): a header line then a fill pattern. */
static char *make_payload(int iter, int k, size_t *len)
{
	size_t n = 64 + (size_t)((k * 7919 + iter * 104729) % (192 * 1024));
	char *p = malloc(n + 1);
	int h;

	if (!p)
		return NULL;
	h = snprintf(p, n, "iter=%d k=%d len=%zu;", iter, k, n);
	for (size_t i = (size_t)h; i < n; i++)
		p[i] = (char)('a' + (i + (size_t)k) % 26);
	p[n] = 0;
	*len = n;
	return p;
}

static bool payload_intact(const char *p, size_t len, int *iter, int *k)
{
	size_t n = 0;
	char *exp;
	size_t elen;
	bool ok;

	if (sscanf(p, "iter=%d k=%d len=%zu;", iter, k, &n) != 3 || n != len)
		return false;
	exp = make_payload(*iter, *k, &elen);
	ok = exp && elen == len && !memcmp(exp, p, len);
	free(exp);
	return ok;
}

static struct twl_spool *open_sp(const char *dir)
{
	struct twl_spool_opts o = { .dir = dir, .max_bytes = 1ULL << 34 };

	return twl_spool_open(&o);
}

/* The agent's path: twl_sender_submit() (no network is touched by it). */
static void child(const char *dir, int iter, int wfd)
{
	struct twl_sender *s;
	struct twl_sender_cfg cfg = {
		.server_url = "https://127.0.0.1:9",
		.ca_file = "/nonexistent/ca.pem",
		.state_dir =
			dir, /* only host.key lives there; never written here */
		.spool_dir = dir,
		.spool_max_bytes = 1ULL << 34,
		.host_id = "0123abcd",
	};

	s = twl_sender_new(&cfg);
	if (!s)
		_exit(3);
	for (int k = 1; k < MAX_K; k++) {
		size_t len;
		char *p = make_payload(iter, k, &len);

		if (!p || twl_sender_submit(s, p, len))
			_exit(4);
		free(p);
		if (write(wfd, &k, sizeof(k)) != sizeof(k))
			_exit(5);
	}
	_exit(0);
}

static int count_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".tmp-", 5))
			n++;
	closedir(d);
	return n;
}

static void test_kill9_during_writes(void **state)
{
	char *dir = tu_mkdtemp("spool-crash");
	int temps_seen = 0, total_acked = 0;

	assert_non_null(dir);
	for (int iter = 0; iter < ITERATIONS; iter++) {
		static unsigned char seen[MAX_K];
		int pfd[2], k, max_ack = 0, status, unacked = 0;
		unsigned int r = 0;
		struct twl_spool_counts cnt;
		struct twl_spool *sp;
		pid_t pid;
		uint64_t id;

		assert_int_equal(pipe(pfd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(pfd[0]);
			child(dir, iter, pfd[1]);
		}
		close(pfd[1]);
		/* Wait for the first acknowledgement, then kill at random. */
		assert_int_equal(read(pfd[0], &k, sizeof(k)),
				 (ssize_t)sizeof(k));
		assert_int_equal(k, 1);
		max_ack = 1;
		assert_int_equal(getrandom(&r, sizeof(r), 0),
				 (ssize_t)sizeof(r));
		usleep(r % 40000);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		/* It died mid-loop, not by itself. */
		assert_true(WIFSIGNALED(status));

		memset(seen, 0, sizeof(seen));
		while (read(pfd[0], &k, sizeof(k)) == sizeof(k)) {
			assert_true(k == max_ack + 1); /* acks come in order */
			max_ack = k;
		}
		close(pfd[0]);
		total_acked += max_ack;
		temps_seen += count_tmp(dir);

		sp = open_sp(dir);
		assert_non_null(sp);
		assert_int_equal(count_tmp(dir), 0);
		/* A kill never leaves a torn batch behind (it would be quarantined). */
		twl_spool_counts(sp, &cnt);
		assert_int_equal(cnt.quarantined, 0);
		while (twl_spool_oldest(sp, &id) == 0) {
			char *data;
			size_t len;
			int it, kk;

			assert_int_equal(twl_spool_load(sp, id, &data, &len),
					 0);
			assert_true(payload_intact(data, len, &it, &kk));
			assert_int_equal(
				it, iter); /* earlier rounds were drained */
			assert_true(kk >= 1 && kk < MAX_K);
			assert_int_equal(seen[kk], 0); /* exactly once */
			seen[kk] = 1;
			if (kk > max_ack) {
				/* Only the batch in flight may be there unacknowledged. */
				assert_int_equal(kk, max_ack + 1);
				unacked++;
			}
			free(data);
			assert_int_equal(twl_spool_remove(sp, id), 0);
		}
		for (int i = 1; i <= max_ack; i++)
			assert_int_equal(seen[i],
					 1); /* nothing acknowledged is lost */
		assert_true(unacked <= 1);
		twl_spool_close(sp);
	}
	print_message(
		"crash test: %d batches acknowledged over %d kills, %d temp files left by kills\n",
		total_acked, ITERATIONS, temps_seen);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_during_writes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
