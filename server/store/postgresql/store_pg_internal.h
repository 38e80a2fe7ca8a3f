/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PostgreSQL backend internals shared by its files: store_pg.c (the
 * connection, open, close, its table of functions), store_pg_tokens.c
 * (tokens and host keys), migrate_pg.c. Nothing outside
 * store/postgresql/ includes this, except tests.
 *
 * One connection, used by one thread at a time under @lock: libpq
 * connections must not be shared by threads at once. Every value is
 * passed as a parameter (PQexecParams), never formatted into SQL.
 */
#ifndef TWL_SERVER_STORE_PG_INTERNAL_H
#define TWL_SERVER_STORE_PG_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

struct twl_store;
struct twl_store_ops;

/* The PostgreSQL backend's table of functions (store_pg.c). */
extern const struct twl_store_ops twl_pg_ops;

/* What twl_pg_store_open() returns as a struct twl_store. */
struct twl_pg {
	const struct twl_store_ops *ops; /* &twl_pg_ops: keep it first */
	pthread_mutex_t lock; /* held around every use of conn */
	PGconn *conn;
	char where[256]; /* the URI without its password (twl_uri_redact()) */
};

static inline struct twl_pg *twl_pg_of(struct twl_store *s)
{
	return (struct twl_pg *)s;
}

/* twl_pg_errno - a negative errno for result @r (NULL: the connection). */
int twl_pg_errno(PGconn *conn, const PGresult *r);

/*
 * twl_pg_exec - run @sql with @n text parameters @v (NULL: SQL NULL) on
 * @conn (its lock held). 0 and *@res (PQclear() it; @res NULL: cleared
 * here) when it succeeded, else a negative errno (twl_pg_errno()) and
 * nothing to clear.
 */
int twl_pg_exec(PGconn *conn, const char *sql, int n, const char *const *v,
		PGresult **res);

/* twl_pg_i64 - @v as decimal text in @buf (21 bytes): a parameter. */
const char *twl_pg_i64(char buf[21], int64_t v);

#endif /* TWL_SERVER_STORE_PG_INTERNAL_H */
