// SPDX-License-Identifier: GPL-2.0
/*
 * Read contexts of the read API (store_sqlite_internal.h): one snapshot,
 * on the store's shared reader or on a private connection, the prepared
 * statements found by their SQL text, and the runner of the answers both
 * backends compose (store/read_answers.h) over these.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

/* SQLite's progress handler on a private read: non-zero ends it. */
static int read_stopped(void *s)
{
	return __atomic_load_n(&((struct twl_store *)s)->reads_stopped,
			       __ATOMIC_RELAXED);
}

/* Contract: see store.h. */
void twl_store_stop_reads(struct twl_store *s)
{
	__atomic_store_n(&s->reads_stopped, true, __ATOMIC_RELAXED);
}

/*
 * Contract: see store_sqlite_internal.h. A private connection's long
 * scan is ended by twl_store_stop_reads() through its progress handler
 * (looked at every 4,096 virtual machine steps).
 */
int twl_rctx_begin(struct twl_rctx *c, struct twl_store *s, bool priv)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->priv = priv;
	if (read_stopped(s))
		return -ECANCELED;
	if (priv) {
		rc = sqlite3_open_v2(s->path, &c->db,
				     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
				     NULL);
		if (rc != SQLITE_OK) {
			sqlite3_close(c->db);
			c->db = NULL;
			return twl_sqlite_errno(rc);
		}
		sqlite3_busy_timeout(c->db, 5000);
		sqlite3_progress_handler(c->db, 4096, read_stopped, s);
	} else {
		c->db = twl_store_read_lock(s);
		if (!c->db)
			return -EIO;
	}
	rc = sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		if (priv)
			sqlite3_close(c->db);
		else
			twl_store_read_unlock(s);
		c->db = NULL;
		return twl_sqlite_errno(rc);
	}
	c->in_txn = true;
	return 0;
}

/* Contract: see store_sqlite_internal.h. */
void twl_rctx_end(struct twl_rctx *c)
{
	if (!c->db)
		return;
	if (c->in_txn)
		sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
	if (c->priv) {
		for (size_t i = 0; i < TWL_READ_SLOTS; i++)
			sqlite3_finalize(c->own[i].st);
		sqlite3_close(c->db);
	} else {
		twl_store_read_unlock(c->s);
	}
	c->db = NULL;
}

/*
 * Contract: see store_sqlite_internal.h. A statement's slot is found by
 * the address of its SQL text (every query is a static array of its
 * own): a scan of a few dozen pointers, against a statement's step.
 */
sqlite3_stmt *twl_rctx_stmt(struct twl_rctx *c, const char *sql, int *rc)
{
	struct twl_read_slot *slot = c->priv ? c->own : c->s->read_api;
	size_t i;
	int r;

	for (i = 0; i < TWL_READ_SLOTS && slot[i].sql; i++)
		if (slot[i].sql == sql)
			break;
	if (i == TWL_READ_SLOTS) {
		*rc = -ENOBUFS; /* more queries than TWL_READ_SLOTS */
		return NULL;
	}
	slot += i;
	if (!slot->sql) {
		r = sqlite3_prepare_v3(c->db, sql, -1,
				       c->priv ? 0 : SQLITE_PREPARE_PERSISTENT,
				       &slot->st, NULL);
		if (r != SQLITE_OK) {
			slot->st = NULL;
			*rc = twl_sqlite_errno(r);
			return NULL;
		}
		slot->sql = sql;
	}
	sqlite3_reset(slot->st);
	sqlite3_clear_bindings(slot->st);
	if (c->label_key &&
	    sqlite3_bind_parameter_count(slot->st) > TWL_SQL_LABEL_KEY) {
		sqlite3_bind_text(slot->st, TWL_SQL_LABEL_KEY, c->label_key, -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(slot->st, TWL_SQL_LABEL_KEY + 1,
				  c->label_value, -1, SQLITE_STATIC);
	}
	return slot->st;
}

/* ---- the runner of the shared answers (store/read_answers.h) ---------- */

static int rq_begin(struct twl_store *s, bool priv,
		    const struct twl_read_filter *label, void **ctx)
{
	struct twl_rctx *c = malloc(sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	rc = twl_rctx_begin(c, s, priv);
	if (rc) {
		free(c);
		return rc;
	}
	if (label && label->label_key[0]) {
		c->label_key = label->label_key;
		c->label_value = label->label_value;
	}
	*ctx = c;
	return 0;
}

static void rq_end(void *ctx)
{
	twl_rctx_end(ctx);
	free(ctx);
}

/* Query @q's SQL, from the table of the file that has it; NULL: none. */
static const char *rq_sql(enum twl_rq_id q)
{
	static const char *const *const tables[] = {
		twl_sqlite_read_sql,	twl_sqlite_kinds_sql,
		twl_sqlite_values_sql,	twl_sqlite_health_sql,
		twl_sqlite_unknown_sql, twl_sqlite_export_sql,
		twl_sqlite_alerts_sql,	twl_sqlite_readiness_sql,
	};

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i][q])
			return tables[i][q];
	return NULL;
}

/*
 * Parameters bound ?1.. in order; one past a statement's last is left
 * unbound (the queries of one scope share the list: read_values.c).
 */
static void rq_bind(sqlite3_stmt *st, const struct twl_rq_args *a)
{
	int n = sqlite3_bind_parameter_count(st);

	for (int i = 0; i < a->n && i < n; i++) {
		if (a->v[i].text)
			sqlite3_bind_text(st, i + 1, a->v[i].s, -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, i + 1, a->v[i].i);
	}
}

static int rq_run(void *ctx, enum twl_rq_id q, const struct twl_rq_args *a,
		  twl_rq_row_fn fn, void *arg)
{
	const char *sql = rq_sql(q);
	struct twl_cells cells;
	sqlite3_stmt *st;
	bool row;
	int rc = 0;

	if (!sql)
		return -ENOTSUP;
	st = twl_rctx_stmt(ctx, sql, &rc);
	if (!st)
		return rc;
	rq_bind(st, a);
	twl_sqlite_cells(st, &cells);
	while (!(rc = twl_step(st, &row)) && row) {
		rc = fn(arg, &cells);
		if (rc)
			break;
	}
	sqlite3_reset(st);
	return rc < 0 ? rc : 0;
}

/* Contract: see store_sqlite_internal.h. */
const struct twl_rq_io twl_sqlite_rq_io = { rq_begin, rq_end, rq_run };

/* Contract: see store_read.h (twl_read_summary(), ...). */
TWL_ANSWER_READS(twl_sqlite_read_, &twl_sqlite_rq_io)
