// SPDX-License-Identifier: GPL-2.0
/* Response helpers of the handler interface (http.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

static int fail_500(struct twl_response *resp)
{
	static const char body[] =
		"{\"error\":\"internal\",\"reason\":\"out of memory\"}";

	free(resp->body);
	resp->status = 500;
	resp->content_type = "application/json";
	resp->body = strdup(body);
	resp->len = resp->body ? sizeof(body) - 1 : 0;
	return -ENOMEM;
}

/* Contract: see http.h. */
int twl_response_json(struct twl_response *resp, int status, json_t *json)
{
	char *txt;

	if (!json)
		return fail_500(resp);
	txt = json_dumps(json, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(json);
	if (!txt)
		return fail_500(resp);
	free(resp->body);
	resp->status = status;
	resp->body = txt;
	resp->len = strlen(txt);
	resp->content_type = "application/json";
	return 0;
}

/* Contract: see http.h. */
int twl_response_error(struct twl_response *resp, int status, const char *code,
		       const char *field, const char *reason)
{
	json_t *j = json_pack("{ss ss}", "error", code, "reason",
			      reason ? reason : "");

	if (j && field && field[0])
		json_object_set_new(j, "field", json_string(field));
	return twl_response_json(resp, status, j);
}

/* Contract: see http.h. */
int twl_response_data(struct twl_response *resp, int status,
		      const char *content_type, const void *body, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return fail_500(resp);
	memcpy(copy, body, len);
	copy[len] = 0;
	free(resp->body);
	resp->status = status;
	resp->body = copy;
	resp->len = len;
	resp->content_type = content_type;
	return 0;
}

/* Contract: see http.h. */
int twl_response_header(struct twl_response *resp, const char *name,
			const char *fmt, ...)
{
	va_list ap;

	if (resp->n_headers >= TWL_RESP_MAX_HEADERS)
		return -ENOSPC;
	snprintf(resp->headers[resp->n_headers].name,
		 sizeof(resp->headers[0].name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(resp->headers[resp->n_headers].value,
		  sizeof(resp->headers[0].value), fmt, ap);
	va_end(ap);
	resp->n_headers++;
	return 0;
}

/* Contract: see http.h. */
void twl_response_fini(struct twl_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
	resp->status = 500;
}
