// SPDX-License-Identifier: GPL-2.0
/*
 * Result rows to JSON (store_sqlite_internal.h): a statement's row read
 * as struct twl_cells, made JSON by the column tables of
 * store/read_rows.h that both backends share.
 */
#include <errno.h>

#include "store/sqlite/store_sqlite_internal.h"

static bool cell_null(const void *src, int row, int col)
{
	(void)row;
	return sqlite3_column_type((sqlite3_stmt *)src, col) == SQLITE_NULL;
}

static int64_t cell_i64(const void *src, int row, int col)
{
	(void)row;
	return sqlite3_column_int64((sqlite3_stmt *)src, col);
}

static const char *cell_text(const void *src, int row, int col)
{
	(void)row;
	return (const char *)sqlite3_column_text((sqlite3_stmt *)src, col);
}

/* Contract: see store_sqlite_internal.h. */
void twl_sqlite_cells(sqlite3_stmt *st, struct twl_cells *c)
{
	*c = (struct twl_cells){ cell_null, cell_i64, cell_text, st, 0 };
}

/* Contract: see store_sqlite_internal.h. */
int twl_row_set(sqlite3_stmt *st, bool row, const struct twl_row *r,
		json_t *obj)
{
	struct twl_cells c;

	twl_sqlite_cells(st, &c);
	return twl_cells_set(row ? &c : NULL, r, obj);
}

/* Contract: see store_sqlite_internal.h. */
json_t *twl_row_json(sqlite3_stmt *st, const struct twl_row *r)
{
	struct twl_cells c;

	twl_sqlite_cells(st, &c);
	return twl_cells_json(&c, r);
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
