// SPDX-License-Identifier: GPL-2.0
/*
 * Kept answers on SQLite (store.h, migration 020): read on the shared
 * reader, written on the writer connection in short transactions of
 * their own (twl_admin_write()), like the annotations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_rules.h"
#include "store/sqlite/store_sqlite_internal.h"

static const char q_kept_touched[] =
	"SELECT coalesce(max(touched), 0) FROM kept_answers";
static const char q_kept_get[] =
	"SELECT computed, touched, cost, body FROM kept_answers"
	" WHERE key = ?1";

/* @k's columns from the row @st is on: 0 or -ENOMEM. */
static int kept_row(sqlite3_stmt *st, struct twl_kept *k)
{
	const void *b = sqlite3_column_blob(st, 3);
	int n = sqlite3_column_bytes(st, 3);

	k->computed = sqlite3_column_int64(st, 0);
	k->touched = sqlite3_column_int64(st, 1);
	k->cost = sqlite3_column_int64(st, 2);
	k->body = malloc((size_t)n + 1);
	if (!k->body)
		return -ENOMEM;
	if (n)
		memcpy(k->body, b, (size_t)n);
	k->body[n] = '\0';
	k->len = (size_t)n;
	return 0;
}

/* Contract: see store.h. */
int twl_store_kept_get(struct twl_store *s, struct twl_kept *k)
{
	struct twl_rctx c;
	sqlite3_stmt *st;
	int rc, r;

	k->body = NULL;
	if (!twl_kept_key_valid(k->key))
		return -EINVAL;
	rc = twl_rctx_begin(&c, s, false);
	if (rc)
		return rc;
	st = twl_rctx_stmt(&c, q_kept_get, &rc);
	if (st && sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC))
		rc = -ENOMEM;
	else if (st) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			rc = kept_row(st, k);
		else
			rc = r == SQLITE_DONE ? -ENOENT : twl_sqlite_errno(r);
		sqlite3_reset(st);
	}
	twl_rctx_end(&c);
	return rc;
}

static int bind_put(sqlite3_stmt *st, void *p)
{
	const struct twl_kept *k = p;
	int r = sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);

	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 2, k->computed);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 3, k->cost);
	if (r == SQLITE_OK)
		r = sqlite3_bind_text(st, 4, k->body, (int)k->len,
				      SQLITE_STATIC);
	return r;
}

/* Contract: see store.h. */
int twl_store_kept_put(struct twl_store *s, const struct twl_kept *k)
{
	int64_t changes;
	int rc = twl_kept_check(k);

	if (rc)
		return rc;
	/* migration 020's trigger keeps TWL_STORE_MAX_KEPT rows */
	return twl_admin_write(
		s,
		"INSERT INTO kept_answers(key, computed, cost, body)"
		" VALUES (?1, ?2, ?3, ?4) ON CONFLICT(key) DO UPDATE SET"
		" computed = excluded.computed, cost = excluded.cost,"
		" body = excluded.body, lease = 0"
		" WHERE excluded.computed > kept_answers.computed",
		bind_put, (void *)k, &changes, false);
}

struct claim {
	const char *key;
	int64_t now, until;
};

static int bind_claim(sqlite3_stmt *st, void *p)
{
	const struct claim *a = p;
	int r = sqlite3_bind_text(st, 1, a->key, -1, SQLITE_STATIC);

	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 2, a->now);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 3, a->until);
	return r;
}

/* Contract: see store.h. */
int twl_store_kept_claim(struct twl_store *s, const char *key, int64_t now,
			 int64_t until)
{
	struct claim a = { key, now, until };
	int64_t changes = 0;
	int rc;

	if (!twl_kept_key_valid(key))
		return -EINVAL;
	rc = twl_admin_write(s,
			     "UPDATE kept_answers SET lease = ?3"
			     " WHERE key = ?1 AND lease <= ?2",
			     bind_claim, &a, &changes, false);
	return rc ? rc : changes > 0;
}

static int bind_touch(sqlite3_stmt *st, void *p)
{
	return sqlite3_bind_int64(st, 1, *(int64_t *)p);
}

/* Contract: see store.h. */
int twl_store_kept_touch(struct twl_store *s, int64_t now)
{
	int64_t changes;

	return twl_admin_write(s, "UPDATE kept_answers SET touched = ?1",
			       bind_touch, &now, &changes, false);
}

/* Contract: see store.h. */
int twl_store_kept_touched(struct twl_store *s, int64_t *at)
{
	struct twl_rctx c;
	sqlite3_stmt *st;
	int rc, r;

	*at = 0;
	rc = twl_rctx_begin(&c, s, false);
	if (rc)
		return rc;
	st = twl_rctx_stmt(&c, q_kept_touched, &rc);
	if (st) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			*at = sqlite3_column_int64(st, 0);
		else
			rc = twl_sqlite_errno(r);
		sqlite3_reset(st);
	}
	twl_rctx_end(&c);
	return rc;
}
