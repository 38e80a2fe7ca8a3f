// SPDX-License-Identifier: GPL-2.0
/*
 * twl_bench_agent: helper for bench/agent/run.
 *
 *   twl_bench_agent gen FILE N PERMILLE   write N /dev/kmsg records, PERMILLE
 *                                         of 1000 of them deprecation lines
 *   twl_bench_agent strings               the catalog's fixed strings, one a
 *                                         line (input for grep -F -f)
 *   twl_bench_agent parse FILE            read FILE through the agent's kmsg
 *                                         source, classify every record like
 *                                         the agent does; print counts and
 *                                         seconds (CLOCK_MONOTONIC)
 *   twl_bench_agent cputime OUT CMD...    run CMD with stdout to OUT; print
 *                                         its user+system CPU seconds and wall
 *                                         seconds (wait4 rusage, microseconds)
 *   twl_bench_agent gen-text FORMAT FILE N PERMILLE
 *   twl_bench_agent parse-text FILE       the same for saved text logs
 *                                         (bench_text.c, bench/agent/textlog)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/match.h>

#include "bench_agent.h"
#include "kmsg_source.h"

const char *const bench_noise[] = {
	"EXT4-fs (vda1): mounted filesystem with ordered data mode. Quota mode: none.",
	"systemd[1]: Started Journal Service.",
	"IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
	"audit: type=1400 audit(1700000000.123:45): apparmor=\"STATUS\" operation=\"profile_load\"",
	"TCP: request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies.",
	"nf_conntrack: default automatic helper assignment has been turned off for security",
	"virtio_net virtio0 ens3: renamed from eth0",
	"usb 1-1: new high-speed USB device number 2 using xhci_hcd",
	NULL,
};

/* Catalog texts with sample values in template fields. */
void bench_render(const struct twl_catalog_message *m, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i <= m->n_fields; i++) {
		if (m->n_fields == 0) {
			snprintf(out, cap, "%s", m->text);
			return;
		}
		o += (size_t)snprintf(out + o, cap - o, "%.*s",
				      (int)m->literal_lens[i], m->literals[i]);
		if (i < m->n_fields)
			o += (size_t)snprintf(
				out + o, cap - o, "%s",
				!strcmp(m->field_names[i], "pid") ? "312" :
								    "x");
	}
}

void bench_escape(const char *t, FILE *f)
{
	for (; *t; t++) {
		unsigned char c = (unsigned char)*t;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

size_t bench_messages(const struct twl_catalog_message **msgs, size_t cap)
{
	size_t i, j, n = 0;

	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *ft = twl_catalog_at(i);

		for (j = 0; j < ft->n_messages && n < cap; j++)
			msgs[n++] = &ft->messages[j];
	}
	return n;
}

static int gen(const char *path, unsigned long n, unsigned permille)
{
	const struct twl_catalog_message *msgs[256];
	size_t nm = 0;
	unsigned long k;
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	nm = bench_messages(msgs, 256);
	srand(42);
	for (k = 0; k < n; k++) {
		fprintf(f, "%d,%lu,%lu,-;", 6, k, k * 1000 + 17);
		if ((unsigned)(rand() % 1000) < permille) {
			char text[1200];

			bench_render(msgs[k % nm], text, sizeof(text));
			bench_escape(text, f);
		} else {
			fputs(bench_noise[k % BENCH_NOISE], f);
		}
		fputc('\n', f);
	}
	if (fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

static int strings(void)
{
	size_t i, j;

	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *ft = twl_catalog_at(i);

		for (j = 0; j < ft->n_messages; j++) {
			const struct twl_catalog_message *m = &ft->messages[j];
			/* The fixed part: the whole text, or a template's first literal. */
			size_t n = m->n_fields ? m->literal_lens[0] :
						 strcspn(m->text, "\n");

			while (n && m->literals[0][n - 1] == ' ')
				n--;
			printf("%.*s\n", (int)n,
			       m->n_fields ? m->literals[0] : m->text);
		}
	}
	return 0;
}

static int parse(const char *path)
{
	static struct twl_log_record rec;
	struct twl_kmsg_source_stats st;
	struct twl_kmsg_source *src;
	unsigned long long matched = 0, unknown = 0, n = 0;
	struct timespec a, b;
	struct twl_match m;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	src = twl_kmsg_source_open(path);
	if (!src) {
		perror(path);
		return 1;
	}
	while ((ret = twl_kmsg_source_next(src, &rec)) == 1) {
		n++;
		if (rec.k.facility > 0)
			continue;
		if (twl_match_text(rec.k.text, rec.k.text_len, &m) == 1)
			matched++;
		else if (twl_text_mentions_deprecation(rec.k.text,
						       rec.k.text_len))
			unknown++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	twl_kmsg_source_stats(src, &st);
	twl_kmsg_source_free(src);
	if (ret != -ENODATA) {
		fprintf(stderr, "read %s: %s\n", path, strerror(-ret));
		return 1;
	}
	printf("records %llu matched %llu unknown %llu parse_failures %llu seconds %.6f\n",
	       n, matched, unknown, (unsigned long long)st.parse_failures,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}

static int cputime(const char *out, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("wait4");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* grep -c exits 1 when nothing matched: only a crash or exec failure is fatal. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		fprintf(stderr, "%s failed (status %d)\n", argv[0], status);
		return 1;
	}
	printf("%.6f %.6f\n",
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) /
			       1e6,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "cputime"))
		return cputime(argv[2], argv + 3);
	if (argc == 5 && !strcmp(argv[1], "gen"))
		return gen(argv[2], strtoul(argv[3], NULL, 10),
			   (unsigned)atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "strings"))
		return strings();
	if (argc == 3 && !strcmp(argv[1], "parse"))
		return parse(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "gen-text"))
		return bench_gen_text(argv[2], argv[3],
				      strtoul(argv[4], NULL, 10),
				      (unsigned)atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "parse-text"))
		return bench_parse_text(argv[2]);
	fprintf(stderr,
		"usage: %s gen FILE N PERMILLE | strings | parse FILE | "
		"gen-text FORMAT FILE N PERMILLE | parse-text FILE\n",
		argv[0]);
	return 2;
}
