// SPDX-License-Identifier: GPL-2.0
/*
 * The SQLite backend's table for store.c's dispatchers: every function of
 * store.h, store_read.h and store_alerts.h, by the names this folder's
 * objects give them (store_sqlite_names.h).
 */
#include "store/store.h"
#include "store/store_alerts.h"
#include "store/store_backend.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/* Contract: see store_sqlite_internal.h. */
const struct twl_store_ops twl_sqlite_ops = {
	.name = "sqlite",
	.close = twl_sqlite_store_close,
	.schema_version = twl_sqlite_store_schema_version,
	.set_wal_max = twl_sqlite_store_set_wal_max,
	.wal_catchups = twl_sqlite_store_wal_catchups,
	.ping = twl_sqlite_store_ping,
	.check = twl_sqlite_store_check,
	.db_size = twl_sqlite_store_db_size,
	.prune = twl_sqlite_store_prune,
	.token_add = twl_sqlite_store_token_add,
	.token_lookup = twl_sqlite_store_token_lookup,
	.token_revoke = twl_sqlite_store_token_revoke,
	.token_list = twl_sqlite_store_token_list,
	.host_key_add = twl_sqlite_store_host_key_add,
	.host_key_lookup = twl_sqlite_store_host_key_lookup,
	.host_key_revoke = twl_sqlite_store_host_key_revoke,
	.write_begin = twl_sqlite_store_write_begin,
	.write_end = twl_sqlite_store_write_end,
	.write_begin_deferred = twl_sqlite_store_write_begin_deferred,
	.sync = twl_sqlite_store_sync,
	.ingest = twl_sqlite_store_ingest,
	.ingest_prepared = twl_sqlite_store_ingest_prepared,
	.ingest_deferred = twl_sqlite_store_ingest_deferred,
	.catalog_rematch = twl_sqlite_store_catalog_rematch,
	.catalog_reload = twl_sqlite_store_catalog_reload,
	.annotation_put = twl_sqlite_store_annotation_put,
	.annotation_delete = twl_sqlite_store_annotation_delete,
	.stop_reads = twl_sqlite_store_stop_reads,
	.kept_get = twl_sqlite_store_kept_get,
	.kept_put = twl_sqlite_store_kept_put,
	.kept_claim = twl_sqlite_store_kept_claim,
	.kept_touch = twl_sqlite_store_kept_touch,
	.kept_touched = twl_sqlite_store_kept_touched,
	.migration_status_set = twl_sqlite_store_migration_status_set,
	.migration_status_delete = twl_sqlite_store_migration_status_delete,
	.webhook_add = twl_sqlite_store_webhook_add,
	.webhook_delete = twl_sqlite_store_webhook_delete,
	.webhook_list = twl_sqlite_store_webhook_list,
	.delivery_log = twl_sqlite_store_delivery_log,
	.deliveries = twl_sqlite_store_deliveries,
	.alert_swap = twl_sqlite_store_alert_swap,
	.alert_prune = twl_sqlite_store_alert_prune,
	.read_alert_uses = twl_sqlite_read_alert_uses,
	.read_summary = twl_sqlite_read_summary,
	.read_feature = twl_sqlite_read_feature,
	.read_hosts = twl_sqlite_read_hosts,
	.read_host = twl_sqlite_read_host,
	.read_health = twl_sqlite_read_health,
	.read_unknown = twl_sqlite_read_unknown,
	.read_annotations = twl_sqlite_read_annotations,
	.read_migration_status = twl_sqlite_read_migration_status,
	.read_migration_reuse = twl_sqlite_read_migration_reuse,
	.read_export_data = twl_sqlite_read_export_data,
	.read_readiness = twl_sqlite_read_readiness,
};
