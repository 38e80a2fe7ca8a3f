/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PostgreSQL backend internals shared by its files: store_pg.c (the
 * connections, open, close, its table of functions), store_pg_tokens.c
 * (tokens and host keys), migrate_pg.c, the ingest path
 * (store_pg_ingest*.c, store_pg_usage.c, store_pg_rollup.c), upkeep
 * (store_pg_maint.c) and the read API (store_pg_rctx.c, whose read
 * transactions hold @rlock and use @rconn). Nothing outside
 * store/postgresql/ includes this, except tests.
 *
 * Three connections, each used by one thread at a time under its lock
 * (libpq connections must not be shared by threads at once): @conn for
 * credentials and short writes, @rconn for the read API's answers, so
 * that a long answer holds up no token look-up, @wconn for ingest and
 * upkeep, whose
 * transaction (twl_store_write_begin() .. _end()) holds @wlock
 * throughout, so that a look-up never waits for a group commit. Every
 * value is passed as a parameter, never formatted into SQL; the ingest
 * path's statements are prepared once on @wconn.
 */
#ifndef TWL_SERVER_STORE_PG_INTERNAL_H
#define TWL_SERVER_STORE_PG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "store/postgresql/store_pg_fold.h"
#include "store/postgresql/store_pg_pipe.h"

struct twl_store;
struct twl_store_ops;

/* The PostgreSQL backend's table of functions (store_pg.c). */
extern const struct twl_store_ops twl_pg_ops;

/* Idle connections of private read answers kept for reuse (twl_pg). */
#define TWL_PG_PRIVATE_IDLE 4
/* Private answers under way that a stop cancels; more are not cancelled. */
#define TWL_PG_PRIVATE_BUSY 64

/* What twl_pg_store_open() returns as a struct twl_store. */
struct twl_pg {
	const struct twl_store_ops *ops; /* &twl_pg_ops: keep it first */
	pthread_mutex_t lock; /* held around every use of conn */
	PGconn *conn;
	bool conn_lost; /* said in the log, not said again until back */
	pthread_mutex_t wlock; /* held around every use of wconn */
	PGconn *wconn;
	/*
	 * The last report's tail (its last statements and RELEASE, sent,
	 * not synced; store_pg_ingest.c): @wpend statements on @wpipe, its
	 * result to be put in *@wpend_result when they fail; NULL: none.
	 */
	struct twl_pg_pipe wpipe;
	size_t wpend;
	int *wpend_result;
	/* the group's feature sums, written at its end (store_pg_rollup.c) */
	struct twl_pg_fold fold;
	int fold_err; /* writing it inside the group failed: it rolls back */
	bool fold_alone; /* each report writes its own sums (store_pg_ingest.c) */
	pthread_mutex_t rlock; /* held around every use of rconn */
	PGconn *rconn;
	/*
	 * The read queries prepared on @rconn (bit per enum twl_rq_id,
	 * store_pg_rctx.c), cleared when it is reset; @rstale: one failed,
	 * all are dropped (DEALLOCATE ALL) before the next answer.
	 */
	uint64_t rprepared[4];
	bool rstale;
	/*
	 * Idle connections of private answers (store_pg_rctx.c), kept for
	 * the next one; @plock held around @idle and @n_idle.
	 */
	pthread_mutex_t plock;
	PGconn *idle[TWL_PG_PRIVATE_IDLE];
	int n_idle;
	/*
	 * Private answers under way, with what cancels each
	 * (twl_pg_stop_reads()); @plock held around them and @reads_stopped.
	 */
	struct {
		PGconn *conn;
		PGcancel *cancel;
	} busy[TWL_PG_PRIVATE_BUSY];
	bool reads_stopped;
	char *uri; /* as opened, for the private answers' connections */
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

/*
 * twl_pg_ready_setup - make readiness's temporary table on @conn, a new
 * private read connection (outside any transaction: a read-only one may
 * not create it). 0 or a negative errno (the connection is not usable
 * for readiness then).
 */
int twl_pg_ready_setup(PGconn *conn);

/*
 * twl_pg_stop_reads - twl_store_stop_reads() on PostgreSQL: the private
 * answers under way are cancelled (PQcancel; their queries fail with
 * query_canceled, -ECANCELED), and no read begins after it
 * (store_pg_rctx.c).
 */
void twl_pg_stop_reads(struct twl_store *s);

/* twl_pg_i64 - @v as decimal text in @buf (21 bytes): a parameter. */
const char *twl_pg_i64(char buf[21], int64_t v);

/*
 * A statement's text parameters, built in order: values as text (NULL
 * is SQL NULL), numbers formatted into @num. Up to TWL_PG_ARGS_MAX.
 */
#define TWL_PG_ARGS_MAX 32

struct twl_pg_args {
	int n;
	const char *v[TWL_PG_ARGS_MAX];
	char num[TWL_PG_ARGS_MAX][24];
};

void twl_pg_arg_text(struct twl_pg_args *a, const char *v);
void twl_pg_arg_i64(struct twl_pg_args *a, int64_t v);
/* @n bytes as a bytea parameter in hex ("\x..."). */
void twl_pg_arg_hex(struct twl_pg_args *a, const unsigned char *b, size_t n,
		    char *buf, size_t cap);

/* A statement prepared once on the writer connection under @name. */
struct twl_pg_stmt {
	const char *name;
	const char *sql;
};

/*
 * twl_pg_prepare - prepare @n statements on @conn: 0, or a negative
 * errno with the one that failed logged (@where names the database).
 */
int twl_pg_prepare(PGconn *conn, const char *where,
		   const struct twl_pg_stmt *st, size_t n);

/*
 * twl_pg_run - run prepared statement @name with @a on @conn (its lock
 * held): twl_pg_exec()'s result and contract; @res NULL: cleared here.
 */
int twl_pg_run(PGconn *conn, const char *name, const struct twl_pg_args *a,
	       PGresult **res);

/* twl_pg_changed - rows command @r changed; twl_pg_int - a cell as int64. */
int64_t twl_pg_changed(const PGresult *r);
int64_t twl_pg_int(const PGresult *r, int row, int col);

/*
 * twl_pg_writer_reconnect - when @p->wconn was lost (the server restarted,
 * the backend was terminated), connect again and prepare its statements
 * again (@p->wlock held): 0 when it is usable, or a negative errno.
 */
int twl_pg_writer_reconnect(struct twl_pg *p);

/*
 * twl_pg_connect - a new connection to @p's database (@p->uri), its
 * notices logged: 0 and *@conn, or a negative errno (logged) and *@conn
 * to PQfinish().
 */
int twl_pg_connect(struct twl_pg *p, PGconn **conn);

/*
 * twl_pg_lock - take @p->lock, and connect @p->conn again when it was
 * lost (the server restarted, the backend was terminated), so that the
 * statements of requests work again once PostgreSQL is back. A failed
 * attempt leaves the connection lost: its statements fail with
 * -ECONNRESET, and the next twl_pg_lock() tries again.
 */
void twl_pg_lock(struct twl_pg *p);

/* Each ingest file's statements prepared on @p->wconn; 0 or -errno. */
int twl_pg_ingest_prepare(struct twl_pg *p); /* store_pg_ingest.c */
int twl_pg_ingest_host_prepare(struct twl_pg *p); /* store_pg_ingest_host.c */
int twl_pg_usage_prepare(struct twl_pg *p); /* store_pg_usage.c */
int twl_pg_rollup_prepare(struct twl_pg *p); /* store_pg_rollup.c */

#endif /* TWL_SERVER_STORE_PG_INTERNAL_H */
