/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prepared statements sent in libpq's pipeline mode on one connection
 * (store_pg_pipe.c), for the ingest path: each statement is sent at
 * once and its result read at the next twl_pg_pipe_sync(), so all the
 * statements sent between two syncs cost one round trip. PostgreSQL
 * runs them in the order sent, each seeing what the earlier ones wrote.
 *
 * In pipeline mode a statement that fails makes PostgreSQL skip the
 * rest up to the sync, and leaves the transaction aborted: the first
 * failure is kept, every later send and sync answers it, and the caller
 * rolls back (to its savepoint) once the pipe is synced.
 */
#ifndef TWL_SERVER_STORE_PG_PIPE_H
#define TWL_SERVER_STORE_PG_PIPE_H

#include <stddef.h>

#include <libpq-fe.h>

struct twl_pg_args;

/*
 * Statements sent before a sync is forced: their results (a row or a
 * command tag each) stay far below a socket's buffer, so neither side
 * blocks writing while the other writes too.
 */
#define TWL_PG_PIPE_MAX 256

struct twl_pg_pipe {
	PGconn *conn;
	size_t n; /* statements sent since the last sync */
	PGresult **res[TWL_PG_PIPE_MAX]; /* where each result goes, or NULL */
	int err; /* the first failure (a negative errno), or 0 */
	size_t taken; /* statements whose results were read since init */
	size_t failed_at; /* the first failure's statement (counted as
			   * taken), or SIZE_MAX: none or the connection */
};

/*
 * twl_pg_pipe_init - an empty pipe on @conn (its lock held). Statements
 * are numbered from 0 in the order sent; failed_at tells which one
 * failed first (a failure of the connection itself is no statement's).
 */
void twl_pg_pipe_init(struct twl_pg_pipe *pp, PGconn *conn);

/*
 * twl_pg_pipe_send - send prepared statement @name with @a (NULL: no
 * parameters). Its result is put in *@res at the next sync when it
 * succeeded (PQclear() it; @res NULL: cleared there); *@res is NULL
 * until then and when it failed. 0, or the pipe's first failure (then
 * nothing is sent). Syncs first when TWL_PG_PIPE_MAX are waiting.
 */
int twl_pg_pipe_send(struct twl_pg_pipe *pp, const char *name,
		     const struct twl_pg_args *a, PGresult **res);

/*
 * twl_pg_pipe_sync - one round trip: every statement sent since the last
 * sync has run and its result is in place; the connection is out of
 * pipeline mode (unless it was lost). 0, or the first failure of this
 * pipe: a negative errno (twl_pg_errno(), -ECONNRESET for a lost
 * connection).
 */
int twl_pg_pipe_sync(struct twl_pg_pipe *pp);

/* twl_pg_pipe_run - twl_pg_pipe_send() and twl_pg_pipe_sync(). */
int twl_pg_pipe_run(struct twl_pg_pipe *pp, const char *name,
		    const struct twl_pg_args *a, PGresult **res);

#endif /* TWL_SERVER_STORE_PG_PIPE_H */
