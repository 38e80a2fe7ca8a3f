// SPDX-License-Identifier: GPL-2.0
/*
 * Alerts on PostgreSQL (store_alerts.h): webhooks, the delivery log and
 * the alert detector's state, in the SQLite backend's JSON. Each write
 * is one short transaction; the cap of webhooks is counted under a lock
 * on the table that only its writers take, so two servers cannot both
 * take its last place.
 */
#include <errno.h>
#include <stdint.h>

#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

struct hook_add {
	const char *url, *secret, *author;
	int64_t now, id;
};

static int tx_hook_add(PGconn *conn, void *arg)
{
	struct hook_add *a = arg;
	char now[21], cap[21];
	const char *v[5] = { a->url, a->secret, twl_pg_i64(now, a->now),
			     a->author,
			     twl_pg_i64(cap, TWL_STORE_MAX_WEBHOOKS) };
	PGresult *r;
	int ret;

	ret = twl_pg_exec(conn,
			  "LOCK TABLE webhooks IN SHARE ROW EXCLUSIVE MODE", 0,
			  NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(
			conn,
			"INSERT INTO webhooks(url, secret, created, author)"
			" SELECT $1, $2, $3::bigint, $4 WHERE"
			" (SELECT count(*) FROM webhooks) < $5::bigint"
			" RETURNING id",
			5, v, &r);
	if (ret)
		return ret;
	ret = PQntuples(r) == 1 ? 0 : -EDQUOT;
	if (!ret)
		a->id = twl_pg_int(r, 0, 0);
	PQclear(r);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_webhook_add(struct twl_store *s, const char *url, const char *secret,
		       const char *author, int64_t now, int64_t *id)
{
	struct hook_add a = { url, secret, author, now, 0 };
	int ret;

	if (!url || !secret || !author)
		return -EINVAL;
	ret = twl_pg_tx(s, tx_hook_add, &a);
	if (!ret && id)
		*id = a.id;
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_webhook_delete(struct twl_store *s, int64_t id)
{
	char i[21];
	const char *v[1] = { twl_pg_i64(i, id) };

	return twl_pg_change(s, "DELETE FROM webhooks WHERE id = $1::bigint", 1,
			     v);
}

static const struct twl_pg_col hook_cols[] = {
	{ "id", TWL_PG_INT },	   { "url", TWL_PG_TEXT },
	{ "created", TWL_PG_INT }, { "author", TWL_PG_TEXT },
	{ "secret", TWL_PG_TEXT },
};

/* Contract: see store_pg_admin.h. */
int twl_pg_webhook_list(struct twl_store *s, bool secrets, json_t **out)
{
	return twl_pg_list(
		s,
		"SELECT id, url, created, author, secret FROM webhooks"
		" ORDER BY id",
		0, NULL, hook_cols, secrets ? 5 : 4, "webhooks", out);
}

static int tx_delivery(PGconn *conn, void *arg)
{
	const struct twl_delivery_row *d = arg;
	char hook[21], attempt[21], http[21], at[21], keep[21];
	const char *v[8] = { twl_pg_i64(hook, d->webhook_id),
			     d->event_id,
			     d->kind,
			     twl_pg_i64(attempt, d->attempt),
			     d->status,
			     twl_pg_i64(http, d->http_status),
			     d->error,
			     twl_pg_i64(at, d->at) };
	const char *k[1] = { twl_pg_i64(keep, TWL_STORE_MAX_DELIVERIES) };
	int ret;

	ret = twl_pg_exec(conn,
			  "INSERT INTO webhook_deliveries(webhook_id, event_id,"
			  " kind, attempt, status, http_status, error, at)"
			  " VALUES ($1::bigint, $2, $3, $4::int, $5,"
			  " $6::bigint, $7, $8::bigint)",
			  8, v, NULL);
	if (!ret)
		ret = twl_pg_exec(conn,
				  "DELETE FROM webhook_deliveries WHERE id <="
				  " (SELECT max(id) FROM webhook_deliveries)"
				  " - $1::bigint",
				  1, k, NULL);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_delivery_log(struct twl_store *s, const struct twl_delivery_row *r)
{
	if (!r->event_id || !r->kind || !r->status)
		return -EINVAL;
	return twl_pg_tx(s, tx_delivery, (void *)r);
}

static const struct twl_pg_col delivery_cols[] = {
	{ "id", TWL_PG_INT },	       { "webhook_id", TWL_PG_INT },
	{ "event_id", TWL_PG_TEXT },   { "kind", TWL_PG_TEXT },
	{ "attempt", TWL_PG_INT },     { "status", TWL_PG_TEXT },
	{ "http_status", TWL_PG_INT }, { "error", TWL_PG_TEXT },
	{ "at", TWL_PG_INT },
};

/* Contract: see store_pg_admin.h. */
int twl_pg_deliveries(struct twl_store *s, int64_t webhook_id, unsigned limit,
		      json_t **out)
{
	char hook[21], lim[21];
	const char *v[2] = { twl_pg_i64(hook, webhook_id),
			     twl_pg_i64(lim, limit) };

	if (webhook_id < 0 || !limit || limit > TWL_READ_LIMIT_MAX) {
		*out = NULL;
		return -EINVAL;
	}
	return twl_pg_list(
		s,
		"SELECT id, webhook_id, event_id, kind, attempt, status,"
		" http_status, error, at FROM webhook_deliveries"
		" WHERE $1::bigint = 0 OR webhook_id = $1::bigint"
		" ORDER BY id DESC LIMIT $2::bigint",
		2, v, delivery_cols,
		sizeof(delivery_cols) / sizeof(delivery_cols[0]), "deliveries",
		out);
}

/*
 * One key swapped in two statements, so that two servers scanning at once
 * never both take a key for news. First the key inserted unless it is
 * there: an insert that races another's waits for its COMMIT, then finds
 * the key taken. (One statement that read the key and then upserted it
 * would read it missing in a snapshot taken before the other's COMMIT,
 * and both would say "not stored".)
 */
static const char q_claim[] =
	"INSERT INTO alert_state(key, value, at)"
	" VALUES ($1, $2::bigint, $3::bigint) ON CONFLICT (key) DO NOTHING"
	" RETURNING value";

/*
 * Then, the key being there, its value as it stood, locked so that
 * another server's swap waits for this COMMIT and reads the value stored
 * by it, and the new value. No row: pruned in between, claimed again.
 */
static const char q_swap[] =
	"WITH old AS (SELECT value FROM alert_state WHERE key = $1 FOR UPDATE),"
	" up AS (UPDATE alert_state SET at = $3::bigint, value = CASE WHEN"
	" $4::boolean THEN greatest(alert_state.value, $2::bigint)"
	" ELSE $2::bigint END WHERE key = $1 AND EXISTS (SELECT 1 FROM old))"
	" SELECT value FROM old";

/* Tries of the two statements before a key pruned each time fails. */
#define SWAP_TRIES 3

struct swap {
	struct twl_alert_kv *kv;
	size_t n;
	int64_t now;
};

static int swap_one(PGconn *conn, struct twl_alert_kv *kv, int64_t at)
{
	char val[21], now[21];
	const char *v[4] = { kv->key, twl_pg_i64(val, kv->value),
			     twl_pg_i64(now, at),
			     kv->keep_max ? "true" : "false" };
	PGresult *r;
	int ret, tries, rows;

	for (tries = 0; tries < SWAP_TRIES; tries++) {
		ret = twl_pg_exec(conn, q_claim, 3, v, &r);
		if (ret)
			return ret;
		rows = PQntuples(r);
		PQclear(r);
		if (rows == 1) {
			kv->had = false;
			kv->old = 0;
			return 0;
		}
		ret = twl_pg_exec(conn, q_swap, 4, v, &r);
		if (ret)
			return ret;
		kv->had = PQntuples(r) == 1;
		kv->old = kv->had ? twl_pg_int(r, 0, 0) : 0;
		PQclear(r);
		if (kv->had)
			return 0;
	}
	return -EAGAIN;
}

static int tx_swap(PGconn *conn, void *arg)
{
	struct swap *a = arg;
	int ret = 0;

	for (size_t i = 0; !ret && i < a->n; i++)
		ret = swap_one(conn, &a->kv[i], a->now);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_alert_swap(struct twl_store *s, struct twl_alert_kv *kv, size_t n,
		      int64_t now)
{
	struct swap a = { kv, n, now };

	if (!n)
		return 0;
	return twl_pg_tx(s, tx_swap, &a);
}

/* Contract: see store_pg_admin.h. */
int twl_pg_alert_prune(struct twl_store *s, int64_t before)
{
	char b[21];
	const char *v[1] = { twl_pg_i64(b, before) };

	return twl_pg_query(s,
			    "DELETE FROM alert_state WHERE at < $1::bigint"
			    " AND key <> 'scan'",
			    1, v, NULL);
}
