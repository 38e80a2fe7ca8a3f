// SPDX-License-Identifier: GPL-2.0
/* The operator's labels (see labels.h). */
#include "labels.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Item @s split at its first '=': the name's length, or -1 without one. */
static int label_name_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (int)(eq - s) : -1;
}

/* Write the reason into @why (@cap bytes); returns -1. */
__attribute__((format(printf, 3, 4))) static int
label_bad(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* What is wrong with item @i of @l (with the items before it), or 0. */
static int label_error(const struct twl_labels *l, size_t i, char *why,
		       size_t cap)
{
	const char *s = l->item[i], *value;
	int n = label_name_len(s);
	size_t j;

	if (n < 0)
		return label_bad(why, cap, "\"%s\" is not name=value", s);
	value = s + n + 1;
	if (!twl_wire_label_key_ok(s, (size_t)n))
		return label_bad(
			why, cap,
			"label name \"%.*s\" must be 1..%d bytes: a lowercase letter or digit, then lowercase letters, digits, '_', '.' or '-'",
			n, s, TWL_WIRE_MAX_LABEL_KEY);
	if (!twl_wire_label_value_ok(value, strlen(value)))
		return label_bad(
			why, cap,
			"label value \"%s\" of %.*s must be 1..%d bytes of letters, digits and _ . : / @ + -",
			value, n, s, TWL_WIRE_MAX_LABEL_VALUE);
	for (j = 0; j < i; j++)
		if (label_name_len(l->item[j]) == n &&
		    !memcmp(l->item[j], s, (size_t)n))
			return label_bad(why, cap,
					 "label name \"%.*s\" is given twice",
					 n, s);
	return 0;
}

/* Contract: see identity.h. */
int twl_labels_check(const struct twl_labels *l, char *why, size_t cap)
{
	size_t i;

	for (i = 0; l && i < l->n && i < TWL_WIRE_MAX_LABELS; i++)
		if (label_error(l, i, why, cap))
			return (int)i;
	return -1;
}

/* Contract: see identity.h. */
json_t *twl_labels_to_json(const struct twl_labels *l)
{
	json_t *o = json_object();
	char why[256];
	size_t i;

	for (i = 0; o && l && i < l->n && i < TWL_WIRE_MAX_LABELS; i++) {
		const char *s = l->item[i];
		int n = label_name_len(s);

		if (label_error(l, i, why, sizeof(why)))
			continue;
		if (json_object_setn_new(o, s, (size_t)n,
					 json_string(s + n + 1))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
