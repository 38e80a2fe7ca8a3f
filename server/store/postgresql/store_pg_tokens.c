// SPDX-License-Identifier: GPL-2.0
/*
 * Tokens and per-host keys on PostgreSQL (store.h): stored by hash only,
 * each call one statement (or one short transaction) on the store's
 * connection. Several servers may share the database: an enrolment
 * token's cap of live keys is counted under a transaction-level advisory
 * lock on that token, so two servers cannot both take its last place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"
#include "store/postgresql/store_pg_tokens.h"

/*
 * The one row @sql finds by @key: 0 and *@r (PQclear() it), -ENOENT when
 * there is none, or another negative errno.
 */
static int one_row(struct twl_store *s, const char *sql, const char *key,
		   PGresult **r)
{
	const char *v[1] = { key ? key : "" };
	int ret = twl_pg_query(s, sql, 1, v, r);

	if (!ret && PQntuples(*r) != 1) {
		PQclear(*r);
		ret = -ENOENT;
	}
	return ret;
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_token_add(struct twl_store *s, const char *name, const char *role,
		     const char *hash, int64_t now, int64_t *id)
{
	char t[21];
	const char *v[4] = { name ? name : "", role ? role : "",
			     hash ? hash : "", twl_pg_i64(t, now) };
	PGresult *r;
	int ret;

	ret = twl_pg_query(s,
			   "INSERT INTO tokens(name, role, token_hash, created)"
			   " VALUES($1, $2, $3, $4::bigint) RETURNING id",
			   4, v, &r);
	if (ret)
		return ret;
	if (id)
		*id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_token_lookup(struct twl_store *s, const char *hash, char *role,
			size_t role_cap, char *name, size_t name_cap,
			int64_t *id)
{
	PGresult *r;
	int ret;

	ret = one_row(s,
		      "SELECT id, name, role FROM tokens"
		      " WHERE token_hash = $1 AND revoked IS NULL",
		      hash, &r);
	if (ret)
		return ret;
	*id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	snprintf(name, name_cap, "%s", PQgetvalue(r, 0, 1));
	snprintf(role, role_cap, "%s", PQgetvalue(r, 0, 2));
	PQclear(r);
	return 0;
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_token_revoke(struct twl_store *s, int64_t id, int64_t now)
{
	char i[21], t[21];
	const char *v[2] = { twl_pg_i64(i, id), twl_pg_i64(t, now) };

	return twl_pg_change(s,
			     "UPDATE tokens SET revoked = $2::bigint"
			     " WHERE id = $1::bigint AND revoked IS NULL",
			     2, v);
}

/* Row @i of the token list as {id,name,role,created,revoked}. */
static json_t *token_json(PGresult *r, int i)
{
	return json_pack(
		"{sI ss ss sI so}", "id",
		(json_int_t)strtoll(PQgetvalue(r, i, 0), NULL, 10), "name",
		PQgetvalue(r, i, 1), "role", PQgetvalue(r, i, 2), "created",
		(json_int_t)strtoll(PQgetvalue(r, i, 3), NULL, 10), "revoked",
		PQgetisnull(r, i, 4) ?
			json_null() :
			json_integer(strtoll(PQgetvalue(r, i, 4), NULL, 10)));
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_token_list(struct twl_store *s, json_t **out)
{
	json_t *arr;
	PGresult *r;
	int ret;

	ret = twl_pg_query(s,
			   "SELECT id, name, role, created, revoked FROM tokens"
			   " ORDER BY id",
			   0, NULL, &r);
	if (ret)
		return ret;
	arr = json_array();
	for (int i = 0; arr && i < PQntuples(r); i++) {
		if (json_array_append_new(arr, token_json(r, i))) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(r);
	if (!arr)
		return -ENOMEM;
	*out = arr;
	return 0;
}

/*
 * The key insert within its token's cap: the lock serialises every
 * insert of one token (whichever server makes it), and the count runs
 * after it, on a snapshot that sees the inserts committed before.
 */
static const char *const key_add_sql[] = {
	"BEGIN",
	/* ("twlk", the token id) */
	"SELECT pg_advisory_xact_lock(1953983595, ($1::bigint % 2147483647)::int)",
	"INSERT INTO host_keys(key_hash, host_id, created, token_id)"
	" SELECT $1, $2, $3::bigint, $4::bigint WHERE (SELECT count(*)"
	" FROM host_keys WHERE token_id = $4::bigint AND revoked IS NULL)"
	" < $5::bigint",
};

/* Contract: see store_pg_tokens.h. */
int twl_pg_host_key_add(struct twl_store *s, const char *host_id,
			const char *hash, int64_t token_id, unsigned max_live,
			int64_t now)
{
	struct twl_pg *p = twl_pg_of(s);
	char t[21], tok[21], cap[21];
	const char *v[5] = { hash ? hash : "", host_id ? host_id : "",
			     twl_pg_i64(t, now), twl_pg_i64(tok, token_id),
			     twl_pg_i64(cap, max_live) };
	PGresult *r = NULL;
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(p->conn, key_add_sql[0], 0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(p->conn, key_add_sql[1], 1, &v[3], NULL);
	if (!ret)
		ret = twl_pg_exec(p->conn, key_add_sql[2], 5, v, &r);
	if (!ret && !twl_pg_changed(r))
		ret = -EDQUOT;
	PQclear(r);
	if (twl_pg_exec(p->conn, ret ? "ROLLBACK" : "COMMIT", 0, NULL, NULL) &&
	    !ret)
		ret = -EIO;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_host_key_lookup(struct twl_store *s, const char *hash,
			   char host_id[65])
{
	PGresult *r;
	int ret;

	ret = one_row(s,
		      "SELECT host_id, revoked IS NOT NULL FROM host_keys"
		      " WHERE key_hash = $1",
		      hash, &r);
	if (ret)
		return ret;
	snprintf(host_id, 65, "%s", PQgetvalue(r, 0, 0));
	ret = !strcmp(PQgetvalue(r, 0, 1), "t") ? -EKEYREVOKED : 0;
	PQclear(r);
	return ret;
}

/* Contract: see store_pg_tokens.h. */
int twl_pg_host_key_revoke(struct twl_store *s, const char *host_id,
			   int64_t now, int *n)
{
	char t[21];
	const char *v[2] = { host_id ? host_id : "", twl_pg_i64(t, now) };
	PGresult *r;
	int ret;

	ret = twl_pg_query(s,
			   "UPDATE host_keys SET revoked = $2::bigint"
			   " WHERE host_id = $1 AND revoked IS NULL",
			   2, v, &r);
	if (ret)
		return ret;
	if (n)
		*n = (int)twl_pg_changed(r);
	PQclear(r);
	return 0;
}
