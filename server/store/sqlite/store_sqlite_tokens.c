// SPDX-License-Identifier: GPL-2.0
/*
 * Tokens and per-host keys on SQLite (store.h): stored by hash only.
 * Writes take the writer connection for one statement; look-ups, which
 * every request makes, have a connection of their own (adb), so that
 * neither a long read nor a group commit holds them up.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "store/sqlite/store_sqlite_internal.h"

/* on the writer connection */
enum {
	T_TOKEN_INS,
	T_TOKEN_REVOKE,
	T_KEY_INS,
	T_KEY_REVOKE,
	T_KEY_SEEN,
	T_N,
};
_Static_assert(T_N <= sizeof(((struct twl_store *)0)->tw) / sizeof(void *),
	       "struct twl_store.tw[] has a slot per token or key write");

static const char *const tsql[T_N] = {
	[T_TOKEN_INS] =
		"INSERT INTO tokens(name, role, token_hash, created) VALUES(?1, ?2, ?3, ?4)",
	[T_TOKEN_REVOKE] =
		"UPDATE tokens SET revoked = ?2 WHERE id = ?1 AND revoked IS NULL",
	/* within the token's cap, in one statement (the count is indexed) */
	[T_KEY_INS] =
		"INSERT INTO host_keys(key_hash, host_id, created, token_id)"
		" SELECT ?1, ?2, ?3, ?4 WHERE (SELECT count(*) FROM host_keys"
		" WHERE token_id = ?4 AND revoked IS NULL) < ?5",
	[T_KEY_REVOKE] =
		"UPDATE host_keys SET revoked = ?2 WHERE host_id = ?1 AND revoked IS NULL",
	/*
	 * Once a minute per key at most, unless the boot changed: the row is
	 * rewritten only then (migration 011). SET expressions read the row
	 * as it was.
	 */
	[T_KEY_SEEN] =
		"UPDATE host_keys SET boot_id = ?2, last_seen = ?3,"
		" boot_seen = CASE WHEN boot_id IS ?2 THEN boot_seen ELSE ?3 END,"
		" prev_boot_id = CASE WHEN boot_id IS ?2 THEN prev_boot_id"
		" ELSE boot_id END,"
		" clone_seen = CASE WHEN boot_id IS NOT ?2 AND prev_boot_id IS ?2"
		" THEN ?3 ELSE clone_seen END"
		" WHERE key_hash = ?1 AND (boot_id IS NOT ?2 OR last_seen IS NULL"
		" OR last_seen <= ?3 - 60)",
};

/* on the credential connection */
enum {
	A_TOKEN_GET,
	A_KEY_GET,
	A_N,
};
_Static_assert(A_N <= sizeof(((struct twl_store *)0)->as) / sizeof(void *),
	       "struct twl_store.as[] has a slot per credential statement");

static const char *const asql[A_N] = {
	[A_TOKEN_GET] =
		"SELECT id, name, role FROM tokens WHERE token_hash = ?1 AND revoked IS NULL",
	[A_KEY_GET] =
		"SELECT host_id, revoked FROM host_keys WHERE key_hash = ?1",
};

/* on the reader connection */
static const char token_list_sql[] =
	"SELECT id, name, role, created, revoked FROM tokens ORDER BY id";

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_tokens_prepare(struct twl_store *s)
{
	const char *const list[] = { token_list_sql };
	int ret;

	ret = twl_sqlite_prepare_all(s->path, s->wdb, tsql, T_N, s->tw,
				     "token write");
	if (!ret)
		ret = twl_sqlite_prepare_all(s->path, s->rdb, list, 1,
					     &s->token_list, "token list");
	if (!ret)
		ret = twl_sqlite_prepare_all(s->path, s->adb, asql, A_N, s->as,
					     "credential");
	return ret;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

/* Contract: see store.h. */
int twl_store_token_add(struct twl_store *s, const char *name, const char *role,
			const char *hash, int64_t now, int64_t *id)
{
	sqlite3_stmt *st = s->tw[T_TOKEN_INS];
	int ret;

	pthread_mutex_lock(&s->wlock);
	bind_text(st, 1, name);
	bind_text(st, 2, role);
	bind_text(st, 3, hash);
	sqlite3_bind_int64(st, 4, now);
	ret = twl_step_done(st);
	if (!ret && id)
		*id = sqlite3_last_insert_rowid(s->wdb);
	pthread_mutex_unlock(&s->wlock);
	return ret;
}

static void copy_col(sqlite3_stmt *st, int col, char *out, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	snprintf(out, cap, "%s", t ? (const char *)t : "");
}

/* Contract: see store.h. */
int twl_store_token_lookup(struct twl_store *s, const char *hash, char *role,
			   size_t role_cap, char *name, size_t name_cap,
			   int64_t *id)
{
	sqlite3_stmt *st = s->as[A_TOKEN_GET];
	int rc, ret = -ENOENT;

	pthread_mutex_lock(&s->alock);
	bind_text(st, 1, hash);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		copy_col(st, 1, name, name_cap);
		copy_col(st, 2, role, role_cap);
		ret = 0;
	} else if (rc != SQLITE_DONE) {
		ret = twl_sqlite_errno(rc);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_unlock(&s->alock);
	return ret;
}

/* Contract: see store.h. */
int twl_store_token_revoke(struct twl_store *s, int64_t id, int64_t now)
{
	sqlite3_stmt *st = s->tw[T_TOKEN_REVOKE];
	int ret;

	pthread_mutex_lock(&s->wlock);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	ret = twl_step_done(st);
	if (!ret && sqlite3_changes(s->wdb) == 0)
		ret = -ENOENT;
	pthread_mutex_unlock(&s->wlock);
	return ret;
}

static const struct twl_col token_cols[] = {
	{ "id", 0, TWL_COL_INT },	    { "name", 1, TWL_COL_TEXT },
	{ "role", 2, TWL_COL_TEXT },	    { "created", 3, TWL_COL_INT },
	{ "revoked", 4, TWL_COL_INT_NULL },
};
static const struct twl_row token_row = TWL_ROW(token_cols);

/* Contract: see store.h. */
int twl_store_token_list(struct twl_store *s, json_t **out)
{
	json_t *arr = json_array();
	int rc;

	if (!arr)
		return -ENOMEM;
	pthread_mutex_lock(&s->rlock);
	rc = twl_rows_into(s->token_list, &token_row, arr, SIZE_MAX, NULL);
	pthread_mutex_unlock(&s->rlock);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

/* Contract: see store.h. */
int twl_store_host_key_add(struct twl_store *s, const char *host_id,
			   const char *hash, int64_t token_id,
			   unsigned max_live, int64_t now)
{
	sqlite3_stmt *st = s->tw[T_KEY_INS];
	int ret;

	pthread_mutex_lock(&s->wlock);
	bind_text(st, 1, hash);
	bind_text(st, 2, host_id);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_int64(st, 4, token_id);
	sqlite3_bind_int64(st, 5, max_live);
	ret = twl_step_done(st);
	if (!ret && sqlite3_changes(s->wdb) == 0)
		ret = -EDQUOT;
	pthread_mutex_unlock(&s->wlock);
	return ret;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_key_seen(struct twl_store *s, const char *key_hash,
			const char *boot_id, int64_t now)
{
	sqlite3_stmt *st = s->tw[T_KEY_SEEN];

	twl_bind_static(st, 1, key_hash);
	twl_bind_static(st, 2, boot_id);
	sqlite3_bind_int64(st, 3, now);
	return twl_step_done(st);
}

/* Contract: see store.h. */
int twl_store_host_key_lookup(struct twl_store *s, const char *hash,
			      char host_id[65])
{
	sqlite3_stmt *st = s->as[A_KEY_GET];
	int rc, ret = -ENOENT;

	pthread_mutex_lock(&s->alock);
	bind_text(st, 1, hash);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		copy_col(st, 0, host_id, 65);
		ret = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 :
								  -EKEYREVOKED;
	} else if (rc != SQLITE_DONE) {
		ret = twl_sqlite_errno(rc);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_unlock(&s->alock);
	return ret;
}

/* Contract: see store.h. */
int twl_store_host_key_revoke(struct twl_store *s, const char *host_id,
			      int64_t now, int *n)
{
	sqlite3_stmt *st = s->tw[T_KEY_REVOKE];
	int ret;

	pthread_mutex_lock(&s->wlock);
	bind_text(st, 1, host_id);
	sqlite3_bind_int64(st, 2, now);
	ret = twl_step_done(st);
	if (!ret && n)
		*n = sqlite3_changes(s->wdb);
	pthread_mutex_unlock(&s->wlock);
	return ret;
}
