// SPDX-License-Identifier: GPL-2.0
/*
 * Dashboard files from the web directory, with their content types: the
 * listed ones only (web_files.h), and never through a link that leads
 * out of the directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "http/server_internal.h"
#include "http/web_files.h"

#define STATIC_MAX (16u << 20)

static const struct {
	const char *ext;
	const char *type;
} types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".json", "application/json" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".woff2", "font/woff2" },
	{ ".txt", "text/plain; charset=utf-8" },
	{ ".map", "application/json" },
};

static const char *content_type(const char *path)
{
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

static int by_name(const void *key, const void *member)
{
	return strcmp(key, *(const char *const *)member);
}

/*
 * The dashboard file @path ("/" is index.html) names, relative to the web
 * root, or NULL: only listed files are served (web_files.h), so whatever
 * else lies in the directory (a build's leftovers, an editor's backup)
 * stays there.
 */
static const char *listed(const char *path)
{
	const char *const *f;

	if (path[0] != '/')
		return NULL;
	if (!strcmp(path, "/"))
		path = "/index.html";
	f = bsearch(path + 1, twl_web_files, twl_web_n_files,
		    sizeof(twl_web_files[0]), by_name);
	return f ? *f : NULL;
}

/* Contract: see server_internal.h. */
int twl_handle_static(struct twl_server *srv, const struct twl_request *req,
		      struct twl_response *resp)
{
	const struct twl_config *cfg = twl_server_config(srv);
	char path[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
	const char *rel = listed(req->path);
	char *data = NULL;
	size_t len;
	int ret;

	if (!strncmp(req->path, "/api/", 5))
		return twl_response_error(resp, 404, "not_found", NULL,
					  "no such API endpoint");
	if (!rel)
		return twl_response_error(resp, 404, "not_found", NULL,
					  "no such file");
	if (!realpath(cfg->web_dir, root))
		return twl_response_error(
			resp, 404, "not_found", NULL,
			"the dashboard is not installed (web directory missing)");
	if ((size_t)snprintf(path, sizeof(path), "%.3500s/%s", root, rel) >=
	    sizeof(path))
		return twl_response_error(resp, 404, "not_found", NULL,
					  "no such file");
	if (!realpath(path, real) || strncmp(real, root, strlen(root)) ||
	    (real[strlen(root)] != '/' && real[strlen(root)] != 0))
		return twl_response_error(resp, 404, "not_found", NULL,
					  "no such file");
	ret = twl_read_file(real, STATIC_MAX, &data, &len);
	if (ret)
		return twl_response_error(resp, 404, "not_found", NULL,
					  "no such file");
	free(resp->body);
	resp->status = 200;
	resp->body = data;
	resp->len = len;
	resp->content_type = content_type(real);
	return 0;
}
