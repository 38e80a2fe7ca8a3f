// SPDX-License-Identifier: GPL-2.0
/*
 * Admin JSON bodies checked member by member: the one place that says
 * what a 400 for a body member looks like (body.h).
 */
#include <string.h>

#include "api/body.h"

/* Contract: see body.h. */
int twl_body_bad(struct twl_response *resp, const char *field, const char *code,
		 const char *reason)
{
	int rc = twl_response_error(resp, 400, code, field, reason);

	return rc ? rc : 1;
}

/* Contract: see body.h. */
int twl_body_load(const struct twl_request *req, struct twl_response *resp,
		  json_t **body)
{
	json_error_t jerr;

	*body = json_loadb(req->body ? req->body : "", req->body_len,
			   JSON_REJECT_DUPLICATES, &jerr);
	return *body ? 0 : twl_body_bad(resp, "", "invalid_json", jerr.text);
}

/* Contract: see body.h. */
int twl_body_object(const json_t *body, const char *const *allowed,
		    struct twl_response *resp)
{
	char reason[256];
	const char *key;
	size_t pos = 0;
	json_t *v;

	if (!json_is_object(body))
		return twl_body_bad(resp, "", "wrong_type",
				    "the body must be a JSON object");
	json_object_foreach((json_t *)body, key, v)
	{
		const char *const *a = allowed;

		while (*a && strcmp(*a, key))
			a++;
		if (*a)
			continue;
		pos = (size_t)snprintf(reason, sizeof(reason), "allowed:");
		for (a = allowed; *a && pos < sizeof(reason); a++)
			pos += (size_t)snprintf(reason + pos,
						sizeof(reason) - pos, "%s %s",
						a == allowed ? "" : ",", *a);
		return twl_body_bad(resp, key, "unknown_field", reason);
	}
	return 0;
}

/* Printable text: no control characters but, if @multiline, LF and tab. */
static bool printable(const char *s, bool multiline)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == 0x7f ||
		    (c < 0x20 && !(multiline && (c == '\n' || c == '\t'))))
			return false;
	}
	return true;
}

/* Contract: see body.h. */
int twl_body_string(const json_t *body, const struct twl_body_str *spec,
		    struct twl_response *resp, const char **out)
{
	json_t *v = json_object_get(body, spec->key);
	char reason[64];
	size_t len;

	*out = NULL;
	if (!v && spec->required)
		return twl_body_bad(resp, spec->key, "missing_field",
				    "this member is required");
	if (!v || (json_is_null(v) && !spec->required))
		return 0;
	if (json_is_string(v) && !json_string_length(v))
		return spec->required ? twl_body_bad(resp, spec->key,
						     "out_of_range", "empty") :
					0;
	if (!json_is_string(v))
		return twl_body_bad(resp, spec->key, "wrong_type",
				    spec->required ?
					    "expected a string" :
					    "expected a string or null");
	len = json_string_length(v);
	if (len > spec->max) {
		snprintf(reason, sizeof(reason), "at most %zu bytes",
			 spec->max);
		return twl_body_bad(resp, spec->key, "too_long", reason);
	}
	if (strlen(json_string_value(v)) != len ||
	    !printable(json_string_value(v), spec->multiline))
		return twl_body_bad(resp, spec->key, "invalid_text",
				    "control characters are not allowed");
	if (!spec->blank_ok && strspn(json_string_value(v), " \t\n") == len)
		return twl_body_bad(resp, spec->key, "out_of_range",
				    "only blanks");
	*out = json_string_value(v);
	return 0;
}

/* Contract: see body.h. */
int twl_body_enum(const json_t *body, const char *key,
		  const char *const *allowed, const char *expected,
		  struct twl_response *resp, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return twl_body_bad(resp, key, "wrong_type", expected);
	for (; *allowed; allowed++)
		if (!strcmp(json_string_value(v), *allowed)) {
			*out = *allowed;
			return 0;
		}
	return twl_body_bad(resp, key, "out_of_range", expected);
}
