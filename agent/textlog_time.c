// SPDX-License-Identifier: GPL-2.0
/* Timestamps of text logs and the year of yearless ones (textlog_int.h). */
#include "textlog_int.h"

#include <errno.h>
#include <string.h>

static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly @n digits at @p[*i..) into @v. */
static int fixed_digits(const char *p, size_t len, size_t *i, unsigned n,
			int *v)
{
	int acc = 0;
	unsigned k;

	if (len - *i < n)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		if (!is_digit(p[*i + k]))
			return -EINVAL;
		acc = acc * 10 + (p[*i + k] - '0');
	}
	*i += n;
	*v = acc;
	return 0;
}

/* ".f{1,9}" into microseconds (digits past six are dropped). */
static int fraction(const char *p, size_t len, size_t *i, uint32_t *usec)
{
	uint32_t acc = 0;
	unsigned n = 0;

	(*i)++; /* the '.' */
	while (*i < len && is_digit(p[*i])) {
		if (n < 6)
			acc = acc * 10 + (uint32_t)(p[*i] - '0');
		n++;
		(*i)++;
	}
	if (n == 0 || n > 9)
		return -EINVAL;
	for (; n < 6; n++)
		acc *= 10;
	*usec = acc;
	return 0;
}

/* "hh:mm:ss" with range checks (a leap second 60 is accepted). */
static int clock_time(const char *p, size_t len, size_t *i, int *h, int *m,
		      int *s)
{
	if (fixed_digits(p, len, i, 2, h) || *i >= len || p[(*i)++] != ':' ||
	    fixed_digits(p, len, i, 2, m) || *i >= len || p[(*i)++] != ':' ||
	    fixed_digits(p, len, i, 2, s))
		return -EINVAL;
	return *h > 23 || *m > 59 || *s > 60 ? -EINVAL : 0;
}

int tl_bsd_time(const char *p, size_t len, size_t *i, struct tl_bsd_time *t)
{
	size_t k = *i;
	int mon;

	memset(t, 0, sizeof(*t));
	if (len - k < 15)
		return -EINVAL;
	for (mon = 0; mon < 12; mon++)
		if (!memcmp(p + k, months[mon], 3))
			break;
	if (mon == 12 || p[k + 3] != ' ')
		return -EINVAL;
	k += 4;
	if (p[k] == ' ' && is_digit(p[k + 1])) {
		t->mday = p[k + 1] - '0';
	} else if (is_digit(p[k]) && is_digit(p[k + 1])) {
		t->mday = (p[k] - '0') * 10 + (p[k + 1] - '0');
		t->zero_pad = p[k] == '0';
	} else {
		return -EINVAL;
	}
	k += 2;
	if (t->mday < 1 || t->mday > 31 || p[k++] != ' ' ||
	    clock_time(p, len, &k, &t->hour, &t->min, &t->sec))
		return -EINVAL;
	if (k < len && p[k] == '.') {
		if (fraction(p, len, &k, &t->usec))
			return -EINVAL;
		t->has_frac = true;
	}
	t->mon = mon;
	*i = k;
	return 0;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int mon)
{
	static const int d[12] = { 31, 28, 31, 30, 31, 30,
				   31, 31, 30, 31, 30, 31 };

	return mon == 1 && leap(y) ? 29 : d[mon];
}

/* The start of hour @t->hour of @t's day as local time in year @y (seconds). */
static int64_t local_hour(const struct tl_bsd_time *t, int y)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = t->mon;
	tm.tm_mday = t->mday;
	tm.tm_hour = t->hour;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm);
}

/* The year search of tl_bsd_wall(): the hour's start, or -1. */
static int64_t choose_year(const struct tl_bsd_time *t, time_t ref, int secs)
{
	struct tm rt;
	int y, tries;

	if (!localtime_r(&ref, &rt))
		return -1;
	y = rt.tm_year + 1900;
	/*
	 * The latest year that does not put the line more than a day after
	 * the reference (the file's mtime): the day covers clock and time zone
	 * skew. Feb 29 moves back to a leap year.
	 */
	for (tries = 0; tries < 8; tries++, y--) {
		int64_t s;

		if (t->mday > month_days(y, t->mon))
			continue;
		s = local_hour(t, y);
		if (s == -1)
			return -1;
		if (s + secs <= (int64_t)ref + 86400)
			return s;
	}
	return -1;
}

int tl_bsd_wall(const struct tl_bsd_time *t, struct twl_log_ctx *ctx,
		int64_t *wall_us)
{
	int key = ((t->mon * 32 + t->mday) * 24 + t->hour) + 1;
	int secs = t->min * 60 + t->sec;
	int64_t base;

	/* Lines come in order: one mktime() per hour of the file, not per line. */
	if (ctx->hour.key == key && ctx->hour.ref == ctx->ref &&
	    ctx->hour.base_s + secs <= (int64_t)ctx->ref + 86400) {
		base = ctx->hour.base_s;
	} else {
		base = choose_year(t, ctx->ref, secs);
		if (base < 0)
			return -EINVAL;
		ctx->hour.key = key;
		ctx->hour.ref = ctx->ref;
		ctx->hour.base_s = base;
	}
	*wall_us = (base + secs) * 1000000 + t->usec;
	return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1..12). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "Z", "+hh:mm" or "+hhmm" at @p[*i..): offset east of UTC in seconds. */
static int utc_offset(const char *p, size_t len, size_t *i,
		      struct tl_iso_time *t, int *off)
{
	int sign, h, m;

	if (*i < len && p[*i] == 'Z') {
		(*i)++;
		t->zulu = true;
		*off = 0;
		return 0;
	}
	if (*i >= len || (p[*i] != '+' && p[*i] != '-'))
		return -EINVAL;
	sign = p[(*i)++] == '-' ? -1 : 1;
	if (fixed_digits(p, len, i, 2, &h))
		return -EINVAL;
	t->colon = *i < len && p[*i] == ':';
	if (t->colon)
		(*i)++;
	if (fixed_digits(p, len, i, 2, &m) || h > 23 || m > 59)
		return -EINVAL;
	*off = sign * (h * 3600 + m * 60);
	return 0;
}

int tl_iso_time(const char *p, size_t len, size_t *i, struct tl_iso_time *t)
{
	size_t k = *i;
	int y, mo, d, h, mi, s, off;
	uint32_t usec = 0;
	int64_t secs;

	memset(t, 0, sizeof(*t));
	if (fixed_digits(p, len, &k, 4, &y) || k >= len || p[k++] != '-' ||
	    fixed_digits(p, len, &k, 2, &mo) || k >= len || p[k++] != '-' ||
	    fixed_digits(p, len, &k, 2, &d) || k >= len || p[k++] != 'T' ||
	    clock_time(p, len, &k, &h, &mi, &s))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo - 1))
		return -EINVAL;
	if (k < len && p[k] == '.') {
		if (fraction(p, len, &k, &usec))
			return -EINVAL;
		t->has_frac = true;
	}
	if (utc_offset(p, len, &k, t, &off))
		return -EINVAL;
	secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	t->wall_us = (secs - off) * 1000000 + usec;
	*i = k;
	return 0;
}

void tl_record_reset(struct twl_log_record *r, enum twl_log_format f)
{
	/*
	 * Once per line, so field by field: the text (2 KiB) and the host
	 * (256 bytes) are emptied, not cleared (bench/agent: clearing them
	 * cost 8% of the parse).
	 */
	memset(&r->k, 0, offsetof(struct twl_kmsg_record, text));
	r->k.text[0] = '\0';
	r->k.facility = -1;
	r->format = f;
	r->has_level = r->facility_verified = r->has_mono = false;
	r->has_wall = r->year_guessed = r->verified = false;
	r->wall_us = 0;
	r->line = 0;
	r->host[0] = '\0';
	r->boot_id[0] = '\0';
}
