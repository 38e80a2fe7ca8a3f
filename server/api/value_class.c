// SPDX-License-Identifier: GPL-2.0
/*
 * Value classes (value_class.h): one line per kind of evidence, built in a
 * capped line buffer; a line that would pass TWL_VALUE_CLASS_MAX is cut at
 * a whole item with "...".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/value_class.h"

struct line {
	char s[TWL_VALUE_CLASS_MAX];
	size_t len;
	bool cut; /* an item did not fit */
};

/* Append to @l unless it does not fit whole (then note the cut). */
__attribute__((format(printf, 2, 3))) static void add(struct line *l,
						      const char *fmt, ...)
{
	size_t room = sizeof(l->s) - l->len - 4; /* "..." and NUL */
	va_list ap;
	int n;

	if (l->cut)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->s + l->len, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		l->s[l->len] = '\0';
		strcat(l->s, "...");
		l->cut = true;
		return;
	}
	l->len += (size_t)n;
}

static int64_t num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* "1 cgroup", "3 cgroups" */
static const char *plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

/* Contract: see value_class.h. */
char *twl_value_bytes(int64_t v, char *out, size_t cap)
{
	static const char *const units[] = { "B",   "KiB", "MiB", "GiB",
					     "TiB", "PiB", "EiB" };
	uint64_t u = (uint64_t)v, scale = 1;
	size_t k = 0;
	double x;

	if (v < 0) {
		snprintf(out, cap, "unlimited");
		return out;
	}
	while (k + 1 < sizeof(units) / sizeof(units[0]) && u / scale >= 1024) {
		scale *= 1024;
		k++;
	}
	if (u % scale == 0) {
		snprintf(out, cap, "%" PRIu64 " %s", u / scale, units[k]);
		return out;
	}
	x = (double)u / (double)scale;
	/* 1023.96 KiB would print as "1024.0 KiB": say "1.0 MiB" */
	if (x >= 1023.95 && k + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024;
		k++;
	}
	snprintf(out, cap, "%.1f %s", x, units[k]);
	return out;
}

/* "0x3 (bits 0,1)", "0x0 (no bits)" */
static void add_bitmask(struct line *l, int64_t v)
{
	uint64_t u = (uint64_t)v;
	bool first = true;

	add(l, "0x%" PRIx64 " (", u);
	if (!u)
		add(l, "no bits");
	for (int b = 0; b < 64; b++) {
		if (!(u >> b & 1))
			continue;
		if (first)
			add(l, "bit%s ", (u & (u - 1)) ? "s" : "");
		add(l, "%s%d", first ? "" : ",", b);
		first = false;
	}
	add(l, ")");
}

/* One value as its kind shows it. */
static void add_value(struct line *l, const char *kind, int64_t v)
{
	char b[32];

	if (!strcmp(kind, "bytes"))
		add(l, "%s", twl_value_bytes(v, b, sizeof(b)));
	else if (!strcmp(kind, "bitmask"))
		add_bitmask(l, v);
	else
		add(l, "%" PRId64, v);
}

/* "256 MiB-8 GiB", or one value when min = max. */
static void add_range(struct line *l, const char *kind, const json_t *o)
{
	add_value(l, kind, num(o, "min"));
	if (num(o, "max") != num(o, "min")) {
		add(l, "-");
		add_value(l, kind, num(o, "max"));
	}
}

/* " by a, b and 2 more" from a value's names and its process count. */
static void add_names(struct line *l, const json_t *v)
{
	const json_t *names = json_object_get(v, "names");
	size_t i, n = json_array_size(names);
	int64_t procs = num(v, "processes");

	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(names, i));

		add(l, "%s%s", i ? ", " : " by ", s ? s : "?");
	}
	if (procs > (int64_t)n && n)
		add(l, " and %" PRId64 " more", procs - (int64_t)n);
}

/* A line @l (not empty) appended to @arr; -ENOMEM. */
static int push(json_t *arr, const struct line *l)
{
	return json_array_append_new(arr, json_string(l->s)) ? -ENOMEM : 0;
}

/*
 * bytes written: "NAME set on N cgroups on H hosts: MIN-MAX; reset to
 * unlimited by P processes", or only the resets.
 */
static int bytes_written(json_t *arr, const char *name, const json_t *w)
{
	const json_t *set = json_object_get(w, "set");
	const json_t *unl = json_object_get(w, "unlimited");
	struct line l = { .len = 0 };

	add(&l, "%s", name);
	if (num(set, "cgroups") > 0) {
		add(&l, " set on %" PRId64 " cgroup%s on %" PRId64 " host%s: ",
		    num(set, "cgroups"), plural(num(set, "cgroups")),
		    num(set, "hosts"), plural(num(set, "hosts")));
		add_range(&l, "bytes", w);
		if (num(unl, "cgroups") > 0)
			add(&l, "; reset to unlimited by %" PRId64 " process%s",
			    num(unl, "processes"),
			    num(unl, "processes") == 1 ? "" : "es");
	} else if (num(unl, "cgroups") > 0) {
		add(&l,
		    " only reset to unlimited: %" PRId64 " cgroup%s on %" PRId64
		    " host%s, by %" PRId64 " process%s",
		    num(unl, "cgroups"), plural(num(unl, "cgroups")),
		    num(unl, "hosts"), plural(num(unl, "hosts")),
		    num(unl, "processes"),
		    num(unl, "processes") == 1 ? "" : "es");
	} else {
		return 0;
	}
	return push(arr, &l);
}

/* bytes configured (census): "NAME configured on N cgroups on H hosts
 * (census): MIN-MAX". */
static int bytes_configured(json_t *arr, const char *name, const json_t *c)
{
	struct line l = { .len = 0 };

	if (num(c, "cgroups") <= 0 || json_is_null(json_object_get(c, "min")))
		return 0;
	add(&l,
	    "%s configured on %" PRId64 " cgroup%s on %" PRId64
	    " host%s (census): ",
	    name, num(c, "cgroups"), plural(num(c, "cgroups")), num(c, "hosts"),
	    plural(num(c, "hosts")));
	add_range(&l, "bytes", c);
	return push(arr, &l);
}

/*
 * boolean: one line per value, "NAME=V written on N cgroups on H hosts
 * by a, b" (BPF) or "NAME=V on N cgroups on H hosts (census)".
 */
static int boolean_lines(json_t *arr, const char *name, const json_t *src,
			 bool census)
{
	const json_t *vals = json_object_get(src, "values"), *v;
	size_t i;
	int rc;

	json_array_foreach(vals, i, v)
	{
		struct line l = { .len = 0 };

		add(&l,
		    "%s=%" PRId64 "%s on %" PRId64 " cgroup%s on %" PRId64
		    " host%s",
		    name, num(v, "value"), census ? "" : " written",
		    num(v, "cgroups"), plural(num(v, "cgroups")),
		    num(v, "hosts"), plural(num(v, "hosts")));
		if (census)
			add(&l, " (census)");
		else
			add_names(&l, v);
		rc = push(arr, &l);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * integer, bitmask: "NAME written: 0 on 3 cgroups, 10 on 1 cgroup; by P
 * processes on H hosts", "NAME configured (census): ...; on H hosts".
 */
static int list_line(json_t *arr, const char *kind, const char *name,
		     const json_t *src, bool census)
{
	const json_t *vals = json_object_get(src, "values"), *v;
	struct line l = { .len = 0 };
	size_t i;

	if (!json_array_size(vals))
		return 0;
	add(&l, "%s %s: ", name, census ? "configured (census)" : "written");
	json_array_foreach(vals, i, v)
	{
		if (i)
			add(&l, ", ");
		add_value(&l, kind, num(v, "value"));
		add(&l, " on %" PRId64 " cgroup%s", num(v, "cgroups"),
		    plural(num(v, "cgroups")));
	}
	if (json_is_true(json_object_get(src, "values_more")))
		add(&l, ", more values");
	if (census)
		add(&l, "; on %" PRId64 " host%s", num(src, "hosts"),
		    plural(num(src, "hosts")));
	else
		add(&l, "; by %" PRId64 " process%s on %" PRId64 " host%s",
		    num(src, "processes"),
		    num(src, "processes") == 1 ? "" : "es", num(src, "hosts"),
		    plural(num(src, "hosts")));
	return push(arr, &l);
}

/* "notification listeners: N processes on H hosts" */
static int listener_line(json_t *arr, const json_t *li)
{
	struct line l = { .len = 0 };

	if (num(li, "processes") <= 0)
		return 0;
	add(&l,
	    "notification listeners: %" PRId64 " process%s on %" PRId64
	    " host%s",
	    num(li, "processes"), num(li, "processes") == 1 ? "" : "es",
	    num(li, "hosts"), plural(num(li, "hosts")));
	return push(arr, &l);
}

/* The lines of a kind's written and configured values. */
static int kind_lines(json_t *arr, const char *kind, const char *name,
		      const json_t *values)
{
	const json_t *w = json_object_get(values, "written");
	const json_t *c = json_object_get(values, "configured");
	int rc;

	if (!strcmp(kind, "bytes")) {
		rc = bytes_written(arr, name, w);
		return rc ? rc : bytes_configured(arr, name, c);
	}
	if (!strcmp(kind, "boolean")) {
		rc = boolean_lines(arr, name, w, false);
		return rc ? rc : boolean_lines(arr, name, c, true);
	}
	rc = list_line(arr, kind, name, w, false);
	return rc ? rc : list_line(arr, kind, name, c, true);
}

/* Contract: see value_class.h. */
json_t *twl_value_classes(const json_t *values)
{
	static const char *const kinds[] = { "none",	"bytes",   "boolean",
					     "integer", "bitmask", NULL };
	const char *kind = json_string_value(json_object_get(values, "kind"));
	const char *name = json_string_value(json_object_get(values, "name"));
	json_t *arr;
	size_t k;
	int rc = 0;

	for (k = 0; kind && kinds[k] && strcmp(kinds[k], kind); k++)
		;
	if (!kind || !kinds[k]) {
		errno = EINVAL;
		return NULL;
	}
	arr = json_array();
	if (!arr) {
		errno = ENOMEM;
		return NULL;
	}
	if (k)
		rc = kind_lines(arr, kind, name ? name : "value", values);
	if (!rc)
		rc = listener_line(arr, json_object_get(values, "listeners"));
	if (rc) {
		json_decref(arr);
		errno = -rc;
		return NULL;
	}
	return arr;
}

/* Contract: see value_class.h. */
int twl_value_classes_into(json_t *values)
{
	json_t *arr = twl_value_classes(values);

	if (!arr)
		return -errno;
	return json_object_set_new(values, "classes", arr) ? -ENOMEM : 0;
}
