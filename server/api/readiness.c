// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness handlers (readiness.h): targets from the data
 * directory (readiness/target_dir.h), their plan against the catalog
 * (readiness/target.h), and the store's answer (twl_read_readiness()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "api/answer_cache.h"
#include "api/api_app.h"
#include "api/api_read.h"
#include "api/readiness.h"
#include "http/server.h"
#include "readiness/kconfig.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"

/* Default look-back: hosts (and evidence) seen in the last 30 days. */
#define READINESS_DAYS 30

static const char *data_dir(struct twl_server *srv)
{
	const struct twl_config *cfg = twl_server_config(srv);

	return cfg && cfg->data_dir[0] ? cfg->data_dir : NULL;
}

static int no_data_dir(struct twl_response *resp)
{
	return twl_response_error(resp, 503, "unavailable", NULL,
				  "the server has no data directory");
}

/* Contract: see readiness.h. GET /api/v1/targets. */
int twl_api_targets_get(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp)
{
	const char *dir = data_dir(srv);
	json_t *all, *errors, *list = json_array(), *shipped, *t;
	size_t i;
	int rc;

	if (!dir) {
		json_decref(list);
		return no_data_dir(resp);
	}
	rc = twl_targets_load(dir, &all, &errors);
	if (rc) {
		json_decref(list);
		return rc;
	}
	shipped = twl_targets_shipped();
	json_array_foreach(all, i, t)
	{
		if (!list || json_array_append_new(list, twl_target_summary(t)))
			break;
	}
	json_decref(all);
	t = list && shipped ?
		    json_pack("{s:o, s:O, s:o}", "targets", list, "deadlines",
			      json_object_get(shipped, "deadlines"), "errors",
			      errors) :
		    NULL;
	json_decref(shipped);
	if (!t) {
		json_decref(errors);
		return -ENOMEM;
	}
	return twl_response_json(resp, 200, t);
}

/* Contract: see readiness.h. POST /api/v1/targets?name=N[&kernel=K]. */
int twl_api_targets_post(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp)
{
	const char *dir = data_dir(srv), *name = twl_request_query(req, "name");
	const char *kernel = twl_request_query(req, "kernel");
	char err[256];
	json_t *t;
	int rc;

	if (!dir)
		return no_data_dir(resp);
	if (!twl_target_name_ok(name))
		return twl_response_error(
			resp, 400, "bad_parameter", "name",
			"expected 1 to 64 characters [a-z0-9._-], not first '.'");
	if (kernel && twl_kernel_version(kernel) < 0)
		return twl_response_error(resp, 400, "bad_parameter", "kernel",
					  "expected a release such as 6.12");
	rc = twl_target_from_kconfig(name, req->body ? req->body : "",
				     req->body_len, kernel, "uploaded", &t, err,
				     sizeof(err));
	if (rc == -EINVAL || rc == -EFBIG)
		return twl_response_error(resp, rc == -EFBIG ? 413 : 400,
					  "bad_config", "body", err);
	if (rc)
		return rc;
	rc = twl_targets_save(dir, t);
	if (rc == -EEXIST || rc == -EDQUOT) {
		json_decref(t);
		return twl_response_error(
			resp, 409, rc == -EEXIST ? "exists" : "too_many",
			"name",
			rc == -EEXIST ?
				"a shipped target or a dropped .config has this name" :
				"the targets directory is full; remove a file first");
	}
	if (rc) {
		json_decref(t);
		return rc;
	}
	{
		json_t *sum = twl_target_summary(t);

		json_decref(t);
		return sum ? twl_response_json(resp, 201, sum) : -ENOMEM;
	}
}

/* Parse limit and days: 0, or 1 after answering 400. */
static int readiness_params(const struct twl_request *req,
			    struct twl_response *resp, unsigned *limit,
			    unsigned *days)
{
	const char *v = twl_request_query(req, "limit");
	uint64_t n;
	int rc;

	*limit = TWL_READ_LIMIT_DEFAULT;
	*days = READINESS_DAYS;
	if (v && (twl_parse_u64(v, TWL_READ_LIMIT_MAX, &n) || n < 1)) {
		rc = twl_response_error(resp, 400, "bad_parameter", "limit",
					"expected an integer from 1 to 1000");
		return rc ? rc : 1;
	}
	if (v)
		*limit = (unsigned)n;
	v = twl_request_query(req, "days");
	if (v && (twl_parse_u64(v, 3660, &n) || n < 1)) {
		rc = twl_response_error(resp, 400, "bad_parameter", "days",
					"expected 1 to 3660");
		return rc ? rc : 1;
	}
	if (v)
		*days = (unsigned)n;
	return 0;
}

/*
 * The store's answer for target @t's plan, in *@out; @base gives the
 * window, page size, grouping and label filter.
 */
static int readiness_doc(struct twl_store *store, const json_t *t,
			 const struct twl_readiness_query *base, json_t **out)
{
	json_t *plan = twl_target_plan(t), *removed = json_array(), *v;
	json_t *shipped = twl_targets_shipped(), *dl = NULL;
	struct twl_readiness_query q = *base;
	char *rj = NULL, *ij = NULL;
	size_t i;
	int rc = -ENOMEM;

	*out = NULL;
	if (!plan || !removed || !shipped)
		goto out;
	json_array_foreach(json_object_get(plan, "removed"), i, v)
	{
		if (json_array_append(removed, json_object_get(v, "id")))
			goto out;
	}
	rj = json_dumps(removed, JSON_COMPACT);
	ij = json_dumps(json_object_get(plan, "interfaces"), JSON_COMPACT);
	dl = json_deep_copy(json_object_get(shipped, "deadlines"));
	if (!rj || !ij || !dl)
		goto out;
	q.removed_json = rj;
	q.interfaces_json = ij;
	q.deadlines = dl;
	rc = twl_read_readiness(store, &q, out);
	if (!rc && (json_object_set_new(*out, "plan", json_incref(plan)) ||
		    json_object_set_new(*out, "deadlines", json_incref(dl))))
		rc = -ENOMEM;
out:
	free(rj);
	free(ij);
	json_decref(dl);
	json_decref(plan);
	json_decref(removed);
	json_decref(shipped);
	return rc;
}

/*
 * A breaking feature's export facts: its hosts, and how many of them only
 * read it (they lose it too: a monitor's read fails once the file is gone).
 */
static json_t *feature_facts(const json_t *f)
{
	const json_t *k = json_object_get(f, "by_kind");

	return json_pack("{s:O, s:O}", "hosts", json_object_get(f, "hosts"),
			 "reading_only",
			 json_object_get(k, "reading_only") ?: json_integer(0));
}

/* The export's readiness facts of @doc (twl_read_readiness()) into @data. */
static int export_facts(const json_t *t, const json_t *doc, json_t *data)
{
	json_t *b = json_object_get(doc, "breaks"), *f, *feat;
	const char *id;
	size_t i, k;

	if (json_object_set_new(
		    data, "readiness",
		    json_pack("{s:s?, s:s?, s:s?, s:I}", "target",
			      json_string_value(json_object_get(t, "name")),
			      "title",
			      json_string_value(json_object_get(t, "title")),
			      "kernel",
			      json_string_value(json_object_get(t, "kernel")),
			      "hosts",
			      (json_int_t)json_integer_value(
				      json_object_get(b, "count")))))
		return -ENOMEM;
	json_array_foreach(json_object_get(b, "features"), i, f)
	{
		id = json_string_value(json_object_get(f, "id"));
		json_array_foreach(json_object_get(data, "features"), k, feat)
		{
			const char *fid =
				json_string_value(json_object_get(feat, "id"));

			if (!id || !fid || strcmp(id, fid))
				continue;
			if (json_object_set_new(feat, "readiness",
						feature_facts(f)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Contract: see readiness.h. */
int twl_readiness_export(struct twl_store *store, const char *data_dir,
			 const char *name, int64_t since, const char *label_key,
			 const char *label_value, json_t *data)
{
	struct twl_readiness_query q = { .since = since,
					 .limit = 1,
					 .label_key = label_key,
					 .label_value = label_value };
	json_t *t = NULL, *doc = NULL;
	int rc;

	if (!name || !name[0])
		return 0;
	rc = twl_targets_find(data_dir, name, &t);
	if (!rc)
		rc = readiness_doc(store, t, &q, &doc);
	if (!rc)
		rc = export_facts(t, doc, data);
	json_decref(doc);
	json_decref(t);
	return rc;
}

/*
 * What a readiness answer depends on, as plain bytes for the kept answers
 * (answer_cache.h): the target, page size, window, grouping and label.
 */
struct readiness_params {
	char name[72];
	unsigned limit, days;
	bool has_group;
	char group_label[TWL_WIRE_MAX_LABEL_KEY + 1];
	struct twl_label_bytes label;
};

/* twl_answer_fn: a readiness answer, now. */
static int readiness_answer(void *srv, const void *params, json_t **out)
{
	const struct readiness_params *p = params;
	int64_t now = time(NULL);
	struct twl_readiness_query q = {
		.since = now - (int64_t)p->days * 86400,
		.limit = p->limit,
		.group_label = p->has_group ? p->group_label : NULL,
		.label_key = p->label.on ? p->label.key : NULL,
		.label_value = p->label.on ? p->label.value : NULL,
	};
	json_t *t, *label = json_null();
	int rc = twl_targets_find(data_dir(srv) ? data_dir(srv) : "", p->name,
				  &t);

	*out = NULL;
	if (rc)
		return rc;
	if (p->label.on)
		label = json_sprintf("%s=%s", p->label.key, p->label.value);
	rc = readiness_doc(twl_server_store(srv), t, &q, out);
	if (!rc &&
	    (json_object_set_new(*out, "target", twl_target_summary(t)) ||
	     json_object_set(*out, "label", label) ||
	     json_object_set_new(*out, "generated", json_integer(now)) ||
	     json_object_set_new(*out, "days", json_integer(p->days))))
		rc = -ENOMEM;
	json_decref(label);
	json_decref(t);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static const struct twl_answer_kind readiness_kind = { "readiness",
						       readiness_answer };

/* @p from the request's parameters; -EINVAL if one does not fit. */
static int readiness_params_of(struct readiness_params *p, const char *name,
			       unsigned limit, unsigned days, const char *group,
			       const struct twl_read_filter *lf)
{
	memset(p, 0, sizeof(*p));
	p->limit = limit;
	p->days = days;
	p->has_group = group != NULL;
	if (snprintf(p->name, sizeof(p->name), "%s", name) >=
		    (int)sizeof(p->name) ||
	    snprintf(p->group_label, sizeof(p->group_label), "%s",
		     group ? group : "") >= (int)sizeof(p->group_label))
		return -EINVAL;
	return twl_label_bytes_of(&p->label, lf);
}

/* Contract: see readiness.h. */
int twl_api_readiness_export(struct twl_server *srv, const char *name,
			     unsigned days, const struct twl_label_bytes *label,
			     json_t *data)
{
	struct readiness_params p;
	struct twl_read_filter none = { 0 };
	json_t *doc = NULL;
	int rc;

	if (!name || !name[0])
		return 0;
	rc = readiness_params_of(&p, name, TWL_READ_LIMIT_DEFAULT, days, NULL,
				 &none);
	if (rc)
		return rc;
	p.label = *label;
	/* the answer names its target (-ENOENT when it is gone) */
	rc = twl_api_answer(srv, NULL, &readiness_kind, &p, sizeof(p), &doc);
	if (!rc)
		rc = export_facts(json_object_get(doc, "target"), doc, data);
	json_decref(doc);
	return rc;
}

/*
 * @p for target @name as its readiness page asks (GET
 * /api/v1/readiness?target=NAME, every other parameter its default):
 * the answer computed ahead, and the one the detector reads.
 */
static int page_params(struct readiness_params *p, const char *name)
{
	struct twl_read_filter none = { 0 };

	return readiness_params_of(p, name, TWL_READ_LIMIT_DEFAULT,
				   READINESS_DAYS, NULL, &none);
}

/* Contract: see readiness.h. */
int twl_api_readiness_kept_breaks(struct twl_answer_cache *c, const char *name,
				  int64_t *count)
{
	struct readiness_params p;
	json_t *doc = NULL, *n;
	uint64_t age;
	int rc;

	rc = page_params(&p, name);
	if (rc)
		return rc;
	rc = twl_answer_cache_peek(c, &readiness_kind, &p, sizeof(p), &doc,
				   &age);
	if (rc <= 0)
		return rc ? rc : -ENOENT;
	n = json_object_get(json_object_get(doc, "breaks"), "count");
	rc = json_is_integer(n) ? 0 : -ENOENT;
	if (!rc)
		*count = json_integer_value(n);
	json_decref(doc);
	return rc;
}

/* Contract: see readiness.h. */
int twl_api_readiness_ahead(struct twl_server *srv, struct twl_answer_cache *c)
{
	struct readiness_params p;
	json_t *all = NULL, *errors = NULL, *t;
	size_t i;
	int rc;

	if (!data_dir(srv))
		return 0;
	rc = twl_targets_load(data_dir(srv), &all, &errors);
	json_array_foreach(all, i, t)
	{
		if (!rc)
			rc = page_params(&p, json_string_value(json_object_get(
						     t, "name")));
		if (!rc)
			rc = twl_answer_cache_ahead(c, &readiness_kind, &p,
						    sizeof(p));
	}
	json_decref(all);
	json_decref(errors);
	return rc;
}

/* Contract: see readiness.h. GET /api/v1/readiness?target=N. */
int twl_api_readiness_get(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp)
{
	const char *dir = data_dir(srv),
		   *name = twl_request_query(req, "target"), *group = NULL;
	struct readiness_params p;
	struct twl_read_filter lf;
	unsigned limit, days;
	json_t *t, *doc;
	int rc;

	if (!dir)
		return no_data_dir(resp);
	if (!twl_target_name_ok(name))
		return twl_response_error(
			resp, 400, "bad_parameter", "target",
			"expected a target name (GET /api/v1/targets)");
	rc = readiness_params(req, resp, &limit, &days);
	if (!rc)
		rc = twl_api_group_label(req, resp, &group);
	if (!rc)
		rc = twl_api_label_param(req, resp, &lf);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = twl_targets_find(dir, name, &t);
	if (rc == -ENOENT)
		return twl_response_error(
			resp, 404, "not_found", "target",
			"no such target (GET /api/v1/targets)");
	if (rc)
		return rc;
	json_decref(t);
	rc = readiness_params_of(&p, name, limit, days, group, &lf);
	if (!rc)
		rc = twl_api_answer(srv, resp, &readiness_kind, &p, sizeof(p),
				    &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "readiness");
	return twl_response_json(resp, 200, doc);
}
