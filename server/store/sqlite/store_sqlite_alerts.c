// SPDX-License-Identifier: GPL-2.0
/*
 * Alerts on SQLite (store_alerts.h): webhooks, the delivery log and the
 * detector's state written on the writer connection in short
 * transactions of their own (as annotations are), read on read contexts.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store/read_answers.h"
#include "store/store_alerts.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/* A write transaction's body: 0 or an SQLite result code. */
typedef int (*alert_tx_fn)(sqlite3 *db, void *arg);

/* Run @fn in one BEGIN IMMEDIATE ... COMMIT on the writer connection. */
static int alert_tx(struct twl_store *s, alert_tx_fn fn, void *arg)
{
	sqlite3 *db = twl_store_admin_write_lock(s);
	int r, rc = 0;

	if (!db)
		return -EIO;
	r = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (r != SQLITE_OK)
		goto out;
	r = fn(db, arg);
	if (r == SQLITE_OK || r == SQLITE_DONE)
		r = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (r != SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
	if (r != SQLITE_OK)
		rc = r < 0 ? r : twl_sqlite_errno(r);
	twl_store_admin_write_unlock(s);
	return rc;
}

/* Step @st once to its end; finalize it. SQLITE_DONE or the error. */
static int step_done(sqlite3_stmt *st, int r)
{
	if (r == SQLITE_OK)
		r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		r = SQLITE_DONE;
	sqlite3_finalize(st);
	return r;
}

struct hook_add {
	const char *url, *secret, *author;
	int64_t now, id;
};

static int tx_hook_add(sqlite3 *db, void *arg)
{
	struct hook_add *a = arg;
	sqlite3_stmt *st = NULL;
	int r;

	r = sqlite3_prepare_v2(
		db,
		"INSERT INTO webhooks(url, secret, created, author)"
		" SELECT ?1, ?2, ?3, ?4 WHERE (SELECT count(*) FROM webhooks) < ?5",
		-1, &st, NULL);
	if (r != SQLITE_OK)
		return r;
	sqlite3_bind_text(st, 1, a->url, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->secret, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, a->now);
	sqlite3_bind_text(st, 4, a->author, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, TWL_STORE_MAX_WEBHOOKS);
	r = step_done(st, SQLITE_OK);
	if (r == SQLITE_DONE && !sqlite3_changes(db))
		return -EDQUOT;
	a->id = sqlite3_last_insert_rowid(db);
	return r;
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_add(struct twl_store *s, const char *url,
			  const char *secret, const char *author, int64_t now,
			  int64_t *id)
{
	struct hook_add a = { url, secret, author, now, 0 };
	int rc;

	if (!url || !secret || !author)
		return -EINVAL;
	rc = alert_tx(s, tx_hook_add, &a);
	if (!rc && id)
		*id = a.id;
	return rc;
}

static int tx_hook_delete(sqlite3 *db, void *arg)
{
	int64_t *id = arg;
	sqlite3_stmt *st = NULL;
	int r;

	r = sqlite3_prepare_v2(db, "DELETE FROM webhooks WHERE id = ?1", -1,
			       &st, NULL);
	if (r != SQLITE_OK)
		return r;
	sqlite3_bind_int64(st, 1, *id);
	r = step_done(st, SQLITE_OK);
	if (r == SQLITE_DONE && !sqlite3_changes(db))
		return -ENOENT;
	return r;
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_delete(struct twl_store *s, int64_t id)
{
	return alert_tx(s, tx_hook_delete, &id);
}

static const char q_hooks[] =
	"SELECT id, url, created, author, secret FROM webhooks ORDER BY id";

static const struct twl_col hook_cols[] = {
	{ "id", 0, TWL_COL_INT },      { "url", 1, TWL_COL_TEXT },
	{ "created", 2, TWL_COL_INT }, { "author", 3, TWL_COL_TEXT },
	{ "secret", 4, TWL_COL_TEXT },
};
static const struct twl_row hook_row = { hook_cols, 4 };
static const struct twl_row hook_secret_row = TWL_ROW(hook_cols);

/* Run @sql (binding @arg to ?1 unless it is < 0) into a new {@key: [rows]}. */
static int read_list(struct twl_store *s, const char *sql, int64_t arg,
		     unsigned limit, const struct twl_row *r, const char *key,
		     json_t **out)
{
	struct twl_rctx c;
	sqlite3_stmt *st;
	json_t *doc;
	int rc;

	*out = NULL;
	doc = json_pack("{s:[]}", key);
	if (!doc)
		return -ENOMEM;
	rc = twl_rctx_begin(&c, s, true);
	if (rc)
		goto fail;
	STMT(st, sql);
	if (arg >= 0)
		sqlite3_bind_int64(st, 1, arg);
	if (limit)
		sqlite3_bind_int(st, 2, (int)limit);
	rc = twl_rows_into(st, r, json_object_get(doc, key), SIZE_MAX, NULL);
out:
	twl_rctx_end(&c);
fail:
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_list(struct twl_store *s, bool secrets, json_t **out)
{
	return read_list(s, q_hooks, -1, 0,
			 secrets ? &hook_secret_row : &hook_row, "webhooks",
			 out);
}

static int tx_delivery(sqlite3 *db, void *arg)
{
	const struct twl_delivery_row *d = arg;
	sqlite3_stmt *st = NULL;
	int r;

	r = sqlite3_prepare_v2(
		db,
		"INSERT INTO webhook_deliveries(webhook_id, event_id, kind,"
		" attempt, status, http_status, error, at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		-1, &st, NULL);
	if (r != SQLITE_OK)
		return r;
	sqlite3_bind_int64(st, 1, d->webhook_id);
	sqlite3_bind_text(st, 2, d->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, (int)d->attempt);
	sqlite3_bind_text(st, 5, d->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, d->http_status);
	if (d->error)
		sqlite3_bind_text(st, 7, d->error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, d->at);
	r = step_done(st, SQLITE_OK);
	if (r != SQLITE_DONE)
		return r;
	r = sqlite3_prepare_v2(db,
			       "DELETE FROM webhook_deliveries WHERE id <="
			       " (SELECT max(id) FROM webhook_deliveries) - ?1",
			       -1, &st, NULL);
	if (r != SQLITE_OK)
		return r;
	sqlite3_bind_int(st, 1, TWL_STORE_MAX_DELIVERIES);
	return step_done(st, SQLITE_OK);
}

/* Contract: see store_alerts.h. */
int twl_store_delivery_log(struct twl_store *s,
			   const struct twl_delivery_row *r)
{
	if (!r->event_id || !r->kind || !r->status)
		return -EINVAL;
	return alert_tx(s, tx_delivery, (void *)r);
}

static const char q_deliveries[] =
	"SELECT id, webhook_id, event_id, kind, attempt, status, http_status,"
	" error, at FROM webhook_deliveries"
	" WHERE ?1 = 0 OR webhook_id = ?1 ORDER BY id DESC LIMIT ?2";

static const struct twl_col delivery_cols[] = {
	{ "id", 0, TWL_COL_INT },	   { "webhook_id", 1, TWL_COL_INT },
	{ "event_id", 2, TWL_COL_TEXT },   { "kind", 3, TWL_COL_TEXT },
	{ "attempt", 4, TWL_COL_INT },	   { "status", 5, TWL_COL_TEXT },
	{ "http_status", 6, TWL_COL_INT }, { "error", 7, TWL_COL_TEXT },
	{ "at", 8, TWL_COL_INT },
};
static const struct twl_row delivery_row = TWL_ROW(delivery_cols);

/* Contract: see store_alerts.h. */
int twl_store_deliveries(struct twl_store *s, int64_t webhook_id,
			 unsigned limit, json_t **out)
{
	if (webhook_id < 0 || !limit || limit > TWL_READ_LIMIT_MAX) {
		*out = NULL;
		return -EINVAL;
	}
	return read_list(s, q_deliveries, webhook_id, limit, &delivery_row,
			 "deliveries", out);
}

struct kv_args {
	struct twl_alert_kv *kv;
	size_t n;
	int64_t now;
};

static int tx_swap(sqlite3 *db, void *arg)
{
	struct kv_args *a = arg;
	sqlite3_stmt *get = NULL, *put = NULL;
	size_t i;
	int r;

	r = sqlite3_prepare_v2(db,
			       "SELECT value FROM alert_state WHERE key = ?1",
			       -1, &get, NULL);
	if (r == SQLITE_OK)
		r = sqlite3_prepare_v2(
			db,
			"INSERT INTO alert_state(key, value, at) VALUES (?1, ?2, ?3)"
			" ON CONFLICT(key) DO UPDATE SET at = excluded.at, value ="
			" CASE WHEN ?4 THEN max(value, excluded.value)"
			" ELSE excluded.value END",
			-1, &put, NULL);
	for (i = 0; r == SQLITE_OK && i < a->n; i++) {
		struct twl_alert_kv *kv = &a->kv[i];

		sqlite3_bind_text(get, 1, kv->key, -1, SQLITE_STATIC);
		r = sqlite3_step(get);
		kv->had = r == SQLITE_ROW;
		kv->old = kv->had ? sqlite3_column_int64(get, 0) : 0;
		sqlite3_reset(get);
		if (r != SQLITE_ROW && r != SQLITE_DONE)
			break;
		sqlite3_bind_text(put, 1, kv->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(put, 2, kv->value);
		sqlite3_bind_int64(put, 3, a->now);
		sqlite3_bind_int(put, 4, kv->keep_max);
		r = sqlite3_step(put);
		sqlite3_reset(put);
		r = r == SQLITE_DONE ? SQLITE_OK : r;
	}
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	return r;
}

/* Contract: see store_alerts.h. */
int twl_store_alert_swap(struct twl_store *s, struct twl_alert_kv *kv, size_t n,
			 int64_t now)
{
	struct kv_args a = { kv, n, now };

	if (!n)
		return 0;
	return alert_tx(s, tx_swap, &a);
}

static int tx_prune(sqlite3 *db, void *arg)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = sqlite3_prepare_v2(db,
			       "DELETE FROM alert_state WHERE at < ?1"
			       " AND key <> 'scan'",
			       -1, &st, NULL);
	if (r != SQLITE_OK)
		return r;
	sqlite3_bind_int64(st, 1, *(int64_t *)arg);
	return step_done(st, SQLITE_OK);
}

/* Contract: see store_alerts.h. */
int twl_store_alert_prune(struct twl_store *s, int64_t before)
{
	return alert_tx(s, tx_prune, &before);
}

/*
 * A page of the hosts seen since ?1, after the cursor (?2 last seen, ?3
 * host id), ?4 of them: by the hosts' index on the hour.
 */
#define ALERT_PAGE                                                 \
	"WITH page AS (SELECT host_id, last_seen FROM hosts"       \
	" INDEXED BY hosts_last_hour WHERE last_hour >= ?1 / 3600" \
	" AND last_seen >= ?1 AND (last_seen, host_id) > (?2, ?3)" \
	" ORDER BY last_seen, host_id LIMIT ?4) "

static const char q_page[] = ALERT_PAGE "SELECT host_id, last_seen FROM page"
					" ORDER BY last_seen, host_id";

/* ordered, so that both backends list them alike */
static const char q_use_hosts[] = ALERT_PAGE
	"SELECT f.feature_id, f.host_id, f.last_used FROM page"
	" JOIN feature_host f ON f.host_id = page.host_id"
	" WHERE (f.kinds & 27) <> 0 ORDER BY 1, 2";

static const char q_use_comms[] = ALERT_PAGE
	"SELECT u.feature_id, u.comm, max(u.last_seen) FROM page"
	" JOIN usage u ON u.host_id = page.host_id"
	" WHERE u.op <> 'read' AND u.comm <> ''"
	" GROUP BY u.feature_id, u.comm ORDER BY 1, 2";

/* Contract: see store_sqlite_internal.h (read_alert_uses.c). */
const char *const twl_sqlite_alerts_sql[TWL_RQ_N] = {
	[TWL_RQ_ALERT_PAGE] = q_page,
	[TWL_RQ_ALERT_HOSTS] = q_use_hosts,
	[TWL_RQ_ALERT_COMMS] = q_use_comms,
};
