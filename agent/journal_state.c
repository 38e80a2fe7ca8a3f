// SPDX-License-Identifier: GPL-2.0
/* Where the journal backfill left each boot: journal.json (journal.h). */
#include "journal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <twilight/util.h>

static bool boot_id_ok(const char *s)
{
	return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

/* Printable ASCII without spaces, as sd-journal writes cursors. */
static bool cursor_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= TWL_JOURNAL_CURSOR_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

const char *twl_journal_state_cursor(const struct twl_journal_state *st,
				     const char *boot_id)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (!strcmp(st->boots[i].boot_id, boot_id))
			return st->boots[i].cursor;
	return NULL;
}

int twl_journal_state_set(struct twl_journal_state *st, const char *boot_id,
			  const char *cursor)
{
	size_t i;

	if (!boot_id_ok(boot_id) || !cursor_ok(cursor))
		return -EINVAL;
	for (i = 0; i < st->n; i++)
		if (!strcmp(st->boots[i].boot_id, boot_id))
			break;
	if (i == st->n) {
		if (st->n == TWL_JOURNAL_MAX_BOOTS) {
			/* Full: the oldest boot goes (it was read through long ago). */
			memmove(&st->boots[0], &st->boots[1],
				sizeof(st->boots[0]) * (st->n - 1));
			i = --st->n;
		}
		st->n++;
		memcpy(st->boots[i].boot_id, boot_id, 33);
	}
	snprintf(st->boots[i].cursor, sizeof(st->boots[i].cursor), "%s",
		 cursor);
	return 0;
}

static int parse_boots(json_t *arr, struct twl_journal_state *st)
{
	size_t i;
	json_t *b;

	if (!json_is_array(arr) || json_array_size(arr) > TWL_JOURNAL_MAX_BOOTS)
		return -EINVAL;
	json_array_foreach(arr, i, b)
	{
		const char *id =
			json_string_value(json_object_get(b, "boot_id"));
		const char *cur =
			json_string_value(json_object_get(b, "cursor"));

		if (!id || !cur || twl_journal_state_cursor(st, id) ||
		    twl_journal_state_set(st, id, cur))
			return -EINVAL;
	}
	return 0;
}

int twl_journal_state_parse(const char *text, size_t len,
			    struct twl_journal_state *st)
{
	json_t *doc, *v;
	int ret = -EINVAL;

	memset(st, 0, sizeof(*st));
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(doc))
		goto out;
	v = json_object_get(doc, "backfilled");
	if (v && !json_is_boolean(v))
		goto out;
	st->backfilled = json_is_true(v);
	v = json_object_get(doc, "boots");
	ret = v ? parse_boots(v, st) : 0;
out:
	json_decref(doc);
	if (ret)
		memset(st, 0, sizeof(*st));
	return ret;
}

static int state_path(const char *dir, char *path, size_t cap)
{
	if (snprintf(path, cap, "%s/%s", dir, TWL_JOURNAL_STATE_FILE) >=
	    (int)cap)
		return -ENAMETOOLONG;
	return 0;
}

int twl_journal_state_load(const char *dir, struct twl_journal_state *st)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = state_path(dir, path, sizeof(path));
	if (ret)
		return ret;
	ret = twl_read_file(path, 64 * 1024, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	ret = twl_journal_state_parse(text, len, st);
	free(text);
	return ret;
}

int twl_journal_state_save(const char *dir, const struct twl_journal_state *st)
{
	char path[PATH_MAX];
	json_t *doc, *boots;
	char *text = NULL;
	size_t i;
	int ret;

	ret = state_path(dir, path, sizeof(path));
	if (ret)
		return ret;
	boots = json_array();
	doc = json_pack("{s:b, s:o}", "backfilled", st->backfilled, "boots",
			boots);
	if (!doc)
		return -ENOMEM;
	for (i = 0; i < st->n; i++)
		if (json_array_append_new(
			    boots, json_pack("{s:s, s:s}", "boot_id",
					     st->boots[i].boot_id, "cursor",
					     st->boots[i].cursor)))
			goto out;
	text = json_dumps(doc, JSON_COMPACT);
out:
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	ret = twl_write_file_atomic(path, text, strlen(text), 0600);
	free(text);
	return ret;
}
