// SPDX-License-Identifier: GPL-2.0
/*
 * Catalog parser helpers: the one-line error report and the checks of single
 * values that every parser uses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catgen.h"

__thread const char *gen_in_path = "catalog.json";
__thread char gen_err[GEN_ERR_MAX];

/* Contract: see catgen.h. */
int gen_fail(enum gen_where w, size_t i, const char *id, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w == W_FILE)
		n = snprintf(gen_err, sizeof(gen_err), "%s: ", gen_in_path);
	else
		n = snprintf(gen_err, sizeof(gen_err),
			     "%s: %s[%zu] (%s): ", gen_in_path,
			     w == W_ROUTE ? "routes" : "features", i,
			     id ? id : "no id");
	if (n < 0 || (size_t)n >= sizeof(gen_err))
		return -EINVAL; /* the path alone fills it: keep that */
	va_start(ap, fmt);
	vsnprintf(gen_err + n, sizeof(gen_err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Contract: see catgen.h. */
size_t gen_trim_len(const char *s, size_t n)
{
	while (n > 0 && is_ws(s[n - 1]))
		n--;
	return n;
}

/* Contract: see catgen.h. */
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

/* Contract: see catgen.h. */
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

/* Contract: see catgen.h. */
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
