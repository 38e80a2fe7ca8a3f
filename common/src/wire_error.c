// SPDX-License-Identifier: GPL-2.0
/*
 * Rejections of the wire-format code: the path of the offending value
 * rendered from the segment stack, the reason made printable, and the
 * server's error body. Only runs when a check fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "wire_internal.h"

/* Append one segment to the rendered path (cut when 256 bytes are full). */
static void render_key(struct ctx *c, const char *key)
{
	size_t room = sizeof(c->path) - c->plen;

	if (room > 1) {
		int n = snprintf(c->path + c->plen, room, "%s",
				 c->plen ? "." : "");

		twl_printable_copy(key, strlen(key), c->path + c->plen + n,
				   room - (size_t)n);
		c->plen += strlen(c->path + c->plen);
	}
}

static void render_index(struct ctx *c, size_t i)
{
	size_t room = sizeof(c->path) - c->plen;

	if (room > 1) {
		snprintf(c->path + c->plen, room, "[%zu]", i);
		c->plen += strlen(c->path + c->plen);
	}
}

/* Render the segment stack into c->path (only on failure). */
static void path_render(struct ctx *c)
{
	size_t i, n = c->nseg < PATH_SEGS ? c->nseg : PATH_SEGS;

	c->plen = 0;
	c->path[0] = '\0';
	for (i = 0; i < n; i++) {
		if (c->seg[i].key)
			render_key(c, c->seg[i].key);
		else
			render_index(c, c->seg[i].index);
	}
}

/* Contract: see wire_internal.h. */
int wire_fail(struct ctx *c, const char *code, const char *fmt, ...)
{
	struct twl_verr *e = c->err;
	char reason[sizeof(e->reason)];
	va_list ap;

	if (!e)
		return -EINVAL;
	path_render(c);
	snprintf(e->code, sizeof(e->code), "%s", code);
	if (c->plen < sizeof(e->field)) {
		memcpy(e->field, c->path, c->plen + 1);
	} else {
		memcpy(e->field, c->path, sizeof(e->field) - 4);
		strcpy(e->field + sizeof(e->field) - 4, "...");
	}
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	twl_printable_copy(reason, strlen(reason), e->reason,
			   sizeof(e->reason));
	return -EINVAL;
}

/* Contract: see wire_internal.h. */
const char *wire_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a fractional number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

/* Contract: see wire.h. */
json_t *twl_verr_to_json(const struct twl_verr *err)
{
	return json_pack("{s:s, s:s, s:s}", "error", err->code, "field",
			 err->field, "reason", err->reason);
}
