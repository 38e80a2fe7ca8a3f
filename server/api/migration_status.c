// SPDX-License-Identifier: GPL-2.0
/*
 * Migration status: per feature and workload an SRE (admin) records where
 * the move off a deprecated feature stands, with an owner and a date;
 * viewers list the statuses and the workloads marked migrated that were
 * seen using the feature again.
 */
#include <errno.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "api/api_read.h"
#include "api/body.h"
#include "http/server.h"
#include "store/store.h"

/* A date may lie this far ahead of the server's clock (time zones). */
#define DATE_AHEAD_S 86400

int twl_api_migration_get(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp)
{
	return twl_api_feature_list(srv, req, resp, twl_read_migration_status,
				    "migration status");
}

int twl_api_migration_reuse_get(struct twl_server *srv,
				const struct twl_request *req,
				struct twl_response *resp)
{
	const char *after = twl_request_query(req, "after");
	int64_t t = 0;
	json_t *doc;
	int rc;

	if (after && twl_parse_time(after, false, &t))
		return twl_response_error(
			resp, 400, "bad_parameter", "after",
			"expected Unix seconds or YYYY-MM-DD");
	rc = twl_read_migration_reuse(twl_server_store(srv), t, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "migration status");
	return twl_response_json(resp, 200, doc);
}

/* "date": a UTC day "YYYY-MM-DD" or Unix seconds, not in the future. */
static int check_date(const json_t *body, int64_t now,
		      struct twl_response *resp, int64_t *date)
{
	json_t *v = json_object_get(body, "date");

	*date = now;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*date = json_integer_value(v);
	} else if (!json_is_string(v) ||
		   twl_parse_time(json_string_value(v), false, date)) {
		return twl_body_bad(resp, "date", "wrong_type",
				    "expected \"YYYY-MM-DD\" or Unix seconds");
	}
	if (*date > now + DATE_AHEAD_S)
		return twl_body_bad(resp, "date", "out_of_range",
				    "the date is in the future");
	return 0;
}

/* The body of a POST, into @m; 1 when @resp was answered (400). */
static int check_body(const json_t *body, int64_t now,
		      struct twl_response *resp, struct twl_migration_status *m)
{
	static const char *const members[] = { "feature", "workload", "status",
					       "reason",  "owner",    "date",
					       NULL },
				 *const states[] = { "migrating", "migrated",
						     "accepted_risk", "blocked",
						     NULL };
	static const struct twl_body_str
		feature = { .key = "feature", .max = 64, .required = true },
		workload = { .key = "workload", .max = 128 },
		reason = { .key = "reason", .max = 1000, .multiline = true },
		owner = { .key = "owner", .max = 64, .required = true };
	int rc;

	rc = twl_body_object(body, members, resp);
	if (!rc)
		rc = twl_body_string(body, &feature, resp, &m->feature);
	if (!rc && !twl_catalog_find(m->feature))
		rc = twl_body_bad(resp, "feature", "unknown_feature",
				  "not a catalog feature id");
	if (!rc)
		rc = twl_body_string(body, &workload, resp, &m->workload);
	if (!rc)
		rc = twl_body_enum(body, "status", states,
				   "expected \"migrating\", \"migrated\","
				   " \"accepted_risk\" or \"blocked\"",
				   resp, &m->status);
	if (!rc && !m->status)
		rc = twl_body_bad(resp, "status", "missing_field",
				  "a status is required");
	if (!rc)
		rc = twl_body_string(body, &reason, resp, &m->reason);
	if (!rc && !strcmp(m->status, "blocked") != (m->reason != NULL))
		rc = twl_body_bad(resp, "reason",
				  m->reason ? "out_of_range" : "missing_field",
				  "a reason goes with \"blocked\" and only"
				  " with it");
	if (!rc)
		rc = twl_body_string(body, &owner, resp, &m->owner);
	if (!rc)
		rc = check_date(body, now, resp, &m->date);
	return rc;
}

int twl_api_migration_post(struct twl_server *srv,
			   const struct twl_request *req,
			   struct twl_response *resp)
{
	struct twl_migration_status m = { .author = req->who.name,
					  .now = req->now };
	json_t *body;
	int rc;

	rc = twl_body_load(req, resp, &body);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = check_body(body, req->now, resp, &m);
	if (rc) {
		json_decref(body);
		return rc > 0 ? 0 : rc;
	}
	rc = twl_store_migration_status_set(twl_server_store(srv), &m);
	if (rc)
		rc = twl_api_store_error(resp, rc, "migration status");
	else
		rc = twl_response_json(
			resp, 200,
			json_pack("{s:s, s:s?, s:s, s:s?, s:s, s:I, s:s, s:I}",
				  "feature", m.feature, "workload", m.workload,
				  "status", m.status, "reason", m.reason,
				  "owner", m.owner, "date", (json_int_t)m.date,
				  "author", m.author, "updated",
				  (json_int_t)m.now));
	json_decref(body);
	return rc;
}

int twl_api_migration_delete(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp)
{
	const char *feature = twl_request_query(req, "feature");
	const char *workload = twl_request_query(req, "workload");
	int rc;

	if (!feature || !twl_catalog_find(feature))
		return twl_response_error(resp, 400, "bad_parameter", "feature",
					  "a catalog feature id is required");
	if (workload && strlen(workload) > 128)
		return twl_response_error(resp, 400, "bad_parameter",
					  "workload", "at most 128 bytes");
	rc = twl_store_migration_status_delete(twl_server_store(srv), feature,
					       workload);
	if (rc)
		return twl_api_store_error(resp, rc, "migration status");
	return twl_response_json(resp, 200,
				 json_pack("{s:s, s:s?}", "deleted", feature,
					   "workload", workload));
}
