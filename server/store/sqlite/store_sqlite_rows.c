// SPDX-License-Identifier: GPL-2.0
/*
 * Result rows to JSON (store_sqlite_internal.h): every query whose rows
 * become JSON objects names its columns once, in a table of struct
 * twl_col, instead of a json_pack() per statement. The members come out in
 * the table's order, so a table is also the answer's layout.
 */
#include <errno.h>

#include <twilight/catalog.h>

#include "store/sqlite/store_sqlite_internal.h"

#define DAY 86400

static json_t *col_text(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? json_string(t) : json_null();
}

static json_t *col_json(sqlite3_stmt *st, int i, bool array)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	json_t *v;

	if (!array)
		return (t && (v = json_loads(t, 0, NULL))) ? v : json_null();
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	if (json_is_array(v))
		return v;
	json_decref(v);
	return json_array();
}

static json_t *col_title(sqlite3_stmt *st, int i)
{
	const char *id = (const char *)sqlite3_column_text(st, i);
	const struct twl_feature *f = id ? twl_catalog_find(id) : NULL;

	return f && f->title ? json_string(f->title) : json_null();
}

/*
 * Column c of st's current row (without a row, that of an SQL NULL). Only
 * types that tell NULL apart ask for the column's type: a text column's
 * NULL is its NULL pointer, an integer's is 0.
 */
static json_t *col_value(sqlite3_stmt *st, bool row, const struct twl_col *c)
{
	int i = c->col;

	switch (c->type) {
	case TWL_COL_TEXT:
		return row ? col_text(st, i) : json_null();
	case TWL_COL_INT:
		return json_integer(row ? sqlite3_column_int64(st, i) : 0);
	case TWL_COL_INT_NULL:
		if (!row || sqlite3_column_type(st, i) == SQLITE_NULL)
			return json_null();
		return json_integer(sqlite3_column_int64(st, i));
	case TWL_COL_BOOL:
		return json_boolean(row && sqlite3_column_int64(st, i));
	case TWL_COL_DAY:
		return json_integer(
			row ? (json_int_t)sqlite3_column_int64(st, i) * DAY :
			      0);
	case TWL_COL_JSON:
		return row ? col_json(st, i, false) : json_null();
	case TWL_COL_JSON_ARRAY:
		return row ? col_json(st, i, true) : json_array();
	case TWL_COL_TITLE:
		return row ? col_title(st, i) : json_null();
	}
	return NULL;
}

/* Contract: see store_sqlite_internal.h. */
int twl_row_set(sqlite3_stmt *st, bool row, const struct twl_row *r,
		json_t *obj)
{
	for (size_t i = 0; i < r->n; i++) {
		json_t *v = col_value(st, row, &r->cols[i]);

		if (!v || json_object_set_new(obj, r->cols[i].name, v))
			return -ENOMEM;
	}
	return 0;
}

/* Contract: see store_sqlite_internal.h. */
json_t *twl_row_json(sqlite3_stmt *st, const struct twl_row *r)
{
	json_t *o;

	if (r->n == 1 && !r->cols[0].name)
		return col_value(st, true, &r->cols[0]);
	o = json_object();
	if (o && twl_row_set(st, true, r, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* Contract: see store_sqlite_internal.h. */
int twl_rows_into(sqlite3_stmt *st, const struct twl_row *r, json_t *arr,
		  size_t max, bool *more)
{
	size_t n = 0;
	bool row;
	int rc;

	if (more)
		*more = false;
	while (!(rc = twl_step(st, &row)) && row) {
		json_t *v;

		if (n++ == max) {
			if (more)
				*more = true;
			break;
		}
		v = twl_row_json(st, r);
		if (!v || json_array_append_new(arr, v)) {
			rc = -ENOMEM;
			break;
		}
	}
	sqlite3_reset(st);
	return rc;
}

/* Contract: see store_sqlite_internal.h. */
int twl_row_into(sqlite3_stmt *st, const struct twl_row *r, json_t *obj)
{
	bool row;
	int rc = twl_step(st, &row);

	if (!rc)
		rc = twl_row_set(st, row, r, obj);
	sqlite3_reset(st);
	return rc;
}

/* Contract: see store_sqlite_internal.h. */
int twl_one_int(sqlite3_stmt *st, int64_t *v)
{
	bool row;
	int rc = twl_step(st, &row);

	*v = (!rc && row) ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc;
}

/* Contract: see store_sqlite_internal.h. */
int twl_step(sqlite3_stmt *st, bool *row)
{
	int r = sqlite3_step(st);

	*row = r == SQLITE_ROW;
	if (r == SQLITE_ROW || r == SQLITE_DONE)
		return 0;
	return twl_sqlite_errno(r);
}
