// SPDX-License-Identifier: GPL-2.0
/*
 * Prepared statements in libpq's pipeline mode (store_pg_pipe.h): sent
 * with PQsendQueryPrepared(), a PQpipelineSync() per round trip, each
 * result read back in order, pipeline mode left after each sync so the
 * connection's other statements (BEGIN, COMMIT, the savepoint's
 * rollback) run as before.
 */
#include <errno.h>
#include <stdint.h>

#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_pipe.h"

/* Contract: see store_pg_pipe.h. */
void twl_pg_pipe_init(struct twl_pg_pipe *pp, PGconn *conn)
{
	pp->conn = conn;
	pp->n = 0;
	pp->err = 0;
	pp->taken = 0;
	pp->failed_at = SIZE_MAX;
}

/* Keep @err unless an earlier failure is kept. */
static void fail(struct twl_pg_pipe *pp, int err)
{
	if (!pp->err)
		pp->err = err;
}

/* The failure of libpq's call on @conn that answered 0 or NULL. */
static int call_failed(PGconn *conn)
{
	return PQstatus(conn) != CONNECTION_OK ? -ECONNRESET : -EIO;
}

/* Contract: see store_pg_pipe.h. */
int twl_pg_pipe_send(struct twl_pg_pipe *pp, const char *name,
		     const struct twl_pg_args *a, PGresult **res)
{
	if (res)
		*res = NULL;
	if (pp->err)
		return pp->err;
	if (pp->n == TWL_PG_PIPE_MAX && twl_pg_pipe_sync(pp))
		return pp->err;
	if (PQpipelineStatus(pp->conn) == PQ_PIPELINE_OFF &&
	    !PQenterPipelineMode(pp->conn)) {
		fail(pp, call_failed(pp->conn));
		return pp->err;
	}
	if (!PQsendQueryPrepared(pp->conn, name, a ? a->n : 0, a ? a->v : NULL,
				 NULL, NULL, 0)) {
		fail(pp, call_failed(pp->conn));
		return pp->err;
	}
	pp->res[pp->n++] = res;
	return 0;
}

/*
 * The result of the statement at @i, put where it goes: 0, or -errno
 * when the connection answers nothing more (lost).
 */
static int take(struct twl_pg_pipe *pp, size_t i)
{
	PGresult *r = PQgetResult(pp->conn);
	ExecStatusType st;

	if (!r) {
		fail(pp, call_failed(pp->conn));
		return pp->err;
	}
	st = PQresultStatus(r);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (pp->res[i])
			*pp->res[i] = r;
		else
			PQclear(r);
	} else {
		if (!pp->err)
			pp->failed_at = pp->taken + i;
		/* skipped after an earlier failure: that one is kept */
		fail(pp, st == PGRES_PIPELINE_ABORTED ?
				 -EIO :
				 twl_pg_errno(pp->conn, r));
		PQclear(r);
	}
	/* each statement's results end with a NULL */
	while ((r = PQgetResult(pp->conn)))
		PQclear(r);
	return 0;
}

/* Contract: see store_pg_pipe.h. */
int twl_pg_pipe_sync(struct twl_pg_pipe *pp)
{
	PGresult *r;
	size_t i, n = pp->n;

	if (PQpipelineStatus(pp->conn) == PQ_PIPELINE_OFF)
		return pp->err;
	pp->n = 0;
	if (!PQpipelineSync(pp->conn)) {
		fail(pp, call_failed(pp->conn));
		return pp->err;
	}
	for (i = 0; i < n; i++)
		if (take(pp, i))
			return pp->err;
	pp->taken += n;
	r = PQgetResult(pp->conn);
	if (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC)
		fail(pp, call_failed(pp->conn));
	PQclear(r);
	if (!PQexitPipelineMode(pp->conn))
		fail(pp, call_failed(pp->conn));
	return pp->err;
}

/* Contract: see store_pg_pipe.h. */
int twl_pg_pipe_run(struct twl_pg_pipe *pp, const char *name,
		    const struct twl_pg_args *a, PGresult **res)
{
	int ret = twl_pg_pipe_send(pp, name, a, res);

	return ret ? ret : twl_pg_pipe_sync(pp);
}
