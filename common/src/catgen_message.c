// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog parser: one message of a feature, and the split of a "prefix"
 * template into literals and {name} fields that the matcher uses.
 */
#include <errno.h>
#include <string.h>

#include "catgen.h"

/*
 * Split a "prefix" template into literals and {name} fields. Literal braces
 * are not allowed; fields must be separated by literal text; the first
 * literal must be at least MIN_KEY_LEN bytes (the matcher's index key).
 */
static int parse_template(struct gmsg *m, size_t fi, const char *id, size_t mi)
{
	const char *s = m->text, *lit = s;
	size_t n = strlen(s);

	m->n_fields = 0;
	for (size_t i = 0; i <= n; i++) {
		if (s[i] == '}')
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: '}' without '{' at byte %zu",
				mi, i);
		if (s[i] != '{' && s[i] != '\0')
			continue;
		/* end of a literal */
		size_t k = m->n_fields;
		size_t llen = (size_t)(s + i - lit);

		if (llen == 0 && k == 0)
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: must start with literal text",
				mi);
		if (llen == 0 && s[i] == '{')
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: two fields without text between them at byte %zu",
				mi, i);
		m->lits[k] = strndup(lit, llen);
		if (!m->lits[k])
			return -ENOMEM;
		m->lit_lens[k] = llen;
		if (s[i] == '\0')
			break;
		/* a field */
		const char *name = s + i + 1, *close = strchr(name, '}'),
			   *open = strchr(name, '{');

		if (!close || (open && open < close))
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: '{' at byte %zu is not closed",
				mi, i);
		size_t nlen = (size_t)(close - name);

		if (!gen_is_lower_ident(name, nlen) || nlen > MAX_FIELD_NAME)
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: field name \"%.*s\" must be [a-z_][a-z0-9_]*, at most %d bytes",
				mi, (int)nlen, name, MAX_FIELD_NAME);
		if (k == MAX_FIELDS)
			return gen_fail(
				W_FEATURE, fi, id,
				"messages[%zu].text: bad template: more than %d fields",
				mi, MAX_FIELDS);
		for (size_t j = 0; j < k; j++)
			if (strlen(m->names[j]) == nlen &&
			    !memcmp(m->names[j], name, nlen))
				return gen_fail(
					W_FEATURE, fi, id,
					"messages[%zu].text: bad template: field \"%s\" appears twice",
					mi, m->names[j]);
		m->names[k] = strndup(name, nlen);
		if (!m->names[k])
			return -ENOMEM;
		m->n_fields++;
		i = (size_t)(close - s);
		lit = close + 1;
	}
	/* The matcher ignores trailing whitespace, so the last literal is trimmed. */
	m->lit_lens[m->n_fields] =
		gen_trim_len(m->lits[m->n_fields], m->lit_lens[m->n_fields]);
	m->lits[m->n_fields][m->lit_lens[m->n_fields]] = '\0';
	if (m->lit_lens[0] < MIN_KEY_LEN)
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].text: bad template: literal text before the first field must be at least %d bytes",
			mi, MIN_KEY_LEN);
	m->specificity = 0;
	for (size_t k = 0; k <= m->n_fields; k++)
		m->specificity += m->lit_lens[k];
	return 0;
}

/* Contract: see catgen.h. */
int gen_parse_message(json_t *jm, struct gmsg *m, size_t fi, const char *id,
		      size_t mi)
{
	static const char *const keys[] = { "text", "match", "level", "note",
					    NULL };
	char where[48];
	json_t *v;
	int err;

	if (!json_is_object(jm))
		return gen_fail(W_FEATURE, fi, id,
				"messages[%zu]: must be an object", mi);
	snprintf(where, sizeof(where), "messages[%zu]: ", mi);
	err = gen_check_keys(jm, keys, W_FEATURE, fi, id, where);
	if (err)
		return err;
	v = json_object_get(jm, "text");
	if (!json_is_string(v) || json_string_length(v) == 0)
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].text: missing or not a non-empty string",
			mi);
	if (json_string_length(v) > MAX_TEXT)
		return gen_fail(W_FEATURE, fi, id,
				"messages[%zu].text: longer than %d bytes", mi,
				MAX_TEXT);
	m->text = json_string_value(v);
	v = json_object_get(jm, "match");
	if (!json_is_string(v))
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].match: missing or not a string (exact or prefix)",
			mi);
	if (!strcmp(json_string_value(v), "exact"))
		m->exact = true;
	else if (!strcmp(json_string_value(v), "prefix"))
		m->exact = false;
	else
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].match: unknown kind \"%s\" (expected exact or prefix)",
			mi, json_string_value(v));
	v = json_object_get(jm, "level");
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 7)
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].level: missing or not an integer 0..7 (kmsg level)",
			mi);
	m->level = (int)json_integer_value(v);
	v = json_object_get(jm, "note");
	if (v && (!json_is_string(v) || json_string_length(v) == 0 ||
		  json_string_length(v) > MAX_TEXT))
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].note: must be a non-empty string when present",
			mi);
	m->note = v ? json_string_value(v) : NULL;

	if (!m->exact)
		return parse_template(m, fi, id, mi);
	m->trimmed_len = gen_trim_len(m->text, strlen(m->text));
	if (m->trimmed_len < MIN_KEY_LEN)
		return gen_fail(
			W_FEATURE, fi, id,
			"messages[%zu].text: shorter than %d bytes without trailing whitespace",
			mi, MIN_KEY_LEN);
	m->n_fields = 0;
	m->lits[0] = strndup(m->text, m->trimmed_len);
	if (!m->lits[0])
		return -ENOMEM;
	m->lit_lens[0] = m->trimmed_len;
	m->specificity = m->trimmed_len;
	return 0;
}
