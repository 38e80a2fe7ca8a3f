// SPDX-License-Identifier: GPL-2.0
/*
 * catalog_gen helpers: the one-line error report and the checks of single
 * values that every parser uses.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "gen.h"

const char *gen_in_path = "catalog.json";

/* Contract: see gen.h. */
int gen_fail(enum gen_where w, size_t i, const char *id, const char *fmt, ...)
{
	va_list ap;

	if (w == W_FILE)
		fprintf(stderr, "catalog_gen: %s: ", gen_in_path);
	else
		fprintf(stderr, "catalog_gen: %s: %s[%zu] (%s): ", gen_in_path,
			w == W_ROUTE ? "routes" : "features", i,
			id ? id : "no id");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Contract: see gen.h. */
size_t gen_trim_len(const char *s, size_t n)
{
	while (n > 0 && is_ws(s[n - 1]))
		n--;
	return n;
}

/* Contract: see gen.h. */
bool gen_is_lower_ident(const char *s, size_t n)
{
	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Contract: see gen.h. */
int gen_check_keys(json_t *obj, const char *const *allowed, enum gen_where w,
		   size_t i, const char *id, const char *where)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool ok = false;

		for (const char *const *a = allowed; *a; a++)
			ok = ok || !strcmp(*a, key);
		if (!ok)
			return gen_fail(
				w, i, id,
				"%sunknown field \"%s\" (a typo? see schema/catalog.md)",
				where, key);
	}
	return 0;
}

/* Contract: see gen.h. */
int gen_get_str(json_t *obj, const char *key, bool nullable, size_t maxlen,
		const char **out, enum gen_where w, size_t i, const char *id)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return gen_fail(w, i, id, "field \"%s\": missing", key);
	if (json_is_null(v) && nullable) {
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return gen_fail(w, i, id, "field \"%s\": must be a string%s",
				key, nullable ? " or null" : "");
	if (json_string_length(v) == 0)
		return gen_fail(w, i, id, "field \"%s\": must not be empty%s",
				key, nullable ? " (use null)" : "");
	if (json_string_length(v) > maxlen)
		return gen_fail(w, i, id, "field \"%s\": longer than %zu bytes",
				key, maxlen);
	*out = json_string_value(v);
	return 0;
}
