// SPDX-License-Identifier: GPL-2.0
/*
 * Statements on the PostgreSQL store's connection (store_pg_query.h):
 * what every file of store/postgresql/ past open and migrations runs
 * through, so that the lock, the transaction and the JSON of a result
 * are written once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"

/* Contract: see store_pg_query.h. */
int twl_pg_query(struct twl_store *s, const char *sql, int n,
		 const char *const *v, PGresult **res)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(p->conn, sql, n, v, res);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Contract: see store_pg_query.h. */
int twl_pg_tx(struct twl_store *s, twl_pg_tx_fn fn, void *arg)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(p->conn, "BEGIN", 0, NULL, NULL);
	if (ret)
		goto out;
	ret = fn(p->conn, arg);
	if (!ret)
		ret = twl_pg_exec(p->conn, "COMMIT", 0, NULL, NULL);
	if (ret)
		twl_pg_exec(p->conn, "ROLLBACK", 0, NULL, NULL);
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Contract: see store_pg_query.h. */
int twl_pg_change(struct twl_store *s, const char *sql, int n,
		  const char *const *v)
{
	PGresult *r;
	int ret = twl_pg_query(s, sql, n, v, &r);

	if (ret)
		return ret;
	ret = twl_pg_changed(r) ? 0 : -ENOENT;
	PQclear(r);
	return ret;
}

static json_t *col_value(const PGresult *r, int row, int col,
			 enum twl_pg_col_type type)
{
	bool null = PQgetisnull(r, row, col);
	json_t *v;

	switch (type) {
	case TWL_PG_TEXT:
		return null ? json_null() :
			      json_string(PQgetvalue(r, row, col));
	case TWL_PG_INT:
		return json_integer(twl_pg_int(r, row, col));
	case TWL_PG_JSON:
		v = null ? NULL : json_loads(PQgetvalue(r, row, col), 0, NULL);
		return v ? v : json_null();
	}
	return NULL;
}

/* Row @row of @r as an object of @cols, appended to @arr: 0 or -ENOMEM. */
static int row_append(const PGresult *r, int row, const struct twl_pg_col *cols,
		      size_t ncols, json_t *arr)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < ncols; i++) {
		json_t *v = col_value(r, row, (int)i, cols[i].type);

		if (!v || json_object_set_new(o, cols[i].name, v)) {
			json_decref(o);
			o = NULL;
		}
	}
	return json_array_append_new(arr, o) ? -ENOMEM : 0;
}

/* Contract: see store_pg_query.h. */
int twl_pg_list(struct twl_store *s, const char *sql, int n,
		const char *const *v, const struct twl_pg_col *cols,
		size_t ncols, const char *key, json_t **out)
{
	json_t *doc, *arr;
	PGresult *r;
	int ret;

	*out = NULL;
	ret = twl_pg_query(s, sql, n, v, &r);
	if (ret)
		return ret;
	doc = json_pack("{s:[]}", key);
	arr = json_object_get(doc, key);
	for (int i = 0; arr && !ret && i < PQntuples(r); i++)
		ret = row_append(r, i, cols, ncols, arr);
	PQclear(r);
	if (!arr || ret) {
		json_decref(doc);
		return -ENOMEM;
	}
	*out = doc;
	return 0;
}
