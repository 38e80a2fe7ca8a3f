// SPDX-License-Identifier: GPL-2.0
/*
 * Read API handlers: parse and check query parameters, call the read store
 * (store_read.h), answer JSON. Nothing here knows SQL.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/catalog.h>
#include <twilight/config.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "api/answer_cache.h"
#include "api/api_app.h"
#include "api/api_read.h"
#include "api/export.h"
#include "api/measured.h"
#include "api/value_class.h"
#include "api/readiness.h"
#include "http/server.h"
#include "http/server_internal.h"

/* Default look-back of the linux-mm export. */

int twl_parse_time(const char *s, bool end_of_day, int64_t *out)
{
	struct tm tm = { 0 };
	uint64_t v;
	int y, m, d, n = 0;

	if (!s || !*s || strlen(s) > 20)
		return -EINVAL;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) == 3 && n == 10 &&
	    !s[10]) {
		if (y < 1970 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31)
			return -EINVAL;
		tm.tm_year = y - 1900;
		tm.tm_mon = m - 1;
		tm.tm_mday = d;
		*out = (int64_t)timegm(&tm) + (end_of_day ? 86399 : 0);
		return 0;
	}
	if (twl_parse_u64(s, 1ULL << 40, &v))
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

static int bad_param(struct twl_response *resp, const char *field,
		     const char *reason)
{
	int rc = twl_response_error(resp, 400, "bad_parameter", field, reason);

	return rc ? rc : 1;
}

/* A filter string: at most @max bytes of printable UTF-8. */
static bool ok_filter_string(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (!n || n > max || !twl_utf8_valid(s, n))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

#define LABEL_EXPECTED "expected KEY=VALUE, a host.labels key and value"

/* Contract: see api_read.h. */
int twl_api_label_parse(const char *v, struct twl_read_filter *f)
{
	const char *eq = strchr(v, '=');
	size_t n = eq ? (size_t)(eq - v) : 0;

	_Static_assert(sizeof(f->label_key) > TWL_WIRE_MAX_LABEL_KEY,
		       "twl_read_filter holds a host.labels key");
	if (!eq || n > TWL_WIRE_MAX_LABEL_KEY || !twl_wire_label_key_ok(v, n) ||
	    !twl_wire_label_value_ok(eq + 1, strlen(eq + 1)))
		return -EINVAL;
	memcpy(f->label_key, v, n);
	f->label_key[n] = '\0';
	f->label_value = eq + 1;
	return 0;
}

/* Contract: see api_read.h. */
int twl_api_group_label(const struct twl_request *req,
			struct twl_response *resp, const char **key)
{
	const char *v = twl_request_query(req, "group");
	int rc;

	*key = NULL;
	if (!v)
		return 0;
	if (strncmp(v, "label:", 6) ||
	    !twl_wire_label_key_ok(v + 6, strlen(v + 6))) {
		rc = twl_response_error(
			resp, 400, "bad_parameter", "group",
			"expected label:KEY, a host.labels key");
		return rc ? rc : 1;
	}
	*key = v + 6;
	return 0;
}

/* Contract: see api_read.h. */
int twl_api_label_param(const struct twl_request *req,
			struct twl_response *resp, struct twl_read_filter *f)
{
	const char *v = twl_request_query(req, "label");

	f->label_key[0] = '\0';
	f->label_value = NULL;
	if (!v || !twl_api_label_parse(v, f))
		return 0;
	return bad_param(resp, "label", LABEL_EXPECTED);
}

int twl_api_filter_from_query(const struct twl_request *req,
			      struct twl_read_filter *f,
			      struct twl_response *resp)
{
	static const char *const strs[] = { "feature", "host", "kernel",
					    "cursor" };
	const char *v;
	size_t i;

	memset(f, 0, sizeof(*f));
	v = twl_request_query(req, "since");
	if (v && twl_parse_time(v, false, &f->since))
		return bad_param(resp, "since",
				 "expected Unix seconds or YYYY-MM-DD");
	v = twl_request_query(req, "until");
	if (v && twl_parse_time(v, true, &f->until))
		return bad_param(resp, "until",
				 "expected Unix seconds or YYYY-MM-DD");
	if (f->since && f->until && f->since > f->until)
		return bad_param(resp, "since", "since is after until");
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		/* a cursor may be an unknown text; a host cursor is short */
		bool cur = !strcmp(strs[i], "cursor");

		v = twl_request_query(req, strs[i]);
		if (v && !ok_filter_string(v, cur ? TWL_READ_MAX_CURSOR :
						    TWL_READ_MAX_FILTER))
			return bad_param(
				resp, strs[i],
				cur ? "expected 1 to 1024 bytes of printable UTF-8" :
				      "expected 1 to 256 bytes of printable UTF-8");
	}
	v = twl_request_query(req, "use");
	if (v && strcmp(v, "using") && strcmp(v, "reads"))
		return bad_param(resp, "use", "expected using or reads");
	f->reading_only = v && !strcmp(v, "reads");
	f->feature = twl_request_query(req, "feature");
	if (f->feature && !twl_catalog_find(f->feature))
		return bad_param(resp, "feature", "not a catalog feature id");
	f->host_pattern = twl_request_query(req, "host");
	f->kernel = twl_request_query(req, "kernel");
	f->cursor = twl_request_query(req, "cursor");
	v = twl_request_query(req, "cgroup_mode");
	if (v) {
		if (strcmp(v, "v1") && strcmp(v, "v2") && strcmp(v, "hybrid") &&
		    strcmp(v, "unknown"))
			return bad_param(resp, "cgroup_mode",
					 "expected v1, v2, hybrid or unknown");
		f->cgroup_mode = strcmp(v, "unknown") ? v : "";
	}
	v = twl_request_query(req, "label");
	if (v && twl_api_label_parse(v, f))
		return bad_param(resp, "label", LABEL_EXPECTED);
	v = twl_request_query(req, "limit");
	if (v) {
		uint64_t n;

		if (twl_parse_u64(v, TWL_READ_LIMIT_MAX, &n) || n < 1)
			return bad_param(resp, "limit",
					 "expected an integer from 1 to 1000");
		f->limit = (unsigned)n;
	}
	return 0;
}

int twl_api_store_error(struct twl_response *resp, int err, const char *what)
{
	char reason[160];

	switch (err) {
	case -ENOENT:
		snprintf(reason, sizeof(reason), "no such %s", what);
		return twl_response_error(resp, 404, "not_found", NULL, reason);
	case -EINVAL:
		snprintf(reason, sizeof(reason), "invalid parameter for %s",
			 what);
		return twl_response_error(resp, 400, "bad_parameter", NULL,
					  reason);
	case -EDQUOT:
		snprintf(reason, sizeof(reason),
			 "too many %ss stored; delete some first", what);
		return twl_response_error(resp, 409, "too_many", NULL, reason);
	case -EBUSY:
		twl_response_header(resp, "Retry-After", "1");
		return twl_response_error(
			resp, 503, "busy", NULL,
			"the database is busy; retry shortly");
	case -ECANCELED: /* twl_store_stop_reads(): the server stops */
		twl_response_header(resp, "Retry-After", "5");
		return twl_response_error(
			resp, 503, "stopping", NULL,
			"the server is stopping; retry in a few seconds");
	default:
		return err;
	}
}

static int h_summary(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	json_t *doc;
	int rc = twl_read_summary(twl_server_store(srv), req->now, &doc);

	if (rc)
		return twl_api_store_error(resp, rc, "summary");
	rc = twl_summary_measured(doc);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	return twl_response_json(resp, 200, doc);
}

/*
 * What a feature's detail depends on, as plain bytes for the kept
 * answers (answer_cache.h): its id, range and label filter.
 */
struct feature_params {
	char id[64];
	int64_t since, until;
	struct twl_label_bytes label;
};

/* twl_answer_fn: a feature's detail with its value classes. */
static int feature_answer(void *srv, const void *params, json_t **out)
{
	const struct feature_params *p = params;
	struct twl_read_filter f = { .since = p->since, .until = p->until };
	int rc;

	strcpy(f.label_key, p->label.key);
	f.label_value = p->label.on ? p->label.value : NULL;
	rc = twl_read_feature(twl_server_store(srv), p->id, &f, out);
	if (!rc)
		rc = twl_value_classes_into(json_object_get(*out, "values"));
	if (rc && *out) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static const struct twl_answer_kind feature_kind = { "feature",
						     feature_answer };

/* Contract: see api_read.h. */
int twl_api_feature_ahead(struct twl_answer_cache *c)
{
	struct feature_params p;
	int rc = 0;

	for (size_t i = 0; !rc && i < twl_catalog_count(); i++) {
		memset(&p, 0, sizeof(p));
		snprintf(p.id, sizeof(p.id), "%s", twl_catalog_at(i)->id);
		rc = twl_answer_cache_ahead(c, &feature_kind, &p, sizeof(p));
	}
	return rc;
}

/* Contract: see api_read.h. */
int twl_label_bytes_of(struct twl_label_bytes *b,
		       const struct twl_read_filter *lf)
{
	memset(b, 0, sizeof(*b));
	b->on = lf->label_key[0] != '\0';
	if (!b->on)
		return 0;
	if (snprintf(b->key, sizeof(b->key), "%s", lf->label_key) >=
		    (int)sizeof(b->key) ||
	    snprintf(b->value, sizeof(b->value), "%s",
		     lf->label_value ? lf->label_value : "") >=
		    (int)sizeof(b->value))
		return -EINVAL;
	return 0;
}

static int h_feature(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	struct feature_params p;
	struct twl_read_filter f;
	json_t *doc;
	int rc;

	rc = twl_api_filter_from_query(req, &f, resp);
	if (rc)
		return rc > 0 ? 0 : rc;
	if (!req->path_rest || !twl_catalog_find(req->path_rest))
		return twl_response_error(resp, 404, "not_found", "id",
					  "not a catalog feature id");
	memset(&p, 0, sizeof(p));
	snprintf(p.id, sizeof(p.id), "%s", req->path_rest);
	p.since = f.since;
	p.until = f.until;
	rc = twl_label_bytes_of(&p.label, &f);
	if (!rc)
		rc = twl_api_answer(srv, resp, &feature_kind, &p, sizeof(p),
				    &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "feature");
	return twl_response_json(resp, 200, doc);
}

/* A list read through the common list parameters (hosts, unknown texts). */
static int filtered_list(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp,
			 int (*read)(struct twl_store *,
				     const struct twl_read_filter *, json_t **),
			 const char *what)
{
	struct twl_read_filter f;
	json_t *doc;
	int rc;

	rc = twl_api_filter_from_query(req, &f, resp);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = read(twl_server_store(srv), &f, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, what);
	return twl_response_json(resp, 200, doc);
}

static int h_hosts(struct twl_server *srv, const struct twl_request *req,
		   struct twl_response *resp)
{
	return filtered_list(srv, req, resp, twl_read_hosts, "host filter");
}

static int h_host(struct twl_server *srv, const struct twl_request *req,
		  struct twl_response *resp)
{
	const char *id = req->path_rest;
	json_t *doc, *f, *values;
	size_t i;
	int rc;

	if (!id || !*id || strlen(id) > 64 ||
	    strspn(id, "0123456789abcdef-") != strlen(id))
		return twl_response_error(
			resp, 404, "not_found", "id",
			"host ids are 1 to 64 characters [0-9a-f-]");
	rc = twl_read_host(twl_server_store(srv), id, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "host");
	json_array_foreach(json_object_get(doc, "features"), i, f)
	{
		values = json_object_get(f, "values");
		rc = values ? twl_value_classes_into(values) : 0;
		if (rc) {
			json_decref(doc);
			return rc;
		}
	}
	return twl_response_json(resp, 200, doc);
}

static int h_unknown(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	return filtered_list(srv, req, resp, twl_read_unknown,
			     "unknown texts filter");
}

static int h_health(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	const struct twl_config *cfg = twl_server_config(srv);
	int64_t silent = cfg && cfg->silent_after_s ? cfg->silent_after_s :
						      86400;
	struct twl_read_filter f;
	const char *v;
	json_t *doc;
	int rc;

	rc = twl_api_filter_from_query(req, &f, resp);
	if (rc)
		return rc > 0 ? 0 : rc;
	v = twl_request_query(req, "silent_after");
	if (v) {
		uint64_t n;

		if (twl_parse_u64(v, 366ULL * 86400, &n) || n < 60)
			return twl_response_error(
				resp, 400, "bad_parameter", "silent_after",
				"expected seconds from 60 to 31622400");
		silent = n;
	}
	rc = twl_read_health(twl_server_store(srv), req->now, silent, &f, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "health");
	/* the server's own certificate: agents stop at its expiry */
	if (json_object_set_new(doc, "certificate",
				twl_server_cert_json(srv, req->now))) {
		json_decref(doc);
		return -ENOMEM;
	}
	return twl_response_json(resp, 200, doc);
}

/* Parse a show/hide style flag; returns 0, or 1 after answering 400. */
static int h_export(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	static const char *const ctype[] = {
		[TWL_EXPORT_TEXT] = "text/plain; charset=utf-8",
		[TWL_EXPORT_CSV] = "text/csv; charset=utf-8",
		[TWL_EXPORT_JSON] = "application/json",
	};
	static const char *const ext[] = { "txt", "csv", "json" };
	enum twl_export_format fmt;
	json_t *red = NULL;
	char *text = NULL;
	size_t len;
	int rc;

	if (twl_export_parse_format(twl_request_query(req, "format"), &fmt))
		return twl_response_error(resp, 400, "bad_parameter", "format",
					  "expected text, csv or json");
	rc = twl_api_export_data(srv, req, resp, &red);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = twl_export_render(red, fmt, &text, &len);
	json_decref(red);
	if (rc)
		return rc;
	rc = twl_response_data(resp, 200, ctype[fmt], text, len);
	free(text);
	if (!rc)
		twl_response_header(resp, "Content-Disposition",
				    "inline; filename=\"twilight-linux-mm.%s\"",
				    ext[fmt]);
	return rc;
}

/*
 * An admin's change that kept answers show (the export's use cases,
 * migration status and readiness): @fn, then every kept answer is
 * computed again (twl_api_answers_touch()).
 */
#define TOUCHING(name, fn)                                                     \
	static int name(struct twl_server *srv, const struct twl_request *req, \
			struct twl_response *resp)                             \
	{                                                                      \
		int rc = fn(srv, req, resp);                                   \
                                                                               \
		twl_api_answers_touch(srv);                                    \
		return rc;                                                     \
	}
TOUCHING(h_annotations_post, twl_api_annotations_post)
TOUCHING(h_annotations_delete, twl_api_annotations_delete)
TOUCHING(h_migration_post, twl_api_migration_post)
TOUCHING(h_migration_delete, twl_api_migration_delete)
TOUCHING(h_targets_post, twl_api_targets_post)

const struct twl_route twl_read_routes[] = {
	{ "GET", "/api/v1/summary", TWL_ROLE_VIEWER, h_summary },
	{ "GET", "/api/v1/features/*", TWL_ROLE_VIEWER, h_feature },
	{ "GET", "/api/v1/hosts", TWL_ROLE_VIEWER, h_hosts },
	{ "GET", "/api/v1/hosts/*", TWL_ROLE_VIEWER, h_host },
	{ "GET", "/api/v1/health", TWL_ROLE_VIEWER, h_health },
	{ "GET", "/api/v1/unknown", TWL_ROLE_VIEWER, h_unknown },
	{ "GET", "/api/v1/annotations", TWL_ROLE_VIEWER,
	  twl_api_annotations_get },
	{ "POST", "/api/v1/annotations", TWL_ROLE_ADMIN, h_annotations_post },
	{ "DELETE", "/api/v1/annotations/*", TWL_ROLE_ADMIN,
	  h_annotations_delete },
	{ "GET", "/api/v1/migration-status", TWL_ROLE_VIEWER,
	  twl_api_migration_get },
	{ "POST", "/api/v1/migration-status", TWL_ROLE_ADMIN,
	  h_migration_post },
	{ "DELETE", "/api/v1/migration-status", TWL_ROLE_ADMIN,
	  h_migration_delete },
	{ "GET", "/api/v1/migration-reuse", TWL_ROLE_VIEWER,
	  twl_api_migration_reuse_get },
	{ "GET", "/api/v1/export/linux-mm", TWL_ROLE_VIEWER, h_export },
	{ "GET", "/api/v1/targets", TWL_ROLE_VIEWER, twl_api_targets_get },
	{ "POST", "/api/v1/targets", TWL_ROLE_ADMIN, h_targets_post },
	{ "GET", "/api/v1/readiness", TWL_ROLE_VIEWER, twl_api_readiness_get },
	{ NULL, NULL, 0, NULL },
};
