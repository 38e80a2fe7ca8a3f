// SPDX-License-Identifier: GPL-2.0
/*
 * Webhook administration (admin only): add, list and delete the
 * receivers of alerts, and read the delivery log. A webhook's secret is
 * given once, on add, by the admin, and never answered back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/config.h>
#include <twilight/util.h>

#include "alerts/alerts.h"
#include "alerts/deliver.h"
#include "api/api_app.h"
#include "api/api_read.h"
#include "api/webhooks.h"
#include "http/server.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

#define SECRET_MIN 16
#define SECRET_MAX 256

/* The secret: 16-256 printable ASCII bytes, no spaces. */
static bool secret_ok(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;

	if (!s || n < SECRET_MIN || n > SECRET_MAX || strlen(s) != n)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return false;
	return true;
}

/* The POST body's problem as a 400, or 0 with url and secret set. */
static int check_body(const json_t *body, struct twl_response *resp,
		      const char **url, const char **secret)
{
	const char *key;
	json_t *v;
	int rc;

	if (!json_is_object(body))
		return twl_response_error(resp, 400, "wrong_type", "", "the body must be a JSON object") ?:
			       1;
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "url") && strcmp(key, "secret")) {
			rc = twl_response_error(resp, 400, "unknown_field", key,
						"allowed: url, secret");
			return rc ? rc : 1;
		}
	}
	*url = json_string_value(json_object_get(body, "url"));
	if (!*url || !twl_webhook_url_ok(*url)) {
		rc = twl_response_error(
			resp, 400, "bad_value", "url",
			"an https:// URL of at most 2000 bytes is required");
		return rc ? rc : 1;
	}
	v = json_object_get(body, "secret");
	if (!secret_ok(v)) {
		rc = twl_response_error(
			resp, 400, "bad_value", "secret",
			"16 to 256 printable ASCII characters, no spaces");
		return rc ? rc : 1;
	}
	*secret = json_string_value(v);
	return 0;
}

static int h_webhook_add(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp)
{
	const char *url, *secret;
	json_error_t jerr;
	json_t *body;
	int64_t id;
	int rc;

	body = json_loadb(req->body ? req->body : "", req->body_len,
			  JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
		return twl_response_error(resp, 400, "invalid_json", "",
					  jerr.text);
	rc = check_body(body, resp, &url, &secret);
	if (rc) {
		json_decref(body);
		return rc > 0 ? 0 : rc;
	}
	rc = twl_store_webhook_add(twl_server_store(srv), url, secret,
				   req->who.name, req->now, &id);
	if (rc) {
		json_decref(body);
		return twl_api_store_error(resp, rc, "webhook");
	}
	twl_alerts_webhooks_changed(twl_api_alerts(srv));
	twl_log(LOG_INFO, "webhook %lld (%s) added by %s", (long long)id, url,
		req->who.name);
	rc = twl_response_json(resp, 201,
			       json_pack("{s:I, s:s, s:I, s:s}", "id",
					 (json_int_t)id, "url", url, "created",
					 (json_int_t)req->now, "author",
					 req->who.name));
	json_decref(body);
	return rc;
}

static int h_webhook_list(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp)
{
	json_t *doc;
	int rc;

	(void)req;
	rc = twl_store_webhook_list(twl_server_store(srv), false, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "webhook");
	return twl_response_json(resp, 200, doc);
}

static int h_webhook_delete(struct twl_server *srv,
			    const struct twl_request *req,
			    struct twl_response *resp)
{
	uint64_t id = 0;
	int rc;

	if (!req->path_rest || twl_parse_u64(req->path_rest, INT64_MAX, &id) ||
	    !id)
		return twl_response_error(resp, 404, "not_found", "id",
					  "webhook ids are positive integers");
	rc = twl_store_webhook_delete(twl_server_store(srv), (int64_t)id);
	if (rc)
		return twl_api_store_error(resp, rc, "webhook");
	twl_alerts_webhooks_changed(twl_api_alerts(srv));
	twl_log(LOG_INFO, "webhook %llu deleted by %s", (unsigned long long)id,
		req->who.name);
	return twl_response_json(resp, 200,
				 json_pack("{s:I}", "deleted", (json_int_t)id));
}

/* ?webhook=ID&limit=N */
static int h_deliveries(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp)
{
	const char *hook = twl_request_query(req, "webhook"),
		   *lim = twl_request_query(req, "limit");
	uint64_t id = 0, limit = 100;
	json_t *doc;
	int rc;

	if (hook && (twl_parse_u64(hook, INT64_MAX, &id) || !id))
		return twl_response_error(resp, 400, "bad_parameter", "webhook",
					  "a webhook id");
	if (lim && (twl_parse_u64(lim, TWL_READ_LIMIT_MAX, &limit) || !limit))
		return twl_response_error(resp, 400, "bad_parameter", "limit",
					  "1 to 1000");
	rc = twl_store_deliveries(twl_server_store(srv), (int64_t)id,
				  (unsigned)limit, &doc);
	if (rc)
		return twl_api_store_error(resp, rc, "delivery");
	return twl_response_json(resp, 200, doc);
}

const struct twl_route twl_webhook_routes[] = {
	{ "GET", "/api/v1/webhooks", TWL_ROLE_ADMIN, h_webhook_list },
	{ "POST", "/api/v1/webhooks", TWL_ROLE_ADMIN, h_webhook_add },
	{ "GET", "/api/v1/webhooks/deliveries", TWL_ROLE_ADMIN, h_deliveries },
	{ "DELETE", "/api/v1/webhooks/*", TWL_ROLE_ADMIN, h_webhook_delete },
	{ NULL, NULL, 0, NULL },
};
