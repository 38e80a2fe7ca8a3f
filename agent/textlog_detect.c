// SPDX-License-Identifier: GPL-2.0
/* Text log forms: names, the line dispatcher and detection (textlog.h). */
#include "textlog_int.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *source, *name;
} formats[TWL_LOG_FORMAT_COUNT] = {
	[TWL_LOG_NONE] = { "", "unknown" },
	[TWL_LOG_KMSG] = { "kmsg", "/dev/kmsg dump" },
	[TWL_LOG_JOURNAL] = { "journal", "journal" },
	[TWL_LOG_JOURNAL_JSON] = { "journal_json", "journalctl -o json" },
	[TWL_LOG_JOURNAL_EXPORT] = { "journal_export", "journalctl -o export" },
	[TWL_LOG_DMESG] = { "dmesg", "dmesg" },
	[TWL_LOG_DMESG_T] = { "dmesg", "dmesg -t" },
	[TWL_LOG_DMESG_RAW] = { "dmesg_raw", "dmesg -r" },
	[TWL_LOG_DMESG_X] = { "dmesg_x", "dmesg -x" },
	[TWL_LOG_JCTL_SHORT] = { "journalctl_short", "journalctl -o short" },
	[TWL_LOG_JCTL_ISO] = { "journalctl_iso", "journalctl -o short-iso" },
	[TWL_LOG_JCTL_PRECISE] = { "journalctl_precise",
				   "journalctl -o short-precise" },
	[TWL_LOG_JCTL_MONOTONIC] = { "journalctl_monotonic",
				     "journalctl -o short-monotonic" },
	[TWL_LOG_SYSLOG_RFC3164] = { "syslog_rfc3164", "syslog (RFC 3164)" },
	[TWL_LOG_SYSLOG_RFC5424] = { "syslog_rfc5424",
				     "syslog (RFC 3339/5424 time)" },
};

const char *twl_log_format_source(enum twl_log_format f)
{
	return (unsigned)f < TWL_LOG_FORMAT_COUNT ? formats[f].source : "";
}

const char *twl_log_format_name(enum twl_log_format f)
{
	return (unsigned)f < TWL_LOG_FORMAT_COUNT ? formats[f].name : "unknown";
}

const char *twl_log_origin(const struct twl_log_record *r)
{
	return r->verified ? "journal" : "unverified";
}

bool twl_log_kernel_release(const char *text, char *out, size_t cap)
{
	static const char pre[] = "Linux version ";
	size_t n = 0;

	if (!cap || strncmp(text, pre, sizeof(pre) - 1))
		return false;
	text += sizeof(pre) - 1;
	while (text[n] && text[n] != ' ' && n < cap - 1)
		n++;
	memcpy(out, text, n);
	out[n] = '\0';
	return true;
}

int twl_log_parse_line(enum twl_log_format f, const char *line, size_t len,
		       struct twl_log_ctx *ctx, struct twl_log_record *out,
		       struct twl_log_parse *res)
{
	memset(res, 0, sizeof(*res));
	tl_record_reset(out, f);
	if (len > TWL_LOG_LINE_MAX)
		return tl_fail(res, -E2BIG, "line too long");
	if (!len) {
		res->kind = TWL_LINE_SKIP;
		return 0;
	}
	switch (f) {
	case TWL_LOG_KMSG:
	case TWL_LOG_DMESG:
	case TWL_LOG_DMESG_T:
	case TWL_LOG_DMESG_RAW:
	case TWL_LOG_DMESG_X:
		return tl_parse_dmesg(f, line, len, out, res);
	case TWL_LOG_JOURNAL_JSON:
		return tl_parse_json(line, len, out, res);
	case TWL_LOG_JCTL_SHORT:
	case TWL_LOG_JCTL_ISO:
	case TWL_LOG_JCTL_PRECISE:
	case TWL_LOG_JCTL_MONOTONIC:
	case TWL_LOG_SYSLOG_RFC3164:
	case TWL_LOG_SYSLOG_RFC5424:
		return tl_parse_syslog(f, line, len, ctx, out, res);
	default:
		return tl_fail(res, -EINVAL, "not a line-based form");
	}
}

/* An export field line "KEY=value" (the "KEY" lines of binary fields are rare). */
static bool export_line(const char *line, size_t len)
{
	const char *eq = memchr(line, '=', len);

	return eq && twl_jfields_key_valid(line, (size_t)(eq - line));
}

/* Candidates in order of specificity: earlier wins a tie on score. */
static const enum twl_log_format candidates[] = {
	TWL_LOG_KMSG,		TWL_LOG_JOURNAL_JSON, TWL_LOG_JOURNAL_EXPORT,
	TWL_LOG_DMESG_X,	TWL_LOG_DMESG_RAW,    TWL_LOG_JCTL_MONOTONIC,
	TWL_LOG_DMESG,		TWL_LOG_JCTL_PRECISE, TWL_LOG_JCTL_ISO,
	TWL_LOG_SYSLOG_RFC5424, TWL_LOG_JCTL_SHORT,   TWL_LOG_SYSLOG_RFC3164,
};
#define N_CANDIDATES (sizeof(candidates) / sizeof(candidates[0]))

/* Does @line count for @f? Evidence of every parse goes to *@ev. */
static bool line_fits(enum twl_log_format f, const char *line, size_t len,
		      unsigned *ev)
{
	/* Any date will do for detection: the reference is the far future. */
	struct twl_log_ctx ctx = { .ref = (time_t)4102444800LL };
	struct twl_log_record rec;
	struct twl_log_parse res;

	if (f == TWL_LOG_JOURNAL_EXPORT)
		return export_line(line, len);
	if (twl_log_parse_line(f, line, len, &ctx, &rec, &res) < 0) {
		*ev |= res.evidence;
		return res.evidence & TL_EV_SHAPE;
	}
	if (res.kind == TWL_LINE_SKIP)
		return false;
	*ev |= res.evidence;
	/* short-monotonic only with "host kernel:"/"host name[pid]:" (dmesg looks alike). */
	if (f == TWL_LOG_JCTL_MONOTONIC)
		return res.evidence & (TL_EV_HOST_TAG | TL_EV_META);
	return true;
}

/* Two forms that read the same lines: the evidence decides. */
static enum twl_log_format tie_break(enum twl_log_format best,
				     const unsigned *score, unsigned ev)
{
	if ((best == TWL_LOG_JCTL_SHORT || best == TWL_LOG_SYSLOG_RFC3164) &&
	    score[TWL_LOG_JCTL_SHORT] == score[TWL_LOG_SYSLOG_RFC3164]) {
		if (ev & TL_EV_META)
			return TWL_LOG_JCTL_SHORT;
		if (ev & TL_EV_KSTAMP)
			return TWL_LOG_SYSLOG_RFC3164;
		return ev & TL_EV_ZERO_DAY ? TWL_LOG_JCTL_SHORT :
					     TWL_LOG_SYSLOG_RFC3164;
	}
	if ((best == TWL_LOG_JCTL_ISO || best == TWL_LOG_SYSLOG_RFC5424) &&
	    score[TWL_LOG_JCTL_ISO] == score[TWL_LOG_SYSLOG_RFC5424])
		return ev & (TL_EV_META | TL_EV_NOCOLON) &&
				       !(ev & TL_EV_KSTAMP) ?
			       TWL_LOG_JCTL_ISO :
			       TWL_LOG_SYSLOG_RFC5424;
	return best;
}

enum twl_log_format twl_log_detect(const char *const *lines, const size_t *lens,
				   size_t n)
{
	unsigned score[TWL_LOG_FORMAT_COUNT] = { 0 }, ev = 0, top = 0;
	enum twl_log_format best = TWL_LOG_NONE;
	size_t i, c;

	if (!n)
		return TWL_LOG_NONE;
	for (i = 0; i < n; i++)
		for (c = 0; c < N_CANDIDATES; c++)
			if (line_fits(candidates[c], lines[i], lens[i], &ev))
				score[candidates[c]]++;
	for (c = 0; c < N_CANDIDATES; c++) {
		if (score[candidates[c]] > top) {
			top = score[candidates[c]];
			best = candidates[c];
		}
	}
	/* At least half the lines: otherwise free text, i.e. dmesg -t. */
	if (best == TWL_LOG_NONE || 2 * (size_t)top < n)
		return TWL_LOG_DMESG_T;
	return tie_break(best, score, ev);
}
