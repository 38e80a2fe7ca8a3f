// SPDX-License-Identifier: GPL-2.0
/*
 * GET /api/v1/export/linux-mm/messages: the export as one RFC 5322 message
 * per mailing list (export_mail.c), as `twilight-server export --out-dir`
 * writes them. The same query parameters as GET /api/v1/export/linux-mm
 * (feature, days, hosts, cgroups, processes, label, ...) plus from, list
 * and part; see
 * docs/api.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/catalog.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "api/answer_cache.h"
#include "api/api_app.h"
#include "api/api_read.h"
#include "api/export.h"
#include "api/readiness.h"
#include "config.h"
#include "http/server.h"

/* Default look-back, as GET /api/v1/export/linux-mm's. */
#define WINDOW_DAYS 30

/* The redaction and window the query asks for; 1 after answering 400. */
static int query_opts(const struct twl_request *req, struct twl_response *resp,
		      struct twl_export_opts *opts, unsigned *days)
{
	const struct {
		const char *name, *yes, *no;
		bool *v;
	} flags[] = {
		{ "hosts", "show", "hide", &opts->show_hosts },
		{ "cgroups", "full", "kind", &opts->full_cgroups },
		{ "processes", "hide", "show", &opts->hide_processes },
		{ "images", "show", "hide", &opts->show_images },
		{ "labels", "show", "hide", &opts->show_labels },
		{ "teams", "show", "hide", &opts->show_teams },
	};
	char reason[96];
	const char *v;
	uint64_t n;
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		v = twl_request_query(req, flags[i].name);
		if (!v)
			continue;
		if (strcmp(v, flags[i].yes) && strcmp(v, flags[i].no)) {
			snprintf(reason, sizeof(reason), "expected %s or %s",
				 flags[i].yes, flags[i].no);
			twl_response_error(resp, 400, "bad_parameter",
					   flags[i].name, reason);
			return 1;
		}
		*flags[i].v = !strcmp(v, flags[i].yes);
	}
	*days = WINDOW_DAYS;
	v = twl_request_query(req, "days");
	if (v) {
		if (twl_parse_u64(v, 366, &n) || n < 1) {
			twl_response_error(resp, 400, "bad_parameter", "days",
					   "expected 1 to 366");
			return 1;
		}
		*days = (unsigned)n;
	}
	return 0;
}

/*
 * The readiness facts of export-readiness-target for the last @days into
 * @data, of the hosts of @label if it is on (twl_api_readiness_export()).
 * A target that is gone (a dropped file removed) leaves the line out and
 * is logged; the export itself still answers.
 */
static int export_readiness(struct twl_server *srv,
			    const struct twl_config *cfg, unsigned days,
			    const struct twl_label_bytes *label, json_t *data)
{
	int rc = twl_api_readiness_export(srv, cfg->export_readiness_target,
					  days, label, data);

	if (rc == -ENOENT) {
		twl_log(LOG_WARNING,
			"export: export-readiness-target %s: no such target "
			"(GET /api/v1/targets lists them); the export has no "
			"readiness line",
			cfg->export_readiness_target);
		rc = 0;
	}
	return rc;
}

/* Whether @list is the To of a catalog route. */
static bool catalog_list(const char *list)
{
	size_t i;

	for (i = 0; i < twl_catalog_route_count(); i++)
		if (!strcmp(twl_catalog_route_at(i)->to[0], list))
			return true;
	return false;
}

/* The messages as one JSON document. */
static int answer_all(struct twl_response *resp,
		      const struct twl_export_message *m, size_t n)
{
	json_t *arr = json_array(), *doc;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(
			    arr, json_pack("{s:s, s:s, s:s, s:s%, s:s%}",
					   "list", m[i].list, "file", m[i].name,
					   "subject", m[i].subject, "eml",
					   m[i].eml, m[i].eml_len, "body",
					   m[i].body, m[i].body_len))) {
			json_decref(arr);
			return -ENOMEM;
		}
	}
	doc = json_pack("{s:o}", "messages", arr);
	return doc ? twl_response_json(resp, 200, doc) : -ENOMEM;
}

/* The message to @list, its .eml or its body; 404 when it has none. */
static int answer_one(struct twl_response *resp,
		      const struct twl_export_message *m, size_t n,
		      const char *list, bool body)
{
	size_t i;
	int rc;

	for (i = 0; i < n && strcmp(m[i].list, list); i++)
		;
	if (i == n)
		return twl_response_error(resp, 404, "not_found", "list",
					  "no feature of this list in use");
	rc = body ? twl_response_data(resp, 200, "text/plain; charset=utf-8",
				      m[i].body, m[i].body_len) :
		    twl_response_data(resp, 200, "message/rfc822", m[i].eml,
				      m[i].eml_len);
	if (!rc)
		twl_response_header(resp, "Content-Disposition",
				    "inline; filename=\"%s.%s\"", m[i].name,
				    body ? "txt" : "eml");
	return rc;
}

/*
 * What the export's data depends on, as plain bytes for the kept answers
 * (answer_cache.h); the rest of the options only redact it.
 */
struct export_params {
	unsigned days;
	char feature[64];
	bool show_hosts, full_cgroups, show_images, has_group;
	char group_label[TWL_WIRE_MAX_LABEL_KEY + 1];
	struct twl_label_bytes label;
};

/* twl_answer_fn: the export's data, readiness included, now. */
static int export_answer(void *srv, const void *params, json_t **out)
{
	const struct export_params *p = params;
	const struct twl_config *cfg = twl_server_config(srv);
	struct twl_export_opts opts = {
		.show_hosts = p->show_hosts,
		.full_cgroups = p->full_cgroups,
		.show_images = p->show_images,
		.group_label = p->has_group ? p->group_label : NULL,
		.label_key = p->label.on ? p->label.key : NULL,
		.label_value = p->label.on ? p->label.value : NULL,
	};
	int64_t now = time(NULL);
	int rc;

	rc = twl_read_export_data(twl_server_store(srv), now, p->days,
				  p->feature[0] ? p->feature : NULL, &opts,
				  out);
	if (!rc && cfg)
		rc = export_readiness(srv, cfg, p->days, &p->label, *out);
	if (rc && *out) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static const struct twl_answer_kind export_kind = { "export", export_answer };

/* @p from the request's options; -EINVAL if a string does not fit. */
static int export_params_of(struct export_params *p, unsigned days,
			    const char *feature,
			    const struct twl_export_opts *opts,
			    const struct twl_read_filter *lf)
{
	memset(p, 0, sizeof(*p));
	p->days = days;
	p->show_hosts = opts->show_hosts;
	p->full_cgroups = opts->full_cgroups;
	p->show_images = opts->show_images;
	p->has_group = opts->group_label != NULL;
	if (snprintf(p->feature, sizeof(p->feature), "%s",
		     feature ? feature : "") >= (int)sizeof(p->feature) ||
	    snprintf(p->group_label, sizeof(p->group_label), "%s",
		     p->has_group ? opts->group_label : "") >=
		    (int)sizeof(p->group_label))
		return -EINVAL;
	return twl_label_bytes_of(&p->label, lf);
}

/* The options the configuration sets, before a request's own. */
static void config_opts(const struct twl_config *cfg,
			struct twl_export_opts *opts)
{
	if (!cfg)
		return;
	opts->show_hosts = cfg->export_show_hosts;
	opts->full_cgroups = cfg->export_show_cgroups;
	opts->show_values = cfg->export_show_values;
	opts->show_images = cfg->export_show_images;
	opts->show_labels = cfg->export_show_labels;
	opts->show_teams = cfg->export_show_teams;
	opts->group_label = cfg->export_group_label;
}

/* The request's options and window into @opts, @days; 1 after a 400. */
static int request_opts(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp, struct twl_export_opts *opts,
			struct twl_read_filter *lf, unsigned *days)
{
	const struct twl_config *cfg = twl_server_config(srv);
	const char *group;
	int rc;

	config_opts(cfg, opts);
	if (query_opts(req, resp, opts, days))
		return 1;
	rc = twl_api_group_label(req, resp, &group);
	if (rc)
		return rc;
	if (group)
		opts->group_label = group;
	rc = twl_api_label_param(req, resp, lf);
	if (rc)
		return rc;
	if (lf->label_key[0]) {
		opts->label_key = lf->label_key;
		opts->label_value = lf->label_value;
	}
	return 0;
}

/* Contract: see api_read.h. */
int twl_api_export_data(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp, json_t **red)
{
	const char *feature = twl_request_query(req, "feature");
	struct twl_export_opts opts = { 0 };
	struct twl_read_filter lf;
	struct export_params p;
	json_t *data = NULL;
	unsigned days;
	int rc;

	*red = NULL;
	rc = request_opts(srv, req, resp, &opts, &lf, &days);
	if (rc)
		return rc;
	if (feature && !twl_catalog_find(feature)) {
		twl_response_error(resp, 400, "bad_parameter", "feature",
				   "not a catalog feature id");
		return 1;
	}
	rc = export_params_of(&p, days, feature, &opts, &lf);
	if (!rc)
		rc = twl_api_answer(srv, resp, &export_kind, &p, sizeof(p),
				    &data);
	if (rc) {
		rc = twl_api_store_error(resp, rc, "feature");
		return rc ? rc : 1;
	}
	*red = twl_export_redact(data, &opts);
	json_decref(data);
	return *red ? 0 : -errno;
}

/* Contract: see api_read.h. */
int twl_api_export_ahead(struct twl_server *srv, struct twl_answer_cache *c)
{
	struct twl_export_opts opts = { 0 };
	struct twl_read_filter none = { 0 };
	struct export_params p;
	int rc;

	config_opts(twl_server_config(srv), &opts);
	rc = export_params_of(&p, WINDOW_DAYS, NULL, &opts, &none);
	if (!rc)
		rc = twl_answer_cache_ahead(c, &export_kind, &p, sizeof(p));
	for (size_t i = 0; !rc && i < twl_catalog_count(); i++) {
		rc = export_params_of(&p, WINDOW_DAYS, twl_catalog_at(i)->id,
				      &opts, &none);
		if (!rc)
			rc = twl_answer_cache_ahead(c, &export_kind, &p,
						    sizeof(p));
	}
	return rc;
}

static int h_messages(struct twl_server *srv, const struct twl_request *req,
		      struct twl_response *resp)
{
	const char *list = twl_request_query(req, "list");
	const char *part = twl_request_query(req, "part");
	struct twl_export_message *m = NULL;
	json_t *red;
	size_t n = 0;
	int rc;

	if (list && !catalog_list(list))
		return twl_response_error(resp, 400, "bad_parameter", "list",
					  "not a list the catalog routes to");
	if (part && (!list || (strcmp(part, "eml") && strcmp(part, "body"))))
		return twl_response_error(resp, 400, "bad_parameter", "part",
					  "expected eml or body, with list");
	rc = twl_api_export_data(srv, req, resp, &red);
	if (rc)
		return rc > 0 ? 0 : rc;
	rc = twl_export_messages(red, twl_request_query(req, "from"), &m, &n);
	json_decref(red);
	if (rc == -EINVAL && twl_request_query(req, "from"))
		return twl_response_error(resp, 400, "bad_parameter", "from",
					  "expected one mail address");
	if (rc)
		return rc;
	rc = list ? answer_one(resp, m, n, list,
			       part && !strcmp(part, "body")) :
		    answer_all(resp, m, n);
	twl_export_messages_free(m, n);
	return rc;
}

const struct twl_route twl_export_routes[] = {
	{ "GET", "/api/v1/export/linux-mm/messages", TWL_ROLE_VIEWER,
	  h_messages },
	{ NULL, NULL, 0, NULL },
};
