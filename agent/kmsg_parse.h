/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmsg_parse: pure parsers for kernel log records, no I/O.
 *
 * Two input forms are understood:
 *   /dev/kmsg records  "PRI,SEQ,TS_US,FLAG[,caller=T123][,...];text\n"
 *                      followed by dictionary lines that start with a
 *                      space (" SUBSYSTEM=..."), which are ignored;
 *   dmesg lines        "[   12.345678] text", "[   12.345678] [T123] text"
 *                      and the raw form "<4>[   12.345678] text" (dmesg -r).
 * Record text is decoded: "\xNN" escapes become the byte NN. In /dev/kmsg
 * records the kernel escapes every backslash, so a backslash that does not
 * start a valid escape there is a malformed record.
 */
#ifndef TWL_AGENT_KMSG_PARSE_H
#define TWL_AGENT_KMSG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest raw record accepted (the kernel's CONSOLE_EXT_LOG_MAX). */
#define TWL_KMSG_RECORD_MAX 8192
/* Largest decoded text accepted, NUL excluded (kernel lines are < 1 KiB). */
#define TWL_KMSG_TEXT_MAX 2048

enum twl_kmsg_format {
	TWL_FMT_UNKNOWN = 0,
	TWL_FMT_KMSG, /* /dev/kmsg record */
	TWL_FMT_DMESG, /* dmesg text: no facility */
	TWL_FMT_DMESG_RAW, /* dmesg -r: "<PRI>" prefix carries the facility */
};

struct twl_kmsg_record {
	enum twl_kmsg_format format;
	int level; /* syslog priority 0..7 */
	int facility; /* 0 = kernel; -1 when the input has none (dmesg) */
	bool has_seq; /* seq is meaningful (/dev/kmsg form only) */
	uint64_t seq;
	uint64_t mono_us; /* kernel timestamp, microseconds since boot */
	char flag; /* '-', 'c' or '+' for /dev/kmsg, 0 otherwise */
	char caller[16]; /* "T123" / "C1" or "" */
	size_t text_len; /* bytes in text, NUL excluded */
	char text[TWL_KMSG_TEXT_MAX + 1]; /* decoded, NUL-terminated */
};

/*
 * twl_kmsg_parse_record - parse one /dev/kmsg record (@len bytes at @buf,
 * as returned by one read(), possibly followed by dictionary lines, with
 * or without the final newline) into @out. Returns 0, -EINVAL for a
 * malformed record (bad prefix, bad escape, a raw control byte in the
 * text, NUL in the decoded text, dictionary line not starting with a space) or -E2BIG when the
 * record or its decoded text exceeds the caps above.
 */
int twl_kmsg_parse_record(const char *buf, size_t len,
			  struct twl_kmsg_record *out);

/*
 * twl_dmesg_parse_line - parse one dmesg line (no newline) in the plain or
 * raw ("<PRI>") form into @out. seq is 0 and has_seq false. "\xNN" escapes
 * (dmesg's own quoting) are decoded; other backslashes are kept. Returns 0,
 * -EINVAL or -E2BIG as above.
 */
int twl_dmesg_parse_line(const char *buf, size_t len,
			 struct twl_kmsg_record *out);

/*
 * twl_kmsg_parse_u64 - an unsigned decimal at @p[*@i..@len) into @v: at
 * least one digit, no overflow; *@i moves past it. 0 or -EINVAL.
 */
int twl_kmsg_parse_u64(const char *p, size_t len, size_t *i, uint64_t *v);

/*
 * twl_dmesg_parse_stamp - parse dmesg's "[   12.345678]" at @buf[*@pos..@len),
 * an optional caller id after it ("[  T123]" or " [  T123]") and one
 * space: @out->mono_us and @out->caller are set and *@pos moves to the
 * text. Returns 0, or -EINVAL when no valid stamp is there (*@pos unchanged).
 */
int twl_dmesg_parse_stamp(const char *buf, size_t len, size_t *pos,
			  struct twl_kmsg_record *out);

/*
 * twl_kmsg_detect - guess the form of one line (no newline): TWL_FMT_KMSG,
 * TWL_FMT_DMESG, TWL_FMT_DMESG_RAW or TWL_FMT_UNKNOWN. Looks only at the
 * prefix; a line of a detected form may still fail to parse.
 */
enum twl_kmsg_format twl_kmsg_detect(const char *buf, size_t len);

/*
 * twl_kmsg_parse_line - parse one line in the form @fmt (dispatches to the
 * two parsers above; TWL_FMT_UNKNOWN detects first). Same returns.
 */
int twl_kmsg_parse_line(enum twl_kmsg_format fmt, const char *buf, size_t len,
			struct twl_kmsg_record *out);

/*
 * twl_kmsg_unescape - decode "\xNN" escapes of @in[0..@len) into @out
 * (@cap bytes including the NUL). @strict: a backslash not followed by
 * "x" and two hex digits is an error (-EINVAL) instead of a literal byte.
 * A decoded NUL byte is -EINVAL. Returns 0 with *@out_len set, or -E2BIG
 * when the decoded text does not fit.
 */
int twl_kmsg_unescape(const char *in, size_t len, bool strict, char *out,
		      size_t cap, size_t *out_len);

/* twl_kmsg_is_kernel - true when @r was logged by the kernel (facility 0). */
bool twl_kmsg_is_kernel(const struct twl_kmsg_record *r);

/* twl_kmsg_origin - "kmsg" when the facility was checked, else "unverified". */
const char *twl_kmsg_origin(const struct twl_kmsg_record *r);

#endif /* TWL_AGENT_KMSG_PARSE_H */
