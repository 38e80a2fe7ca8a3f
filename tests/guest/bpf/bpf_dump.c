// SPDX-License-Identifier: GPL-2.0
/*
 * twl-bpf-dump: the guest-side driver of the BPF usage test. Opens the usage
 * counters through the agent's loader (agent/bpf/twl_bpf.h: attach and pin,
 * or reuse the pinned links), prints one wire report (schema/wire-format.md)
 * holding every usage counter and the BPF health, checked with the wire
 * validator, and exits; with --hold it then waits to be killed (the test
 * kills it with -9 to show that pinned links keep counting).
 *
 * Usage: twl-bpf-dump [--hold] [--pin-dir DIR] [--boot-id ID]
 *                     [--privacy-cgroup keep|hash|drop]
 *                     [--privacy-comm keep|hash|drop] [--key KEY] [--verbose]
 * Exit: 0 with a valid report and at least one probe attached, 1 otherwise.
 * Stderr gets one "covered/counted" line per catalog feature (cross-check).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "twl_bpf.h"

static void read_boot_id(char *out, size_t cap)
{
	char *s = NULL;
	size_t n = 0;

	snprintf(out, cap, "00000000-0000-0000-0000-000000000000");
	if (twl_read_file("/proc/sys/kernel/random/boot_id", 64, &s, &n))
		return;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	if (n && n < cap)
		snprintf(out, cap, "%s", s);
	free(s);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int parse_mode(const char *opt, const char *v, enum twl_privacy_mode *m)
{
	if (twl_privacy_parse(v, m)) {
		fprintf(stderr,
			"twl-bpf-dump: %s wants keep, hash or drop, got '%s'\n",
			opt, v);
		return -1;
	}
	return 0;
}

/* What the command line asked for. */
struct dump_opts {
	struct twl_bpf_cfg cfg;
	char boot_id[80];
	bool hold;
};

/*
 * Fill @o from the command line; 0, or 2 (the exit status) after saying
 * what was wrong.
 */
static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	static const struct option longopts[] = {
		{ "hold", no_argument, NULL, 'H' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "boot-id", required_argument, NULL, 'b' },
		{ "privacy-cgroup", required_argument, NULL, 'c' },
		{ "privacy-comm", required_argument, NULL, 'm' },
		{ "key", required_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			o->hold = true;
			break;
		case 'p':
			o->cfg.pin_dir = optarg;
			break;
		case 'b':
			snprintf(o->boot_id, sizeof(o->boot_id), "%s", optarg);
			break;
		case 'c':
			if (parse_mode("--privacy-cgroup", optarg,
				       &o->cfg.privacy.cgroup))
				return 2;
			break;
		case 'm':
			if (parse_mode("--privacy-comm", optarg,
				       &o->cfg.privacy.comm))
				return 2;
			break;
		case 'k':
			o->cfg.privacy.key = optarg;
			break;
		case 'v':
			twl_log_init("twl-bpf-dump", LOG_DEBUG);
			o->cfg.verifier_stats = true;
			break;
		default:
			fprintf(stderr,
				"usage: twl-bpf-dump [--hold] [--pin-dir DIR] [--boot-id ID] "
				"[--privacy-cgroup M] [--privacy-comm M] [--key KEY]\n");
			return 2;
		}
	}
	return 0;
}

/*
 * Collect again, changed-only: nothing happened since the first collect, so
 * the count printed must be 0 (the test checks it).
 */
static void report_changed_since(struct twl_bpf *b, const char *boot_id)
{
	json_t *again = json_array();

	if (!again)
		return;
	fprintf(stderr, "twl-bpf-dump: changed since the first collect: %d\n",
		twl_bpf_collect(b, again, boot_id, TWL_BPF_COLLECT_CHANGED));
	json_decref(again);
}

/*
 * A whole wire report around @usage and @health (both stolen), with a fixed
 * guest host block; NULL if it could not be built.
 */
static json_t *build_report(const char *boot_id, json_t *usage, json_t *health)
{
	return json_pack(
		"{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:o, s:o}",
		"v", TWL_WIRE_VERSION, "batch_id",
		"00000000000000000000000000000001", "seq", 1, "sent_time",
		(json_int_t)time(NULL), "host", "host_id",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"hostname", "guest", "boot_id", boot_id, "kernel", "guest",
		"cgroup_mode", "hybrid", "agent_version", "0.1.0",
		"catalog_version", (int)twl_catalog_version(), "usage", usage,
		"health", health);
}

/* Check @doc with the wire validator and print it as one line; 0 or -1. */
static int print_report(json_t *doc)
{
	struct twl_verr verr;
	char *text;

	if (twl_report_validate(doc, &verr)) {
		fprintf(stderr, "twl-bpf-dump: report invalid: %s at %s: %s\n",
			verr.code, verr.field, verr.reason);
		return -1;
	}
	text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		return -1;
	printf("%s\n", text);
	fflush(stdout);
	free(text);
	return 0;
}

/* One stderr line per catalog feature, as if kmsg had warned about each now. */
static void print_coverage(struct twl_bpf *b)
{
	size_t i;

	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		fprintf(stderr,
			"twl-bpf-dump: feature %s covered=%d counted=%d missing_if_warned_now=%d\n",
			f->id, twl_bpf_covers(b, f->id),
			twl_bpf_counted(b, f->id),
			twl_bpf_probe_missing(b, f->id, now_us()));
	}
}

/* --hold: keep the process (and its links) alive until the test kills it. */
static void hold_forever(void)
{
	fprintf(stderr, "twl-bpf-dump: holding (pid %d)\n", (int)getpid());
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct dump_opts o = { .cfg = { .enable = true } };
	struct twl_bpf *b;
	json_t *doc, *usage, *health;
	int n, rc = 1;

	twl_log_init("twl-bpf-dump", LOG_INFO);
	if (parse_args(argc, argv, &o))
		return 2;
	if (!o.boot_id[0])
		read_boot_id(o.boot_id, sizeof(o.boot_id));

	b = twl_bpf_open(&o.cfg);
	if (!b) {
		fprintf(stderr,
			"twl-bpf-dump: out of memory opening the BPF counters\n");
		return 1;
	}
	usage = json_array();
	health = json_object();
	n = twl_bpf_collect(b, usage, o.boot_id, 0);
	if (n < 0)
		fprintf(stderr,
			"twl-bpf-dump: collecting the counters failed: %s\n",
			strerror(-n));
	twl_bpf_health(b, health);
	report_changed_since(b, o.boot_id);
	doc = build_report(o.boot_id, usage, health);
	if (!doc) {
		fprintf(stderr, "twl-bpf-dump: building the report failed\n");
		goto out;
	}
	if (print_report(doc))
		goto out_doc;
	print_coverage(b);
	rc = n >= 0 && twl_bpf_active(b) ? 0 : 1;
	if (o.hold)
		hold_forever();
out_doc:
	json_decref(doc);
out:
	twl_bpf_free(b);
	return rc;
}
