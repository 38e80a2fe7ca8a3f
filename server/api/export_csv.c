// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export as CSV (RFC 4180, CRLF line ends): one row per
 * feature, for a spreadsheet. Cells hold agent text, so every cell is
 * quoted and escaped as the text export escapes, and a cell a spreadsheet
 * would run as a formula starts with '. Pure: no I/O.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

#include "api/escape.h"
#include "api/export_json.h"
#include "api/export.h"
#include "api/export_kinds.h"
#include "api/export_where.h"

/*
 * A quoted cell: quotes doubled, a leading formula character neutralised,
 * every byte outside printable UTF-8 (controls, line breaks included, and
 * invalid bytes) and every controlled() character escaped as the text
 * export does, so a cell is one line and holds nothing a terminal acts on.
 */
static int csv_cell(struct twl_buf *b, const char *s, bool last)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), in, bl;
	bool formula = s[0] == '=' || s[0] == '+' || s[0] == '-' ||
		       s[0] == '@' || s[0] == '\t' || s[0] == '\r';
	char tmp[TWL_ESCAPE_UNIT_MAX];
	int rc = 0;

	TRY(twl_buf_append(b, "\"", 1));
	if (formula)
		TRY(twl_buf_append(b, "'", 1));
	for (; n; u += in, n -= in) {
		twl_escape_unit(u, n, &in, tmp, &bl);
		if (*u == '"')
			TRY(twl_buf_append(b, "\"\"", 2));
		else
			TRY(twl_buf_append(b, tmp, bl));
	}
	TRY(twl_buf_append(b, last ? "\"\r\n" : "\",", last ? 3 : 2));
out:
	return rc;
}

static int csv_int(struct twl_buf *b, json_int_t v)
{
	return twl_buf_printf(b, "%" JSON_INTEGER_FORMAT ",", v);
}

/* A time cell: empty when unknown (null). */
static int csv_time(struct twl_buf *b, const json_t *v)
{
	if (!json_is_integer(v))
		return twl_buf_append(b, ",", 1);
	return csv_int(b, json_integer_value(v));
}

/* Join array items of @f[@key] through @fmt_item into @out. */
static int csv_join(const json_t *f, const char *key, struct twl_buf *out)
{
	json_t *arr = json_object_get(f, key), *x;
	size_t i;
	int rc = 0;

	twl_buf_reset(out);
	TRY(twl_buf_append(out, "", 0));
	json_array_foreach(arr, i, x)
	{
		const char *sep = i ? "; " : "";
		char phrase[1024];

		if (!strcmp(key, "kernels"))
			rc = twl_buf_printf(out,
					    "%s%s (%" JSON_INTEGER_FORMAT ")",
					    sep, str_or(x, "kernel", "?"),
					    int_of(x, "hosts"));
		else if (!strcmp(key, "workloads"))
			rc = twl_buf_printf(
				out,
				"%s%s (%" JSON_INTEGER_FORMAT
				" hosts, %" JSON_INTEGER_FORMAT " uses)",
				sep,
				twl_export_workload_text(x, phrase,
							 sizeof(phrase)),
				int_of(x, "hosts"), int_of(x, "uses"));
		else if (!strcmp(key, "hosts"))
			rc = twl_buf_printf(out, "%s%s", sep,
					    json_string_value(x) ?
						    json_string_value(x) :
						    "");
		else
			rc = twl_buf_printf(
				out, "%s%s%s%s%s: %s", sep,
				str_or(x, "author", "?"),
				json_is_string(json_object_get(x, "workload")) ?
					" [" :
					"",
				str_or(x, "workload", ""),
				json_is_string(json_object_get(x, "workload")) ?
					"]" :
					"",
				str_or(x, "text", ""));
		if (rc)
			goto out;
	}
out:
	return rc;
}

/* How many of the annotations @anns have @key equal to @value. */
static json_int_t count_of(const json_t *anns, const char *key,
			   const char *value)
{
	json_t *a;
	size_t i;
	json_int_t n = 0;

	json_array_foreach(anns, i, a)
	{
		const char *v = json_string_value(json_object_get(a, key));

		n += v && !strcmp(v, value);
	}
	return n;
}

/*
 * The distinct values of @key in @anns, in the order first recorded,
 * each followed by its count when @counted: "docker --memory-reservation
 * (2); kubelet (1)".
 */
static int distinct_into(const json_t *anns, const char *key, bool counted,
			 struct twl_buf *out)
{
	json_t *a, *b;
	size_t i, j;
	int rc = 0;

	json_array_foreach(anns, i, a)
	{
		const char *v = json_string_value(json_object_get(a, key));
		bool seen = false;

		for (j = 0; v && j < i && !seen; j++) {
			b = json_array_get(anns, j);
			seen = !strcmp(str_or(b, key, ""), v);
		}
		if (!v || seen)
			continue;
		TRY(twl_buf_printf(out, "%s%s", out->len ? "; " : "", v));
		if (counted)
			TRY(twl_buf_printf(out, " (%" JSON_INTEGER_FORMAT ")",
					   count_of(anns, key, v)));
	}
out:
	return rc;
}

/* What fell short, per use case that said so: "[java] text; text". */
static int shortfalls_into(const json_t *anns, struct twl_buf *out)
{
	json_t *a;
	size_t i;
	int rc = 0;

	json_array_foreach(anns, i, a)
	{
		const char *s =
			json_string_value(json_object_get(a, "shortfall"));
		const char *w =
			json_string_value(json_object_get(a, "workload"));

		if (!s)
			continue;
		rc = twl_buf_printf(out, "%s%s%s%s%s", out->len ? "; " : "",
				    w ? "[" : "", w ? w : "", w ? "] " : "", s);
		if (rc)
			break;
	}
	return rc;
}

/* The value classes, or that export-show-values withheld them. */
static int values_into(const json_t *f, struct twl_buf *out)
{
	json_t *c;
	size_t i;
	int rc = 0;

	if (json_is_true(json_object_get(f, "values_withheld")))
		return twl_buf_printf(out, "withheld (export-show-values)");
	json_array_foreach(
		json_object_get(json_object_get(f, "values"), "classes"), i, c)
	{
		rc = twl_buf_printf(
			out, "%s%s", i ? "; " : "",
			json_string_value(c) ? json_string_value(c) : "?");
		if (rc)
			break;
	}
	return rc;
}

/* A list cell: @cell's text, as filled (@rc_fill), quoted into @b. */
static int list_cell(struct twl_buf *b, struct twl_buf *cell, int rc_fill,
		     bool last)
{
	if (rc_fill)
		return rc_fill;
	return csv_cell(b, cell->data ? cell->data : "", last);
}

/*
 * The structured use cases and the values: intentional and accidental
 * counts, what sets the knob, the v2 attempts, what fell short, the
 * teams (only when shown), the value classes.
 */
static int usecase_cells(struct twl_buf *b, const json_t *f,
			 struct twl_buf *cell)
{
	const json_t *anns = json_object_get(f, "annotations");
	int rc = 0;

	TRY(csv_int(b, count_of(anns, "intent", "intentional")));
	TRY(csv_int(b, count_of(anns, "intent", "accidental")));
	twl_buf_reset(cell);
	TRY(list_cell(b, cell, distinct_into(anns, "set_by", true, cell),
		      false));
	TRY(csv_int(b, count_of(anns, "v2_tried", "no")));
	TRY(csv_int(b, count_of(anns, "v2_tried", "works")));
	TRY(csv_int(b, count_of(anns, "v2_tried", "falls_short")));
	twl_buf_reset(cell);
	TRY(list_cell(b, cell, shortfalls_into(anns, cell), false));
	twl_buf_reset(cell);
	TRY(list_cell(b, cell, distinct_into(anns, "team", false, cell),
		      false));
	twl_buf_reset(cell);
	TRY(list_cell(b, cell, values_into(f, cell), false));
out:
	return rc;
}

/*
 * The evidence apart from uses: hosts per kind of use, the processes that
 * only read, the kernel warnings and their kernels, whether BPF counts
 * the feature at all.
 */
static int evidence_cells(struct twl_buf *b, const json_t *f,
			  struct twl_buf *cell)
{
	const json_t *kw = json_object_get(f, "kernel_warnings");
	int rc = 0;

	TRY(csv_int(b, int_of(f, "hosts_configuring")));
	TRY(csv_int(b, int_of(f, "hosts_listening")));
	TRY(csv_int(b, int_of(f, "hosts_reading_only")));
	twl_buf_reset(cell);
	TRY(twl_buf_append(cell, "", 0));
	TRY(list_cell(b, cell,
		      twl_export_readers_into(cell,
					      json_object_get(f, "readers")),
		      false));
	TRY(csv_int(b, int_of(kw, "hosts")));
	TRY(csv_int(b, int_of(kw, "warnings")));
	twl_buf_reset(cell);
	TRY(twl_buf_append(cell, "", 0));
	TRY(list_cell(b, cell,
		      twl_export_warning_kernels_into(
			      cell, json_object_get(kw, "kernels")),
		      false));
	TRY(csv_cell(b,
		     json_is_false(json_object_get(f, "bpf_measured")) ? "no" :
									 "yes",
		     true));
out:
	return rc;
}

/* One feature's row. */
static int feature_row(struct twl_buf *b, const json_t *f, struct twl_buf *cell)
{
	static const char *const joined[] = { "kernels", "workloads", "hosts",
					      "annotations" };
	char fits[128];
	size_t k;
	int rc = 0;

	TRY(csv_cell(b, str_or(f, "id", ""), false));
	TRY(csv_cell(b, str_or(f, "title", ""), false));
	TRY(csv_cell(b, str_or(f, "status", ""), false));
	TRY(csv_cell(b, str_or(f, "kernel_version", ""), false));
	TRY(csv_int(b, int_of(f, "hosts_using")));
	TRY(csv_int(b, int_of(f, "hosts_v1")));
	TRY(csv_int(b, int_of(f, "hosts_all")));
	TRY(csv_int(b, int_of(f, "uses")));
	TRY(csv_time(b, json_object_get(f, "first_seen")));
	TRY(csv_time(b, json_object_get(f, "last_seen")));
	TRY(csv_cell(b, str_or(f, "replacement", ""), false));
	twl_export_fits_summary(json_object_get(f, "annotations"), fits,
				sizeof(fits));
	TRY(csv_cell(b, fits, false));
	for (k = 0; k < sizeof(joined) / sizeof(joined[0]); k++) {
		TRY(csv_join(f, joined[k], cell));
		TRY(csv_cell(b, cell->data ? cell->data : "", false));
	}
	TRY(usecase_cells(b, f, cell));
	rc = evidence_cells(b, f, cell);
out:
	return rc;
}

/* Contract: see export.h. */
int twl_export_csv(const json_t *data, struct twl_buf *b)
{
	json_t *f;
	size_t i;
	struct twl_buf cell;
	int rc = 0;

	twl_buf_init(&cell, TWL_EXPORT_MAX_BYTES);
	TRY(twl_buf_printf(
		b, "feature,title,status,kernel_version,hosts_using,hosts_v1,"
		   "hosts_all,uses,first_seen,last_seen,replacement,"
		   "replacement_fits,kernels,workloads,hosts,use_cases,"
		   "use_cases_intentional,use_cases_accidental,set_by,"
		   "v2_not_tried,v2_works,v2_falls_short,v2_shortfalls,teams,"
		   "values,hosts_configuring,hosts_listening,"
		   "hosts_reading_only,readers,kernel_warning_hosts,"
		   "kernel_warnings,kernel_warning_kernels,bpf_measured\r\n"));
	json_array_foreach(json_object_get(data, "features"), i, f)
	{
		if (!json_is_object(f)) {
			rc = -EINVAL;
			goto out;
		}
		TRY(feature_row(b, f, &cell));
	}
out:
	twl_buf_fini(&cell);
	return rc;
}
