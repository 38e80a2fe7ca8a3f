// SPDX-License-Identifier: GPL-2.0
/*
 * Use-case annotations: admins record per feature (optionally per
 * workload) why the fleet depends on it and whether the cgroup v2
 * replacement fits, as free text plus optional structured fields (intent,
 * the component that sets it, whether v2 was tried and what fell short,
 * the owning team); every linux-mm export carries them. Viewers read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/config.h>
#include <twilight/util.h>

#include "api/api_read.h"
#include "api/body.h"
#include "http/server.h"
#include "store/store.h"

#define ANN_MAX_TEXT 4000
#define ANN_MAX_WORKLOAD 128
#define ANN_MAX_SET_BY 128
#define ANN_MAX_TEAM 64
#define ANN_MAX_SHORTFALL 1000

/* Contract: see api_read.h. */
int twl_api_feature_list(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp,
			 int (*read)(struct twl_store *, const char *,
				     json_t **),
			 const char *what)
{
	const char *feature = twl_request_query(req, "feature");
	json_t *doc;
	int rc;

	if (feature && !twl_catalog_find(feature))
		return twl_response_error(resp, 400, "bad_parameter", "feature",
					  "not a catalog feature id");
	rc = read(twl_server_store(srv), feature, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, what);
	return twl_response_json(resp, 200, doc);
}

int twl_api_annotations_get(struct twl_server *srv,
			    const struct twl_request *req,
			    struct twl_response *resp)
{
	return twl_api_feature_list(srv, req, resp, twl_read_annotations,
				    "annotation");
}

/* The feature member: required, a catalog feature id. */
static int check_feature(const json_t *body, struct twl_response *resp,
			 const char **feature)
{
	json_t *v = json_object_get(body, "feature");

	if (!v)
		return twl_body_bad(resp, "feature", "missing_field",
				    "a catalog feature id is required");
	if (!json_is_string(v))
		return twl_body_bad(resp, "feature", "wrong_type",
				    "expected a string");
	*feature = json_string_value(v);
	if (!twl_catalog_find(*feature))
		return twl_body_bad(resp, "feature", "unknown_feature",
				    "not a catalog feature id");
	return 0;
}

/* The structured fields; all optional. */
static int check_fields(const json_t *body, struct twl_response *resp,
			struct twl_annotation *a)
{
	static const char *const intent[] = { "intentional", "accidental",
					      NULL },
				 *const tried[] = { "no", "works",
						    "falls_short", NULL };
	static const struct twl_body_str set_by = { .key = "set_by",
						    .max = ANN_MAX_SET_BY },
					 team = { .key = "team",
						  .max = ANN_MAX_TEAM },
					 shortfall = { .key = "shortfall",
						       .max = ANN_MAX_SHORTFALL,
						       .multiline = true };
	int rc;

	rc = twl_body_enum(body, "intent", intent,
			   "expected \"intentional\", \"accidental\" or null",
			   resp, &a->intent);
	if (!rc)
		rc = twl_body_string(body, &set_by, resp, &a->set_by);
	if (!rc)
		rc = twl_body_enum(
			body, "v2_tried", tried,
			"expected \"no\", \"works\", \"falls_short\" or null",
			resp, &a->v2_tried);
	if (!rc)
		rc = twl_body_string(body, &shortfall, resp, &a->shortfall);
	if (!rc && a->shortfall &&
	    (!a->v2_tried || strcmp(a->v2_tried, "falls_short")))
		rc = twl_body_bad(resp, "shortfall", "out_of_range",
				  "only with v2_tried \"falls_short\"");
	if (!rc)
		rc = twl_body_string(body, &team, resp, &a->team);
	return rc;
}

/*
 * Check the POST body into @a; on a problem answer 400 naming the field
 * and return 1.
 */
static int check_body(const json_t *body, struct twl_response *resp,
		      struct twl_annotation *a)
{
	static const char *const members[] = {
		"feature", "workload", "text",	    "fits", "intent",
		"set_by",  "v2_tried", "shortfall", "team", NULL
	};
	static const char *const fits[] = { "yes", "no", "partial", NULL };
	static const struct twl_body_str text = { .key = "text",
						  .max = ANN_MAX_TEXT,
						  .required = true,
						  .multiline = true },
					 workload = { .key = "workload",
						      .max = ANN_MAX_WORKLOAD,
						      .blank_ok = true };
	int rc;

	rc = twl_body_object(body, members, resp);
	if (!rc)
		rc = check_feature(body, resp, &a->feature);
	if (!rc)
		rc = twl_body_string(body, &text, resp, &a->text);
	if (!rc)
		rc = twl_body_string(body, &workload, resp, &a->workload);
	if (!rc)
		rc = twl_body_enum(
			body, "fits", fits,
			"expected \"yes\", \"no\", \"partial\" or null", resp,
			&a->fits);
	if (!rc)
		rc = check_fields(body, resp, a);
	return rc;
}

/* The stored annotation @a as the API shows it. */
static json_t *annotation_json(const struct twl_annotation *a, int64_t id)
{
	return json_pack("{s:I, s:s, s:s?, s:s, s:s?, s:s, s:I, s:s?, s:s?,"
			 " s:s?, s:s?, s:s?}",
			 "id", (json_int_t)id, "feature", a->feature,
			 "workload", a->workload, "text", a->text, "fits",
			 a->fits, "author", a->author, "created",
			 (json_int_t)a->now, "intent", a->intent, "set_by",
			 a->set_by, "v2_tried", a->v2_tried, "shortfall",
			 a->shortfall, "team", a->team);
}

int twl_api_annotations_post(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp)
{
	struct twl_annotation a = { .author = req->who.name, .now = req->now };
	json_t *body;
	int64_t id;
	int rc;

	rc = twl_body_load(req, resp, &body);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = check_body(body, resp, &a);
	if (rc) {
		json_decref(body);
		return rc > 0 ? 0 : rc;
	}
	rc = twl_store_annotation_put(twl_server_store(srv), &a, &id);
	if (rc)
		rc = twl_api_store_error(resp, rc, "annotation");
	else
		rc = twl_response_json(resp, 201, annotation_json(&a, id));
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
