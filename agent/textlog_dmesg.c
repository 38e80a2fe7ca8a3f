// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel buffer's own text forms: /dev/kmsg dumps and dmesg, dmesg -t,
 * -r and -x (textlog.h). util-linux dmesg prints every byte it cannot show
 * as "\xNN", so a raw control byte (tab aside) means the line is not dmesg
 * output; the escapes are decoded like kmsg_parse does for dmesg.
 */
#include "textlog_int.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* util-linux's names, in facility and level order (dmesg -x). */
static const char *const facility_names[] = {
	"kern",	  "user",   "mail",   "daemon", "auth",	    "syslog",
	"lpr",	  "news",   "uucp",   "cron",	"authpriv", "ftp",
	"res0",	  "res1",   "res2",   "res3",	"local0",   "local1",
	"local2", "local3", "local4", "local5", "local6",   "local7",
};
static const char *const level_names[] = { "emerg", "alert",  "crit", "err",
					   "warn",  "notice", "info", "debug" };

/* A byte below 0x20 (tab aside) or 0x7f: eight bytes at a time, then exactly. */
static bool has_raw_control(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL,
		       highs = 0x8080808080808080ULL;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, d;

		memcpy(&x, p + i, 8);
		d = x ^ (0x7f * ones);
		if (((x - 0x20 * ones) & ~x & highs) ||
		    ((d - ones) & ~d & highs))
			break;
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return true;
	}
	return false;
}

/* A "name  :" field of dmesg -x: the index of the name in @names. */
static int x_field(const char *p, size_t len, size_t *i,
		   const char *const *names, size_t n_names)
{
	const char *colon = memchr(p + *i, ':', len - *i);
	size_t end, k;

	if (!colon)
		return -1;
	end = (size_t)(colon - p);
	k = end;
	while (k > *i && p[k - 1] == ' ')
		k--;
	for (size_t n = 0; n < n_names; n++) {
		if (strlen(names[n]) == k - *i &&
		    !memcmp(p + *i, names[n], k - *i)) {
			*i = end + 1;
			return (int)n;
		}
	}
	return -1;
}

int tl_parse_pri(const char *line, size_t len, size_t *i,
		 struct twl_log_record *out)
{
	uint64_t pri;

	*i = 1;
	if (!len || line[0] != '<' || twl_kmsg_parse_u64(line, len, i, &pri) ||
	    pri > 191 || *i >= len || line[*i] != '>')
		return -EINVAL;
	(*i)++;
	out->k.level = (int)(pri & 7);
	out->k.facility = (int)(pri >> 3);
	out->has_level = true;
	return 0;
}

/* "kern  :warn  : " at the start of @line. */
static int x_prefix(const char *line, size_t len, size_t *i,
		    struct twl_log_record *out)
{
	int fac, lvl;

	*i = 0;
	fac = x_field(line, len, i, facility_names,
		      sizeof(facility_names) / sizeof(facility_names[0]));
	if (fac < 0)
		return -EINVAL;
	lvl = x_field(line, len, i, level_names, 8);
	if (lvl < 0 || *i >= len || line[*i] != ' ')
		return -EINVAL;
	(*i)++;
	out->k.facility = fac;
	out->k.level = lvl;
	out->has_level = true;
	return 0;
}

static int parse_kmsg(const char *line, size_t len, struct twl_log_record *out,
		      struct twl_log_parse *res)
{
	int ret;

	/* Dictionary lines of the record before (" SUBSYSTEM=..."). */
	if (len && line[0] == ' ') {
		res->kind = TWL_LINE_SKIP;
		return 0;
	}
	ret = twl_kmsg_parse_record(line, len, &out->k);
	if (ret)
		return tl_fail(res, ret, "not a /dev/kmsg record");
	out->has_level = true;
	out->has_mono = true;
	res->text_col =
		(size_t)((const char *)memchr(line, ';', len) - line) + 1;
	res->kind = out->k.facility == 0 ? TWL_LINE_RECORD : TWL_LINE_OTHER;
	return 0;
}

int tl_parse_dmesg(enum twl_log_format f, const char *line, size_t len,
		   struct twl_log_record *out, struct twl_log_parse *res)
{
	size_t i = 0;
	int ret;

	if (f == TWL_LOG_KMSG)
		return parse_kmsg(line, len, out, res);
	if (has_raw_control(line, len))
		return tl_fail(res, -EINVAL, "control byte in a dmesg line");
	if (f == TWL_LOG_DMESG_RAW && tl_parse_pri(line, len, &i, out))
		return tl_fail(res, -EINVAL,
			       "no \"<priority>\" prefix (dmesg -r)");
	if (f == TWL_LOG_DMESG_X && x_prefix(line, len, &i, out))
		return tl_fail(res, -EINVAL,
			       "no \"facility:level: \" prefix (dmesg -x)");
	out->k.format = f == TWL_LOG_DMESG_RAW ? TWL_FMT_DMESG_RAW :
						 TWL_FMT_DMESG;
	/* The stamp: absent in -t, optional in -x (-x -t), else required. */
	if (f != TWL_LOG_DMESG_T && i < len && line[i] == '[' &&
	    twl_dmesg_parse_stamp(line, len, &i, &out->k) == 0)
		out->has_mono = true;
	else if (f == TWL_LOG_DMESG || f == TWL_LOG_DMESG_RAW)
		return tl_fail(res, -EINVAL, "no \"[seconds]\" stamp");
	ret = twl_kmsg_unescape(line + i, len - i, false, out->k.text,
				sizeof(out->k.text), &out->k.text_len);
	if (ret)
		return tl_fail(res, ret,
			       ret == -E2BIG ? "text too long" :
					       "\\x00 escape in the text");
	res->text_col = i;
	res->kind = out->k.facility <= 0 ? TWL_LINE_RECORD : TWL_LINE_OTHER;
	return 0;
}
