/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SQLite backend internals shared by store_sqlite.c (core) and
 * store_sqlite_read.c (read API). Nothing outside the store_sqlite*.c
 * files includes this.
 *
 * Connections: "wdb" is the writer connection, used under wlock (the
 * group-commit writer and admin writes). "rdb" is the reader connection,
 * used under rlock; WAL lets it read while the writer writes.
 */
#ifndef TWL_SERVER_STORE_SQLITE_INTERNAL_H
#define TWL_SERVER_STORE_SQLITE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/store.h"

/*
 * What the common rollup update adds to feature_day (migration 007):
 * uses, and the latest use, of a feature on a day.
 */
struct twl_day_delta {
	char feature[65];
	int64_t day, uses, last;
};

#define TWL_DAY_BATCH_MAX 64
#define TWL_DAY_TX_MAX 256

struct twl_store {
	char *path;
	pthread_mutex_t wlock;
	sqlite3 *wdb;
	pthread_mutex_t rlock;
	sqlite3 *rdb;
	/*
	 * Credential look-ups (every request's token or host key) on a
	 * connection of their own: a long dashboard query holds rlock, and
	 * must not hold up ingest's authentication.
	 */
	pthread_mutex_t alock;
	sqlite3 *adb;
	sqlite3_stmt *as[2];
	/* WAL checkpoints of wdb, on their own thread (checkpoint.h) */
	struct twl_ckpt *ckpt;
	/* prepared writer statements (store_sqlite.c) */
	sqlite3_stmt *ws[32];
	/* the count W_USAGE_BUMP replaced, kept by twl_old_count() */
	int64_t bumped_from;
	/*
	 * feature_day upkeep of the common rollup update, summed: day_batch
	 * for the batch being stored (dropped if it rolls back), day_tx for
	 * the batches released in this transaction, written by
	 * twl_store_write_end() before COMMIT. Full lists are written at
	 * once instead (inside the batch's savepoint, or the transaction).
	 */
	struct twl_day_delta day_batch[TWL_DAY_BATCH_MAX];
	struct twl_day_delta day_tx[TWL_DAY_TX_MAX];
	size_t n_day_batch, n_day_tx;
	/* prepared reader statements (store_sqlite.c) */
	sqlite3_stmt *rs[16];
	/* free for store_sqlite_read.c: prepared read-API statements, finalized by
	 * twl_store_close() */
	sqlite3_stmt *read_api[64];
};

/*
 * Lock and return the reader connection; pair with twl_store_read_unlock().
 * Statements prepared on it may be kept in s->read_api[].
 */
sqlite3 *twl_store_read_lock(struct twl_store *s);
void twl_store_read_unlock(struct twl_store *s);

/*
 * Lock and return the writer connection for a short write outside the
 * ingest path (annotations). The caller runs its own BEGIN IMMEDIATE /
 * COMMIT; pair with twl_store_admin_write_unlock().
 */
sqlite3 *twl_store_admin_write_lock(struct twl_store *s);
void twl_store_admin_write_unlock(struct twl_store *s);

/* Map an SQLite result code to a negative errno. */
int twl_sqlite_errno(int rc);

/* A usage row upserted the plain SQL way, with the server's rules: the
 * raw SQLite peer of bench/server-load (store_sqlite.c). */
extern const char twl_sql_usage_upsert[];

#endif /* TWL_SERVER_STORE_SQLITE_INTERNAL_H */
