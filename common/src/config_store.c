// SPDX-License-Identifier: GPL-2.0
/*
 * Storing a configuration value into its field after checking it against
 * the option's type and bounds, and writing a stored value back as text.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

#define HEAP_STRING_MAX 4095 /* bytes of a malloc'd string value */
#define LIST_ITEM_MAX 512 /* bytes of a list item, NUL included */

struct unit {
	const char *suffix;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{ "T", 1ULL << 40 }, { "G", 1ULL << 30 }, { "M", 1ULL << 20 },
	{ "K", 1ULL << 10 }, { NULL, 0 },
};
static const struct unit sec_units[] = {
	{ "d", 86400 },
	{ "h", 3600 },
	{ "m", 60 },
	{ NULL, 0 },
};

/* Contract: see config_internal.h. */
bool cfg_is_text(const struct twl_cfg_opt *o)
{
	return o->kind == TWL_CFG_K_BUF || o->kind == TWL_CFG_K_HEAP ||
	       o->kind == TWL_CFG_K_ARGV;
}

/* Contract: see config_internal.h. */
const char *cfg_type_name(const struct twl_cfg_opt *o)
{
	static const char *const names[] = {
		[TWL_CFG_STRING] = "string",   [TWL_CFG_PATH] = "path",
		[TWL_CFG_URL] = "url",	       [TWL_CFG_BOOL] = "bool",
		[TWL_CFG_UINT] = "integer",    [TWL_CFG_DOUBLE] = "number",
		[TWL_CFG_SIZE] = "size",       [TWL_CFG_SECONDS] = "duration",
		[TWL_CFG_MILLIS] = "duration", [TWL_CFG_CHOICE] = "choice",
		[TWL_CFG_LIST] = "list",
	};

	if ((size_t)o->type >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[o->type];
}

static uint64_t opt_max(const struct twl_cfg_opt *o)
{
	uint64_t lim = o->kind == TWL_CFG_K_U32 ? UINT_MAX :
		       o->kind == TWL_CFG_K_INT ? INT_MAX :
						  UINT64_MAX;

	return o->max && o->max < lim ? o->max : lim;
}

/* @n with the largest unit of @units that divides it, else with @plain. */
static void format_units(uint64_t n, const struct unit *units,
			 const char *plain, char *buf, size_t cap)
{
	for (; units->suffix; units++) {
		if (n && n % units->mult == 0) {
			snprintf(buf, cap, "%llu%s",
				 (unsigned long long)(n / units->mult),
				 units->suffix);
			return;
		}
	}
	snprintf(buf, cap, "%llu%s", (unsigned long long)n, plain);
}

/* Contract: see config_internal.h. */
void cfg_format_num(const struct twl_cfg_opt *o, uint64_t n, char *buf,
		    size_t cap)
{
	switch (o->type) {
	case TWL_CFG_SIZE:
		format_units(n, size_units, "", buf, cap);
		return;
	case TWL_CFG_MILLIS:
		if (n % 1000) {
			snprintf(buf, cap, "%llums", (unsigned long long)n);
			return;
		}
		n /= 1000;
		/* fall through */
	case TWL_CFG_SECONDS:
		format_units(n, sec_units, "s", buf, cap);
		return;
	default:
		snprintf(buf, cap, "%llu", (unsigned long long)n);
	}
}

static void put_num(const struct twl_cfg_opt *o, void *f, uint64_t n)
{
	if (o->kind == TWL_CFG_K_U32)
		*(unsigned *)f = (unsigned)n;
	else if (o->kind == TWL_CFG_K_INT)
		*(int *)f = (int)n;
	else
		*(uint64_t *)f = n;
}

static uint64_t get_num(const struct twl_cfg_opt *o, const void *f)
{
	if (o->kind == TWL_CFG_K_U32)
		return *(const unsigned *)f;
	if (o->kind == TWL_CFG_K_INT)
		return *(const int *)f < 0 ? UINT64_MAX :
					     (uint64_t) * (const int *)f;
	return *(const uint64_t *)f;
}

static int range_error(const struct twl_cfg_opt *o, uint64_t n, char *why,
		       size_t cap)
{
	char v[32], lo[32], hi[32];

	cfg_format_num(o, n, v, sizeof(v));
	cfg_format_num(o, o->min, lo, sizeof(lo));
	cfg_format_num(o, opt_max(o), hi, sizeof(hi));
	snprintf(why, cap, "%s is outside the allowed range %s..%s", v, lo, hi);
	return -ERANGE;
}

static int store_number(const struct twl_cfg_opt *o, void *obj, const char *v,
			char *why, size_t cap)
{
	const char *want;
	uint64_t n = 0;
	int ret;

	switch (o->type) {
	case TWL_CFG_SIZE:
		ret = twl_parse_size(v, &n);
		want = "a size: a number with an optional unit B, K, M, G or T (KiB, MiB, ... alike)";
		break;
	case TWL_CFG_SECONDS:
		ret = twl_parse_duration(v, 1000, &n);
		want = "a duration in whole seconds: a number with an optional unit s, m, h or d";
		break;
	case TWL_CFG_MILLIS:
		ret = twl_parse_duration(v, 1, &n);
		want = "a duration: a number with an optional unit ms, s, m, h or d";
		break;
	default:
		ret = twl_parse_u64(v, UINT64_MAX, &n);
		want = "a non-negative integer";
	}
	if (ret == -ERANGE) {
		snprintf(why, cap, "number out of range");
		return ret;
	}
	if (ret) {
		snprintf(why, cap, "expected %s", want);
		return ret;
	}
	if (n < o->min || n > opt_max(o))
		return range_error(o, n, why, cap);
	put_num(o, cfg_field(o, obj), n);
	return 0;
}

static int store_double(const struct twl_cfg_opt *o, void *obj, const char *v,
			char *why, size_t cap)
{
	double d;
	int ret = twl_parse_double(v, &d);

	if (ret) {
		snprintf(why, cap, "expected a decimal number such as 2.5");
		return ret;
	}
	if ((o->dmin || o->dmax) && (d < o->dmin || d > o->dmax)) {
		snprintf(why, cap, "%g is outside the allowed range %g..%g", d,
			 o->dmin, o->dmax);
		return -ERANGE;
	}
	*(double *)cfg_field(o, obj) = d;
	return 0;
}

static bool has_control(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return true;
	return false;
}

static int check_text(const struct twl_cfg_opt *o, const char *v, char *why,
		      size_t cap)
{
	size_t max = o->kind == TWL_CFG_K_BUF ? o->size - 1 : HEAP_STRING_MAX;

	if (has_control(v))
		snprintf(why, cap, "must not contain control characters");
	else if (!*v && (o->type == TWL_CFG_PATH || o->type == TWL_CFG_URL))
		snprintf(why, cap, "must not be empty");
	else if (o->type == TWL_CFG_PATH && v[0] != '/')
		snprintf(why, cap, "must be an absolute path");
	else if (o->type == TWL_CFG_URL && (strncmp(v, "https://", 8) || !v[8]))
		snprintf(
			why, cap,
			"must be an https:// URL (TLS is required; plain http is refused)");
	else if (strlen(v) > max && o->kind != TWL_CFG_K_ARGV)
		snprintf(why, cap, "longer than %zu bytes", max);
	else
		return 0;
	return -EINVAL;
}

static int store_text(const struct twl_cfg_opt *o, void *obj, const char *v)
{
	void *f = cfg_field(o, obj);
	char *dup;

	if (o->kind == TWL_CFG_K_BUF) {
		snprintf(f, o->size, "%s", v);
	} else if (o->kind == TWL_CFG_K_ARGV) {
		*(const char **)f = v;
	} else {
		dup = strdup(v);
		if (!dup)
			return -ENOMEM;
		free(*(char **)f);
		*(char **)f = dup;
	}
	return 0;
}

/* The word at @index of a '|'-separated list into @buf. */
static void choice_word(const char *choices, int index, char *buf, size_t cap)
{
	size_t k = strcspn(choices, "|");

	while (index-- > 0 && choices[k]) {
		choices += k + 1;
		k = strcspn(choices, "|");
	}
	snprintf(buf, cap, "%.*s", (int)k, choices);
}

static int store_choice(const struct twl_cfg_opt *o, void *obj, const char *v,
			char *why, size_t cap)
{
	int i = twl_parse_choice(v, o->choices);
	char word[64];

	if (i < 0) {
		snprintf(why, cap, "must be one of %s", o->choices);
		return -EINVAL;
	}
	if (!cfg_is_text(o)) {
		put_num(o, cfg_field(o, obj), o->min + (uint64_t)i);
		return 0;
	}
	choice_word(o->choices, i, word, sizeof(word));
	return store_text(o, obj, word);
}

static size_t *list_count(const struct twl_cfg_opt *o, const void *obj)
{
	return (size_t *)((char *)obj + o->count_off);
}

/* Contract: see config_internal.h. */
void cfg_list_clear(const struct twl_cfg_opt *o, void *obj)
{
	*list_count(o, obj) = 0;
}

/* The next comma-separated item of *@s, stripped, into @item; 0 at the end. */
static size_t next_item(const char **s, char *item, size_t cap)
{
	const char *p = *s, *e;
	size_t k = strcspn(p, ","), n;

	*s = p[k] ? p + k + 1 : p + k;
	e = p + k;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = (size_t)(e - p);
	snprintf(item, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
	return n;
}

static int check_item(const struct twl_cfg_opt *o, const char *item, size_t n,
		      char *why, size_t cap)
{
	size_t k;

	if (!n)
		snprintf(why, cap, "empty item in the list");
	else if (n >= o->item_size || n >= LIST_ITEM_MAX)
		snprintf(why, cap, "item \"%.40s...\" is longer than %zu bytes",
			 item, o->item_size - 1);
	else if (has_control(item) || strchr(item, '"'))
		snprintf(
			why, cap,
			"item \"%.60s\" contains a quote or a control character",
			item);
	else if ((o->flags & TWL_CFG_KV) &&
		 ((k = strspn(
			   item,
			   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")) ==
			  0 ||
		  item[k] != '='))
		snprintf(
			why, cap,
			"item \"%.60s\" is not key=value (key: letters, digits, '_', '.', '-')",
			item);
	else
		return 0;
	return -EINVAL;
}

/* Add every item of @v, or none if one is bad or they do not fit. */
static int list_add(const struct twl_cfg_opt *o, void *obj, const char *v,
		    char *why, size_t cap)
{
	size_t *count = list_count(o, obj), room = o->size / o->item_size;
	char item[LIST_ITEM_MAX];
	const char *s = v;
	size_t n, added = 0;
	int ret;

	if (!*v) {
		*count = 0;
		return 0;
	}
	while (*s || s == v) {
		n = next_item(&s, item, sizeof(item));
		ret = check_item(o, item, n, why, cap);
		if (ret)
			return ret;
		if (*count + ++added > room) {
			snprintf(why, cap, "more than %zu items", room);
			return -EINVAL;
		}
		if (!*s && s[-1] == ',') {
			snprintf(why, cap, "empty item in the list");
			return -EINVAL;
		}
	}
	for (s = v; *s || s == v;) {
		next_item(&s, item, sizeof(item));
		snprintf((char *)cfg_field(o, obj) + *count * o->item_size,
			 o->item_size, "%s", item);
		(*count)++;
	}
	return 0;
}

/* Contract: see config_internal.h. */
int cfg_store(const struct twl_cfg_opt *o, void *obj, const char *v, char *why,
	      size_t cap)
{
	bool b;
	int ret;

	switch (o->type) {
	case TWL_CFG_BOOL:
		if (twl_parse_bool(v, &b)) {
			snprintf(why, cap, "must be true or false");
			return -EINVAL;
		}
		*(bool *)cfg_field(o, obj) = b;
		return 0;
	case TWL_CFG_UINT:
	case TWL_CFG_SIZE:
	case TWL_CFG_SECONDS:
	case TWL_CFG_MILLIS:
		return store_number(o, obj, v, why, cap);
	case TWL_CFG_DOUBLE:
		return store_double(o, obj, v, why, cap);
	case TWL_CFG_CHOICE:
		return store_choice(o, obj, v, why, cap);
	case TWL_CFG_LIST:
		return list_add(o, obj, v, why, cap);
	default:
		ret = check_text(o, v, why, cap);
		return ret ? ret : store_text(o, obj, v);
	}
}

/* Contract: see config_internal.h. */
void cfg_format(const struct twl_cfg_opt *o, const void *obj, char *buf,
		size_t cap)
{
	const void *f = cfg_field(o, obj);
	size_t i, len = 0;

	buf[0] = '\0';
	if (o->type == TWL_CFG_LIST) {
		for (i = 0; i < *list_count(o, obj) && len < cap; i++)
			len += (size_t)snprintf(
				buf + len, cap - len, "%s%s", i ? "," : "",
				(const char *)f + i * o->item_size);
	} else if (o->kind == TWL_CFG_K_BUF) {
		snprintf(buf, cap, "%s", (const char *)f);
	} else if (cfg_is_text(o)) {
		snprintf(buf, cap, "%s",
			 *(const char *const *)f ? *(const char *const *)f :
						   "");
	} else if (o->type == TWL_CFG_BOOL) {
		snprintf(buf, cap, "%s", *(const bool *)f ? "true" : "false");
	} else if (o->type == TWL_CFG_DOUBLE) {
		snprintf(buf, cap, "%g", *(const double *)f);
	} else if (o->type == TWL_CFG_CHOICE) {
		choice_word(o->choices, (int)(get_num(o, f) - o->min), buf,
			    cap);
	} else {
		cfg_format_num(o, get_num(o, f), buf, cap);
	}
}

/* Contract: see config_internal.h. */
int cfg_check_stored(const struct twl_cfg_opt *o, const void *obj, char *why,
		     size_t cap)
{
	const void *f = cfg_field(o, obj);
	double d;
	uint64_t n;

	switch (o->type) {
	case TWL_CFG_UINT:
	case TWL_CFG_SIZE:
	case TWL_CFG_SECONDS:
	case TWL_CFG_MILLIS:
		n = get_num(o, f);
		if (n < o->min || n > opt_max(o))
			return range_error(o, n, why, cap);
		return 0;
	case TWL_CFG_DOUBLE:
		d = *(const double *)f;
		if ((o->dmin || o->dmax) && !(d >= o->dmin && d <= o->dmax)) {
			snprintf(why, cap,
				 "%g is outside the allowed range %g..%g", d,
				 o->dmin, o->dmax);
			return -ERANGE;
		}
		return 0;
	case TWL_CFG_LIST:
		if (*list_count(o, obj) > o->size / o->item_size) {
			snprintf(why, cap, "more than %zu items",
				 o->size / o->item_size);
			return -ERANGE;
		}
		return 0;
	default:
		return 0;
	}
}
