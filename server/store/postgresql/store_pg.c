// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL backend of the storage interface (store.h), through libpq:
 * its connection, open (migrations under an advisory lock), close, the
 * schema version, and its table of functions. Incomplete: only what the
 * table names is implemented (tokens, host keys, annotations, migration
 * status, webhooks and the alert detector's state); every other function
 * answers -ENOTSUP through store.c, and the server refuses to start on
 * this store (twl_store_is_postgresql()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_tokens.h"
#include "store/store.h"
#include "store/store_backend.h"

/* Contract: see store_pg_internal.h. */
int twl_pg_errno(PGconn *conn, const PGresult *r)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK)
		return -ECONNRESET;
	if (!state)
		return -EIO;
	if (!strcmp(state, "23505")) /* unique_violation */
		return -EEXIST;
	if (!strncmp(state, "23", 2)) /* other integrity constraints */
		return -EINVAL;
	if (!strcmp(state, "40001") || !strcmp(state, "40P01"))
		return -EAGAIN; /* serialization failure, deadlock */
	if (!strcmp(state, "53100")) /* disk_full */
		return -ENOSPC;
	if (!strcmp(state, "53200")) /* out_of_memory */
		return -ENOMEM;
	if (!strncmp(state, "42", 2)) /* syntax error or access rule */
		return !strcmp(state, "42501") ? -EACCES : -EINVAL;
	return -EIO;
}

/* Contract: see store_pg_internal.h. */
int twl_pg_exec(PGconn *conn, const char *sql, int n, const char *const *v,
		PGresult **res)
{
	PGresult *r = n ? PQexecParams(conn, sql, n, NULL, v, NULL, NULL, 0) :
			  PQexec(conn, sql);
	ExecStatusType st = PQresultStatus(r);
	int ret = 0;

	if (res)
		*res = NULL;
	if (!r)
		return -ENOMEM;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		ret = twl_pg_errno(conn, r);
	if (ret || !res)
		PQclear(r);
	else
		*res = r;
	return ret;
}

/* Contract: see store_pg_internal.h. */
const char *twl_pg_i64(char buf[21], int64_t v)
{
	snprintf(buf, 21, "%lld", (long long)v);
	return buf;
}

/* Notices (CREATE TABLE IF NOT EXISTS ...) are no news: kept at debug. */
static void notice(void *arg, const char *msg)
{
	twl_log(LOG_DEBUG, "%s: %s", (const char *)arg, msg);
}

/* Contract: see store_backend.h. */
int twl_pg_store_open(const char *uri, struct twl_store **out)
{
	struct twl_pg *p = calloc(1, sizeof(*p));
	char err[512];
	int ret;

	if (!p)
		return -ENOMEM;
	p->ops = &twl_pg_ops;
	pthread_mutex_init(&p->lock, NULL);
	twl_uri_redact(uri, p->where, sizeof(p->where));
	p->conn = PQconnectdb(uri);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		twl_log(LOG_ERR, "%s: cannot connect: %s", p->where,
			p->conn ? PQerrorMessage(p->conn) : "out of memory");
		ret = p->conn ? -ECONNREFUSED : -ENOMEM;
		goto fail;
	}
	PQsetNoticeProcessor(p->conn, notice, p->where);
	ret = twl_pg_migrate(p->conn, err, sizeof(err));
	if (ret < 0) {
		twl_log(LOG_ERR, "%s: %s", p->where, err);
		goto fail;
	}
	*out = (struct twl_store *)p;
	return 0;
fail:
	twl_store_close((struct twl_store *)p);
	return ret;
}

static void pg_close(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);

	PQfinish(p->conn);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* One round trip: 0, or a negative errno and the connection's message. */
static int round_trip(PGconn *conn, char *problem, size_t cap)
{
	int ret = twl_pg_exec(conn, "SELECT 1", 0, NULL, NULL);

	if (ret)
		snprintf(problem, cap, "%s", PQerrorMessage(conn));
	return ret;
}

/* Contract: see store.h (twl_store_ping()). */
static int pg_ping(struct twl_store *s, const char **backend, char *problem,
		   size_t cap)
{
	struct twl_pg *p = twl_pg_of(s);
	int ret;

	*backend = "postgresql";
	pthread_mutex_lock(&p->lock);
	ret = round_trip(p->conn, problem, cap);
	if (ret && PQstatus(p->conn) != CONNECTION_OK) {
		/* lost (a restart of the server, say): connect again once */
		PQreset(p->conn);
		ret = round_trip(p->conn, problem, cap);
		twl_log(ret ? LOG_ERR : LOG_WARNING,
			"%s: connection lost; connecting again %s", p->where,
			ret ? "failed" : "worked");
	}
	pthread_mutex_unlock(&p->lock);
	if (cap)
		problem[strcspn(problem, "\n")] = '\0';
	return ret;
}

static int pg_schema_version(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);
	int v;

	pthread_mutex_lock(&p->lock);
	v = twl_pg_schema_version(p->conn);
	pthread_mutex_unlock(&p->lock);
	return v;
}

/* Contract: see store_pg_internal.h. NULL: not implemented yet. */
const struct twl_store_ops twl_pg_ops = {
	.name = "postgresql",
	.close = pg_close,
	.schema_version = pg_schema_version,
	.ping = pg_ping,
	.token_add = twl_pg_token_add,
	.token_lookup = twl_pg_token_lookup,
	.token_revoke = twl_pg_token_revoke,
	.token_list = twl_pg_token_list,
	.host_key_add = twl_pg_host_key_add,
	.host_key_lookup = twl_pg_host_key_lookup,
	.host_key_revoke = twl_pg_host_key_revoke,
	.annotation_put = twl_pg_annotation_put,
	.annotation_delete = twl_pg_annotation_delete,
	.migration_status_set = twl_pg_migration_status_set,
	.migration_status_delete = twl_pg_migration_status_delete,
	.webhook_add = twl_pg_webhook_add,
	.webhook_delete = twl_pg_webhook_delete,
	.webhook_list = twl_pg_webhook_list,
	.delivery_log = twl_pg_delivery_log,
	.deliveries = twl_pg_deliveries,
	.alert_swap = twl_pg_alert_swap,
	.alert_prune = twl_pg_alert_prune,
	.read_annotations = twl_pg_read_annotations,
	.read_migration_status = twl_pg_read_migration_status,
	.read_migration_reuse = twl_pg_read_migration_reuse,
};
