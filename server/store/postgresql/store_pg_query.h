/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Statements on the PostgreSQL store's connection for the files of
 * store/postgresql/ (store_pg_query.c): one statement under the store's
 * lock, a transaction of several, and result rows as JSON in the shapes
 * the SQLite backend answers (its twl_col types of the same names).
 * twl_pg_changed() and twl_pg_int() read results (store_pg_internal.h).
 */
#ifndef TWL_SERVER_STORE_PG_QUERY_H
#define TWL_SERVER_STORE_PG_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libpq-fe.h>

struct twl_store;

/* twl_pg_query - twl_pg_exec() on @s's connection, under its lock. */
int twl_pg_query(struct twl_store *s, const char *sql, int n,
		 const char *const *v, PGresult **res);

/* A transaction's body on @conn: 0 or a negative errno. */
typedef int (*twl_pg_tx_fn)(PGconn *conn, void *arg);

/*
 * twl_pg_tx - @fn(@arg) between BEGIN and COMMIT on @s's connection,
 * under its lock: 0 when it and the COMMIT succeeded; else everything it
 * did rolled back and its (or BEGIN's, COMMIT's) negative errno.
 */
int twl_pg_tx(struct twl_store *s, twl_pg_tx_fn fn, void *arg);

/* How a result column becomes a JSON value. */
enum twl_pg_col_type {
	TWL_PG_TEXT, /* a string; SQL NULL: null */
	TWL_PG_INT, /* an integer; SQL NULL: 0 */
	TWL_PG_JSON, /* JSON text (object or array); else null */
};

/* One member of a row's JSON object: @name from the column at its index. */
struct twl_pg_col {
	const char *name;
	enum twl_pg_col_type type;
};

/*
 * twl_pg_change - run command @sql with @n text parameters @v on @s: 0
 * when it changed a row or more, -ENOENT when none, or a negative errno.
 */
int twl_pg_change(struct twl_store *s, const char *sql, int n,
		  const char *const *v);

/*
 * twl_pg_list - run @sql with @n text parameters @v on @s and answer
 * {"@key": [a row as @cols[0..@ncols) each]} into *@out (NULL on error);
 * 0 or a negative errno.
 */
int twl_pg_list(struct twl_store *s, const char *sql, int n,
		const char *const *v, const struct twl_pg_col *cols,
		size_t ncols, const char *key, json_t **out);

#endif /* TWL_SERVER_STORE_PG_QUERY_H */
