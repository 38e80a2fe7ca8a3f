/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SQLite backend internals shared by its files: store_sqlite.c (the
 * connections, open and close), _ingest.c (the write path), _tokens.c
 * (tokens and host keys), _maint.c (retention and statistics), and the
 * read API's: _read.c, _export.c and _annotations.c, on read contexts
 * (_rctx.c) whose rows become JSON (_rows.c). Nothing outside the
 * store_sqlite*.c files includes this, except tests.
 *
 * Connections: "wdb" is the writer connection, used under wlock (the
 * group-commit writer and admin writes). "rdb" is the reader connection,
 * used under rlock; WAL lets it read while the writer writes. "adb"
 * serves credential look-ups, under alock.
 */
#ifndef TWL_SERVER_STORE_SQLITE_INTERNAL_H
#define TWL_SERVER_STORE_SQLITE_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "store/store.h"
#include "store/read_rows.h"
#include "store/rollup_sum.h"

struct twl_read_filter;

/*
 * What the common rollup update adds to feature_day (migration 007):
 * uses, reads, warnings, and the latest use (0: none, only reads) of a
 * feature on a day.
 */
struct twl_day_delta {
	char feature[65];
	int64_t day, uses, reads, warnings, last;
};

/*
 * A read API statement kept prepared, found by its SQL text's address
 * (twl_rctx_stmt()). More slots than the read API has queries.
 */
struct twl_read_slot {
	const char *sql;
	sqlite3_stmt *st;
};

#define TWL_READ_SLOTS 48

#define TWL_DAY_BATCH_MAX 64
#define TWL_DAY_TX_MAX 256

/*
 * The SQLite backend's table of functions (store_sqlite_ops.c), the first
 * member of every struct twl_store it opens (store_backend.h).
 */
struct twl_store_ops;
struct twl_wal_sync;
extern const struct twl_store_ops twl_sqlite_ops;

struct twl_store {
	const struct twl_store_ops *ops; /* &twl_sqlite_ops: keep it first */
	char *path;
	bool reads_stopped; /* twl_store_stop_reads(); __atomic */
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
	/* WAL checkpoints of wdb, on their own thread (checkpoint.h) */
	struct twl_ckpt *ckpt;
	/*
	 * wdb's WAL synced off the writer thread (wal_sync.h); NULL: every
	 * commit syncs (twl_store_write_begin_deferred() is write_begin).
	 * deferred: the open transaction commits with synchronous=NORMAL.
	 */
	struct twl_wal_sync *wsync;
	bool deferred;
	/*
	 * Statements prepared at open and kept, by the file that runs them;
	 * twl_store_close() finalizes every statement of its connections.
	 */
	/*
	 * the ingest path's, on wdb (store_sqlite_ingest.c, _ingest_host.c,
	 * _ingest_usage.c)
	 */
	sqlite3_stmt *ws[32], *hs[12], *us[12], *rs[4];
	/* the count U_BUMP replaced, kept by twl_old_count() */
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
	/* token and key writes on wdb, look-ups on adb, the token list on rdb
	 * (store_sqlite_tokens.c) */
	sqlite3_stmt *tw[8], *as[2], *token_list;
	/* the database's size, on rdb (store_sqlite_maint.c) */
	sqlite3_stmt *pages;
	/* the read API's statements on rdb (store_sqlite_rctx.c) */
	struct twl_read_slot read_api[TWL_READ_SLOTS];
};

/*
 * After a transaction begun by twl_store_write_begin_deferred() (and
 * before the write lock is released): the writer's connection back at
 * synchronous=FULL, so that every other write syncs in its COMMIT; stops
 * the process if SQLite refuses (store_sqlite.c says why). A no-op after
 * any other transaction.
 */
void twl_sqlite_full_sync_again(struct twl_store *s);

/*
 * Lock and return the reader connection; pair with twl_store_read_unlock().
 * Statements prepared on it may be kept in s->read_api[] (twl_rctx_stmt()).
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

/*
 * twl_sqlite_prepare_all - prepare @sql[0..@n) on @db into @st[], kept
 * until twl_store_close(). 0, or -EIO logged with @path and @what.
 */
int twl_sqlite_prepare_all(const char *path, sqlite3 *db,
			   const char *const *sql, int n, sqlite3_stmt **st,
			   const char *what);

/*
 * What twl_store_open() has each file prepare, in this order, once the
 * connections are open and migrated: 0 or a negative errno.
 */
int twl_sqlite_ingest_prepare(struct twl_store *s); /* store_sqlite_ingest.c */
int twl_sqlite_ingest_host_prepare(struct twl_store *s); /* _ingest_host.c */
int twl_sqlite_ingest_usage_prepare(struct twl_store *s); /* _ingest_usage.c */
int twl_sqlite_rollup_prepare(struct twl_store *s); /* store_sqlite_rollup.c */

/*
 * twl_sqlite_catalog_check - at open, once the statements are prepared:
 * twl_store_catalog_rematch() unless server_meta says this catalog was
 * seen (then nothing), and note it (store_sqlite_catalog.c). 0 or -errno.
 */
int twl_sqlite_catalog_check(struct twl_store *s);
int twl_sqlite_tokens_prepare(struct twl_store *s); /* store_sqlite_tokens.c */
int twl_sqlite_maint_prepare(struct twl_store *s); /* store_sqlite_maint.c */

/*
 * twl_sqlite_rollup - twl_rollup_add() (store/rollup_sum.h) of evidence
 * by @host_id, @r written at once when it is full.
 * twl_sqlite_rollup_flush - write @r's sums and empty it. Both on the
 * writer, inside the batch's savepoint: 0 or -errno.
 */
int twl_sqlite_rollup(struct twl_store *s, const char *feature,
		      const char *host_id, int64_t first, int64_t last,
		      int kind, int64_t n, struct twl_rollup *r);
int twl_sqlite_rollup_flush(struct twl_store *s, const char *host_id,
			    struct twl_rollup *r);

/*
 * The feature_day sums of the common rollup update (migration 007): a
 * batch's in s->day_batch, a transaction's in s->day_tx.
 * twl_sqlite_day_batch_fit - before the batch's savepoint ends: when the
 * transaction's list has no room for the batch's sums, write them now
 * (0 or -errno). twl_sqlite_day_batch_end - after it: the batch's sums
 * join the transaction's when @stored, else they are dropped.
 * twl_sqlite_day_flush - write the transaction's sums, before COMMIT.
 */
int twl_sqlite_day_batch_fit(struct twl_store *s);
void twl_sqlite_day_batch_end(struct twl_store *s, bool stored);
int twl_sqlite_day_flush(struct twl_store *s);

struct twl_ingest;

/*
 * twl_sqlite_ingest_host - the host part of report @in for @host_id at
 * @now, inside the report's savepoint (wlock held): the host row from
 * host and health, host.labels when the report has them, the coverage
 * facts, the census's runtimes (store_sqlite_ingest_host.c). 0 or -errno.
 */
int twl_sqlite_ingest_host(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now);

/*
 * twl_sqlite_host_ref - @host_id's number in host_refs (migration 022)
 * into *@ref, added when the host has none yet, inside the report's
 * savepoint (wlock held): usage_count and batch_ids name the host by it.
 * 0 or -errno.
 */
int twl_sqlite_host_ref(struct twl_store *s, const char *host_id, int64_t *ref);

/*
 * twl_sqlite_ingest_usage - report @in's usage[] entries for @host_id
 * (numbered @host_ref by twl_sqlite_host_ref()), inside the report's
 * savepoint (wlock held): each merged into its row (usage_key and
 * usage_count, migrations 021 and 022) by the server's rules, and
 * every counter that grew added to the rollups in @ru
 * (store_sqlite_ingest_usage.c). 0 or -errno.
 */
int twl_sqlite_ingest_usage(struct twl_store *s, const char *host_id,
			    int64_t host_ref, const struct twl_ingest *in,
			    struct twl_rollup *ru);

/*
 * twl_sqlite_key_seen - the key whose SHA-256 is @key_hash reported boot
 * @boot_id at @now (migration 011): on the writer's transaction, wlock
 * held. 0 or -errno.
 */
int twl_sqlite_key_seen(struct twl_store *s, const char *key_hash,
			const char *boot_id, int64_t now);

/* Step a write statement to its end, then reset and unbind it. */
static inline int twl_step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : twl_sqlite_errno(rc);
}

/*
 * Bind text without a copy: the caller's string lives until the statement
 * is reset (on the ingest path, in the prepared report, ingest.h). NULL
 * binds SQL NULL (sqlite3_bind_text does that for a NULL pointer).
 */
static inline void twl_bind_static(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

/* --- result rows to JSON (store_sqlite_rows.c) --- */

/*
 * twl_step - sqlite3_step(): 0 with *row telling whether a row came, or
 * a negative errno.
 */
int twl_step(sqlite3_stmt *st, bool *row);

/* twl_sqlite_cells - the current row of @st as cells (read_rows.h). */
void twl_sqlite_cells(sqlite3_stmt *st, struct twl_cells *c);

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

/*
 * twl_one_int - step @st for one row: integer column 0 into *@v (0 for
 * no row or NULL). Resets @st. 0 or a negative errno.
 */
int twl_one_int(sqlite3_stmt *st, int64_t *v);

/* --- read contexts (store_sqlite_rctx.c) --- */

/*
 * One answer of the read API: one read transaction, so one snapshot,
 * either on the store's shared reader (under its lock, statements kept in
 * s->read_api[]) for short queries, or on a private read-only connection
 * for queries that scan (feature detail, host lists, health, export), so
 * that a long scan holds up neither the short reads on the shared reader
 * nor another scan.
 */
struct twl_rctx {
	struct twl_store *s;
	sqlite3 *db;
	bool in_txn;
	bool priv;
	/* the label filter twl_rctx_stmt() binds (TWL_SQL_LABELED), or NULL */
	const char *label_key, *label_value;
	struct twl_read_slot own[TWL_READ_SLOTS];
};

/*
 * A read's label filter: rows whose host @col carries host label ?20 with
 * the value ?21; every row while ?20 is NULL. twl_rctx_stmt() binds both
 * from the context's label_key and label_value on every statement that
 * has them, so one query text serves the filtered and the whole fleet.
 */
#define TWL_SQL_LABEL_KEY 20
#define TWL_SQL_LABELED(col)                                               \
	" AND (?20 IS NULL OR " col " IN (SELECT host_id FROM host_labels" \
	" WHERE key = ?20 AND value = ?21))"

/*
 * twl_rctx_begin - open @c on @s's shared reader (@priv false) or a
 * private connection, and BEGIN. 0 or a negative errno (nothing held).
 */
int twl_rctx_begin(struct twl_rctx *c, struct twl_store *s, bool priv);

/* twl_rctx_end - end the transaction and release @c. Idempotent. */
void twl_rctx_end(struct twl_rctx *c);

/*
 * twl_rctx_stmt - the statement of @sql on @c, prepared once per
 * connection, reset and unbound but for @c's label filter
 * (TWL_SQL_LABELED's ?20, ?21). @sql must be a static array (its address
 * is the key). NULL with *@rc set on failure.
 */
sqlite3_stmt *twl_rctx_stmt(struct twl_rctx *c, const char *sql, int *rc);

/* rc = x, and on failure to the function's "out:" label */
#define TRY(x)                    \
	do {                      \
		rc = (x);         \
		if (rc)           \
			goto out; \
	} while (0)

/* var = the statement of sql on the context c (a local), or to "out:" */
#define STMT(var, sql)                               \
	do {                                         \
		var = twl_rctx_stmt(&c, (sql), &rc); \
		if (!var)                            \
			goto out;                    \
	} while (0)

/* --- queries shared by the read API files --- */

struct twl_feature;

/*
 * twl_rq_values_into - set @obj's "values" to what was written to
 * feature @f's files in [@since, @until] (store_sqlite_values.c): {"kind",
 * "name" (the catalog's value_kind and value_name), unless the kind is
 * "none": "written" (BPF value summaries: {"cgroups", "hosts",
 * "processes", "min", "max" (finite values, null: none), "set" and
 * "unlimited" ({"cgroups", "hosts", "processes"} set to a finite value,
 * reset to unlimited), unless bytes "values" [{"value", "cgroups",
 * "hosts", "processes", "names" (first 3)}] and "values_more"},
 * "configured" (census knobs: {"cgroups", "hosts", "min", "max", unless
 * bytes "values" [{"value", "cgroups", "hosts"}] and "values_more"}); for
 * a feature with event files "listeners" {"processes", "hosts",
 * "cgroups"}}. Cgroups are counted per host; lists hold 16 values.
 */
int twl_rq_values_into(struct twl_rctx *c, const struct twl_feature *f,
		       int64_t since, int64_t until, json_t *obj);

/*
 * The queries of the answers both backends compose (store/read_answers.h)
 * in SQLite's dialect: each file's table of them by enum twl_rq_id (NULL
 * where another file has it), and the backend's read contexts and runner
 * over them (store_sqlite_rctx.c).
 */
extern const char *const twl_sqlite_readiness_sql[];
extern const char *const twl_sqlite_read_sql[];
extern const char *const twl_sqlite_kinds_sql[];
extern const char *const twl_sqlite_values_sql[];
extern const char *const twl_sqlite_health_sql[];
extern const char *const twl_sqlite_unknown_sql[];
extern const char *const twl_sqlite_export_sql[]; /* and coverage */
extern const char *const twl_sqlite_alerts_sql[];
struct twl_rq_io;
extern const struct twl_rq_io twl_sqlite_rq_io;

/*
 * twl_rq_annotations_into - the annotations of @feature (NULL: all)
 * appended to @arr (store_sqlite_annotations.c).
 */
int twl_rq_annotations_into(struct twl_rctx *c, const char *feature,
			    json_t *arr);

/*
 * twl_admin_write - run @sql, bound by @bind(@arg), on the admin writer in
 * a transaction of its own. *@changes_or_id gets the rows changed, or
 * with @want_id the new row's id (-EDQUOT when nothing was inserted: the
 * statement's WHERE refused it at a cap). 0 or a negative errno, nothing
 * changed (store_sqlite_annotations.c).
 */
int twl_admin_write(struct twl_store *s, const char *sql,
		    int (*bind)(sqlite3_stmt *, void *), void *arg,
		    int64_t *changes_or_id, bool want_id);

#endif /* TWL_SERVER_STORE_SQLITE_INTERNAL_H */
