// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the agent's input path: the /dev/kmsg record parser, the dmesg line
 * parser, format detection, and the line-mode source fed in chunks whose
 * sizes the input picks, through classification into a report. Every
 * report the pump produces must pass the shared validator; a parsed record
 * must keep the parser's invariants.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/match.h>
#include <twilight/wire.h>

#include "kmsg_parse.h"
#include "kmsg_source.h"
#include "pump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct twl_kmsg_record rec;

static void check_record(const struct twl_kmsg_record *r)
{
	if (r->text_len > TWL_KMSG_TEXT_MAX || r->text[r->text_len] != '\0' ||
	    memchr(r->text, '\0', r->text_len) || r->level < 0 || r->level > 7)
		abort();
	twl_match_text(r->text, r->text_len, NULL);
}

struct feed {
	const uint8_t *p;
	size_t len, pos;
	unsigned chunk;
};

static ssize_t feed_read(void *ctx, char *buf, size_t cap)
{
	struct feed *f = ctx;
	size_t n = f->len - f->pos;

	if (!n)
		return 0;
	if (n > f->chunk)
		n = f->chunk;
	if (n > cap)
		n = cap;
	memcpy(buf, f->p + f->pos, n);
	f->pos += n;
	return (ssize_t)n;
}

static const struct twl_kmsg_source_ops feed_ops = { .read = feed_read };

static int validate_sink(void *ctx, const char *json, size_t len)
{
	struct twl_verr err;
	json_t *doc = twl_report_parse(json, len, &err);

	if (!doc) {
		fprintf(stderr, "invalid report: %s at %s: %s\n", err.code,
			err.field, err.reason);
		abort();
	}
	json_decref(doc);
	return 0;
}

static struct twl_identity ident = {
	.host_id =
		"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
	.hostname = "fuzz",
	.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
	.kernel = "6.1.0",
	.cgroup_mode = "v1",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct twl_pump_cfg pc = { .id = &ident, .sink = validate_sink };
	struct twl_kmsg_source *src;
	struct twl_state st = { 0 };
	struct twl_pump *p;
	struct feed f;

	if (twl_kmsg_parse_record(s, size, &rec) == 0)
		check_record(&rec);
	if (twl_dmesg_parse_line(s, size, &rec) == 0)
		check_record(&rec);
	if (twl_kmsg_parse_line(twl_kmsg_detect(s, size), s, size, &rec) == 0)
		check_record(&rec);

	/* Whole input as a dump: first byte picks the read chunk size. */
	f.p = data;
	f.len = size;
	f.pos = 0;
	f.chunk = size ? 1u + (data[0] % 64u) * 37u : 1;
	src = twl_kmsg_source_new(TWL_SRC_LINES, &feed_ops, &f);
	p = twl_pump_new(&pc, &st);
	if (!src || !p)
		abort();
	twl_pump_set_source(p, src);
	if (twl_pump_drain(p) != -ENODATA)
		abort();
	if (twl_pump_flush(p, true) != 1)
		abort();
	twl_pump_free(p);
	twl_kmsg_source_free(src);
	return 0;
}
