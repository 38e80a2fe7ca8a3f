// SPDX-License-Identifier: GPL-2.0
/*
 * Kept answers on PostgreSQL (store.h, migrations/007_kept_answers.sql),
 * shared by every server on the database: one computes an answer, the
 * others read it; a claim (a lease in the row, taken by one conditional
 * UPDATE) lets one server, not each, compute it again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"
#include "store/store.h"
#include "store/store_rules.h"

/* Contract: see store_pg_admin.h. */
int twl_pg_kept_get(struct twl_store *s, struct twl_kept *k)
{
	const char *v[1] = { k->key };
	PGresult *r;
	int ret, n;

	k->body = NULL;
	if (!twl_kept_key_valid(k->key))
		return -EINVAL;
	ret = twl_pg_query(s,
			   "SELECT computed, touched, cost, body FROM"
			   " kept_answers WHERE key = $1",
			   1, v, &r);
	if (ret)
		return ret;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return -ENOENT;
	}
	k->computed = twl_pg_int(r, 0, 0);
	k->touched = twl_pg_int(r, 0, 1);
	k->cost = twl_pg_int(r, 0, 2);
	n = PQgetlength(r, 0, 3);
	k->body = malloc((size_t)n + 1);
	if (k->body) {
		memcpy(k->body, PQgetvalue(r, 0, 3), (size_t)n + 1);
		k->len = (size_t)n;
	}
	PQclear(r);
	return k->body ? 0 : -ENOMEM;
}

/* The upsert, then the cap: the least recently computed rows go. */
static int tx_put(PGconn *conn, void *arg)
{
	const struct twl_kept *k = arg;
	char computed[21], cost[21], cap[21];
	const char *v[4] = { k->key, twl_pg_i64(computed, k->computed),
			     twl_pg_i64(cost, k->cost), k->body };
	const char *c[1] = { twl_pg_i64(cap, TWL_STORE_MAX_KEPT) };
	int ret;

	ret = twl_pg_exec(
		conn,
		"INSERT INTO kept_answers(key, computed, cost, body)"
		" VALUES ($1, $2::bigint, $3::bigint, $4) ON CONFLICT (key)"
		" DO UPDATE SET computed = excluded.computed,"
		" cost = excluded.cost, body = excluded.body, lease = 0"
		" WHERE excluded.computed > kept_answers.computed",
		4, v, NULL);
	if (!ret)
		ret = twl_pg_exec(conn,
				  "DELETE FROM kept_answers WHERE key NOT IN"
				  " (SELECT key FROM kept_answers ORDER BY"
				  " computed DESC LIMIT $1::bigint)",
				  1, c, NULL);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_kept_put(struct twl_store *s, const struct twl_kept *k)
{
	int ret = twl_kept_check(k);

	return ret ? ret : twl_pg_tx(s, tx_put, (void *)k);
}

/* Contract: see store_pg_admin.h. */
int twl_pg_kept_claim(struct twl_store *s, const char *key, int64_t now,
		      int64_t until)
{
	char n[21], u[21];
	const char *v[3] = { key, twl_pg_i64(n, now), twl_pg_i64(u, until) };
	int ret;

	if (!twl_kept_key_valid(key))
		return -EINVAL;
	ret = twl_pg_change(s,
			    "UPDATE kept_answers SET lease = $3::bigint"
			    " WHERE key = $1 AND lease <= $2::bigint",
			    3, v);
	return ret == -ENOENT ? 0 : ret ? ret : 1;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_kept_touch(struct twl_store *s, int64_t now)
{
	char n[21];
	const char *v[1] = { twl_pg_i64(n, now) };
	int ret = twl_pg_change(
		s, "UPDATE kept_answers SET touched = $1::bigint", 1, v);

	return ret == -ENOENT ? 0 : ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_kept_touched(struct twl_store *s, int64_t *at)
{
	PGresult *r;
	int ret;

	*at = 0;
	ret = twl_pg_query(s,
			   "SELECT coalesce(max(touched), 0) FROM kept_answers",
			   0, NULL, &r);
	if (ret)
		return ret;
	*at = twl_pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}
