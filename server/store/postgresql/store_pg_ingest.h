/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PostgreSQL store's ingest path and upkeep, each with the contract
 * of its store.h function (twl_store_write_begin(), ...), and what its
 * files share. All on the writer connection (store_pg_internal.h).
 *
 * Several servers may ingest into one database: write_begin takes
 * TWL_PG_INGEST_LOCK, a transaction-level advisory lock, so the
 * transactions that write ingested data (group commits, retention, the
 * catalog rematch) of all servers run one at a time; README.md in this
 * folder says why.
 */
#ifndef TWL_SERVER_STORE_PG_INGEST_H
#define TWL_SERVER_STORE_PG_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;
struct twl_ingest;
struct twl_rollup;
struct twl_pg;

/* The advisory lock key of ingest ("twli"). */
#define TWL_PG_INGEST_LOCK 0x74776c69LL

int twl_pg_write_begin(struct twl_store *s);
int twl_pg_write_end(struct twl_store *s, bool commit);
int twl_pg_ingest(struct twl_store *s, const char *host_id,
		  const json_t *report, int64_t now);
int twl_pg_ingest_prepared(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now);
int twl_pg_catalog_rematch(struct twl_store *s, int64_t *n);
/*
 * twl_pg_catalog_reload - twl_store_catalog_reload() on PostgreSQL:
 * twl_pg_catalog_rematch() and the current catalog noted as matched.
 * Nothing to seed: this store keeps no catalog tables (its reads take
 * the catalog from memory, twl_catalog_find()).
 */
int twl_pg_catalog_reload(struct twl_store *s, int64_t *n);
/*
 * twl_pg_catalog_check - at open: twl_pg_catalog_rematch() unless
 * server_meta says the current catalog (store/catalog_print.h) was
 * matched before, then note it. 0, or a negative errno (logged).
 */
int twl_pg_catalog_check(struct twl_store *s);
int twl_pg_prune(struct twl_store *s, int64_t now, int batch_days,
		 int data_days, int64_t *deleted);
int twl_pg_check(struct twl_store *s, char *problem, size_t cap);
int twl_pg_db_size(struct twl_store *s, int64_t *bytes);

/*
 * twl_pg_ingest_host - the report's host row, labels, coverage facts and
 * runtimes (store_pg_ingest_host.c). twl_pg_ingest_usage - its usage
 * rows, max-merged, their growth added to @ru (store_pg_usage.c). Both
 * inside the batch's savepoint: 0 or -errno.
 */
int twl_pg_ingest_host(struct twl_pg *p, const char *host_id,
		       const struct twl_ingest *in, int64_t now);
int twl_pg_ingest_usage(struct twl_pg *p, const char *host_id,
			const struct twl_ingest *in, struct twl_rollup *ru);

/*
 * twl_pg_rollup - twl_rollup_add() (store/rollup_sum.h) of evidence by
 * @host_id, @r written at once when full. twl_pg_rollup_flush - write
 * @r's sums into feature_host (and feature_day where the triggers do
 * not) and empty it (store_pg_rollup.c). 0 or -errno.
 */
int twl_pg_rollup(struct twl_pg *p, const char *feature, const char *host_id,
		  int64_t first, int64_t last, int kind, int64_t n,
		  struct twl_rollup *r);
int twl_pg_rollup_flush(struct twl_pg *p, const char *host_id,
			struct twl_rollup *r);

#endif /* TWL_SERVER_STORE_PG_INGEST_H */
