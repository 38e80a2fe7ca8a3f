/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What people and the alert detector write beside the reports, on
 * PostgreSQL (migrations/003_admin.sql): annotations
 * (store_pg_annotations.c), migration status (store_pg_migration.c),
 * webhooks, deliveries and the detector's state (store_pg_alerts.c),
 * and the kept answers (migrations/007, store_pg_kept.c).
 * Each has the contract of the store.h, store_read.h or store_alerts.h
 * function of the same name (twl_pg_annotation_put: twl_store_
 * annotation_put, twl_pg_kept_get: twl_store_kept_get,
 * twl_pg_read_annotations: twl_read_annotations, ...).
 */
#ifndef TWL_SERVER_STORE_PG_ADMIN_H
#define TWL_SERVER_STORE_PG_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;
struct twl_annotation;
struct twl_migration_status;
struct twl_delivery_row;
struct twl_alert_kv;

struct twl_kept;

int twl_pg_kept_get(struct twl_store *s, struct twl_kept *k);
int twl_pg_kept_put(struct twl_store *s, const struct twl_kept *k);
int twl_pg_kept_claim(struct twl_store *s, const char *key, int64_t now,
		      int64_t until);
int twl_pg_kept_touch(struct twl_store *s, int64_t now);
int twl_pg_kept_touched(struct twl_store *s, int64_t *at);

int twl_pg_annotation_put(struct twl_store *s, const struct twl_annotation *a,
			  int64_t *id);
int twl_pg_annotation_delete(struct twl_store *s, int64_t id);
int twl_pg_read_annotations(struct twl_store *s, const char *feature,
			    json_t **out);

int twl_pg_migration_status_set(struct twl_store *s,
				const struct twl_migration_status *m);
int twl_pg_migration_status_delete(struct twl_store *s, const char *feature,
				   const char *workload);
int twl_pg_read_migration_status(struct twl_store *s, const char *feature,
				 json_t **out);
int twl_pg_read_migration_reuse(struct twl_store *s, int64_t after,
				json_t **out);

int twl_pg_webhook_add(struct twl_store *s, const char *url, const char *secret,
		       const char *author, int64_t now, int64_t *id);
int twl_pg_webhook_delete(struct twl_store *s, int64_t id);
int twl_pg_webhook_list(struct twl_store *s, bool secrets, json_t **out);
int twl_pg_delivery_log(struct twl_store *s, const struct twl_delivery_row *r);
int twl_pg_deliveries(struct twl_store *s, int64_t webhook_id, unsigned limit,
		      json_t **out);
int twl_pg_alert_swap(struct twl_store *s, struct twl_alert_kv *kv, size_t n,
		      int64_t now);
int twl_pg_alert_prune(struct twl_store *s, int64_t before);

#endif /* TWL_SERVER_STORE_PG_ADMIN_H */
