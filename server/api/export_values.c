// SPDX-License-Identifier: GPL-2.0
/*
 * The values written, in the linux-mm export: withheld unless the
 * operator shows them (export-show-values), since a limit or a flag can
 * tell more about a workload than its kind; process names follow the
 * export's hide_processes. Pure, as the rest of the export.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "api/export.h"
#include "api/value_class.h"

/* Every process name of the written values' lists made "(hidden)". */
static int hide_names(json_t *values)
{
	json_t *list =
		json_object_get(json_object_get(values, "written"), "values");
	json_t *v, *names;
	size_t i, j;

	json_array_foreach(list, i, v)
	{
		names = json_object_get(v, "names");
		for (j = 0; j < json_array_size(names); j++)
			if (json_array_set_new(names, j,
					       json_string("(hidden)")))
				return -ENOMEM;
	}
	return 0;
}

/* Contract: see export.h. */
int twl_export_redact_values(json_t *feat, const struct twl_export_opts *opts)
{
	json_t *values = json_object_get(feat, "values"), *classes;
	bool had;
	int rc;

	if (!values)
		return 0;
	if (!json_is_object(values))
		return -EINVAL;
	if (opts->hide_processes) {
		rc = hide_names(values);
		if (rc)
			return rc;
	}
	if (opts->show_values)
		return twl_value_classes_into(values);
	classes = twl_value_classes(values);
	if (!classes)
		return -errno;
	had = json_array_size(classes) > 0;
	json_decref(classes);
	json_object_del(feat, "values");
	if (had && json_object_set_new(feat, "values_withheld", json_true()))
		return -ENOMEM;
	return 0;
}

/* Does @s start with an IEC unit twl_value_bytes() writes, as a word? */
static bool unit_at(const char *s)
{
	static const char *const units[] = { "B",   "KiB", "MiB", "GiB",
					     "TiB", "PiB", "EiB" };
	size_t i, n;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		n = strlen(units[i]);
		if (!strncmp(s, units[i], n) && strchr(" ;,-)", s[n]))
			return true;
	}
	return false;
}

/*
 * @line wrapped as an item, a number never parted from its unit: the
 * space between them is a no-break space while wrapping (one column, a
 * word character to the wrapper), a plain space again in @b afterwards.
 * A no-break space of the line itself (a process name's) ends as a space.
 */
static int item(struct twl_buf *b, const char *line)
{
	size_t n = strlen(line), i, j = 0, from = b->len;
	char *glued = malloc(2 * n + 1);
	int rc;

	if (!glued)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (line[i] == ' ' && i &&
		    isdigit((unsigned char)line[i - 1]) &&
		    unit_at(line + i + 1)) {
			glued[j++] = (char)0xc2;
			glued[j++] = (char)0xa0;
		} else {
			glued[j++] = line[i];
		}
	}
	glued[j] = '\0';
	rc = twl_export_wrap(b, glued, "    - ", "      ", TWL_EXPORT_WIDTH);
	free(glued);
	for (i = j = from; !rc && i < b->len; i++) {
		if ((unsigned char)b->data[i] == 0xc2 && i + 1 < b->len &&
		    (unsigned char)b->data[i + 1] == 0xa0) {
			b->data[j++] = ' ';
			i++;
		} else {
			b->data[j++] = b->data[i];
		}
	}
	if (!rc) {
		b->len = j;
		b->data[j] = '\0';
	}
	return rc;
}

/* Contract: see export.h. */
int twl_export_values_text(struct twl_buf *b, const json_t *f)
{
	static const char head[] = "  Values written:\n";
	json_t *classes =
		json_object_get(json_object_get(f, "values"), "classes");
	json_t *c;
	size_t i;
	int rc;

	if (json_is_true(json_object_get(f, "values_withheld")))
		return twl_export_wrap(b,
				       "values withheld (export-show-values)",
				       "  Values written: ", "    ",
				       TWL_EXPORT_WIDTH);
	if (!json_array_size(classes))
		return 0;
	rc = twl_buf_append(b, head, sizeof(head) - 1);
	json_array_foreach(classes, i, c)
	{
		if (rc)
			break;
		rc = item(b, json_string_value(c) ? json_string_value(c) : "?");
	}
	return rc;
}
