/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a storage backend gives store.c, which implements the public
 * twl_store_*() and twl_read_*() functions of store.h, store_read.h and
 * store_alerts.h as thin dispatchers: one table of functions per backend,
 * each with the public function's contract. A backend's store object
 * (whatever its type) begins with a pointer to its table, which is how
 * the dispatchers find it. A NULL member is a function the backend does
 * not have yet: its dispatcher returns -ENOTSUP (and NULL for a JSON
 * answer). Only store.c and the backends include this.
 */
#ifndef TWL_SERVER_STORE_BACKEND_H
#define TWL_SERVER_STORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;
struct twl_ingest;
struct twl_annotation;
struct twl_migration_status;
struct twl_read_filter;
struct twl_export_opts;
struct twl_readiness_query;
struct twl_delivery_row;
struct twl_alert_kv;
struct twl_alert_page;

struct twl_store_ops {
	const char *name; /* "sqlite", "postgresql" */
	void (*close)(struct twl_store *s);
	int (*schema_version)(struct twl_store *s);
	int (*set_wal_max)(struct twl_store *s, uint64_t bytes);
	int (*wal_catchups)(struct twl_store *s, uint64_t *n, double *seconds);
	int (*ping)(struct twl_store *s, const char **backend, char *problem,
		    size_t cap);
	int (*check)(struct twl_store *s, char *problem, size_t cap);
	int (*db_size)(struct twl_store *s, int64_t *bytes);
	int (*prune)(struct twl_store *s, int64_t now, int batch_days,
		     int data_days, int64_t *deleted);

	int (*token_add)(struct twl_store *s, const char *name,
			 const char *role, const char *hash, int64_t now,
			 int64_t *id);
	int (*token_lookup)(struct twl_store *s, const char *hash, char *role,
			    size_t role_cap, char *name, size_t name_cap,
			    int64_t *id);
	int (*token_revoke)(struct twl_store *s, int64_t id, int64_t now);
	int (*token_list)(struct twl_store *s, json_t **out);
	int (*host_key_add)(struct twl_store *s, const char *host_id,
			    const char *hash, int64_t token_id,
			    unsigned max_live, int64_t now);
	int (*host_key_lookup)(struct twl_store *s, const char *hash,
			       char host_id[65]);
	int (*host_key_revoke)(struct twl_store *s, const char *host_id,
			       int64_t now, int *n);

	int (*write_begin)(struct twl_store *s);
	int (*write_end)(struct twl_store *s, bool commit);
	int (*write_begin_deferred)(struct twl_store *s);
	int (*sync)(struct twl_store *s);
	int (*ingest)(struct twl_store *s, const char *host_id,
		      const json_t *report, int64_t now);
	int (*ingest_prepared)(struct twl_store *s, const char *host_id,
			       const struct twl_ingest *in, int64_t now);
	void (*ingest_deferred)(struct twl_store *s, const char *host_id,
				const struct twl_ingest *in, int64_t now,
				int *result);
	int (*catalog_rematch)(struct twl_store *s, int64_t *n);
	int (*catalog_reload)(struct twl_store *s, int64_t *n);

	int (*annotation_put)(struct twl_store *s,
			      const struct twl_annotation *a, int64_t *id);
	int (*annotation_delete)(struct twl_store *s, int64_t id);
	int (*migration_status_set)(struct twl_store *s,
				    const struct twl_migration_status *m);
	int (*migration_status_delete)(struct twl_store *s, const char *feature,
				       const char *workload);

	int (*webhook_add)(struct twl_store *s, const char *url,
			   const char *secret, const char *author, int64_t now,
			   int64_t *id);
	int (*webhook_delete)(struct twl_store *s, int64_t id);
	int (*webhook_list)(struct twl_store *s, bool secrets, json_t **out);
	int (*delivery_log)(struct twl_store *s,
			    const struct twl_delivery_row *r);
	int (*deliveries)(struct twl_store *s, int64_t webhook_id,
			  unsigned limit, json_t **out);
	int (*alert_swap)(struct twl_store *s, struct twl_alert_kv *kv,
			  size_t n, int64_t now);
	int (*alert_prune)(struct twl_store *s, int64_t before);
	int (*read_alert_uses)(struct twl_store *s,
			       const struct twl_alert_page *p, json_t **out);

	void (*stop_reads)(struct twl_store *s);
	int (*kept_get)(struct twl_store *s, struct twl_kept *k);
	int (*kept_put)(struct twl_store *s, const struct twl_kept *k);
	int (*kept_claim)(struct twl_store *s, const char *key, int64_t now,
			  int64_t until);
	int (*kept_touch)(struct twl_store *s, int64_t now);
	int (*kept_touched)(struct twl_store *s, int64_t *at);

	int (*read_summary)(struct twl_store *s, int64_t now, json_t **out);
	int (*read_feature)(struct twl_store *s, const char *id,
			    const struct twl_read_filter *f, json_t **out);
	int (*read_hosts)(struct twl_store *s, const struct twl_read_filter *f,
			  json_t **out);
	int (*read_host)(struct twl_store *s, const char *host_id,
			 json_t **out);
	int (*read_health)(struct twl_store *s, int64_t now,
			   int64_t silent_after,
			   const struct twl_read_filter *f, json_t **out);
	int (*read_unknown)(struct twl_store *s,
			    const struct twl_read_filter *f, json_t **out);
	int (*read_annotations)(struct twl_store *s, const char *feature,
				json_t **out);
	int (*read_migration_status)(struct twl_store *s, const char *feature,
				     json_t **out);
	int (*read_migration_reuse)(struct twl_store *s, int64_t after,
				    json_t **out);
	int (*read_export_data)(struct twl_store *s, int64_t now,
				unsigned window_days, const char *feature,
				const struct twl_export_opts *opts,
				json_t **out);
	int (*read_readiness)(struct twl_store *s,
			      const struct twl_readiness_query *q,
			      json_t **out);
};

/*
 * Each backend's open, with twl_store_open()'s contract; the store it
 * makes begins with a pointer to that backend's table.
 * twl_sqlite_store_open - @path is the SQLite database file
 * (store/sqlite/, whose files see the public names of store.h as
 * twl_sqlite_*: store_sqlite_names.h).
 * twl_pg_store_open - @uri is a postgresql:// connection URI
 * (store/postgresql/).
 */
int twl_sqlite_store_open(const char *path, struct twl_store **out);
int twl_pg_store_open(const char *uri, struct twl_store **out);

#endif /* TWL_SERVER_STORE_BACKEND_H */
