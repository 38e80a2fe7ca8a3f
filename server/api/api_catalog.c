// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog as data: GET /api/v1/catalog for the dashboard and API users
 * and GET /api/v1/agent/catalog for agents, which fetch a newer catalog
 * than the one they match with. Both serve the current catalog (the
 * compiled-in one, or the newer data directory catalog.json the server
 * installed at start, catalog_data.c) with an ETag; the agent route
 * answers 204 without a body when the agent already has that version.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "http/http.h"

/*
 * The current catalog as JSON text (*@text, free() it) and its entity tag
 * (version and a hash of the text, so a changed file of the same version
 * still gets a new tag).
 */
static int catalog_text(char **text, size_t *len, char etag[40])
{
	const struct twl_catalog *c = twl_catalog_current();
	json_t *doc = twl_catalog_to_json();
	char hex[65];

	if (!doc)
		return -ENOMEM;
	*text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	if (!*text)
		return -ENOMEM;
	*len = strlen(*text);
	twl_sha256_hex(*text, *len, hex);
	snprintf(etag, 40, "\"%u-%.16s\"", c->version, hex);
	return 0;
}

/* The current catalog, or 304 when the client's If-None-Match is its tag. */
static int answer(const struct twl_request *req, struct twl_response *resp)
{
	const char *inm = twl_request_header(req, "If-None-Match");
	char *text, etag[40];
	size_t len;
	int ret;

	ret = catalog_text(&text, &len, etag);
	if (ret)
		return ret;
	if (inm && !strcmp(inm, etag))
		ret = twl_response_data(resp, 304, "application/json", "", 0);
	else
		ret = twl_response_data(resp, 200, "application/json", text,
					len);
	if (!ret)
		twl_response_header(resp, "ETag", "%s", etag);
	free(text);
	return ret;
}

static int h_catalog(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	(void)srv;
	return answer(req, resp);
}

/* ?have=N: the version the agent matches with (204 when not older). */
static int h_agent_catalog(struct twl_server *srv,
			   const struct twl_request *req,
			   struct twl_response *resp)
{
	const char *have = twl_request_query(req, "have");
	unsigned long n = 0;
	char *end;

	(void)srv;
	if (have) {
		errno = 0;
		n = strtoul(have, &end, 10);
		if (errno || end == have || *end || have[0] == '-')
			return twl_response_error(
				resp, 400, "bad_parameter", "have",
				"expected the agent's catalog version, a number");
	}
	if (n >= twl_catalog_current()->version)
		return twl_response_data(resp, 204, "application/json", "", 0);
	return answer(req, resp);
}

const struct twl_route twl_catalog_routes[] = {
	{ "GET", "/api/v1/catalog", TWL_ROLE_VIEWER, h_catalog },
	{ "GET", "/api/v1/agent/catalog", TWL_ROLE_AGENT, h_agent_catalog },
	{ NULL, NULL, 0, NULL },
};
