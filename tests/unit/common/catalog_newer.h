/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For tests of catalog updates: the shipped schema/catalog.json with
 * another "version" and one more exact text in memcg_v1.soft_limit, as
 * the text a server would hold. Include after <cmocka.h>.
 */
#ifndef TWL_TEST_CATALOG_NEWER_H
#define TWL_TEST_CATALOG_NEWER_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * @src_dir's schema/catalog.json with "version" @version and, unless @text
 * is NULL, @text added to memcg_v1.soft_limit's messages (level 4): a new
 * string (free() it) and its length in *@len.
 */
static inline char *catalog_newer(const char *src_dir, unsigned version,
				  const char *text, size_t *len)
{
	char p[4200];
	json_error_t jerr;
	json_t *doc, *f;
	size_t i;
	char *out;

	if (!src_dir)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	snprintf(p, sizeof(p), "%s/schema/catalog.json", src_dir);
	doc = json_load_file(p, 0, &jerr);
	if (!doc)
		fail_msg("%s: %s", p, jerr.text);
	json_object_set_new(doc, "version", json_integer(version));
	json_array_foreach(json_object_get(doc, "features"), i, f)
	{
		if (text && !strcmp(json_string_value(json_object_get(f, "id")),
				    "memcg_v1.soft_limit"))
			json_array_append_new(json_object_get(f, "messages"),
					      json_pack("{s:s, s:s, s:i}",
							"text", text, "match",
							"exact", "level", 4));
	}
	out = json_dumps(doc, JSON_INDENT(1));
	json_decref(doc);
	if (!out)
		fail_msg("out of memory");
	if (len)
		*len = strlen(out);
	return out;
}

#endif /* TWL_TEST_CATALOG_NEWER_H */
