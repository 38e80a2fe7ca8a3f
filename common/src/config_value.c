// SPDX-License-Identifier: GPL-2.0
/*
 * The value parsers of the configuration engine: booleans, integers,
 * sizes, durations, decimals and choices. Pure functions, no I/O.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <twilight/config.h>

struct unit {
	const char *suffix;
	uint64_t mult;
};

/* Contract: see config.h. */
int twl_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Leading decimal digits of @s into *@out; *@end after them. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t n = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*out = n;
	*end = s;
	return 0;
}

/* Contract: see config.h. */
int twl_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t n;
	int ret = parse_digits(s, &n, &end);

	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	if (n > max)
		return -ERANGE;
	*out = n;
	return 0;
}

/* A number followed by one of @units (the empty suffix: no unit). */
static int parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	const char *end;
	uint64_t n;
	int ret = parse_digits(s, &n, &end);

	if (ret)
		return ret;
	for (; units->suffix; units++) {
		if (strcasecmp(end, units->suffix))
			continue;
		if (n > UINT64_MAX / units->mult)
			return -ERANGE;
		*out = n * units->mult;
		return 0;
	}
	return -EINVAL;
}

/* Contract: see config.h. */
int twl_parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 },
		{ "b", 1 },
		{ "k", 1ULL << 10 },
		{ "kb", 1ULL << 10 },
		{ "kib", 1ULL << 10 },
		{ "m", 1ULL << 20 },
		{ "mb", 1ULL << 20 },
		{ "mib", 1ULL << 20 },
		{ "g", 1ULL << 30 },
		{ "gb", 1ULL << 30 },
		{ "gib", 1ULL << 30 },
		{ "t", 1ULL << 40 },
		{ "tb", 1ULL << 40 },
		{ "tib", 1ULL << 40 },
		{ NULL, 0 },
	};

	return parse_scaled(s, units, out);
}

/* Contract: see config.h. */
int twl_parse_duration(const char *s, uint64_t unit_ms, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1000 },	{ "ms", 1 },	  { "s", 1000 },
		{ "m", 60000 }, { "h", 3600000 }, { "d", 86400000ULL },
		{ NULL, 0 },
	};
	uint64_t ms;
	int ret;

	if (!unit_ms)
		return -EINVAL;
	ret = parse_scaled(s, units, &ms);
	if (ret)
		return ret;
	if (ms % unit_ms)
		return -EINVAL;
	*out = ms / unit_ms;
	return 0;
}

/* Contract: see config.h. */
int twl_parse_double(const char *s, double *out)
{
	char *end;
	double d;

	/* strtod also takes space, "inf", "nan" and hex: refuse them first. */
	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s) ||
	    !strpbrk(s, "0123456789"))
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(d))
		return -ERANGE;
	*out = d;
	return 0;
}

/* Contract: see config.h. */
int twl_parse_choice(const char *s, const char *choices)
{
	size_t len = strlen(s);
	int i = 0;

	while (choices && *choices) {
		size_t k = strcspn(choices, "|");

		if (k == len && len && !strncasecmp(choices, s, len))
			return i;
		choices += k + (choices[k] == '|');
		i++;
	}
	return -EINVAL;
}
