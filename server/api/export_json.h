/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the export's renderers (export.c, export_csv.c, export_kinds.c,
 * export_mail.c, export_where.c) share to read the data document and stop
 * at the first error: one copy instead of one per file.
 */
#ifndef TWL_SERVER_API_EXPORT_JSON_H
#define TWL_SERVER_API_EXPORT_JSON_H

#include <jansson.h>

/* rc = @x; on an error, goto out (the caller's int rc and label out). */
#define TRY(x)                    \
	do {                      \
		rc = (x);         \
		if (rc)           \
			goto out; \
	} while (0)

/* @o's integer member @key, 0 when absent or not an integer. */
static inline json_int_t int_of(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* @o's string member @key, or @dflt when absent or not a string. */
static inline const char *str_or(const json_t *o, const char *key,
				 const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

#endif
