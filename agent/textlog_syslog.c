// SPDX-License-Identifier: GPL-2.0
/*
 * Lines of the form TIME HOST TAG: TEXT (textlog.h): journalctl's short,
 * short-iso, short-precise and short-monotonic output and syslog files in
 * the traditional (RFC 3164) and RFC 3339 / RFC 5424 forms.
 *
 * Only the tag "kernel" without a pid is the kernel's. Syslog files written
 * by rsyslog's imklog keep the kernel's "[ 3.018562]" stamp at the start of
 * the text; it gives the monotonic time and is removed. rsyslog escapes
 * control characters as "#ooo" (octal, "#012" for a newline); those escapes
 * (#000-#037 and #177 only) are decoded in syslog files. journalctl prints
 * text as stored and "[N blob data]" for non-text messages it did not show.
 */
#include "textlog_int.h"

#include <errno.h>
#include <string.h>

/* The tag of a line and where the text starts. */
struct tl_tagged {
	const char *host;
	size_t host_len;
	bool kernel, pid;
	size_t text; /* index of the text in the line */
};

/*
 * "[HOST ]TAG: " at @p[*i..): a tag is the first token ending in ':'; a
 * token before it is the host (journalctl --no-hostname has none).
 * Returns 1 when a tag was found, 0 for a line without one (a syslog line
 * of a program that sent no tag: not the kernel's), -EINVAL.
 */
static int host_tag(const char *p, size_t len, size_t i, struct tl_tagged *t)
{
	size_t tok = i, end;
	int n;

	memset(t, 0, sizeof(*t));
	for (n = 0; n < 2; n++) {
		end = tok;
		while (end < len && p[end] != ' ')
			end++;
		if (end == tok)
			return -EINVAL;
		if (p[end - 1] == ':')
			break;
		if (n == 1 || end >= len)
			return 0;
		t->host = p + tok;
		t->host_len = end - tok;
		tok = end + 1;
	}
	/* The tag is p[tok..end - 1). */
	end--;
	t->kernel = end - tok == 6 && !memcmp(p + tok, "kernel", 6);
	t->pid = end - tok >= 3 && p[end - 1] == ']' &&
		 memchr(p + tok, '[', end - tok) != NULL;
	end++;
	t->text = end < len && p[end] == ' ' ? end + 1 : end;
	return 1;
}

/* "#ooo" at @in[0..@len): the control byte it stands for, or -1. */
static int rsyslog_escape(const char *in, size_t len)
{
	int v;

	if (len < 4 || in[1] < '0' || in[1] > '1' || in[2] < '0' ||
	    in[2] > '7' || in[3] < '0' || in[3] > '7')
		return -1;
	v = (in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0');
	return v < 040 || v == 0177 ? v : -1;
}

/* rsyslog's "#ooo" control escapes (see the top of this file); runs between '#' copied whole. */
static int rsyslog_unescape(const char *in, size_t len, char *out, size_t cap,
			    size_t *out_len)
{
	size_t i = 0, o = 0;

	if (len >= cap)
		return -E2BIG; /* the decoded text is never longer */
	while (i < len) {
		const char *hash = memchr(in + i, '#', len - i);
		size_t run = hash ? (size_t)(hash - in) - i : len - i;
		int v;

		memcpy(out + o, in + i, run);
		o += run;
		i += run;
		if (!hash)
			break;
		v = rsyslog_escape(in + i, len - i);
		out[o++] = v < 0 ? '#' : (char)v;
		i += v < 0 ? 1 : 4;
		if (v == 0)
			return -EINVAL;
	}
	out[o] = '\0';
	*out_len = o;
	return 0;
}

static bool is_syslog(enum twl_log_format f)
{
	return f == TWL_LOG_SYSLOG_RFC3164 || f == TWL_LOG_SYSLOG_RFC5424;
}

/* The text of a kernel line at @line[@i..@len) into @out. */
static int kernel_text(enum twl_log_format f, const char *line, size_t len,
		       size_t i, struct twl_log_record *out,
		       struct twl_log_parse *res)
{
	int ret;

	/* The line has this form even if its text is refused below. */
	res->evidence |= TL_EV_SHAPE;
	if (memchr(line + i, '\0', len - i))
		return tl_fail(res, -EINVAL, "NUL byte in the line");
	if (!is_syslog(f)) {
		if (len - i > 11 && line[i] == '[' &&
		    !memcmp(line + len - 11, " blob data]", 11))
			return tl_fail(res, -EINVAL,
				       "journalctl did not show the message "
				       "(\"blob data\"; use journalctl --all)");
		if (len - i > TWL_KMSG_TEXT_MAX)
			return tl_fail(res, -E2BIG, "text too long");
		memcpy(out->k.text, line + i, len - i);
		out->k.text[len - i] = '\0';
		out->k.text_len = len - i;
		res->text_col = i;
		return 0;
	}
	if (i < len && line[i] == '[' &&
	    twl_dmesg_parse_stamp(line, len, &i, &out->k) == 0) {
		out->has_mono = true;
		res->evidence |= TL_EV_KSTAMP;
	}
	res->text_col = i;
	ret = rsyslog_unescape(line + i, len - i, out->k.text,
			       sizeof(out->k.text), &out->k.text_len);
	if (ret)
		return tl_fail(res, ret,
			       ret == -E2BIG ? "text too long" :
					       "#000 in the text");
	return 0;
}

/* HOST TAG: TEXT after the time, at @line[@i..). */
static int tagged_rest(enum twl_log_format f, const char *line, size_t len,
		       size_t i, struct twl_log_record *out,
		       struct twl_log_parse *res)
{
	struct tl_tagged t;
	int ret;

	if (i >= len || line[i] != ' ')
		return tl_fail(res, -EINVAL, "no space after the time");
	ret = host_tag(line, len, i + 1, &t);
	if (ret < 0)
		return tl_fail(res, ret, "no host or tag after the time");
	if (t.host && (t.kernel || t.pid))
		res->evidence |= TL_EV_HOST_TAG;
	/* A "<PRI>" of another facility: user space calling itself kernel. */
	if (ret == 0 || !t.kernel || out->k.facility > 0) {
		res->kind = TWL_LINE_OTHER;
		return 0;
	}
	if (t.host) {
		size_t n = t.host_len < TWL_LOG_HOST_MAX ? t.host_len :
							   TWL_LOG_HOST_MAX;

		memcpy(out->host, t.host, n);
		out->host[n] = '\0';
	}
	ret = kernel_text(f, line, len, t.text, out, res);
	if (ret)
		return ret;
	res->kind = TWL_LINE_RECORD;
	return 0;
}

/* journalctl's "-- Boot 0123...ef --", "-- Reboot --", "-- No entries --". */
static bool meta_line(const char *line, size_t len, struct twl_log_record *out,
		      struct twl_log_parse *res)
{
	if (len < 6 || memcmp(line, "-- ", 3) ||
	    memcmp(line + len - 3, " --", 3))
		return false;
	res->kind = TWL_LINE_META;
	res->evidence |= TL_EV_META;
	if (len == 8 + 32 + 3 && !memcmp(line, "-- Boot ", 8)) {
		size_t k;

		for (k = 0; k < 32; k++) {
			char c = line[8 + k];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return true;
		}
		memcpy(out->boot_id, line + 8, 32);
		out->boot_id[32] = '\0';
	}
	return true;
}

static int bsd_line(enum twl_log_format f, const char *line, size_t len,
		    struct twl_log_ctx *ctx, struct twl_log_record *out,
		    struct twl_log_parse *res)
{
	struct tl_bsd_time bt;
	size_t i = 0;

	/* An optional "<PRI>": a facility other than 0 is not the kernel. */
	if (f == TWL_LOG_SYSLOG_RFC3164 && len && line[0] == '<' &&
	    tl_parse_pri(line, len, &i, out))
		return tl_fail(res, -EINVAL, "bad <priority>");
	if (tl_bsd_time(line, len, &i, &bt))
		return tl_fail(res, -EINVAL, "no \"Mmm dd hh:mm:ss\" time");
	if (bt.has_frac != (f == TWL_LOG_JCTL_PRECISE))
		return tl_fail(res, -EINVAL,
			       bt.has_frac ?
				       "fraction of a second in the time" :
				       "no fraction of a second");
	/* journalctl prints strftime's %d: "Dec 04", never "Dec  4". */
	if (f != TWL_LOG_SYSLOG_RFC3164 && bt.mday < 10 && !bt.zero_pad)
		return tl_fail(res, -EINVAL, "space-padded day");
	if (bt.zero_pad)
		res->evidence |= TL_EV_ZERO_DAY;
	if (tl_bsd_wall(&bt, ctx, &out->wall_us))
		return tl_fail(res, -EINVAL,
			       "no such date near the file's time");
	out->has_wall = true;
	out->year_guessed = true;
	return tagged_rest(f, line, len, i, out, res);
}

/* RFC 5424 "1 TS HOST APP PROCID MSGID SD MSG" after "<PRI>". */
static int rfc5424_line(const char *line, size_t len, size_t i,
			struct twl_log_record *out, struct twl_log_parse *res)
{
	const char *field[4];
	size_t flen[4], k;
	struct tl_iso_time it;

	if (len - i < 2 || line[i] != '1' || line[i + 1] != ' ')
		return tl_fail(res, -EINVAL, "not an RFC 5424 line");
	i += 2;
	if (i < len && line[i] == '-') {
		i++;
	} else if (tl_iso_time(line, len, &i, &it) == 0) {
		out->wall_us = it.wall_us;
		out->has_wall = true;
	} else {
		return tl_fail(res, -EINVAL, "bad RFC 5424 time");
	}
	for (k = 0; k < 4; k++) { /* HOST APP PROCID MSGID */
		if (i >= len || line[i] != ' ')
			return tl_fail(res, -EINVAL, "RFC 5424 header cut");
		field[k] = line + ++i;
		while (i < len && line[i] != ' ')
			i++;
		flen[k] = (size_t)(line + i - field[k]);
		if (!flen[k])
			return tl_fail(res, -EINVAL, "empty RFC 5424 field");
	}
	/* Structured data: "-" or [..] elements, ']' escaped as "\]". */
	if (i + 1 >= len || line[i] != ' ')
		return tl_fail(res, -EINVAL, "no RFC 5424 structured data");
	i++;
	if (line[i] == '-') {
		i++;
	} else {
		while (i < len && line[i] == '[') {
			while (++i < len && line[i] != ']')
				if (line[i] == '\\')
					i++;
			if (i++ >= len)
				return tl_fail(res, -EINVAL,
					       "structured data not closed");
		}
	}
	if (flen[0] != 1 || field[0][0] != '-') {
		size_t n = flen[0] < TWL_LOG_HOST_MAX ? flen[0] :
							TWL_LOG_HOST_MAX;

		memcpy(out->host, field[0], n);
		out->host[n] = '\0';
	}
	if (flen[1] != 6 || memcmp(field[1], "kernel", 6) || flen[2] != 1 ||
	    field[2][0] != '-' || out->k.facility > 0) {
		res->kind = TWL_LINE_OTHER;
		return 0;
	}
	if (i < len && line[i] == ' ')
		i++;
	if (len - i >= 3 && !memcmp(line + i, "\xef\xbb\xbf", 3))
		i += 3; /* the BOM RFC 5424 allows before UTF-8 text */
	res->kind = TWL_LINE_RECORD;
	return kernel_text(TWL_LOG_SYSLOG_RFC5424, line, len, i, out, res);
}

static int iso_line(enum twl_log_format f, const char *line, size_t len,
		    struct twl_log_record *out, struct twl_log_parse *res)
{
	struct tl_iso_time it;
	size_t i = 0;

	if (f == TWL_LOG_SYSLOG_RFC5424 && len && line[0] == '<') {
		if (tl_parse_pri(line, len, &i, out))
			return tl_fail(res, -EINVAL, "bad <priority>");
		return rfc5424_line(line, len, i, out, res);
	}
	if (tl_iso_time(line, len, &i, &it))
		return tl_fail(res, -EINVAL, "no ISO 8601 time");
	/* RFC 3339 needs "+hh:mm"; journalctl before v255 prints "+hhmm". */
	if (!it.colon && !it.zulu) {
		if (f == TWL_LOG_SYSLOG_RFC5424)
			return tl_fail(res, -EINVAL, "UTC offset without ':'");
		res->evidence |= TL_EV_NOCOLON;
	}
	out->wall_us = it.wall_us;
	out->has_wall = true;
	return tagged_rest(f, line, len, i, out, res);
}

static int mono_line(const char *line, size_t len, struct twl_log_record *out,
		     struct twl_log_parse *res)
{
	struct twl_kmsg_record *k = &out->k;
	size_t i = 0;

	/* twl_dmesg_parse_stamp() eats the space the host needs before it. */
	if (twl_dmesg_parse_stamp(line, len, &i, k) || k->caller[0] || !i ||
	    line[i - 1] != ' ')
		return tl_fail(res, -EINVAL, "no \"[seconds]\" stamp");
	out->has_mono = true;
	return tagged_rest(TWL_LOG_JCTL_MONOTONIC, line, len, i - 1, out, res);
}

int tl_parse_syslog(enum twl_log_format f, const char *line, size_t len,
		    struct twl_log_ctx *ctx, struct twl_log_record *out,
		    struct twl_log_parse *res)
{
	if (!is_syslog(f) && meta_line(line, len, out, res))
		return 0;
	switch (f) {
	case TWL_LOG_JCTL_SHORT:
	case TWL_LOG_JCTL_PRECISE:
	case TWL_LOG_SYSLOG_RFC3164:
		return bsd_line(f, line, len, ctx, out, res);
	case TWL_LOG_JCTL_ISO:
	case TWL_LOG_SYSLOG_RFC5424:
		return iso_line(f, line, len, out, res);
	case TWL_LOG_JCTL_MONOTONIC:
		return mono_line(line, len, out, res);
	default:
		return tl_fail(res, -EINVAL, "not a syslog form");
	}
}
