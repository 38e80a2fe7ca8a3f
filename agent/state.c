// SPDX-License-Identifier: GPL-2.0
/* Persistent agent state (see state.h). */
#include "state.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <twilight/util.h>
#include <twilight/wire.h>

static bool id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > 64)
		return false;
	return strspn(s, "0123456789abcdef-") == n;
}

int twl_state_parse(const char *text, size_t len, struct twl_state *st)
{
	json_t *doc, *v;
	int ret = -EINVAL;
	const char *key;

	memset(st, 0, sizeof(*st));
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!doc || !json_is_object(doc))
		goto out;
	json_object_foreach(doc, key, v)
	{
		if (!strcmp(key, "boot_id")) {
			if (!json_is_string(v) || !id_ok(json_string_value(v)))
				goto out;
			snprintf(st->boot_id, sizeof(st->boot_id), "%s",
				 json_string_value(v));
		} else if (!strcmp(key, "last_kmsg_seq")) {
			if (json_is_null(v))
				continue;
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				goto out;
			st->have_last_seq = true;
			st->last_seq = (uint64_t)json_integer_value(v);
		} else if (!strcmp(key, "first_kmsg_seq")) {
			if (json_is_null(v))
				continue;
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				goto out;
			st->have_first_seq = true;
			st->first_seq = (uint64_t)json_integer_value(v);
		} else if (!strcmp(key, "host_seq")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > TWL_WIRE_MAX_INT)
				goto out;
			st->host_seq = (uint64_t)json_integer_value(v);
		}
		/* Unknown members: written by a newer agent, ignored. */
	}
	ret = 0;
out:
	json_decref(doc);
	if (ret)
		memset(st, 0, sizeof(*st));
	return ret;
}

int twl_state_load(const char *dir, struct twl_state *st)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len;
	int ret;

	memset(st, 0, sizeof(*st));
	if (snprintf(path, sizeof(path), "%s/%s", dir, TWL_STATE_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = twl_read_file(path, 64 * 1024, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	ret = twl_state_parse(text, len, st);
	free(text);
	return ret;
}

int twl_state_save(const char *dir, const struct twl_state *st)
{
	char path[PATH_MAX];
	json_t *doc;
	char *text;
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, TWL_STATE_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (st->last_seq > (uint64_t)LLONG_MAX ||
	    st->first_seq > (uint64_t)LLONG_MAX)
		return -ERANGE;
	doc = json_pack(
		"{s:s, s:o, s:o, s:I}", "boot_id", st->boot_id,
		"first_kmsg_seq",
		st->have_first_seq ? json_integer((json_int_t)st->first_seq) :
				     json_null(),
		"last_kmsg_seq",
		st->have_last_seq ? json_integer((json_int_t)st->last_seq) :
				    json_null(),
		"host_seq", (json_int_t)st->host_seq);
	if (!doc)
		return -ENOMEM;
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	ret = twl_write_file_atomic(path, text, strlen(text), 0600);
	free(text);
	return ret;
}

bool twl_state_for_boot(struct twl_state *st, const char *boot_id)
{
	if (!strcmp(st->boot_id, boot_id))
		return st->have_last_seq;
	snprintf(st->boot_id, sizeof(st->boot_id), "%s", boot_id);
	st->have_last_seq = false;
	st->last_seq = 0;
	st->have_first_seq = false;
	st->first_seq = 0;
	return false;
}
