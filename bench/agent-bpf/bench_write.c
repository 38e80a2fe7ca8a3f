// SPDX-License-Identifier: GPL-2.0
/*
 * twl-bpf-bench-write FILE VALUE COUNT: write VALUE to FILE COUNT times
 * through one open descriptor (each write() is one cgroup_file_write() in
 * the kernel) and print "ns_per_write=<n> writes=<COUNT> failed=<k>". Runs
 * inside the QEMU guest of bench/agent-bpf/run (static, no sanitizers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	for (i = 0; i < count; i++)
		if (write(fd, argv[2], len) != (ssize_t)len)
			failed++;
	t1 = now_ns();
	close(fd);
	printf("ns_per_write=%lld writes=%ld failed=%ld\n", (t1 - t0) / count,
	       count, failed);
	return failed ? 1 : 0;
}
