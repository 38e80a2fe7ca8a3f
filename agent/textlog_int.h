/* SPDX-License-Identifier: GPL-2.0 */
/*
 * textlog_int: helpers shared by the textlog_*.c files only (timestamps,
 * record set-up, detection evidence). Not for other modules.
 */
#ifndef TWL_AGENT_TEXTLOG_INT_H
#define TWL_AGENT_TEXTLOG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "textlog.h"

/* Detection evidence a line parser leaves in struct twl_log_parse. */
enum {
	TL_EV_META = 1u << 0, /* journalctl "-- ... --" line */
	TL_EV_KSTAMP = 1u << 1, /* "kernel: [ 3.018562] text" (imklog) */
	TL_EV_ZERO_DAY = 1u << 2, /* "Dec 04": strftime %d, journalctl */
	TL_EV_NOCOLON = 1u << 3, /* "+0000": journalctl before v255 */
	TL_EV_HOST_TAG = 1u << 4, /* "host kernel:" or "host name[pid]:" */
	TL_EV_SHAPE = 1u << 5, /* the form's prefix was read; the text failed */
};

/* "Mmm dd hh:mm:ss[.ffffff]" as read, before a year is chosen. */
struct tl_bsd_time {
	int mon, mday, hour, min, sec; /* mon 0..11 */
	uint32_t usec;
	bool has_frac, zero_pad;
};

/*
 * tl_bsd_time - parse "Mmm dd hh:mm:ss" (day space- or zero-padded, or two
 * digits) and an optional ".f{1,9}" at @p[*@i..@len). 0 or -EINVAL.
 */
int tl_bsd_time(const char *p, size_t len, size_t *i, struct tl_bsd_time *t);

/*
 * tl_bsd_wall - @t as local time in the latest year that does not put it
 * more than a day after @ctx->ref (see textlog.h); µs since the epoch. 0
 * or -EINVAL (no such date in the eight years before the reference).
 */
int tl_bsd_wall(const struct tl_bsd_time *t, struct twl_log_ctx *ctx,
		int64_t *wall_us);

/* An ISO 8601 / RFC 3339 time as read. */
struct tl_iso_time {
	int64_t wall_us; /* UTC */
	bool has_frac, colon, zulu;
};

/*
 * tl_iso_time - parse "YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|+hh:mm|+hhmm)" at
 * @p[*@i..@len). 0 or -EINVAL.
 */
int tl_iso_time(const char *p, size_t len, size_t *i, struct tl_iso_time *t);

/* tl_record_reset - an empty record of form @f (facility -1, nothing known). */
void tl_record_reset(struct twl_log_record *r, enum twl_log_format f);

/*
 * tl_parse_pri - "<PRI>" at the start of @line: level and facility into
 * @out, *@i after the '>'. 0 or -EINVAL.
 */
int tl_parse_pri(const char *line, size_t len, size_t *i,
		 struct twl_log_record *out);

/* Parsers by family (textlog_dmesg.c, textlog_syslog.c). */
int tl_parse_dmesg(enum twl_log_format f, const char *line, size_t len,
		   struct twl_log_record *out, struct twl_log_parse *res);
int tl_parse_syslog(enum twl_log_format f, const char *line, size_t len,
		    struct twl_log_ctx *ctx, struct twl_log_record *out,
		    struct twl_log_parse *res);
int tl_parse_json(const char *line, size_t len, struct twl_log_record *out,
		  struct twl_log_parse *res);

/*
 * The bytes of a plain or gzip file (textlog_input.c). tl_input_open takes
 * @fd (closed by tl_input_close) and reads its first bytes: NULL + errno.
 * tl_input_read: 0 with *@got bytes (0 at the end), or -errno with *@msg
 * once the bytes decoded before an error have been returned (-EIO: corrupt
 * or truncated gzip data). Every later call returns the same error.
 */
struct tl_input;
struct tl_input *tl_input_open(int fd);
int tl_input_read(struct tl_input *in, char *out, size_t cap, size_t *got,
		  const char **msg);
void tl_input_close(struct tl_input *in);

/* A line parse result that fails with @why. */
static inline int tl_fail(struct twl_log_parse *res, int err, const char *why)
{
	res->why = why;
	return err;
}

#endif /* TWL_AGENT_TEXTLOG_INT_H */
