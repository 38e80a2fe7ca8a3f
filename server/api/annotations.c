// SPDX-License-Identifier: GPL-2.0
/*
 * Use-case annotations: admins record per feature (optionally per
 * workload) why the fleet depends on it and whether the cgroup v2
 * replacement fits; every linux-mm export carries them. Viewers read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/config.h>
#include <twilight/util.h>

#include "api/api_read.h"
#include "http/server.h"
#include "store/store.h"

#define ANN_MAX_TEXT 4000
#define ANN_MAX_WORKLOAD 128

int twl_api_annotations_get(struct twl_server *srv,
			    const struct twl_request *req,
			    struct twl_response *resp)
{
	const char *feature = twl_request_query(req, "feature");
	json_t *doc;
	int rc;

	if (feature && !twl_catalog_find(feature))
		return twl_response_error(resp, 400, "bad_parameter", "feature",
					  "not a catalog feature id");
	rc = twl_read_annotations(twl_server_store(srv), feature, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "annotation");
	return twl_response_json(resp, 200, doc);
}

/* Printable text: no control characters but newline and tab. */
static bool printable(const char *s, bool allow_newline)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == 0x7f ||
		    (c < 0x20 && !(allow_newline && (c == '\n' || c == '\t'))))
			return false;
	}
	return true;
}

/*
 * Check the POST body; on a problem answer 400 naming the field and
 * return 1.
 */
static int check_body(const json_t *body, struct twl_response *resp,
		      const char **feature, const char **workload,
		      const char **text, const char **fits)
{
	const char *key;
	json_t *v;
	int rc;

#define BAD(field, code, reason)                                         \
	do {                                                             \
		rc = twl_response_error(resp, 400, code, field, reason); \
		return rc ? rc : 1;                                      \
	} while (0)

	if (!json_is_object(body))
		BAD("", "wrong_type", "the body must be a JSON object");
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "feature") && strcmp(key, "workload") &&
		    strcmp(key, "text") && strcmp(key, "fits"))
			BAD(key, "unknown_field",
			    "allowed: feature, workload, text, fits");
	}
	v = json_object_get(body, "feature");
	if (!v)
		BAD("feature", "missing_field",
		    "a catalog feature id is required");
	if (!json_is_string(v))
		BAD("feature", "wrong_type", "expected a string");
	*feature = json_string_value(v);
	if (!twl_catalog_find(*feature))
		BAD("feature", "unknown_feature", "not a catalog feature id");

	v = json_object_get(body, "text");
	if (!v)
		BAD("text", "missing_field", "the use case text is required");
	if (!json_is_string(v))
		BAD("text", "wrong_type", "expected a string");
	*text = json_string_value(v);
	if (!json_string_length(v) ||
	    strspn(*text, " \t\n") == json_string_length(v))
		BAD("text", "out_of_range", "the use case text is empty");
	if (json_string_length(v) > ANN_MAX_TEXT)
		BAD("text", "too_long", "at most 4000 bytes");
	if (strlen(*text) != json_string_length(v) || !printable(*text, true))
		BAD("text", "invalid_text",
		    "control characters are not allowed");

	*workload = NULL;
	v = json_object_get(body, "workload");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			BAD("workload", "wrong_type",
			    "expected a string or null");
		*workload = json_string_value(v);
		if (!json_string_length(v))
			*workload = NULL;
		else if (json_string_length(v) > ANN_MAX_WORKLOAD)
			BAD("workload", "too_long", "at most 128 bytes");
		else if (strlen(*workload) != json_string_length(v) ||
			 !printable(*workload, false))
			BAD("workload", "invalid_text",
			    "control characters are not allowed");
	}

	*fits = NULL;
	v = json_object_get(body, "fits");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			BAD("fits", "wrong_type",
			    "expected \"yes\", \"no\", \"partial\" or null");
		*fits = json_string_value(v);
		if (strcmp(*fits, "yes") && strcmp(*fits, "no") &&
		    strcmp(*fits, "partial"))
			BAD("fits", "out_of_range",
			    "expected \"yes\", \"no\", \"partial\" or null");
	}
	return 0;
#undef BAD
}

int twl_api_annotations_post(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp)
{
	const char *feature, *workload, *text, *fits;
	json_error_t jerr;
	json_t *body;
	int64_t id;
	int rc;

	body = json_loadb(req->body ? req->body : "", req->body_len,
			  JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
		return twl_response_error(resp, 400, "invalid_json", "",
					  jerr.text);
	rc = check_body(body, resp, &feature, &workload, &text, &fits);
	if (rc) {
		json_decref(body);
		return rc > 0 ? 0 : rc;
	}
	rc = twl_store_annotation_add(twl_server_store(srv), feature, workload,
				      text, fits, req->who.name, req->now, &id);
	if (rc) {
		json_decref(body);
		return twl_api_store_error(resp, rc, "annotation");
	}
	rc = twl_response_json(
		resp, 201,
		json_pack("{s:I, s:s, s:s?, s:s, s:s?, s:s, s:I}", "id",
			  (json_int_t)id, "feature", feature, "workload",
			  workload, "text", text, "fits", fits, "author",
			  req->who.name, "created", (json_int_t)req->now));
	json_decref(body);
	return rc;
}

int twl_api_annotations_delete(struct twl_server *srv,
			       const struct twl_request *req,
			       struct twl_response *resp)
{
	const char *s = req->path_rest;
	uint64_t id = 0;
	int rc;

	if (!s || twl_parse_u64(s, INT64_MAX, &id) || !id)
		return twl_response_error(
			resp, 404, "not_found", "id",
			"annotation ids are positive integers");
	rc = twl_store_annotation_delete(twl_server_store(srv), id);
	if (rc)
		return twl_api_store_error(resp, rc, "annotation");
	return twl_response_json(resp, 200,
				 json_pack("{s:I}", "deleted", (json_int_t)id));
}
