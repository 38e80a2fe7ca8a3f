// SPDX-License-Identifier: GPL-2.0
/*
 * Saved text logs for bench/agent/textlog: synthetic files of every form
 * agent/textlog.h reads (the same records in each: noise and PERMILLE of
 * 1000 catalog warnings), and the reader + catalog matcher over one file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <twilight/match.h>

#include "bench_agent.h"
#include "textlog.h"

#define BOOT "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
/* 2026-12-04T05:00:00Z; the record k is at k ms (+17 us) after it. */
#define BASE_S 1796360400LL

/* /dev/kmsg dumps come from "twl_bench_agent gen". */
static const char *const forms[] = {
	"dmesg",
	"dmesg_t",
	"dmesg_x",
	"dmesg_raw",
	"journalctl_short",
	"journalctl_iso",
	"journalctl_precise",
	"journalctl_monotonic",
	"syslog_rfc3164",
	"syslog_rfc5424",
	"journal_json",
	"journal_export",
	"syslog_rfc3164_gz",
};

/* Output that may be gzip (kern.log.2.gz) or plain. */
struct out {
	FILE *f;
	gzFile gz;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->gz)
		gzwrite(o->gz, s, (unsigned)n);
	else
		fwrite(s, 1, n, o->f);
}

static void putf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* JSON string body of @t. */
static void json_text(struct out *o, const char *t)
{
	for (; *t; t++) {
		if (*t == '"' || *t == '\\')
			putf(o, "\\%c", *t);
		else if ((unsigned char)*t < 0x20)
			putf(o, "\\u%04x", (unsigned char)*t);
		else
			put(o, t, 1);
	}
}

/* @pre, then @t line by line: continuation lines indented (@indent) or re-prefixed. */
static void lines(struct out *o, char *pre, const char *t, bool indent)
{
	size_t plen = strlen(pre);

	for (;;) {
		size_t n = strcspn(t, "\n");

		put(o, pre, plen);
		put(o, t, n);
		put(o, "\n", 1);
		if (!t[n])
			return;
		t += n + 1;
		if (indent)
			memset(pre, ' ', plen);
	}
}

static void export_record(struct out *o, uint64_t mono, const char *t)
{
	putf(o,
	     "__REALTIME_TIMESTAMP=%llu\n_BOOT_ID=" BOOT
	     "\n_TRANSPORT=kernel\nSYSLOG_FACILITY=0\nSYSLOG_IDENTIFIER=kernel\n"
	     "PRIORITY=6\n_SOURCE_MONOTONIC_TIMESTAMP=%llu\n_HOSTNAME=web01\n",
	     (unsigned long long)(BASE_S * 1000000 + mono + 40),
	     (unsigned long long)mono);
	if (strchr(t, '\n')) {
		uint64_t len = strlen(t);

		put(o, "MESSAGE\n", 8);
		put(o, (const char *)&len, 8);
		putf(o, "%s\n\n", t);
	} else {
		putf(o, "MESSAGE=%s\n\n", t);
	}
}

/* One record @t (raw text) at record number @k in form @fmt. */
static void record(struct out *o, const char *fmt, unsigned long k,
		   const char *t)
{
	uint64_t mono = (uint64_t)k * 1000 + 17;
	time_t s = (time_t)(BASE_S + (int64_t)(mono / 1000000));
	char pre[128], ts[64], stamp[32];
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(stamp, sizeof(stamp), "[%5llu.%06llu]",
		 (unsigned long long)(mono / 1000000),
		 (unsigned long long)(mono % 1000000));
	if (!strcmp(fmt, "journal_json")) {
		putf(o,
		     "{\"__REALTIME_TIMESTAMP\":\"%llu\",\"_BOOT_ID\":\"" BOOT
		     "\",\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\","
		     "\"SYSLOG_IDENTIFIER\":\"kernel\",\"PRIORITY\":\"6\","
		     "\"_SOURCE_MONOTONIC_TIMESTAMP\":\"%llu\",\"_HOSTNAME\":"
		     "\"web01\",\"MESSAGE\":\"",
		     (unsigned long long)(BASE_S * 1000000 + mono + 40),
		     (unsigned long long)mono);
		json_text(o, t);
		put(o, "\"}\n", 3);
		return;
	}
	if (!strcmp(fmt, "journal_export"))
		return export_record(o, mono, t);
	if (!strncmp(fmt, "journalctl", 10)) {
		if (!strcmp(fmt, "journalctl_short"))
			strftime(ts, sizeof(ts), "%b %d %H:%M:%S", &tm);
		else if (!strcmp(fmt, "journalctl_iso"))
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S+0000", &tm);
		else if (!strcmp(fmt, "journalctl_precise"))
			snprintf(ts + strftime(ts, sizeof(ts), "%b %d %H:%M:%S",
					       &tm),
				 16, ".%06llu",
				 (unsigned long long)(mono % 1000000));
		else
			snprintf(ts, sizeof(ts), "%s", stamp);
		snprintf(pre, sizeof(pre), "%s web01 kernel: ", ts);
		return lines(o, pre, t, true);
	}
	if (!strncmp(fmt, "syslog_rfc3164", 14))
		snprintf(pre + strftime(pre, sizeof(pre), "%b %e %H:%M:%S",
					&tm),
			 64, " web01 kernel: %s ", stamp);
	else if (!strcmp(fmt, "syslog_rfc5424"))
		snprintf(pre + strftime(pre, sizeof(pre), "%Y-%m-%dT%H:%M:%S",
					&tm),
			 80, ".%06llu+00:00 web01 kernel: %s ",
			 (unsigned long long)(mono % 1000000), stamp);
	else if (!strcmp(fmt, "dmesg"))
		snprintf(pre, sizeof(pre), "%s ", stamp);
	else if (!strcmp(fmt, "dmesg_x"))
		snprintf(pre, sizeof(pre), "kern  :info  : %s ", stamp);
	else if (!strcmp(fmt, "dmesg_raw"))
		snprintf(pre, sizeof(pre), "<6>%s ", stamp);
	else
		pre[0] = '\0'; /* dmesg_t */
	/* syslog(2) readers repeat the prefix; dmesg indents. */
	lines(o, pre, t, !!strncmp(fmt, "syslog", 6));
}

int bench_gen_text(const char *fmt, const char *path, unsigned long n,
		   unsigned permille)
{
	const struct twl_catalog_message *msgs[256];
	struct out o = { 0 };
	size_t nm = bench_messages(msgs, 256), i;
	unsigned long k;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if (!strcmp(fmt, forms[i]))
			break;
	if (i == sizeof(forms) / sizeof(forms[0])) {
		fprintf(stderr, "unknown form %s\n", fmt);
		return 1;
	}
	if (strstr(fmt, "_gz"))
		o.gz = gzopen(path, "wb6");
	else
		o.f = fopen(path, "w");
	if (!o.gz && !o.f) {
		perror(path);
		return 1;
	}
	srand(42);
	for (k = 0; k < n; k++) {
		char text[1200];

		if ((unsigned)(rand() % 1000) < permille)
			bench_render(msgs[k % nm], text, sizeof(text));
		else
			snprintf(text, sizeof(text), "%s",
				 bench_noise[k % BENCH_NOISE]);
		record(&o, strstr(fmt, "_gz") ? "syslog_rfc3164" : fmt, k,
		       text);
	}
	if (o.gz ? gzclose(o.gz) != Z_OK : fclose(o.f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

int bench_parse_text(const char *path)
{
	struct twl_log_record *r = malloc(sizeof(*r));
	unsigned long long matched = 0, unknown = 0;
	struct twl_log_reader *rd;
	struct twl_log_stats st;
	struct timespec a, b;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	rd = r ? twl_log_reader_open(path, NULL) : NULL;
	if (!rd) {
		perror(path);
		free(r);
		return 1;
	}
	while ((ret = twl_log_reader_next(rd, r)) == 1) {
		if (twl_match_text(r->k.text, r->k.text_len, NULL) == 1)
			matched++;
		else if (twl_text_mentions_deprecation(r->k.text,
						       r->k.text_len))
			unknown++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	twl_log_reader_stats(rd, &st);
	printf("format %s records %llu matched %llu unknown %llu failures %llu seconds %.6f\n",
	       twl_log_format_name(twl_log_reader_format(rd)),
	       (unsigned long long)st.records, matched, unknown,
	       (unsigned long long)st.failures,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	twl_log_reader_free(rd);
	free(r);
	if (ret != -ENODATA) {
		fprintf(stderr, "read %s: %s\n", path, strerror(-ret));
		return 1;
	}
	return 0;
}
