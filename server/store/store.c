// SPDX-License-Identifier: GPL-2.0
/*
 * The public store functions (store.h, store_read.h, store_alerts.h) as
 * dispatchers to the backend that opened the store (store_backend.h):
 * SQLite for a file, PostgreSQL for a postgresql:// URI. A function the
 * backend lacks answers -ENOTSUP.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "store/store_alerts.h"
#include "store/store_backend.h"
#include "store/store_read.h"

/* The backend's table: the first member of every backend's store object. */
static const struct twl_store_ops *ops(struct twl_store *s)
{
	return *(const struct twl_store_ops *const *)s;
}

/* @fn of the backend of @s with @s and the rest, or -ENOTSUP without it. */
#define CALL(s, fn, ...) (ops(s)->fn ? ops(s)->fn((s), __VA_ARGS__) : -ENOTSUP)

/* Contract: see store.h. */
bool twl_store_is_postgresql(const char *db)
{
	return db && (!strncasecmp(db, "postgresql://", 13) ||
		      !strncasecmp(db, "postgres://", 11));
}

/* Contract: see store.h. */
int twl_store_open(const char *path, struct twl_store **out)
{
	*out = NULL;
	if (twl_store_is_postgresql(path))
		return twl_pg_store_open(path, out);
	return twl_sqlite_store_open(path, out);
}

/* Contract: see store.h. */
void twl_store_close(struct twl_store *s)
{
	if (s)
		ops(s)->close(s);
}

/* Contract: see store.h. */
void twl_store_stop_reads(struct twl_store *s)
{
	if (s && ops(s)->stop_reads)
		ops(s)->stop_reads(s);
}

/* Contract: see store.h. */
int twl_store_schema_version(struct twl_store *s)
{
	return ops(s)->schema_version ? ops(s)->schema_version(s) : -ENOTSUP;
}

/* Contract: see store.h. */
int twl_store_set_wal_max(struct twl_store *s, uint64_t bytes)
{
	return CALL(s, set_wal_max, bytes);
}

/* Contract: see store.h. */
int twl_store_wal_catchups(struct twl_store *s, uint64_t *n, double *seconds)
{
	return CALL(s, wal_catchups, n, seconds);
}

/* Contract: see store.h. */
int twl_store_ping(struct twl_store *s, const char **backend, char *problem,
		   size_t cap)
{
	*backend = ops(s)->name;
	if (cap)
		*problem = '\0';
	return CALL(s, ping, backend, problem, cap);
}

/* Contract: see store.h. */
int twl_store_check(struct twl_store *s, char *problem, size_t cap)
{
	if (cap)
		*problem = '\0';
	return CALL(s, check, problem, cap);
}

/* Contract: see store.h. */
int twl_store_db_size(struct twl_store *s, int64_t *bytes)
{
	return CALL(s, db_size, bytes);
}

/* Contract: see store.h. */
int twl_store_prune(struct twl_store *s, int64_t now, int batch_days,
		    int data_days, int64_t *deleted)
{
	return CALL(s, prune, now, batch_days, data_days, deleted);
}

/* Contract: see store.h. */
int twl_store_token_add(struct twl_store *s, const char *name, const char *role,
			const char *hash, int64_t now, int64_t *id)
{
	return CALL(s, token_add, name, role, hash, now, id);
}

/* Contract: see store.h. */
int twl_store_token_lookup(struct twl_store *s, const char *hash, char *role,
			   size_t role_cap, char *name, size_t name_cap,
			   int64_t *id)
{
	return CALL(s, token_lookup, hash, role, role_cap, name, name_cap, id);
}

/* Contract: see store.h. */
int twl_store_token_revoke(struct twl_store *s, int64_t id, int64_t now)
{
	return CALL(s, token_revoke, id, now);
}

/* Contract: see store.h. */
int twl_store_token_list(struct twl_store *s, json_t **out)
{
	*out = NULL;
	return CALL(s, token_list, out);
}

/* Contract: see store.h. */
int twl_store_host_key_add(struct twl_store *s, const char *host_id,
			   const char *hash, int64_t token_id,
			   unsigned max_live, int64_t now)
{
	return CALL(s, host_key_add, host_id, hash, token_id, max_live, now);
}

/* Contract: see store.h. */
int twl_store_host_key_lookup(struct twl_store *s, const char *hash,
			      char host_id[65])
{
	return CALL(s, host_key_lookup, hash, host_id);
}

/* Contract: see store.h. */
int twl_store_host_key_revoke(struct twl_store *s, const char *host_id,
			      int64_t now, int *n)
{
	return CALL(s, host_key_revoke, host_id, now, n);
}

/* Contract: see store.h. */
int twl_store_write_begin(struct twl_store *s)
{
	return ops(s)->write_begin ? ops(s)->write_begin(s) : -ENOTSUP;
}

/* Contract: see store.h. */
int twl_store_write_end(struct twl_store *s, bool commit)
{
	return CALL(s, write_end, commit);
}

/* Contract: see store.h. */
int twl_store_write_begin_deferred(struct twl_store *s)
{
	if (ops(s)->write_begin_deferred)
		return ops(s)->write_begin_deferred(s);
	return twl_store_write_begin(s);
}

/* Contract: see store.h. */
int twl_store_sync(struct twl_store *s)
{
	return ops(s)->sync ? ops(s)->sync(s) : 0;
}

/* Contract: see store.h. */
int twl_store_ingest(struct twl_store *s, const char *host_id,
		     const json_t *report, int64_t now)
{
	return CALL(s, ingest, host_id, report, now);
}

/* Contract: see store.h. */
int twl_store_ingest_prepared(struct twl_store *s, const char *host_id,
			      const struct twl_ingest *in, int64_t now)
{
	return CALL(s, ingest_prepared, host_id, in, now);
}

/* Contract: see store.h. */
void twl_store_ingest_deferred(struct twl_store *s, const char *host_id,
			       const struct twl_ingest *in, int64_t now,
			       int *result)
{
	if (ops(s)->ingest_deferred)
		ops(s)->ingest_deferred(s, host_id, in, now, result);
	else
		*result = -ENOTSUP;
}

/* Contract: see store.h. */
int twl_store_catalog_rematch(struct twl_store *s, int64_t *n)
{
	return CALL(s, catalog_rematch, n);
}

/* Contract: see store.h. */
int twl_store_catalog_reload(struct twl_store *s, int64_t *n)
{
	return CALL(s, catalog_reload, n);
}

/* Contract: see store.h. */
int twl_store_annotation_add(struct twl_store *s, const char *feature,
			     const char *workload, const char *text,
			     const char *fits, const char *author, int64_t now,
			     int64_t *id)
{
	const struct twl_annotation a = { .feature = feature,
					  .workload = workload,
					  .text = text,
					  .fits = fits,
					  .author = author,
					  .now = now };

	/* the plain form of a put, the same on every backend */
	return twl_store_annotation_put(s, &a, id);
}

/* Contract: see store.h. */
int twl_store_annotation_put(struct twl_store *s,
			     const struct twl_annotation *a, int64_t *id)
{
	return CALL(s, annotation_put, a, id);
}

/* Contract: see store.h. */
int twl_store_kept_get(struct twl_store *s, struct twl_kept *k)
{
	return CALL(s, kept_get, k);
}

/* Contract: see store.h. */
int twl_store_kept_put(struct twl_store *s, const struct twl_kept *k)
{
	return CALL(s, kept_put, k);
}

/* Contract: see store.h. */
int twl_store_kept_claim(struct twl_store *s, const char *key, int64_t now,
			 int64_t until)
{
	return CALL(s, kept_claim, key, now, until);
}

/* Contract: see store.h. */
int twl_store_kept_touch(struct twl_store *s, int64_t now)
{
	return CALL(s, kept_touch, now);
}

/* Contract: see store.h. */
int twl_store_kept_touched(struct twl_store *s, int64_t *at)
{
	return CALL(s, kept_touched, at);
}

/* Contract: see store.h. */
int twl_store_annotation_delete(struct twl_store *s, int64_t id)
{
	return CALL(s, annotation_delete, id);
}

/* Contract: see store.h. */
int twl_store_migration_status_set(struct twl_store *s,
				   const struct twl_migration_status *m)
{
	return CALL(s, migration_status_set, m);
}

/* Contract: see store.h. */
int twl_store_migration_status_delete(struct twl_store *s, const char *feature,
				      const char *workload)
{
	return CALL(s, migration_status_delete, feature, workload);
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_add(struct twl_store *s, const char *url,
			  const char *secret, const char *author, int64_t now,
			  int64_t *id)
{
	return CALL(s, webhook_add, url, secret, author, now, id);
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_delete(struct twl_store *s, int64_t id)
{
	return CALL(s, webhook_delete, id);
}

/* Contract: see store_alerts.h. */
int twl_store_webhook_list(struct twl_store *s, bool secrets, json_t **out)
{
	*out = NULL;
	return CALL(s, webhook_list, secrets, out);
}

/* Contract: see store_alerts.h. */
int twl_store_delivery_log(struct twl_store *s,
			   const struct twl_delivery_row *r)
{
	return CALL(s, delivery_log, r);
}

/* Contract: see store_alerts.h. */
int twl_store_deliveries(struct twl_store *s, int64_t webhook_id,
			 unsigned limit, json_t **out)
{
	*out = NULL;
	return CALL(s, deliveries, webhook_id, limit, out);
}

/* Contract: see store_alerts.h. */
int twl_store_alert_swap(struct twl_store *s, struct twl_alert_kv *kv, size_t n,
			 int64_t now)
{
	return CALL(s, alert_swap, kv, n, now);
}

/* Contract: see store_alerts.h. */
int twl_store_alert_prune(struct twl_store *s, int64_t before)
{
	return CALL(s, alert_prune, before);
}

/* Contract: see store_alerts.h. */
int twl_read_alert_uses(struct twl_store *s, const struct twl_alert_page *p,
			json_t **out)
{
	*out = NULL;
	return CALL(s, read_alert_uses, p, out);
}

/* Contract: see store_read.h. */
int twl_read_summary(struct twl_store *s, int64_t now, json_t **out)
{
	*out = NULL;
	return CALL(s, read_summary, now, out);
}

/* Contract: see store_read.h. */
int twl_read_feature(struct twl_store *s, const char *id,
		     const struct twl_read_filter *f, json_t **out)
{
	*out = NULL;
	return CALL(s, read_feature, id, f, out);
}

/* Contract: see store_read.h. */
int twl_read_hosts(struct twl_store *s, const struct twl_read_filter *f,
		   json_t **out)
{
	*out = NULL;
	return CALL(s, read_hosts, f, out);
}

/* Contract: see store_read.h. */
int twl_read_host(struct twl_store *s, const char *host_id, json_t **out)
{
	*out = NULL;
	return CALL(s, read_host, host_id, out);
}

/* Contract: see store_read.h. */
int twl_read_health(struct twl_store *s, int64_t now, int64_t silent_after,
		    const struct twl_read_filter *f, json_t **out)
{
	*out = NULL;
	return CALL(s, read_health, now, silent_after, f, out);
}

/* Contract: see store_read.h. */
int twl_read_unknown(struct twl_store *s, const struct twl_read_filter *f,
		     json_t **out)
{
	*out = NULL;
	return CALL(s, read_unknown, f, out);
}

/* Contract: see store_read.h. */
int twl_read_annotations(struct twl_store *s, const char *feature, json_t **out)
{
	*out = NULL;
	return CALL(s, read_annotations, feature, out);
}

/* Contract: see store_read.h. */
int twl_read_migration_status(struct twl_store *s, const char *feature,
			      json_t **out)
{
	*out = NULL;
	return CALL(s, read_migration_status, feature, out);
}

/* Contract: see store_read.h. */
int twl_read_migration_reuse(struct twl_store *s, int64_t after, json_t **out)
{
	*out = NULL;
	return CALL(s, read_migration_reuse, after, out);
}

/* Contract: see store_read.h. */
int twl_read_export_data(struct twl_store *s, int64_t now, unsigned window_days,
			 const char *feature,
			 const struct twl_export_opts *opts, json_t **out)
{
	*out = NULL;
	return CALL(s, read_export_data, now, window_days, feature, opts, out);
}

/* Contract: see store_read.h. */
int twl_read_readiness(struct twl_store *s, const struct twl_readiness_query *q,
		       json_t **out)
{
	*out = NULL;
	return CALL(s, read_readiness, q, out);
}
