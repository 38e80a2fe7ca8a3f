// SPDX-License-Identifier: GPL-2.0
/* Pure parsers for /dev/kmsg records and dmesg lines (see kmsg_parse.h). */
#include "kmsg_parse.h"

#include <errno.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Parse an unsigned decimal at @p[*i..@len) into @v, at least one digit,
 * no overflow. Advances *i.
 */
static int parse_u64(const char *p, size_t len, size_t *i, uint64_t *v)
{
	uint64_t acc = 0;
	size_t start = *i;

	while (*i < len && is_digit(p[*i])) {
		unsigned d = (unsigned)(p[*i] - '0');

		/* UINT64_MAX = 18446744073709551615: no division per digit. */
		if (acc > UINT64_MAX / 10 ||
		    (acc == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -EINVAL;
		acc = acc * 10 + d;
		(*i)++;
	}
	if (*i == start)
		return -EINVAL;
	*v = acc;
	return 0;
}

int twl_kmsg_parse_u64(const char *p, size_t len, size_t *i, uint64_t *v)
{
	return parse_u64(p, len, i, v);
}

/* Does @p[0..@n) hold a byte below 0x20? Eight bytes at a time. */
static bool has_control(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL,
		       highs = 0x8080808080808080ULL;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x;

		memcpy(&x, p + i, 8);
		if ((x - 0x20 * ones) & ~x & highs)
			return true;
	}
	for (; i < n; i++)
		if ((unsigned char)p[i] < 0x20)
			return true;
	return false;
}

int twl_kmsg_unescape(const char *in, size_t len, bool strict, char *out,
		      size_t cap, size_t *out_len)
{
	size_t i = 0, o = 0;

	if (cap == 0)
		return -E2BIG;
	/*
	 * Runs between backslashes are checked and copied whole; the decoded
	 * text is never longer than the input, so capacity is checked per run.
	 */
	while (i < len) {
		const char *bs = memchr(in + i, '\\', len - i);
		size_t run = bs ? (size_t)(bs - (in + i)) : len - i;
		int hi, lo;

		if (run) {
			if (strict ? has_control(in + i, run) :
				     memchr(in + i, '\0', run) != NULL)
				return -EINVAL;
			if (o + run >= cap)
				return -E2BIG;
			memcpy(out + o, in + i, run);
			o += run;
			i += run;
		}
		if (!bs)
			break;
		if (len - i >= 4 && in[i + 1] == 'x' &&
		    (hi = hexval(in[i + 2])) >= 0 &&
		    (lo = hexval(in[i + 3])) >= 0) {
			if (!(hi | lo))
				return -EINVAL; /* a decoded NUL */
			if (o + 1 >= cap)
				return -E2BIG;
			out[o++] = (char)(hi << 4 | lo);
			i += 4;
		} else if (strict) {
			return -EINVAL;
		} else {
			if (o + 1 >= cap)
				return -E2BIG;
			out[o++] = '\\';
			i++;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return 0;
}

bool twl_kmsg_is_kernel(const struct twl_kmsg_record *r)
{
	return r->facility == 0;
}

const char *twl_kmsg_origin(const struct twl_kmsg_record *r)
{
	return r->format == TWL_FMT_KMSG ? "kmsg" : "unverified";
}

static void record_reset(struct twl_kmsg_record *out, enum twl_kmsg_format fmt)
{
	out->format = fmt;
	out->level = 0;
	out->facility = -1;
	out->has_seq = false;
	out->seq = 0;
	out->mono_us = 0;
	out->flag = 0;
	out->caller[0] = '\0';
	out->text_len = 0;
	out->text[0] = '\0';
}

/* Copy a caller id ("T123", "C0") after validating it. */
static int set_caller(struct twl_kmsg_record *out, const char *p, size_t n)
{
	size_t k;

	if (n < 2 || n >= sizeof(out->caller) || (p[0] != 'T' && p[0] != 'C'))
		return -EINVAL;
	for (k = 1; k < n; k++)
		if (!is_digit(p[k]))
			return -EINVAL;
	memcpy(out->caller, p, n);
	out->caller[n] = '\0';
	return 0;
}

int twl_kmsg_parse_record(const char *buf, size_t len,
			  struct twl_kmsg_record *out)
{
	size_t i = 0, text_start, text_end, k;
	uint64_t pri, ts;
	int ret;

	record_reset(out, TWL_FMT_KMSG);
	if (len > TWL_KMSG_RECORD_MAX)
		return -E2BIG;
	if (parse_u64(buf, len, &i, &pri) || pri > 1023 || i >= len ||
	    buf[i++] != ',')
		return -EINVAL;
	if (parse_u64(buf, len, &i, &out->seq) || i >= len || buf[i++] != ',')
		return -EINVAL;
	if (parse_u64(buf, len, &i, &ts) || i >= len || buf[i++] != ',')
		return -EINVAL;
	if (i >= len || (buf[i] != '-' && buf[i] != 'c' && buf[i] != '+'))
		return -EINVAL;
	out->flag = buf[i++];
	/* Optional ",key=value" fields up to ';' (caller= since 5.1). */
	while (i < len && buf[i] == ',') {
		size_t start = ++i, eq = 0;

		while (i < len && buf[i] != ',' && buf[i] != ';' &&
		       buf[i] != '\n') {
			if (buf[i] == '=' && !eq)
				eq = i;
			i++;
		}
		if (!eq || eq == start)
			return -EINVAL;
		if (eq - start == 6 && !memcmp(buf + start, "caller", 6)) {
			ret = set_caller(out, buf + eq + 1, i - eq - 1);
			if (ret)
				return ret;
		}
	}
	if (i >= len || buf[i++] != ';')
		return -EINVAL;
	out->level = (int)(pri & 7);
	out->facility = (int)(pri >> 3);
	out->has_seq = true;
	out->mono_us = ts;

	text_start = i;
	{
		const char *nl = memchr(buf + i, '\n', len - i);

		i = nl ? (size_t)(nl - buf) : len;
	}
	text_end = i;
	/* Dictionary lines: each must start with a space and hold KEY=VALUE. */
	while (i < len) {
		i++; /* the '\n' */
		if (i >= len)
			break;
		if (buf[i] != ' ')
			return -EINVAL;
		k = i;
		while (i < len && buf[i] != '\n')
			i++;
		if (!memchr(buf + k, '=', i - k))
			return -EINVAL;
	}
	return twl_kmsg_unescape(buf + text_start, text_end - text_start, true,
				 out->text, sizeof(out->text), &out->text_len);
}

/* Parse "[   12.345678]" at @p[*i..): seconds and fraction into µs. */
static int parse_dmesg_time(const char *p, size_t len, size_t *i, uint64_t *us)
{
	uint64_t sec, frac = 0;
	size_t start;
	unsigned digits = 0;

	if (*i >= len || p[*i] != '[')
		return -EINVAL;
	(*i)++;
	while (*i < len && p[*i] == ' ')
		(*i)++;
	if (parse_u64(p, len, i, &sec) || sec > UINT64_MAX / 1000000 - 1)
		return -EINVAL;
	if (*i >= len || p[*i] != '.')
		return -EINVAL;
	(*i)++;
	start = *i;
	while (*i < len && is_digit(p[*i])) {
		if (digits < 6) {
			frac = frac * 10 + (uint64_t)(p[*i] - '0');
			digits++;
		}
		(*i)++;
	}
	if (*i == start || *i - start > 9)
		return -EINVAL;
	for (; digits < 6; digits++)
		frac *= 10;
	if (*i >= len || p[*i] != ']')
		return -EINVAL;
	(*i)++;
	*us = sec * 1000000 + frac;
	return 0;
}

int twl_dmesg_parse_stamp(const char *buf, size_t len, size_t *pos,
			  struct twl_kmsg_record *out)
{
	size_t i = *pos;

	if (parse_dmesg_time(buf, len, &i, &out->mono_us))
		return -EINVAL;
	/*
	 * Optional caller id: " [    T123]" (util-linux dmesg) or "[  T123]"
	 * right after the time (the kernel's console with PRINTK_CALLER).
	 */
	if ((i < len && buf[i] == '[') ||
	    (i + 1 < len && buf[i] == ' ' && buf[i + 1] == '[')) {
		size_t s = buf[i] == '[' ? i + 1 : i + 2, e;

		while (s < len && buf[s] == ' ')
			s++;
		e = s;
		while (e < len && buf[e] != ']' && e - s < sizeof(out->caller))
			e++;
		if (e < len && buf[e] == ']' &&
		    set_caller(out, buf + s, e - s) == 0)
			i = e + 1;
	}
	if (i < len && buf[i] == ' ')
		i++;
	*pos = i;
	return 0;
}

int twl_dmesg_parse_line(const char *buf, size_t len,
			 struct twl_kmsg_record *out)
{
	size_t i = 0;
	uint64_t pri;

	record_reset(out, TWL_FMT_DMESG);
	if (len > TWL_KMSG_RECORD_MAX)
		return -E2BIG;
	if (len && buf[0] == '<') {
		i = 1;
		if (parse_u64(buf, len, &i, &pri) || pri > 1023 || i >= len ||
		    buf[i++] != '>')
			return -EINVAL;
		out->format = TWL_FMT_DMESG_RAW;
		out->level = (int)(pri & 7);
		out->facility = (int)(pri >> 3);
	}
	if (twl_dmesg_parse_stamp(buf, len, &i, out))
		return -EINVAL;
	return twl_kmsg_unescape(buf + i, len - i, false, out->text,
				 sizeof(out->text), &out->text_len);
}

enum twl_kmsg_format twl_kmsg_detect(const char *buf, size_t len)
{
	size_t i = 0;
	uint64_t v;
	int commas = 0;

	if (!len)
		return TWL_FMT_UNKNOWN;
	if (buf[0] == '[')
		return TWL_FMT_DMESG;
	if (buf[0] == '<') {
		i = 1;
		if (parse_u64(buf, len, &i, &v) == 0 && i + 1 < len &&
		    buf[i] == '>' && buf[i + 1] == '[')
			return TWL_FMT_DMESG_RAW;
		return TWL_FMT_UNKNOWN;
	}
	/* "PRI,SEQ,TS,FLAG" */
	while (commas < 3) {
		if (parse_u64(buf, len, &i, &v) || i >= len || buf[i] != ',')
			return TWL_FMT_UNKNOWN;
		i++;
		commas++;
	}
	if (i < len && (buf[i] == '-' || buf[i] == 'c' || buf[i] == '+'))
		return TWL_FMT_KMSG;
	return TWL_FMT_UNKNOWN;
}

int twl_kmsg_parse_line(enum twl_kmsg_format fmt, const char *buf, size_t len,
			struct twl_kmsg_record *out)
{
	if (fmt == TWL_FMT_UNKNOWN)
		fmt = twl_kmsg_detect(buf, len);
	switch (fmt) {
	case TWL_FMT_KMSG:
		return twl_kmsg_parse_record(buf, len, out);
	case TWL_FMT_DMESG:
	case TWL_FMT_DMESG_RAW:
		return twl_dmesg_parse_line(buf, len, out);
	default:
		record_reset(out, TWL_FMT_UNKNOWN);
		return -EINVAL;
	}
}
