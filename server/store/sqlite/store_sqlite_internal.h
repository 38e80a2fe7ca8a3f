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
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
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

/* --- result rows to JSON (store_sqlite_rows.c) --- */

/* How a result column becomes a JSON value. */
enum twl_col_type {
	TWL_COL_TEXT, /* a string; SQL NULL: null */
	TWL_COL_INT, /* an integer; SQL NULL: 0 */
	TWL_COL_INT_NULL, /* an integer; SQL NULL: null */
	TWL_COL_BOOL, /* false for 0 and SQL NULL, else true */
	TWL_COL_DAY, /* a day number, as the Unix time the day starts */
	TWL_COL_JSON, /* JSON text (object or array); else null */
	TWL_COL_JSON_ARRAY, /* JSON text of an array; anything else: [] */
	TWL_COL_TITLE, /* a catalog feature id, as the feature's title or null */
};

/* One member of a row's JSON object: @name from result column @col. */
struct twl_col {
	const char *name; /* NULL (alone in its row): the row is the value */
	int col;
	enum twl_col_type type;
};

/* A row's JSON: its members, in order. */
struct twl_row {
	const struct twl_col *cols;
	size_t n;
};

#define TWL_ROW(cols)                                    \
	{                                                \
		(cols), sizeof(cols) / sizeof((cols)[0]) \
	}

/*
 * twl_step - sqlite3_step(): 0 with *row telling whether a row came, or
 * a negative errno.
 */
int twl_step(sqlite3_stmt *st, bool *row);

/*
 * twl_row_set - set @r's members into @obj from @st's current row, or
 * when !@row as if every column were SQL NULL. 0 or -ENOMEM.
 */
int twl_row_set(sqlite3_stmt *st, bool row, const struct twl_row *r,
		json_t *obj);

/* twl_row_json - @st's current row as a new JSON value; NULL: no memory. */
json_t *twl_row_json(sqlite3_stmt *st, const struct twl_row *r);

/*
 * twl_rows_into - step @st through its rows, appending each as @r to
 * @arr, at most @max of them; *@more (may be NULL) tells whether another
 * row followed. Resets @st. 0 or a negative errno.
 */
int twl_rows_into(sqlite3_stmt *st, const struct twl_row *r, json_t *arr,
		  size_t max, bool *more);

/*
 * twl_row_into - step @st once and set @r's members of that row into @obj
 * (no row: as SQL NULLs, e.g. 0 for a count). Resets @st. 0 or a negative
 * errno.
 */
int twl_row_into(sqlite3_stmt *st, const struct twl_row *r, json_t *obj);

#endif /* TWL_SERVER_STORE_SQLITE_INTERNAL_H */
