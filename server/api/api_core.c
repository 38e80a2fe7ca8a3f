// SPDX-License-Identifier: GPL-2.0
/*
 * Core handlers: /healthz, /metrics, enrolment, token and host-key
 * administration, and the route table (report ingest is api_ingest.c, the
 * static dashboard catch-all static.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/config.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "alerts/alerts.h"
#include "api/api_app.h"
#include "api/api_ingest.h"
#include "api/metrics.h"
#include "api/metrics_fleet.h"
#include "api/webhooks.h"
#include "store/store_read.h"
#include "http/auth.h"
#include "http/server_internal.h"
#include "http/tls.h"

/*
 * 200 while the store answers and stores; 503 when its database link is
 * down (twl_store_ping()) or it does not answer, or when the last
 * TWL_STORE_FAILING_AFTER reports or more all failed to be stored (a
 * corrupt or full database, say), until one is stored again.
 */
static int h_healthz(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	struct twl_store *store = twl_server_store(srv);
	const char *backend = NULL;
	char problem[200], why[300];
	int v, err = 0,
	       link = twl_store_ping(store, &backend, problem, sizeof(problem));
	unsigned failing =
		twl_metrics_store_failing(twl_server_metrics(srv), &err);

	v = link ? link : twl_store_schema_version(store);
	if (v < 0) {
		snprintf(why, sizeof(why), "database unavailable (%s): %s",
			 backend, link ? problem : strerror(-v));
		return twl_response_error(resp, 503, "unavailable", NULL, why);
	}
	if (failing >= TWL_STORE_FAILING_AFTER) {
		snprintf(
			why, sizeof(why),
			"the last %u reports could not be stored (%s); see the server log",
			failing, strerror(err));
		return twl_response_error(resp, 503, "failing", NULL, why);
	}
	return twl_response_json(resp, 200,
				 json_pack("{ss si ss s{ss ss}}", "status",
					   "ok", "schema", v, "version",
					   TWL_VERSION, "database", "backend",
					   backend, "link", "ok"));
}

/*
 * The fleet gauges, from the same reads as the dashboard's summary and
 * health page. A store that cannot answer leaves them out (the scrape
 * still has the counters that say why) rather than failing the scrape.
 */
static int fleet_metrics(struct twl_server *srv, int64_t now, struct twl_buf *b)
{
	const struct twl_config *cfg = twl_server_config(srv);
	int64_t silent = cfg && cfg->silent_after_s ? cfg->silent_after_s :
						      86400;
	struct twl_read_filter f = { .limit = 1 };
	struct twl_store *store = twl_server_store(srv);
	json_t *summary = NULL, *health = NULL;
	int ret;

	if (twl_read_summary(store, now, &summary))
		summary = NULL;
	if (twl_read_health(store, now, silent, &f, &health))
		health = NULL;
	ret = twl_metrics_render_fleet(b, summary, health);
	json_decref(summary);
	json_decref(health);
	return ret;
}

static int h_metrics(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	struct twl_metrics_store st = { .db_bytes = -1, .wal_catchups = -1 };
	struct twl_alerts_stats alerts;
	struct twl_store *store = twl_server_store(srv);
	struct twl_buf b;
	uint64_t n;
	int ret;

	twl_buf_init(&b, 1 << 20);
	if (twl_store_db_size(store, &st.db_bytes))
		st.db_bytes = -1;
	if (!twl_store_wal_catchups(store, &n, &st.wal_catchup_seconds))
		st.wal_catchups = (int64_t)n;
	ret = twl_metrics_render(twl_server_metrics(srv), &st, &b);
	if (!ret)
		ret = twl_metrics_render_cert(&b,
					      twl_server_cert_not_after(srv),
					      req->now, TWL_CERT_WARN_DAYS);
	if (!ret)
		ret = fleet_metrics(srv, req->now, &b);
	if (!ret && twl_api_alerts(srv)) {
		twl_alerts_stats(twl_api_alerts(srv), &alerts);
		ret = twl_metrics_render_alerts(&b, &alerts);
	}
	if (ret) {
		twl_buf_fini(&b);
		return ret;
	}
	ret = twl_response_data(resp, 200,
				"text/plain; version=0.0.4; charset=utf-8",
				b.data ? b.data : "", b.len);
	twl_buf_fini(&b);
	return ret;
}

static json_t *parse_body_object(const struct twl_request *req,
				 struct twl_response *resp)
{
	json_error_t e;
	json_t *j;

	if (req->body_len > 65536) {
		twl_response_error(resp, 413, "too_large", NULL,
				   "body over 64 KiB");
		return NULL;
	}
	j = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &e);
	if (!json_is_object(j)) {
		json_decref(j);
		twl_response_error(resp, 400, "invalid_json", NULL,
				   "body must be a JSON object");
		return NULL;
	}
	return j;
}

static bool valid_id(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
			return false;
	return true;
}

/*
 * Enrolment trades the enrolment token for a key bound to the host id the
 * caller names: any host id, also one enrolled before, whose older keys
 * stay valid (an agent that lost its key comes back this way, and
 * machines cloned from one image, which share a host id, do not revoke
 * each other; the health page shows such clones). What bounds a token is
 * its rate (enroll-rate, enroll-burst), whatever the host ids, and its
 * live keys (enroll-max-keys). docs/operators-guide.md, "Enrolling agents".
 */
static int h_enroll(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	const struct twl_config *cfg = twl_server_config(srv);
	struct twl_metrics *m = twl_server_metrics(srv);
	char secret[TWL_SECRET_LEN + 1];
	const char *host_id;
	unsigned wait;
	json_t *body;
	int ret;

	if (req->who.role != TWL_ROLE_AGENT || req->who.host_id[0] ||
	    req->who.token_id == 0) {
		twl_metrics_reject(m, "forbidden");
		return twl_response_error(
			resp, 403, "forbidden", NULL,
			"enrolment needs the agent enrolment token, not a host key");
	}
	wait = twl_server_enroll_rate(srv, req->who.token_id);
	if (wait) {
		twl_metrics_reject(m, "rate_limited");
		twl_response_error(
			resp, 429, "rate_limited", NULL,
			"too many enrolments with this token; retry after the given delay");
		return twl_response_header(resp, "Retry-After", "%u", wait);
	}
	body = parse_body_object(req, resp);
	if (!body)
		return 0;
	host_id = json_string_value(json_object_get(body, "host_id"));
	if (!valid_id(host_id)) {
		json_decref(body);
		return twl_response_error(
			resp, 400, host_id ? "bad_value" : "missing_field",
			"host_id",
			"host_id must be 1-64 characters of [0-9a-f-]");
	}
	ret = twl_auth_host_key_create(twl_server_store(srv), host_id,
				       req->who.token_id, cfg->enroll_max_keys,
				       req->now, secret);
	if (ret == -EDQUOT) {
		twl_log(LOG_WARNING,
			"enrolment of host %s refused: token %s has %u live host keys (enroll-max-keys); revoke unused keys or raise the limit",
			host_id, req->who.name, cfg->enroll_max_keys);
		twl_metrics_reject(m, "enrolment_cap");
		json_decref(body);
		return twl_response_error(
			resp, 403, "enrolment_cap", NULL,
			"this enrolment token has minted as many live host keys as the server allows (enroll-max-keys)");
	}
	if (ret) {
		json_decref(body);
		return ret;
	}
	twl_log(LOG_INFO, "enrolled host %s (token %s, peer %s)", host_id,
		req->who.name, req->peer);
	ret = twl_response_json(resp, 200,
				json_pack("{ss ss}", "host_id", host_id, "key",
					  secret));
	json_decref(body);
	return ret;
}

static int h_token_list(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp)
{
	json_t *list = NULL;
	int ret = twl_store_token_list(twl_server_store(srv), &list);

	if (ret)
		return ret;
	return twl_response_json(resp, 200, json_pack("{so}", "tokens", list));
}

static int h_token_create(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp)
{
	char secret[TWL_SECRET_LEN + 1];
	const char *name, *role;
	int64_t id = 0;
	json_t *body;
	int ret;

	body = parse_body_object(req, resp);
	if (!body)
		return 0;
	name = json_string_value(json_object_get(body, "name"));
	role = json_string_value(json_object_get(body, "role"));
	if (!name || !name[0] || strlen(name) > 63 ||
	    !twl_utf8_valid(name, strlen(name))) {
		json_decref(body);
		return twl_response_error(resp, 400, "bad_value", "name",
					  "name must be 1-63 bytes of UTF-8");
	}
	if (twl_role_parse(role) < 0) {
		json_decref(body);
		return twl_response_error(
			resp, 400, "bad_value", "role",
			"role must be admin, viewer or agent");
	}
	ret = twl_auth_token_create(twl_server_store(srv), name, role, req->now,
				    secret, &id);
	if (!ret) {
		twl_log(LOG_INFO, "token %lld (%s, %s) created by %s",
			(long long)id, name, role, req->who.name);
		ret = twl_response_json(
			resp, 201,
			json_pack("{sI ss ss ss}", "id", (json_int_t)id, "name",
				  name, "role", role, "token", secret));
	}
	json_decref(body);
	return ret;
}

static int h_token_revoke(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp)
{
	uint64_t id = 0;
	int ret;

	if (twl_parse_u64(req->path_rest, INT64_MAX, &id) || !id)
		return twl_response_error(resp, 400, "bad_value", "id",
					  "token id must be a number");
	ret = twl_store_token_revoke(twl_server_store(srv), (int64_t)id,
				     req->now);
	if (ret == -ENOENT)
		return twl_response_error(resp, 404, "not_found", "id",
					  "no such live token");
	if (ret)
		return ret;
	twl_log(LOG_INFO, "token %llu revoked by %s", (unsigned long long)id,
		req->who.name);
	return twl_response_json(resp, 200,
				 json_pack("{sI ss}", "id", (json_int_t)id,
					   "status", "revoked"));
}

static int h_host_key_revoke(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp)
{
	int n = 0, ret;

	if (!valid_id(req->path_rest))
		return twl_response_error(
			resp, 400, "bad_value", "host_id",
			"host id must be 1-64 characters of [0-9a-f-]");
	ret = twl_store_host_key_revoke(twl_server_store(srv), req->path_rest,
					req->now, &n);
	if (ret)
		return ret;
	twl_server_forget_host_keys(srv, req->path_rest);
	if (!n)
		return twl_response_error(resp, 404, "not_found", "host_id",
					  "no live key for this host");
	twl_log(LOG_INFO, "%d key(s) of host %s revoked by %s", n,
		req->path_rest, req->who.name);
	return twl_response_json(resp, 200,
				 json_pack("{ss si}", "host_id", req->path_rest,
					   "revoked", n));
}

/*
 * Who the caller is, so the dashboard offers only what the role may do
 * (annotation editing is admin-only).
 */
static int h_whoami(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	(void)srv;
	return twl_response_json(resp, 200,
				 json_pack("{ss ss}", "name", req->who.name,
					   "role",
					   twl_role_name(req->who.role)));
}

const struct twl_route twl_core_routes[] = {
	{ "GET", "/healthz", TWL_ROLE_PUBLIC, h_healthz },
	{ "GET", "/metrics", TWL_ROLE_VIEWER, h_metrics },
	{ "GET", "/api/v1/whoami", TWL_ROLE_VIEWER, h_whoami },
	{ "POST", "/api/v1/enroll", TWL_ROLE_AGENT, h_enroll },
	{ "POST", "/api/v1/reports", TWL_ROLE_AGENT, twl_api_reports },
	{ "GET", "/api/v1/tokens", TWL_ROLE_ADMIN, h_token_list },
	{ "POST", "/api/v1/tokens", TWL_ROLE_ADMIN, h_token_create },
	{ "DELETE", "/api/v1/tokens/*", TWL_ROLE_ADMIN, h_token_revoke },
	{ "DELETE", "/api/v1/host-keys/*", TWL_ROLE_ADMIN, h_host_key_revoke },
	/* Dashboard files carry no data; the API they call needs a token. */
	{ "GET", "/*", TWL_ROLE_PUBLIC, twl_handle_static },
	{ NULL, NULL, 0, NULL },
};

const struct twl_route *const twl_api_routes[] = {
	twl_core_routes,    twl_read_routes,	twl_export_routes,
	twl_catalog_routes, twl_webhook_routes, NULL,
};

/* Contract: see http/server.h. */
const struct twl_app twl_api_app = {
	.routes = twl_api_routes,
	.start = twl_api_app_start,
	.drain = twl_api_app_drain,
	.free = twl_api_app_free,
};
