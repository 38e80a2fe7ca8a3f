// SPDX-License-Identifier: GPL-2.0
/*
 * Result rows to JSON for both backends (read_rows.h): every query whose
 * rows become JSON objects names its columns once, in a table of struct
 * twl_col, instead of a json_pack() per statement. The members come out
 * in the table's order, so a table is also the answer's layout, and the
 * SQLite and PostgreSQL stores, which read their cells each its own way
 * (struct twl_cells), answer the same JSON for the same rows.
 */
#include <errno.h>
#include <string.h>

#include <twilight/catalog.h>

#include "store/read_rows.h"
#include "store/store_read.h"

#define DAY 86400

static json_t *col_text(const struct twl_cells *c, int i)
{
	const char *t = c->text(c->src, c->row, i);

	return t ? json_string(t) : json_null();
}

static json_t *col_json(const struct twl_cells *c, int i, bool array)
{
	const char *t = c->text(c->src, c->row, i);
	json_t *v;

	if (!array)
		return (t && (v = json_loads(t, 0, NULL))) ? v : json_null();
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	if (json_is_array(v))
		return v;
	json_decref(v);
	return json_array();
}

static json_t *col_title(const struct twl_cells *c, int i)
{
	const char *id = c->text(c->src, c->row, i);
	const struct twl_feature *f = id ? twl_catalog_find(id) : NULL;

	return f && f->title ? json_string(f->title) : json_null();
}

/* Column @k->col of row @c (NULL: no row, every column an SQL NULL). */
static json_t *col_value(const struct twl_cells *c, const struct twl_col *k)
{
	int i = k->col;

	switch (k->type) {
	case TWL_COL_TEXT:
		return c ? col_text(c, i) : json_null();
	case TWL_COL_INT:
		return json_integer(c ? c->i64(c->src, c->row, i) : 0);
	case TWL_COL_INT_NULL:
		if (!c || c->null(c->src, c->row, i))
			return json_null();
		return json_integer(c->i64(c->src, c->row, i));
	case TWL_COL_BOOL:
		return json_boolean(c && c->i64(c->src, c->row, i));
	case TWL_COL_DAY:
		return json_integer(c ? c->i64(c->src, c->row, i) * DAY : 0);
	case TWL_COL_JSON:
		return c ? col_json(c, i, false) : json_null();
	case TWL_COL_JSON_ARRAY:
		return c ? col_json(c, i, true) : json_array();
	case TWL_COL_TITLE:
		return c ? col_title(c, i) : json_null();
	}
	return NULL;
}

/* Contract: see read_rows.h. */
int twl_cells_set(const struct twl_cells *c, const struct twl_row *r,
		  json_t *obj)
{
	for (size_t i = 0; i < r->n; i++) {
		json_t *v = col_value(c, &r->cols[i]);

		if (!v || json_object_set_new(obj, r->cols[i].name, v))
			return -ENOMEM;
	}
	return 0;
}

/* Contract: see read_rows.h. */
json_t *twl_cells_json(const struct twl_cells *c, const struct twl_row *r)
{
	json_t *o;

	if (r->n == 1 && !r->cols[0].name)
		return col_value(c, &r->cols[0]);
	o = json_object();
	if (o && twl_cells_set(c, r, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* ---- layouts ---------------------------------------------------------- */

/*
 * A host: its first ten members (HOST_COLS) in lists, all of them for
 * one host.
 */
static const struct twl_col host_cols[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "hostname", 1, TWL_COL_TEXT },
	{ "kernel", 2, TWL_COL_TEXT },
	{ "cgroup_mode", 3, TWL_COL_TEXT },
	{ "agent_version", 4, TWL_COL_TEXT },
	{ "first_seen", 5, TWL_COL_INT_NULL },
	{ "last_seen", 6, TWL_COL_INT_NULL },
	{ "records_lost", 7, TWL_COL_INT },
	{ "key_rejected", 8, TWL_COL_BOOL },
	{ "probe_missing", 9, TWL_COL_JSON_ARRAY },
	{ "boot_id", 10, TWL_COL_TEXT },
	{ "catalog_version", 11, TWL_COL_INT },
	{ "last_seq", 12, TWL_COL_INT },
	{ "health", 13, TWL_COL_JSON },
	{ "census", 14, TWL_COL_JSON },
	/* row times from the future, bounded at ingest (migration 016) */
	{ "times_clamped", 15, TWL_COL_INT },
	{ "time_sent_max", 16, TWL_COL_INT_NULL },
};
/* Contract: see read_rows.h. */
const struct twl_row twl_host_row = { host_cols, 10 };
const struct twl_row twl_host_one_row = TWL_ROW(host_cols);

/* a feature the host used, from the rollup */
static const struct twl_col host_feature_cols[] = {
	{ "id", 0, TWL_COL_TEXT },	  { "title", 0, TWL_COL_TITLE },
	{ "first_used", 1, TWL_COL_INT }, { "last_used", 2, TWL_COL_INT },
	{ "uses", 3, TWL_COL_INT },	  { "reads", 4, TWL_COL_INT },
	{ "warnings", 5, TWL_COL_INT },	  { "configures", 6, TWL_COL_BOOL },
	{ "listens", 7, TWL_COL_BOOL },	  { "reads_only", 8, TWL_COL_BOOL },
	{ "warned", 9, TWL_COL_BOOL },
};
const struct twl_row twl_host_feature_row = TWL_ROW(host_feature_cols);

static const struct twl_col host_unknown_cols[] = {
	{ "text", 0, TWL_COL_TEXT },
	{ "count", 1, TWL_COL_INT },
	{ "first_time", 2, TWL_COL_INT },
	{ "matched_feature", 3, TWL_COL_TEXT },
};
const struct twl_row twl_host_unknown_row = TWL_ROW(host_unknown_cols);

static const struct twl_col host_labels_cols[] = {
	{ "labels", 0, TWL_COL_JSON },
};
const struct twl_row twl_host_labels_row = TWL_ROW(host_labels_cols);

static const struct twl_col host_keys_cols[] = {
	{ "total", 0, TWL_COL_INT },
	{ "revoked", 1, TWL_COL_INT },
	{ "last_enrolled", 2, TWL_COL_INT_NULL },
};
const struct twl_row twl_host_keys_row = TWL_ROW(host_keys_cols);

static const struct twl_col timeline_cols[] = {
	{ "day", 0, TWL_COL_DAY },
	{ "hosts", 1, TWL_COL_INT },
	{ "uses", 2, TWL_COL_INT },
};
const struct twl_row twl_timeline_row = TWL_ROW(timeline_cols);

static const struct twl_col kernel_cols[] = {
	{ "kernel", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
};
const struct twl_row twl_kernel_row = TWL_ROW(kernel_cols);

static const struct twl_col annotation_cols[] = {
	{ "id", 0, TWL_COL_INT },	   { "feature", 1, TWL_COL_TEXT },
	{ "workload", 2, TWL_COL_TEXT },   { "text", 3, TWL_COL_TEXT },
	{ "fits", 4, TWL_COL_TEXT },	   { "author", 5, TWL_COL_TEXT },
	{ "created", 6, TWL_COL_INT },	   { "intent", 7, TWL_COL_TEXT },
	{ "set_by", 8, TWL_COL_TEXT },	   { "v2_tried", 9, TWL_COL_TEXT },
	{ "shortfall", 10, TWL_COL_TEXT }, { "team", 11, TWL_COL_TEXT },
};
const struct twl_row twl_annotation_row = TWL_ROW(annotation_cols);

static const struct twl_col unknown_cols[] = {
	{ "text", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "count", 2, TWL_COL_INT },
	{ "first_seen", 3, TWL_COL_INT },
	{ "last_seen", 4, TWL_COL_INT },
	{ "matched_feature", 5, TWL_COL_TEXT },
	{ "feature_id", 6, TWL_COL_TEXT },
	{ "kernels", 7, TWL_COL_JSON_ARRAY },
};
const struct twl_row twl_unknown_row = TWL_ROW(unknown_cols);

static const struct twl_col written_cols[] = {
	{ "cgroups", 0, TWL_COL_INT },	 { "hosts", 1, TWL_COL_INT },
	{ "processes", 2, TWL_COL_INT }, { "min", 6, TWL_COL_INT_NULL },
	{ "max", 7, TWL_COL_INT_NULL },
};
const struct twl_row twl_written_row = TWL_ROW(written_cols);

static const struct twl_col set_cols[] = {
	{ "cgroups", 3, TWL_COL_INT },
	{ "hosts", 4, TWL_COL_INT },
	{ "processes", 5, TWL_COL_INT },
};
const struct twl_row twl_written_set_row = TWL_ROW(set_cols);

static const struct twl_col unlimited_cols[] = {
	{ "cgroups", 8, TWL_COL_INT },
	{ "hosts", 9, TWL_COL_INT },
	{ "processes", 10, TWL_COL_INT },
};
const struct twl_row twl_written_unlimited_row = TWL_ROW(unlimited_cols);

static const struct twl_col written_value_cols[] = {
	{ "value", 0, TWL_COL_INT },	    { "cgroups", 1, TWL_COL_INT },
	{ "hosts", 2, TWL_COL_INT },	    { "processes", 3, TWL_COL_INT },
	{ "names", 4, TWL_COL_JSON_ARRAY },
};
const struct twl_row twl_written_value_row = TWL_ROW(written_value_cols);

static const struct twl_col configured_cols[] = {
	{ "cgroups", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
	{ "min", 2, TWL_COL_INT_NULL },
	{ "max", 3, TWL_COL_INT_NULL },
};
const struct twl_row twl_configured_row = TWL_ROW(configured_cols);

static const struct twl_col configured_value_cols[] = {
	{ "value", 0, TWL_COL_INT },
	{ "cgroups", 1, TWL_COL_INT },
	{ "hosts", 2, TWL_COL_INT },
};
const struct twl_row twl_configured_value_row = TWL_ROW(configured_value_cols);

static const struct twl_col listener_cols[] = {
	{ "processes", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
	{ "cgroups", 2, TWL_COL_INT },
};
const struct twl_row twl_listener_row = TWL_ROW(listener_cols);

/* ---- steps around the queries ----------------------------------------- */

/* Contract: see store_read.h. */
int twl_glob_to_like(const char *glob, bool prefix, char *out, size_t cap)
{
	size_t o = 0;
	bool wild = false;

	for (; *glob; glob++) {
		char ch = *glob;

		if (o + 3 > cap)
			return -ENAMETOOLONG;
		if (ch == '*') {
			out[o++] = '%';
			wild = true;
		} else if (ch == '?') {
			out[o++] = '_';
			wild = true;
		} else {
			if (ch == '%' || ch == '_' || ch == '\\')
				out[o++] = '\\';
			out[o++] = ch;
		}
	}
	if (!wild && prefix) {
		if (o + 2 > cap)
			return -ENAMETOOLONG;
		out[o++] = '%';
	}
	if (o + 1 > cap)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

/* Contract: see read_rows.h. */
unsigned twl_rq_limit(const struct twl_read_filter *f)
{
	if (!f || !f->limit)
		return TWL_READ_LIMIT_DEFAULT;
	return f->limit > TWL_READ_LIMIT_MAX ? TWL_READ_LIMIT_MAX : f->limit;
}

/* Contract: see read_rows.h. */
int twl_hosts_filter(const struct twl_read_filter *f, char *pat, char *kpat,
		     size_t cap)
{
	if (f->host_pattern &&
	    (strlen(f->host_pattern) > TWL_READ_MAX_FILTER ||
	     twl_glob_to_like(f->host_pattern, true, pat, cap)))
		return -EINVAL;
	if (f->kernel && (strlen(f->kernel) > TWL_READ_MAX_FILTER ||
			  twl_glob_to_like(f->kernel, false, kpat, cap)))
		return -EINVAL;
	if (f->cursor && strlen(f->cursor) > TWL_READ_MAX_FILTER)
		return -EINVAL;
	if (f->feature && !twl_catalog_find(f->feature))
		return -ENOENT;
	return 0;
}

/* Contract: see read_rows.h. */
int twl_page_end(json_t *doc, json_t *arr, const char *key, bool more)
{
	json_t *last = json_array_get(arr, json_array_size(arr) - 1);

	if (!more)
		return 0;
	return twl_jset(doc, "next_cursor",
			json_copy(json_object_get(last, key)));
}

/* Contract: see read_rows.h. */
void twl_host_census_trim(json_t *doc)
{
	json_t *census = json_object_get(doc, "census");

	json_object_del(census, "knobs");
	json_object_del(census, "hierarchies");
}
