// SPDX-License-Identifier: GPL-2.0
/*
 * Read contexts of the read API on PostgreSQL (twl_pg_rq_io,
 * store_pg_read.h): one REPEATABLE READ READ ONLY transaction per answer,
 * so every query of it sees one snapshot while other servers and this
 * one's writer keep committing. Never on the writer's connection: an
 * answer waits for no group commit, and a group commit for no answer.
 * A short answer (priv false: summary, one host) runs on the store's read
 * connection under its lock; a scan (priv true: feature detail, host
 * lists, health, exports, readiness, the alert detector's) on a
 * connection of its own, taken from a few idle ones kept for reuse or
 * opened, as SQLite's private readers (store_sqlite_rctx.c). On one
 * shared connection a detector's readiness scan held every read of the
 * dashboard for minutes (10,000 hosts; bench/README.md). A short
 * answer's queries are prepared once on the shared connection (rq_exec());
 * a scan's are sent as they are. Parameters are all text, which every
 * query casts, so a query leaves the ones it does not use unused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/store_read.h"

/* Parameters sent: the query's, then the label filter's $20 and $21. */
#define LABEL_KEY 20
#define NPARAMS 21
#define TEXTOID 25

struct rctx {
	struct twl_pg *p;
	PGconn *conn; /* p->rconn (its lock held), or a private one */
	bool priv;
	const char *label_key, *label_value; /* NULL: no label filter */
};

/*
 * Note @conn as a private answer under way, so that twl_pg_stop_reads()
 * can cancel it: 0, or -ECANCELED once reads are stopped.
 */
static int busy_add(struct twl_pg *p, PGconn *conn)
{
	PGcancel *cancel = PQgetCancel(conn);
	int rc = 0, i;

	pthread_mutex_lock(&p->plock);
	if (p->reads_stopped)
		rc = -ECANCELED;
	for (i = 0; !rc && cancel && i < TWL_PG_PRIVATE_BUSY; i++)
		if (!p->busy[i].conn) {
			p->busy[i].conn = conn;
			p->busy[i].cancel = cancel;
			cancel = NULL;
		}
	pthread_mutex_unlock(&p->plock);
	PQfreeCancel(cancel); /* not noted: no room, or stopped */
	return rc;
}

/* @conn's answer is over: no longer one a stop cancels. */
static void busy_remove(struct twl_pg *p, PGconn *conn)
{
	PGcancel *cancel = NULL;

	pthread_mutex_lock(&p->plock);
	for (int i = 0; i < TWL_PG_PRIVATE_BUSY; i++)
		if (p->busy[i].conn == conn) {
			cancel = p->busy[i].cancel;
			p->busy[i].conn = NULL;
			p->busy[i].cancel = NULL;
			break;
		}
	pthread_mutex_unlock(&p->plock);
	PQfreeCancel(cancel);
}

/* Contract: see store_pg_internal.h. */
void twl_pg_stop_reads(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);
	char err[256];

	pthread_mutex_lock(&p->plock);
	p->reads_stopped = true;
	for (int i = 0; i < TWL_PG_PRIVATE_BUSY; i++)
		if (p->busy[i].cancel)
			PQcancel(p->busy[i].cancel, err, sizeof(err));
	pthread_mutex_unlock(&p->plock);
}

/* Whether twl_pg_stop_reads() was called. */
static bool reads_stopped(struct twl_pg *p)
{
	bool stopped;

	pthread_mutex_lock(&p->plock);
	stopped = p->reads_stopped;
	pthread_mutex_unlock(&p->plock);
	return stopped;
}

/*
 * A private answer's connection: an idle one, or a new one, which gets
 * the session's temporary tables (twl_pg_ready_setup()).
 */
static int private_take(struct twl_pg *p, PGconn **conn)
{
	int rc;

	*conn = NULL;
	pthread_mutex_lock(&p->plock);
	if (p->n_idle)
		*conn = p->idle[--p->n_idle];
	pthread_mutex_unlock(&p->plock);
	if (*conn && PQstatus(*conn) == CONNECTION_OK) {
		rc = busy_add(p, *conn);
		if (rc) {
			PQfinish(*conn);
			*conn = NULL;
		}
		return rc;
	}
	if (*conn)
		PQreset(*conn); /* lost while idle: the server restarted, say */
	if (*conn && PQstatus(*conn) != CONNECTION_OK) {
		PQfinish(*conn);
		*conn = NULL;
	}
	rc = *conn ? 0 : twl_pg_connect(p, conn);
	if (!rc)
		rc = twl_pg_ready_setup(*conn);
	if (!rc)
		rc = busy_add(p, *conn);
	if (rc) {
		PQfinish(*conn);
		*conn = NULL;
	}
	return rc;
}

/* A private answer's connection back among the idle, or closed. */
static void private_give(struct twl_pg *p, PGconn *conn)
{
	if (conn)
		busy_remove(p, conn);
	pthread_mutex_lock(&p->plock);
	if (conn && PQstatus(conn) == CONNECTION_OK &&
	    p->n_idle < TWL_PG_PRIVATE_IDLE) {
		p->idle[p->n_idle++] = conn;
		conn = NULL;
	}
	pthread_mutex_unlock(&p->plock);
	PQfinish(conn);
}

static void conn_give(struct rctx *c)
{
	if (c->priv)
		private_give(c->p, c->conn);
	else
		pthread_mutex_unlock(&c->p->rlock);
}

static int rq_begin(struct twl_store *s, bool priv,
		    const struct twl_read_filter *label, void **ctx)
{
	struct rctx *c = calloc(1, sizeof(*c));
	int rc = 0;

	if (!c)
		return -ENOMEM;
	c->p = twl_pg_of(s);
	c->priv = priv;
	if (label && label->label_key[0]) {
		c->label_key = label->label_key;
		c->label_value = label->label_value;
	}
	if (reads_stopped(c->p)) {
		free(c);
		return -ECANCELED;
	}
	if (priv) {
		rc = private_take(c->p, &c->conn);
	} else {
		pthread_mutex_lock(&c->p->rlock);
		c->conn = c->p->rconn;
		if (PQstatus(c->conn) != CONNECTION_OK) {
			PQreset(c->conn); /* lost: the server restarted, say */
			memset(c->p->rprepared, 0, sizeof(c->p->rprepared));
		}
		if (c->p->rstale &&
		    !twl_pg_exec(c->conn, "DEALLOCATE ALL", 0, NULL, NULL)) {
			memset(c->p->rprepared, 0, sizeof(c->p->rprepared));
			c->p->rstale = false;
		}
	}
	if (!rc)
		rc = twl_pg_exec(
			c->conn,
			"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0,
			NULL, NULL);
	if (rc) {
		conn_give(c);
		free(c);
		return rc;
	}
	*ctx = c;
	return 0;
}

static void rq_end(void *ctx)
{
	struct rctx *c = ctx;

	/* nothing written: after a failed query this ends it the same way */
	twl_pg_exec(c->conn, "ROLLBACK", 0, NULL, NULL);
	conn_give(c);
	free(c);
}

/* Query @q's text, from the table of the file that has it; NULL: none. */
static const char *rq_sql(enum twl_rq_id q)
{
	static const char *const *const tables[] = {
		twl_pg_read_sql,    twl_pg_values_sql,	twl_pg_health_sql,
		twl_pg_unknown_sql, twl_pg_feature_sql, twl_pg_readiness_sql,
		twl_pg_export_sql,
	};

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i][q])
			return tables[i][q];
	return NULL;
}

static bool cell_null(const void *src, int row, int col)
{
	return PQgetisnull(src, row, col);
}

/* An integer cell; a boolean's 't' is 1. */
static int64_t cell_i64(const void *src, int row, int col)
{
	const char *v = PQgetvalue(src, row, col);

	return *v == 't' ? 1 : strtoll(v, NULL, 10);
}

static const char *cell_text(const void *src, int row, int col)
{
	return PQgetisnull(src, row, col) ? NULL : PQgetvalue(src, row, col);
}

/* @fn on each row of @r until it stops: 0 or its negative errno. */
static int each_row(PGresult *r, twl_rq_row_fn fn, void *arg)
{
	struct twl_cells cells = { cell_null, cell_i64, cell_text, r, 0 };
	int rc = 0;

	for (; !rc && cells.row < PQntuples(r); cells.row++)
		rc = fn(arg, &cells);
	return rc < 0 ? rc : 0;
}

_Static_assert(TWL_RQ_N <= 64 * sizeof(((struct twl_pg *)0)->rprepared) /
				   sizeof(uint64_t),
	       "a bit of twl_pg.rprepared per read query");

/*
 * Query @q with parameters @v on context @c. On the shared read
 * connection as a statement prepared once ("rq" and its number): a short
 * answer is many small queries (the fleet summary two a feature), and
 * parsing and planning each again cost more than running it (10,000
 * hosts: the summary's p50 46-50 ms before, 16-21 ms after, when it was
 * ten a feature; bench/README.md). A private answer's connection is new
 * or reused at random and its queries scan: they are sent as they are.
 */
static PGresult *rq_exec(struct rctx *c, enum twl_rq_id q, const char *sql,
			 const char *const *v, const Oid *types)
{
	uint64_t *word = &c->p->rprepared[q / 64], bit = 1ULL << (q % 64);
	char name[16];
	PGresult *r;

	if (c->priv)
		return PQexecParams(c->conn, sql, NPARAMS, types, v, NULL, NULL,
				    0);
	snprintf(name, sizeof(name), "rq%d", (int)q);
	if (!(*word & bit)) {
		r = PQprepare(c->conn, name, sql, NPARAMS, types);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			c->p->rstale = true;
			return r;
		}
		PQclear(r);
		*word |= bit;
	}
	r = PQexecPrepared(c->conn, name, NPARAMS, v, NULL, NULL, 0);
	/*
	 * Whatever failed (a schema another server migrated, say), the
	 * statements are prepared again for the next answer.
	 */
	if (PQresultStatus(r) != PGRES_TUPLES_OK &&
	    PQresultStatus(r) != PGRES_COMMAND_OK)
		c->p->rstale = true;
	return r;
}

static int rq_run(void *ctx, enum twl_rq_id q, const struct twl_rq_args *a,
		  twl_rq_row_fn fn, void *arg)
{
	const char *sql = rq_sql(q), *v[NPARAMS] = { 0 };
	Oid types[NPARAMS];
	char num[TWL_RQ_ARGS_MAX][21];
	struct rctx *c = ctx;
	PGresult *r;
	int rc;

	if (!sql)
		return -ENOTSUP;
	for (int i = 0; i < NPARAMS; i++)
		types[i] = TEXTOID;
	for (int i = 0; i < a->n; i++)
		v[i] = a->v[i].text ? a->v[i].s : twl_pg_i64(num[i], a->v[i].i);
	v[LABEL_KEY - 1] = c->label_key;
	v[LABEL_KEY] = c->label_value;
	r = rq_exec(c, q, sql, v, types);
	if (PQresultStatus(r) == PGRES_COMMAND_OK) {
		PQclear(r); /* a statement that returns no rows */
		return 0;
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		rc = r ? twl_pg_errno(c->conn, r) : -ENOMEM;
		PQclear(r);
		return rc;
	}
	rc = each_row(r, fn, arg);
	PQclear(r);
	return rc;
}

/* Contract: see store_pg_read.h. */
const struct twl_rq_io twl_pg_rq_io = { rq_begin, rq_end, rq_run };

/* Contract: see store_pg_read.h (twl_pg_read_summary(), ...). */
TWL_ANSWER_READS(twl_pg_read_, &twl_pg_rq_io)
