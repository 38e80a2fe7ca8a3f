/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SQLite backend's names for the public store functions. Every file
 * of store/sqlite/ is compiled with this header included first
 * (-include, server/CMakeLists.txt), so the backend's sources keep the
 * public names (twl_store_open(), twl_read_summary(), ...) and the
 * contracts of store.h, store_read.h and store_alerts.h, while the
 * objects define twl_sqlite_store_open(), twl_sqlite_read_summary(), ...:
 * the functions of its table (store_sqlite_ops.c), which store.c
 * dispatches to. Calls between the backend's own files stay direct.
 */
#ifndef TWL_SERVER_STORE_SQLITE_NAMES_H
#define TWL_SERVER_STORE_SQLITE_NAMES_H

#define twl_read_alert_uses twl_sqlite_read_alert_uses
#define twl_read_annotations twl_sqlite_read_annotations
#define twl_read_export_data twl_sqlite_read_export_data
#define twl_read_feature twl_sqlite_read_feature
#define twl_read_health twl_sqlite_read_health
#define twl_read_host twl_sqlite_read_host
#define twl_read_hosts twl_sqlite_read_hosts
#define twl_read_migration_reuse twl_sqlite_read_migration_reuse
#define twl_read_migration_status twl_sqlite_read_migration_status
#define twl_read_readiness twl_sqlite_read_readiness
#define twl_read_summary twl_sqlite_read_summary
#define twl_read_unknown twl_sqlite_read_unknown
#define twl_store_alert_prune twl_sqlite_store_alert_prune
#define twl_store_alert_swap twl_sqlite_store_alert_swap
#define twl_store_annotation_delete twl_sqlite_store_annotation_delete
#define twl_store_annotation_put twl_sqlite_store_annotation_put
#define twl_store_kept_claim twl_sqlite_store_kept_claim
#define twl_store_kept_get twl_sqlite_store_kept_get
#define twl_store_kept_put twl_sqlite_store_kept_put
#define twl_store_kept_touch twl_sqlite_store_kept_touch
#define twl_store_kept_touched twl_sqlite_store_kept_touched
#define twl_store_catalog_rematch twl_sqlite_store_catalog_rematch
#define twl_store_catalog_reload twl_sqlite_store_catalog_reload
#define twl_store_check twl_sqlite_store_check
#define twl_store_ping twl_sqlite_store_ping
#define twl_store_close twl_sqlite_store_close
#define twl_store_db_size twl_sqlite_store_db_size
#define twl_store_deliveries twl_sqlite_store_deliveries
#define twl_store_delivery_log twl_sqlite_store_delivery_log
#define twl_store_host_key_add twl_sqlite_store_host_key_add
#define twl_store_host_key_lookup twl_sqlite_store_host_key_lookup
#define twl_store_host_key_revoke twl_sqlite_store_host_key_revoke
#define twl_store_ingest twl_sqlite_store_ingest
#define twl_store_ingest_deferred twl_sqlite_store_ingest_deferred
#define twl_store_ingest_prepared twl_sqlite_store_ingest_prepared
#define twl_store_migration_status_delete \
	twl_sqlite_store_migration_status_delete
#define twl_store_migration_status_set twl_sqlite_store_migration_status_set
#define twl_store_open twl_sqlite_store_open
#define twl_store_prune twl_sqlite_store_prune
#define twl_store_schema_version twl_sqlite_store_schema_version
#define twl_store_set_wal_max twl_sqlite_store_set_wal_max
#define twl_store_stop_reads twl_sqlite_store_stop_reads
#define twl_store_token_add twl_sqlite_store_token_add
#define twl_store_token_list twl_sqlite_store_token_list
#define twl_store_token_lookup twl_sqlite_store_token_lookup
#define twl_store_token_revoke twl_sqlite_store_token_revoke
#define twl_store_wal_catchups twl_sqlite_store_wal_catchups
#define twl_store_webhook_add twl_sqlite_store_webhook_add
#define twl_store_webhook_delete twl_sqlite_store_webhook_delete
#define twl_store_webhook_list twl_sqlite_store_webhook_list
#define twl_store_write_begin twl_sqlite_store_write_begin
#define twl_store_write_end twl_sqlite_store_write_end
#define twl_store_write_begin_deferred twl_sqlite_store_write_begin_deferred
#define twl_store_sync twl_sqlite_store_sync

#endif /* TWL_SERVER_STORE_SQLITE_NAMES_H */
