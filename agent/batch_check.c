// SPDX-License-Identifier: GPL-2.0
/* Dropping the entries the wire validator refuses (batch_check.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batch_check.h"

/*
 * The array entry the validator's error path @field names, its array in
 * *@arr and its index in *@idx, and the path up to its ']' in @entry
 * (@cap bytes): "usage[3].cgroup" is usage[3], "census.knobs[0]" that
 * knob. false when @field names no entry ("", "host.hostname", an array
 * as a whole).
 */
static bool entry_of(json_t *doc, const char *field, json_t **arr, size_t *idx,
		     char *entry, size_t cap)
{
	const char *p = field;
	json_t *cur = doc;
	char name[64], *end;
	unsigned long i;
	size_t n;

	while (*p) {
		n = strcspn(p, ".[");
		if (n >= sizeof(name))
			return false;
		if (n) {
			memcpy(name, p, n);
			name[n] = '\0';
			cur = json_object_get(cur, name);
			p += n;
		}
		if (*p == '.') {
			p++;
			continue;
		}
		if (*p != '[' || !isdigit((unsigned char)p[1]))
			return false;
		i = strtoul(p + 1, &end, 10);
		if (*end != ']' || !json_is_array(cur) ||
		    i >= json_array_size(cur))
			return false;
		*arr = cur;
		*idx = i;
		snprintf(entry, cap, "%.*s", (int)(end + 1 - field), field);
		return true;
	}
	return false;
}

/*
 * Drop the entries of @doc the validator refuses, @err holding its first
 * error, until @doc is valid or no entry is named; counted in @out.
 */
static void drop_entries(json_t *doc, struct twl_verr *err,
			 struct twl_batch_check *out)
{
	char entry[sizeof(out->first_entry)];
	json_t *arr;
	size_t idx;

	for (;;) {
		if (out->dropped == TWL_BATCH_CHECK_MAX_DROPS ||
		    !entry_of(doc, err->field, &arr, &idx, entry,
			      sizeof(entry))) {
			out->invalid = true;
			out->why = *err;
			return;
		}
		json_array_remove(arr, idx);
		if (!out->dropped++) {
			out->first = *err;
			memcpy(out->first_entry, entry, sizeof(entry));
		}
		if (!twl_report_validate(doc, err))
			return;
	}
}

/* health.entries_dropped = @total in a version 2 @doc. 0 or -ENOMEM. */
static int set_dropped(json_t *doc, uint64_t total)
{
	json_t *health = json_object_get(doc, "health");

	if (json_integer_value(json_object_get(doc, "v")) < 2 ||
	    !json_is_object(health))
		return 0;
	if (total > TWL_WIRE_MAX_INT)
		total = TWL_WIRE_MAX_INT;
	if (json_object_set_new(health, "entries_dropped",
				json_integer((json_int_t)total)))
		return -ENOMEM;
	return 0;
}

/* Contract: see batch_check.h. */
int twl_batch_check(const char *json, size_t len, uint64_t dropped_before,
		    struct twl_batch_check *out)
{
	struct twl_verr err;
	json_t *doc;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	doc = twl_report_parse(json, len, &err);
	if (!doc) {
		/* Not JSON at all: nothing to drop (a fault of the pump). */
		doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
		if (!doc) {
			out->invalid = true;
			out->why = err;
			return 0;
		}
		drop_entries(doc, &err, out);
	}
	if (!dropped_before && !out->dropped)
		goto out;
	ret = set_dropped(doc, dropped_before + out->dropped);
	if (ret)
		goto out;
	out->json = json_dumps(doc, JSON_COMPACT);
	if (!out->json) {
		ret = -ENOMEM;
		goto out;
	}
	out->len = strlen(out->json);
out:
	json_decref(doc);
	return ret;
}

/* Contract: see batch_check.h. */
void twl_batch_check_fini(struct twl_batch_check *c)
{
	if (!c)
		return;
	free(c->json);
	c->json = NULL;
}
