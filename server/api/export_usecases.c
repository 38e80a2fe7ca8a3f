// SPDX-License-Identifier: GPL-2.0
/*
 * Use cases in the text export, grouped by what upstream asks first: was
 * the use chosen or an orchestrator's default, what sets the knob, and
 * did the cgroup v2 replacement work when tried.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>

#include "api/export.h"
#include "api/export_usecases.h"

/* Indentation of the plain list and of the grouped one. */
#define ITEM_PLAIN "    - "
#define ITEM_GROUPED "      - "

static const char *member(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Order of intents: intentional, accidental, not said. */
static int intent_rank(const json_t *a)
{
	const char *i = member(a, "intent");

	if (!i)
		return 2;
	return strcmp(i, "intentional") ? 1 : 0;
}

struct uc {
	const json_t *a;
	size_t pos; /* in the store's order (creation): ties keep it */
};

static int uc_cmp(const void *pa, const void *pb)
{
	const struct uc *x = pa, *y = pb;
	const char *sx = member(x->a, "set_by"), *sy = member(y->a, "set_by");
	int d = intent_rank(x->a) - intent_rank(y->a);

	if (d)
		return d;
	if (!sx != !sy)
		return sx ? -1 : 1; /* a named setter before none */
	if (sx && (d = strcmp(sx, sy)))
		return d;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool same_group(const json_t *x, const json_t *y)
{
	const char *sx = member(x, "set_by"), *sy = member(y, "set_by");

	return intent_rank(x) == intent_rank(y) && !sx == !sy &&
	       (!sx || !strcmp(sx, sy));
}

/* A group's heading, from its first use case. */
static int group_head(struct twl_buf *b, const json_t *a, size_t n)
{
	static const char *const intents[] = {
		"Intentional", "Accidental (a default nobody chose)", NULL
	};
	const char *by = member(a, "set_by"), *in = intents[intent_rank(a)];
	struct twl_buf t;
	int rc;

	twl_buf_init(&t, 4096);
	if (in)
		rc = twl_buf_printf(&t, "%s, %s%s", in,
				    by ? "set by " : "setter not said",
				    by ? by : "");
	else if (by)
		rc = twl_buf_printf(&t, "Set by %s, intent not said", by);
	else
		rc = twl_buf_printf(&t, "Intent and setter not said");
	if (!rc)
		rc = twl_buf_printf(&t, " (%zu):", n);
	if (!rc)
		rc = twl_export_wrap(b, t.data, "    ", "      ",
				     TWL_EXPORT_WIDTH);
	twl_buf_fini(&t);
	return rc;
}

/* "2025-12-01" for Unix time @t, "unknown" when it is not one. */
static void day_of(json_int_t t, char out[16])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !gmtime_r(&tt, &tm) ||
	    !strftime(out, 16, "%Y-%m-%d", &tm))
		strcpy(out, "unknown");
}

/* How the v2 attempt went, as a clause; NULL when not said. */
static const char *tried_clause(const json_t *a)
{
	const char *t = member(a, "v2_tried");

	if (!t)
		return NULL;
	if (!strcmp(t, "works"))
		return "v2 replacement tried, works";
	if (!strcmp(t, "falls_short"))
		return "v2 replacement tried, falls short";
	return "v2 replacement not tried";
}

/* One use case: [workload] (author, day; fits; team; v2) text. */
static int item(struct twl_buf *b, const json_t *a, const char *first,
		const char *rest)
{
	const char *wl = member(a, "workload"), *ft = member(a, "fits"),
		   *team = member(a, "team"), *tried = tried_clause(a),
		   *short_by = member(a, "shortfall");
	struct twl_buf t;
	char day[16];
	int rc;

	day_of(json_integer_value(json_object_get(a, "created")), day);
	twl_buf_init(&t, 16384);
	rc = twl_buf_printf(&t, "%s%s%s(%s, %s", wl ? "[" : "", wl ? wl : "",
			    wl ? "] " : "", member(a, "author") ?: "?", day);
	if (!rc && ft)
		rc = twl_buf_printf(&t, "; replacement fits: %s", ft);
	if (!rc && team)
		rc = twl_buf_printf(&t, "; team %s", team);
	if (!rc && tried)
		rc = twl_buf_printf(&t, "; %s%s%s", tried, short_by ? ": " : "",
				    short_by ? short_by : "");
	if (!rc)
		rc = twl_buf_printf(&t, ") %s", member(a, "text") ?: "");
	if (!rc)
		rc = twl_export_wrap(b, t.data, first, rest, TWL_EXPORT_WIDTH);
	twl_buf_fini(&t);
	return rc;
}

/*
 * "Was the v2 replacement tried: falls short for 2, not tried for 1 (3 of
 * 4 use cases say)": the answers given, none when no use case says.
 */
static int tried_line(struct twl_buf *b, const json_t *anns)
{
	static const char *const names[] = { "works", "falls short",
					     "not tried" };
	size_t i, n[3] = { 0 }, said = 0;
	struct twl_buf t;
	const json_t *a;
	int rc = 0;

	json_array_foreach(anns, i, a)
	{
		const char *v = member(a, "v2_tried");

		if (v)
			n[!strcmp(v, "works") ? 0 : !strcmp(v, "no") ? 2 : 1]++;
	}
	twl_buf_init(&t, 1024);
	rc = twl_buf_printf(&t, "Was the v2 replacement tried:");
	for (i = 0; !rc && i < 3; i++) {
		if (n[i])
			rc = twl_buf_printf(&t, "%s %s for %zu",
					    said ? "," : "", names[i], n[i]);
		said += n[i];
	}
	if (!rc && said)
		rc = twl_buf_printf(&t, " (%zu of %zu use cases say)", said,
				    json_array_size(anns));
	if (!rc && said)
		rc = twl_export_wrap(b, t.data, "  ", "    ", TWL_EXPORT_WIDTH);
	twl_buf_fini(&t);
	return rc;
}

/* Whether any use case has an intent or a setter: grouping says more. */
static bool any_grouping(const json_t *anns)
{
	const json_t *a;
	size_t i;

	json_array_foreach(anns, i, a)
	{
		if (member(a, "intent") || member(a, "set_by"))
			return true;
	}
	return false;
}

static int grouped(struct twl_buf *b, const json_t *anns)
{
	size_t i, j, n = json_array_size(anns);
	struct uc *v = calloc(n, sizeof(*v));
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = (struct uc){ json_array_get(anns, i), i };
	qsort(v, n, sizeof(*v), uc_cmp);
	rc = twl_buf_printf(b, "  Use cases, by intent and what sets them:\n");
	for (i = 0; !rc && i < n; i = j) {
		for (j = i + 1; j < n && same_group(v[i].a, v[j].a); j++)
			;
		rc = group_head(b, v[i].a, j - i);
		for (size_t k = i; !rc && k < j; k++)
			rc = item(b, v[k].a, ITEM_GROUPED, "        ");
	}
	free(v);
	return rc;
}

/* Contract: see export_usecases.h. */
int twl_export_use_cases(struct twl_buf *b, const json_t *f)
{
	const json_t *anns = json_object_get(f, "annotations"), *a;
	json_int_t using =
		json_integer_value(json_object_get(f, "hosts_using"));
	size_t i;
	int rc;

	if (!json_array_size(anns)) {
		char line[128];

		if (using <= 0)
			return 0;
		snprintf(line, sizeof(line),
			 "No use case recorded: in use on %" JSON_INTEGER_FORMAT
			 " host%s, and nobody has said why yet.",
			 using, using == 1 ? "" : "s");
		return twl_export_wrap(b, line, "  ", "    ", TWL_EXPORT_WIDTH);
	}
	rc = tried_line(b, anns);
	if (rc || any_grouping(anns))
		return rc ? rc : grouped(b, anns);
	rc = twl_buf_printf(b, "  Use cases:\n");
	json_array_foreach(anns, i, a)
	{
		if (!rc)
			rc = item(b, a, ITEM_PLAIN, "      ");
	}
	return rc;
}
