// SPDX-License-Identifier: GPL-2.0
/*
 * twl-bpf-bench-toggle PIN_DIR LINKS ROUNDS COUNT NAME=FILE=VALUE...
 *
 * In-guest part of bench/agent-bpf/run. Takes over the links the loader
 * pinned in PIN_DIR (LINKS: comma-separated pin names), keeps their
 * programs loaded, detaches them, and then measures, ROUNDS times, COUNT
 * writes of VALUE to each FILE once with the programs detached ("off") and
 * once attached ("on"), back to back, alternating which goes first. Prints
 * per measurement:
 *   run mode=off|on file=NAME round=R ns_per_write=N best_ticks_per_write=B
 *       writes=COUNT failed=K
 *
 * Why not re-run the loader for every "on" run: loading (BTF parsing, the
 * verifier) takes tens of seconds under TCG, so "on" and "off" of one file
 * were that far apart, and on this shared host (2 logical cores) the speed
 * of the whole emulation changes on that scale (a busy sibling thread):
 * identical code measured 0.65..1.59. Attaching a loaded program is one
 * syscall (a fresh trampoline link: the same code path the loader's attach
 * takes), so here "on" and "off" of a file are milliseconds apart.
 *
 * best_ticks_per_write is the fastest batch of BATCH writes, timed with the
 * TSC (the guest may fall back to the jiffies clocksource under TCG; host
 * preemption only ever adds time to a batch). Only ratios matter.
 *
 * Runs only inside the QEMU guest: it attaches BPF programs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <bpf/bpf.h>

#define BATCH 100
#define MAX_LINKS 32
#define MAX_FILES 8

struct target {
	const char *name, *path, *value;
	int fd;
};

static int prog_fds[MAX_LINKS], link_fds[MAX_LINKS];
static size_t n_progs;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Take the program of the link pinned at @path and detach the link. */
static int take_link(const char *path)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd, pfd;

	if (n_progs == MAX_LINKS) {
		fprintf(stderr, "bench-toggle: more than %d links\n",
			MAX_LINKS);
		return -E2BIG;
	}
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fprintf(stderr, "bench-toggle: open pinned link %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "bench-toggle: %s is no link: %s\n", path,
			strerror(errno));
		close(fd);
		return -EINVAL;
	}
	pfd = bpf_prog_get_fd_by_id(info.prog_id);
	if (pfd < 0) {
		fprintf(stderr, "bench-toggle: program %u of %s: %s\n",
			info.prog_id, path, strerror(errno));
		close(fd);
		return -errno;
	}
	/* The pin and this fd were the link's last references: detached. */
	if (unlink(path)) {
		fprintf(stderr, "bench-toggle: unpin %s: %s\n", path,
			strerror(errno));
		close(fd);
		close(pfd);
		return -errno;
	}
	close(fd);
	prog_fds[n_progs] = pfd;
	link_fds[n_progs] = -1;
	n_progs++;
	return 0;
}

static int attach_all(void)
{
	size_t i;

	for (i = 0; i < n_progs; i++) {
		link_fds[i] = bpf_raw_tracepoint_open(NULL, prog_fds[i]);
		if (link_fds[i] < 0) {
			fprintf(stderr, "bench-toggle: attach: %s\n",
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void detach_all(void)
{
	size_t i;

	for (i = 0; i < n_progs; i++) {
		if (link_fds[i] >= 0)
			close(link_fds[i]);
		link_fds[i] = -1;
	}
}

/* Write @t's value @count times; print one "run" line. */
static int measure(const char *mode, int round, const struct target *t,
		   long count)
{
	unsigned long long tb, tn, best = 0;
	size_t len = strlen(t->value);
	long i, nb = 0, failed = 0;
	long long t0, t1;

	t0 = now_ns();
	tb = __rdtsc();
	for (i = 0; i < count; i++) {
		if (write(t->fd, t->value, len) != (ssize_t)len)
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
	printf("run mode=%s file=%s round=%d ns_per_write=%lld best_ticks_per_write=%llu writes=%ld failed=%ld\n",
	       mode, t->name, round, (t1 - t0) / count, best / BATCH, count,
	       failed);
	fflush(stdout);
	return failed ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct target tg[MAX_FILES];
	char path[4096], *links, *name, *save = NULL, *end;
	long rounds, count;
	int i, r, n_tg = 0, ret = 1;

	if (argc < 6) {
		fprintf(stderr,
			"usage: twl-bpf-bench-toggle PIN_DIR LINKS ROUNDS COUNT NAME=FILE=VALUE...\n");
		return 2;
	}
	rounds = strtol(argv[3], &end, 10);
	if (*end || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "bench-toggle: ROUNDS must be 1..1000\n");
		return 2;
	}
	count = strtol(argv[4], &end, 10);
	if (*end || count < BATCH || count > 10000000) {
		fprintf(stderr, "bench-toggle: COUNT must be %d..10000000\n",
			BATCH);
		return 2;
	}
	for (i = 5; i < argc; i++) {
		char *a = argv[i], *f, *v;

		f = strchr(a, '=');
		v = f ? strchr(f + 1, '=') : NULL;
		if (!v || n_tg == MAX_FILES) {
			fprintf(stderr,
				"bench-toggle: bad target '%s' (NAME=FILE=VALUE, at most %d)\n",
				a, MAX_FILES);
			return 2;
		}
		*f = *v = '\0';
		tg[n_tg] = (struct target){ a, f + 1, v + 1, -1 };
		tg[n_tg].fd = open(tg[n_tg].path, O_WRONLY | O_CLOEXEC);
		if (tg[n_tg].fd < 0) {
			fprintf(stderr, "bench-toggle: open %s: %s\n",
				tg[n_tg].path, strerror(errno));
			return 2;
		}
		n_tg++;
	}
	links = strdup(argv[2]);
	if (!links)
		return 2;
	for (name = strtok_r(links, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		snprintf(path, sizeof(path), "%s/%s", argv[1], name);
		if (take_link(path))
			goto out;
	}
	if (!n_progs) {
		fprintf(stderr, "bench-toggle: no links given\n");
		goto out;
	}
	for (r = 1; r <= rounds; r++) {
		for (i = 0; i < n_tg; i++) {
			/* Alternate which mode goes first, so drift cancels. */
			int on_first = (r + i) % 2;

			if (on_first && attach_all())
				goto out;
			if (measure(on_first ? "on" : "off", r, &tg[i], count))
				goto out;
			if (on_first)
				detach_all();
			else if (attach_all())
				goto out;
			if (measure(on_first ? "off" : "on", r, &tg[i], count))
				goto out;
			if (!on_first)
				detach_all();
		}
	}
	ret = 0;
out:
	detach_all();
	free(links);
	return ret;
}
