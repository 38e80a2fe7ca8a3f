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
#include <libpq-fe.h>

#include "store/postgresql/store_pg_pipe.h"
#include "store/rollup_sum.h"

struct twl_store;
struct twl_ingest;
struct twl_pg;
struct twl_pg_fold;

/* The advisory lock key of ingest ("twli"). */
#define TWL_PG_INGEST_LOCK 0x74776c69LL

int twl_pg_write_begin(struct twl_store *s);
int twl_pg_write_end(struct twl_store *s, bool commit);
int twl_pg_ingest(struct twl_store *s, const char *host_id,
		  const json_t *report, int64_t now);
int twl_pg_ingest_prepared(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now);
/*
 * twl_pg_ingest_deferred - twl_store_ingest_deferred() on PostgreSQL:
 * the report's last statements and RELEASE are sent, not synced; the
 * next report's first sync (or twl_pg_write_end(), or
 * twl_pg_ingest_prepared()) reads them. When they failed, *@result is
 * that failure, the report rolls back to its savepoint, and the next
 * report, skipped by PostgreSQL behind it, is sent again.
 */
void twl_pg_ingest_deferred(struct twl_store *s, const char *host_id,
			    const struct twl_ingest *in, int64_t now,
			    int *result);
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
 * One report's ingest on the writer connection, in few round trips
 * (README.md, "Ingest in few round trips"): the statements whose
 * results decide nothing are sent together in pipeline mode (@pipe);
 * the results that decide what follows are read at its syncs.
 *
 * 1. twl_pg_ingest_host_send(), twl_pg_usage_send() and the rest of
 *    store_pg_ingest.c send the report's first statements after its
 *    SAVEPOINT and batch id, results into the fields below: one sync.
 * 2. The _finish() functions read them, send what they decide (a new
 *    host row, labels, grown unknown texts, usage rows not at their
 *    hash: one or more syncs of their own) and add the growth to @ru.
 * 3. twl_pg_rollup_flush() keeps @ru's sums for the group's end; the
 *    RELEASE is sent, synced with the next report's step 1
 *    (twl_pg_ingest_deferred()) or at once (twl_pg_ingest_prepared()).
 */
struct twl_pg_report {
	struct twl_pg *p;
	struct twl_pg_pipe pipe;
	const char *host_id;
	const struct twl_ingest *in;
	int64_t now;
	PGresult *batch, *touch, *labels; /* w_batch_ins, h_host_touch, ... */
	PGresult **warn; /* per warning: w_warn_ins, or w_unk_seen (skewed) */
	PGresult **unk; /* per unknown text: w_unk_seen */
	PGresult **use; /* per usage entry: its last statement's result */
	int64_t *old; /* per usage entry: the count it replaced */
	unsigned char *step; /* per usage entry: store_pg_usage.c's state */
	bool use_serial; /* two entries share an id: one at a time */
	/* the last report's tail, its @prev_n statements sent first */
	size_t prev_n;
	int *prev_result; /* its result, NULL once known */
	bool redo; /* that tail failed: nothing of this one ran */
	struct twl_rollup ru;
};

/*
 * twl_pg_ingest_host_send - the report's host row (when unchanged but
 * for its last report), labels look-up, coverage facts, runtimes.
 * twl_pg_ingest_host_finish - the host row when it changed or is new,
 * the labels when they differ, the times clamped (store_pg_ingest_host.c).
 * twl_pg_usage_send - each usage row's common update at its key's hash.
 * twl_pg_usage_finish - the rows it did not find (found by key, grown,
 * merged or inserted), every growth added to @ru (store_pg_usage.c).
 * All inside the batch's savepoint, on @r's pipe: 0 or -errno.
 */
int twl_pg_ingest_host_send(struct twl_pg_report *r);
int twl_pg_ingest_host_finish(struct twl_pg_report *r);
int twl_pg_usage_send(struct twl_pg_report *r);
int twl_pg_usage_finish(struct twl_pg_report *r);

/*
 * twl_pg_rollup - twl_rollup_add() (store/rollup_sum.h) of evidence to
 * @r->ru, its sums kept at once when full. twl_pg_rollup_flush - keep
 * @r->ru's sums with the group's (@r->p->fold, under the report that
 * twl_pg_fold_begin() began) and empty it (store_pg_rollup.c). Nothing
 * is sent: 0 or -errno.
 */
int twl_pg_rollup(struct twl_pg_report *r, const char *feature, int64_t first,
		  int64_t last, int kind, int64_t n);
int twl_pg_rollup_flush(struct twl_pg_report *r);

/*
 * twl_pg_rollup_write - the kept sums of the group's reports that
 * succeeded written into feature_host and feature_day (one round trip),
 * and forgotten: run by twl_pg_write_end() before its COMMIT, and between
 * two reports when the group kept TWL_PG_FOLD_MAX, every report's result
 * final. 0 or -errno (the group then rolls back).
 */
int twl_pg_rollup_write(struct twl_pg *p);

/*
 * twl_pg_rollup_send - the statements of twl_pg_rollup_write() sent on
 * @pp, not synced, for the kept sums of @f, which forgets its entries:
 * how a report stored alone writes its own, inside its savepoint
 * (store_pg_ingest.c). 0 or -errno.
 */
int twl_pg_rollup_send(struct twl_pg_pipe *pp, struct twl_pg_fold *f);

#endif /* TWL_SERVER_STORE_PG_INGEST_H */
