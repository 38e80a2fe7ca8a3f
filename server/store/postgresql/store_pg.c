// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL backend of the storage interface (store.h), through libpq:
 * its connections, open (migrations under an advisory lock, the ingest
 * path's statements prepared), close, the schema version, /healthz's
 * round trip, parameters and prepared statements, and its table of
 * functions: every function of the interface but the SQLite write-ahead
 * log's (its limit and statistics), which answer -ENOTSUP through
 * store.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_read.h"
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
	if (!strcmp(state, "57014")) /* query_canceled: twl_pg_stop_reads() */
		return -ECANCELED;
	if (!strncmp(state, "42", 2)) /* syntax error or access rule */
		return !strcmp(state, "42501") ? -EACCES : -EINVAL;
	return -EIO;
}

/* @r's outcome, with twl_pg_exec()'s contract. */
static int result_of(PGconn *conn, PGresult *r, PGresult **res)
{
	ExecStatusType st = PQresultStatus(r);
	int ret = 0;

	if (res)
		*res = NULL;
	/*
	 * libpq answers NULL also for a connection already lost: then it is
	 * the lost connection the caller must hear of, to connect again.
	 */
	if (!r)
		return PQstatus(conn) != CONNECTION_OK ? -ECONNRESET : -ENOMEM;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		ret = twl_pg_errno(conn, r);
	if (ret || !res)
		PQclear(r);
	else
		*res = r;
	return ret;
}

/* Contract: see store_pg_internal.h. */
int twl_pg_exec(PGconn *conn, const char *sql, int n, const char *const *v,
		PGresult **res)
{
	return result_of(conn,
			 n ? PQexecParams(conn, sql, n, NULL, v, NULL, NULL,
					  0) :
			     PQexec(conn, sql),
			 res);
}

/* Contract: see store_pg_internal.h. */
const char *twl_pg_i64(char buf[21], int64_t v)
{
	snprintf(buf, 21, "%lld", (long long)v);
	return buf;
}

/* Contract: see store_pg_internal.h. */
void twl_pg_arg_text(struct twl_pg_args *a, const char *v)
{
	a->v[a->n++] = v;
}

/* Contract: see store_pg_internal.h. */
void twl_pg_arg_i64(struct twl_pg_args *a, int64_t v)
{
	a->v[a->n] = twl_pg_i64(a->num[a->n], v);
	a->n++;
}

/* Contract: see store_pg_internal.h. */
void twl_pg_arg_hex(struct twl_pg_args *a, const unsigned char *b, size_t n,
		    char *buf, size_t cap)
{
	size_t i;

	if (cap < 2 * n + 3) {
		a->v[a->n++] = NULL;
		return;
	}
	buf[0] = '\\';
	buf[1] = 'x';
	for (i = 0; i < n; i++)
		snprintf(buf + 2 + 2 * i, 3, "%02x", b[i]);
	buf[2 + 2 * n] = '\0';
	a->v[a->n++] = buf;
}

/* Contract: see store_pg_internal.h. */
int twl_pg_prepare(PGconn *conn, const char *where,
		   const struct twl_pg_stmt *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		PGresult *r = PQprepare(conn, st[i].name, st[i].sql, 0, NULL);
		int ret = PQresultStatus(r) == PGRES_COMMAND_OK ?
				  0 :
				  twl_pg_errno(conn, r);

		if (ret)
			twl_log(LOG_ERR, "%s: cannot prepare %s: %s", where,
				st[i].name, PQerrorMessage(conn));
		PQclear(r);
		if (ret)
			return ret;
	}
	return 0;
}

/* Contract: see store_pg_internal.h. */
int twl_pg_run(PGconn *conn, const char *name, const struct twl_pg_args *a,
	       PGresult **res)
{
	return result_of(conn,
			 PQexecPrepared(conn, name, a ? a->n : 0,
					a ? a->v : NULL, NULL, NULL, 0),
			 res);
}

/* Contract: see store_pg_internal.h. */
int64_t twl_pg_changed(const PGresult *r)
{
	return strtoll(PQcmdTuples((PGresult *)r), NULL, 10);
}

/* Contract: see store_pg_internal.h. */
int64_t twl_pg_int(const PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* Notices (CREATE TABLE IF NOT EXISTS ...) are no news: kept at debug. */
static void notice(void *arg, const char *msg)
{
	twl_log(LOG_DEBUG, "%s: %s", (const char *)arg, msg);
}

/* Contract: see store_pg_internal.h. */
int twl_pg_connect(struct twl_pg *p, PGconn **conn)
{
	*conn = PQconnectdb(p->uri);
	if (!*conn || PQstatus(*conn) != CONNECTION_OK) {
		twl_log(LOG_ERR, "%s: cannot connect: %s", p->where,
			*conn ? PQerrorMessage(*conn) : "out of memory");
		return *conn ? -ECONNREFUSED : -ENOMEM;
	}
	PQsetNoticeProcessor(*conn, notice, p->where);
	return 0;
}

/* The writer connection's statements, prepared once per connection. */
static int prepare_writer(struct twl_pg *p)
{
	int ret = twl_pg_ingest_prepare(p);

	if (!ret)
		ret = twl_pg_ingest_host_prepare(p);
	if (!ret)
		ret = twl_pg_usage_prepare(p);
	if (!ret)
		ret = twl_pg_rollup_prepare(p);
	return ret;
}

/* Contract: see store_pg_internal.h. */
int twl_pg_writer_reconnect(struct twl_pg *p)
{
	if (PQstatus(p->wconn) == CONNECTION_OK)
		return 0;
	PQreset(p->wconn);
	if (PQstatus(p->wconn) != CONNECTION_OK) {
		twl_log(LOG_ERR, "%s: cannot connect again: %s", p->where,
			PQerrorMessage(p->wconn));
		return -ECONNREFUSED;
	}
	twl_log(LOG_NOTICE,
		"%s: the writer's connection was lost; connected again",
		p->where);
	return prepare_writer(p);
}

/* Contract: see store_pg_internal.h. */
void twl_pg_lock(struct twl_pg *p)
{
	pthread_mutex_lock(&p->lock);
	if (PQstatus(p->conn) == CONNECTION_OK)
		return;
	PQreset(p->conn);
	if (PQstatus(p->conn) == CONNECTION_OK) {
		twl_log(LOG_NOTICE,
			"%s: the connection was lost; connected again",
			p->where);
		p->conn_lost = false;
	} else if (!p->conn_lost) {
		twl_log(LOG_ERR,
			"%s: the connection was lost; cannot connect again yet (trying again with each request): %s",
			p->where, PQerrorMessage(p->conn));
		p->conn_lost = true;
	}
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
	pthread_mutex_init(&p->wlock, NULL);
	pthread_mutex_init(&p->rlock, NULL);
	pthread_mutex_init(&p->plock, NULL);
	twl_uri_redact(uri, p->where, sizeof(p->where));
	p->uri = strdup(uri);
	if (!p->uri) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = twl_pg_connect(p, &p->conn);
	if (ret)
		goto fail;
	ret = twl_pg_migrate(p->conn, err, sizeof(err));
	if (ret < 0) {
		twl_log(LOG_ERR, "%s: %s", p->where, err);
		goto fail;
	}
	ret = twl_pg_connect(p, &p->wconn);
	if (!ret)
		ret = twl_pg_connect(p, &p->rconn);
	if (!ret)
		ret = prepare_writer(p);
	if (!ret)
		ret = twl_pg_catalog_check((struct twl_store *)p);
	if (ret)
		goto fail;
	*out = (struct twl_store *)p;
	return 0;
fail:
	twl_store_close((struct twl_store *)p);
	return ret;
}

static void pg_close(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);

	for (int i = 0; i < p->n_idle; i++)
		PQfinish(p->idle[i]);
	PQfinish(p->rconn);
	PQfinish(p->wconn);
	PQfinish(p->conn);
	free(p->uri);
	twl_pg_fold_free(&p->fold);
	pthread_mutex_destroy(&p->plock);
	pthread_mutex_destroy(&p->rlock);
	pthread_mutex_destroy(&p->wlock);
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
	twl_pg_lock(p);
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

	twl_pg_lock(p);
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
	.stop_reads = twl_pg_stop_reads,
	.kept_get = twl_pg_kept_get,
	.kept_put = twl_pg_kept_put,
	.kept_claim = twl_pg_kept_claim,
	.kept_touch = twl_pg_kept_touch,
	.kept_touched = twl_pg_kept_touched,
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
	.read_export_data = twl_pg_read_export_data,
	.read_migration_status = twl_pg_read_migration_status,
	.read_migration_reuse = twl_pg_read_migration_reuse,
	.read_summary = twl_pg_read_summary,
	.read_hosts = twl_pg_read_hosts,
	.read_host = twl_pg_read_host,
	.read_health = twl_pg_read_health,
	.read_unknown = twl_pg_read_unknown,
	.read_feature = twl_pg_read_feature,
	.read_alert_uses = twl_pg_read_alert_uses,
	.read_readiness = twl_pg_read_readiness,
	.catalog_reload = twl_pg_catalog_reload,
	.write_begin = twl_pg_write_begin,
	.write_end = twl_pg_write_end,
	.ingest = twl_pg_ingest,
	.ingest_prepared = twl_pg_ingest_prepared,
	.ingest_deferred = twl_pg_ingest_deferred,
	.catalog_rematch = twl_pg_catalog_rematch,
	.prune = twl_pg_prune,
	.check = twl_pg_check,
	.db_size = twl_pg_db_size,
	/*
	 * No set_wal_max, wal_catchups: PostgreSQL sizes and checkpoints its
	 * own WAL (max_wal_size); the server's wal-max does not apply.
	 */
};
