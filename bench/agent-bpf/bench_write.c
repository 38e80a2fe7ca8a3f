// SPDX-License-Identifier: GPL-2.0
/*
 * twl-bpf-bench-write FILE VALUE COUNT: write VALUE to FILE COUNT times
 * through one open descriptor (each write() is one cgroup_file_write() in
 * the kernel) and print "ns_per_write=<n> best_ticks_per_write=<b>
 * writes=<COUNT> failed=<k>". Runs inside the QEMU guest of
 * bench/agent-bpf/run (static, no sanitizers; x86-64 only, like the guest).
 *
 * best_ticks_per_write is the fastest batch of BATCH writes, timed with the
 * TSC: under TCG on a shared host, host preemption only ever adds time to a
 * batch, so the fastest batch is the least disturbed measure of the write
 * path itself. The TSC, not clock_gettime(): the guest kernel may fall back
 * to the jiffies clocksource under TCG (4 ms steps at HZ=250), far coarser
 * than a batch. Only ratios of ticks are used, so the TSC rate is irrelevant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define BATCH 1000

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long count, i, failed = 0;
	long long t0, t1;
	unsigned long long tb, tn, best = 0;
	long nb = 0;
	size_t len;
	char *end;
	int fd;

	if (argc != 4) {
		fprintf(stderr,
			"usage: twl-bpf-bench-write FILE VALUE COUNT\n");
		return 2;
	}
	count = strtol(argv[3], &end, 10);
	if (*end || count < 1 || count > 10000000) {
		fprintf(stderr,
			"twl-bpf-bench-write: COUNT must be 1..10000000, got '%s'\n",
			argv[3]);
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "twl-bpf-bench-write: open %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	len = strlen(argv[2]);
	t0 = now_ns();
	tb = __rdtsc();
	for (i = 0; i < count; i++) {
		if (write(fd, argv[2], len) != (ssize_t)len)
			failed++;
		if (++nb == BATCH) {
			tn = __rdtsc();
			if (!best || tn - tb < best)
				best = tn - tb;
			tb = tn;
			nb = 0;
		}
	}
	t1 = now_ns();
	if (!best) { /* fewer than BATCH writes: the whole run is one batch */
		if (count < BATCH)
			fprintf(stderr,
				"twl-bpf-bench-write: COUNT %ld < batch %d: best is the whole run\n",
				count, BATCH);
		best = (__rdtsc() - tb) * BATCH / count;
	}
	close(fd);
	printf("ns_per_write=%lld best_ticks_per_write=%llu writes=%ld failed=%ld\n",
	       (t1 - t0) / count, best / BATCH, count, failed);
	return failed ? 1 : 0;
}
