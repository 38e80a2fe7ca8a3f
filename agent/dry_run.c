// SPDX-License-Identifier: GPL-2.0
/* --dry-run: print the one report that would be sent (dry_run.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "dry_run.h"

/* Read the input into the one batch: 0, or -1 after logging why not. */
static int read_input(struct twl_agent *a)
{
	int ret;

	for (;;) {
		struct pollfd pfd = { .fd = twl_kmsg_source_fd(a->src),
				      .events = POLLIN };

		ret = twl_pump_drain(a->pump);
		if (ret == -ENODATA || ret == -ENOSPC)
			break;
		if (ret < 0) {
			twl_log(LOG_ERR, "reading the kernel log failed: %s",
				strerror(-ret));
			return -1;
		}
		/* /dev/kmsg: what is there now; a FIFO: wait for its writer to finish. */
		if (!a->o->kmsg_file || pfd.fd < 0)
			break;
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			twl_log(LOG_ERR, "waiting for %s: %s", a->o->kmsg_file,
				strerror(errno));
			return -1;
		}
	}
	if (ret == -ENOSPC)
		twl_log(LOG_WARNING,
			"dry run: the input holds more than one batch; only the "
			"first is printed");
	return 0;
}

/* Each line that could not be placed, by file and line (the first few). */
static void log_failures(const struct twl_agent *a, uint64_t total)
{
	const struct twl_kmsg_failure *f;
	size_t i, n = twl_kmsg_source_failures(a->src, &f);
	const char *path = twl_agent_kmsg_path(a);

	for (i = 0; i < n; i++) {
		if (f[i].line)
			twl_log(LOG_INFO, "dry run: %s line %lu: %s", path,
				f[i].line, f[i].why);
		else
			twl_log(LOG_INFO, "dry run: %s: %s", path, f[i].why);
	}
	if (total > n)
		twl_log(LOG_INFO,
			"dry run: %llu more lines of %s could not be placed",
			(unsigned long long)(total - n), path);
}

/* Validate and print the batch's document: 0 or -1 (logged). */
static int print_document(struct twl_agent *a)
{
	struct twl_pump_stats ps;
	struct twl_verr verr;
	json_t *doc = twl_pump_document(a->pump);
	char *text = NULL;
	int ret = -1;

	if (!doc) {
		twl_log(LOG_ERR, "dry run: cannot build the report: %s",
			strerror(ENOMEM));
		return -1;
	}
	if (twl_report_validate(doc, &verr)) {
		twl_log(LOG_ERR,
			"bug: the report fails validation: %s at %s: %s",
			verr.code, verr.field, verr.reason);
		goto out;
	}
	text = json_dumps(doc, JSON_INDENT(2));
	if (!text) {
		twl_log(LOG_ERR, "dry run: cannot encode the report: %s",
			strerror(ENOMEM));
		goto out;
	}
	printf("%s\n", text);
	if (fflush(stdout)) {
		twl_log(LOG_ERR, "dry run: cannot write the report: %s",
			strerror(errno));
		goto out;
	}
	twl_pump_stats(a->pump, &ps);
	twl_log(LOG_INFO,
		"dry run: %llu warnings, %llu unknown deprecations, %llu parse failures, "
		"%llu records lost; nothing was sent or written",
		(unsigned long long)ps.warnings, (unsigned long long)ps.unknown,
		(unsigned long long)ps.parse_failures,
		(unsigned long long)ps.records_lost);
	log_failures(a, ps.parse_failures);
	ret = 0;
out:
	free(text);
	json_decref(doc);
	return ret;
}

/* Contract: see dry_run.h. */
int twl_dry_run(const struct twl_run_opts *o)
{
	struct twl_agent a;
	int rc = 1;

	memset(&a, 0, sizeof(a));
	a.o = o;
	if (o->load_config(o->load_ctx, &a.cfg, false))
		goto out;
	if (twl_agent_start(&a, true) || read_input(&a) || print_document(&a))
		goto out;
	rc = 0;
out:
	twl_agent_stop(&a);
	return rc;
}
