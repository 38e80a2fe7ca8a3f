// SPDX-License-Identifier: GPL-2.0
/*
 * Read contexts of the read API (store_sqlite_internal.h): one snapshot,
 * on the store's shared reader or on a private connection, and the
 * prepared statements found by their SQL text.
 */
#include <errno.h>
#include <string.h>

#include "store/sqlite/store_sqlite_internal.h"

/* Contract: see store_sqlite_internal.h. */
int twl_rctx_begin(struct twl_rctx *c, struct twl_store *s, bool priv)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->priv = priv;
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
