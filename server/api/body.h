/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Admin JSON bodies checked member by member (annotations.c,
 * migration_status.c). Each check answers 400 in @resp naming the member
 * ({"error", "field", "reason"}, docs/api.md) and returns 1, returns 0
 * when the member is fine, or a negative errno when the answer itself
 * failed.
 */
#ifndef TWL_SERVER_API_BODY_H
#define TWL_SERVER_API_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "http/http.h"

/*
 * twl_body_load - the request's body parsed as JSON into *@body (duplicate
 * members refused: "invalid_json"); the caller json_decref()s it.
 */
int twl_body_load(const struct twl_request *req, struct twl_response *resp,
		  json_t **body);

/*
 * twl_body_object - @body is an object whose members are all among the
 * NULL-terminated @allowed ("unknown_field" names the first other one).
 */
int twl_body_object(const json_t *body, const char *const *allowed,
		    struct twl_response *resp);

/* How a string member is checked (twl_body_string()). */
struct twl_body_str {
	const char *key;
	size_t max; /* most bytes */
	bool required; /* absent, null or "" refused */
	bool multiline; /* newline and tab allowed */
	bool blank_ok; /* a string of only blanks is allowed */
};

/*
 * twl_body_string - member @spec->key of @body as *@out: NULL when absent,
 * null or "" (a required member: "missing_field", "wrong_type",
 * "out_of_range"), else a string of at most @spec->max bytes without NUL
 * or control characters ("wrong_type", "too_long", "invalid_text",
 * "out_of_range" for only blanks).
 */
int twl_body_string(const json_t *body, const struct twl_body_str *spec,
		    struct twl_response *resp, const char **out);

/*
 * twl_body_enum - member @key of @body as *@out: NULL when absent or null,
 * else one of the NULL-terminated @allowed ("wrong_type", "out_of_range",
 * both with @expected as the reason).
 */
int twl_body_enum(const json_t *body, const char *key,
		  const char *const *allowed, const char *expected,
		  struct twl_response *resp, const char **out);

/* twl_body_bad - answer 400 @code naming @field with @reason; return 1. */
int twl_body_bad(struct twl_response *resp, const char *field, const char *code,
		 const char *reason);

#endif /* TWL_SERVER_API_BODY_H */
