/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server storage interface. Handlers and the ingest writer use
 * only these functions; store_sqlite.c implements them on SQLite (a second
 * backend implements the same set). Read-API queries live in store_read.h
 * (read engineer). All functions return 0 or a negative errno and log
 * nothing above debug; callers log once with context.
 *
 * Threading: any thread may call the token/key/metrics functions (they
 * use a mutex-guarded connection). The ingest functions between
 * twl_store_write_begin() and twl_store_write_end() belong to the one
 * thread that holds the write lock (the group-commit writer, or a
 * short admin write).
 */
#ifndef TWL_SERVER_STORE_H
#define TWL_SERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

/*
 * Open (creating if missing) the database at path, set WAL,
 * synchronous=NORMAL and busy_timeout, apply pending migrations and load
 * the catalog seed. Returns 0 and *out, or a negative errno (-EPROTO for
 * a database newer than this binary).
 */
int twl_store_open(const char *path, struct twl_store **out);

/*
 * twl_store_set_wal_max - let the WAL grow to about bytes under sustained
 * ingest before the writer checkpoints it itself (checkpoint.h; default
 * 256 MiB; at least 8000 pages, raised to that). Returns the limit in
 * pages, or -ENOTSUP when the store has no checkpoint thread (SQLite's
 * own automatic checkpoints apply then).
 */
int twl_store_set_wal_max(struct twl_store *s, uint64_t bytes);

/*
 * twl_store_wal_catchups - twl_ckpt_stats() of the store's checkpoint
 * thread: how often the writer checkpointed the WAL itself at wal-max, and
 * the seconds that took. -ENOTSUP without a checkpoint thread.
 */
int twl_store_wal_catchups(struct twl_store *s, uint64_t *n, double *seconds);

/* Close the store. NULL-safe. */
void twl_store_close(struct twl_store *s);

/* Schema version after migrations (PRAGMA user_version). */
int twl_store_schema_version(struct twl_store *s);

/* --- tokens (hash = SHA-256 hex of the secret) --- */

/* Insert a token; role is "admin", "viewer" or "agent". *id may be NULL. */
int twl_store_token_add(struct twl_store *s, const char *name, const char *role,
			const char *hash, int64_t now, int64_t *id);

/*
 * Look up an unrevoked token by hash. Returns 0 and fills role text
 * (role_cap bytes), name and id; -ENOENT if absent or revoked.
 */
int twl_store_token_lookup(struct twl_store *s, const char *hash, char *role,
			   size_t role_cap, char *name, size_t name_cap,
			   int64_t *id);

/* Mark token id revoked; -ENOENT if no such unrevoked token. */
int twl_store_token_revoke(struct twl_store *s, int64_t id, int64_t now);

/* JSON array of {id,name,role,created,revoked} (no hashes). */
int twl_store_token_list(struct twl_store *s, json_t **out);

/* --- per-host keys --- */

/* Bind a new key hash to host_id. */
int twl_store_host_key_add(struct twl_store *s, const char *host_id,
			   const char *hash, int64_t now);

/*
 * Look up a key hash: 0 with host_id (65 bytes) for a live key, -EKEYREVOKED
 * for a revoked one, -ENOENT for an unknown one.
 */
int twl_store_host_key_lookup(struct twl_store *s, const char *hash,
			      char host_id[65]);

/* Revoke every key of host_id; *n gets how many (may be NULL). */
int twl_store_host_key_revoke(struct twl_store *s, const char *host_id,
			      int64_t now, int *n);

/* --- ingest (write lock held) --- */

/* Take the write lock and BEGIN IMMEDIATE. */
int twl_store_write_begin(struct twl_store *s);

/* COMMIT (commit=true) or ROLLBACK, then release the write lock. */
int twl_store_write_end(struct twl_store *s, bool commit);

/*
 * Store one validated report (twl_report_parse() output) for host_id in
 * its own SAVEPOINT. Returns 0 when stored, 1 when batch_id was already
 * stored (nothing changed), or a negative errno with the savepoint rolled
 * back (the surrounding transaction stays usable).
 */
int twl_store_ingest(struct twl_store *s, const char *host_id,
		     const json_t *report, int64_t now);

struct twl_ingest;

/*
 * The same for a report already flattened by twl_ingest_prepare()
 * (ingest.h): what the group-commit writer calls, so that the JSON work
 * stays on the HTTP threads. Same results as twl_store_ingest().
 */
int twl_store_ingest_prepared(struct twl_store *s, const char *host_id,
			      const struct twl_ingest *in, int64_t now);

/* --- annotations (short admin writes; listed by twl_read_annotations()) --- */

/* Most annotations stored (all features); more: -EDQUOT. */
#define TWL_STORE_MAX_ANNOTATIONS 10000

/*
 * twl_store_annotation_add - store an annotation; @workload and @fits may
 * be NULL; @fits otherwise "yes", "no" or "partial" (else -EINVAL). *@id
 * (may be NULL) gets the new id. -EDQUOT when TWL_STORE_MAX_ANNOTATIONS
 * are stored already.
 */
int twl_store_annotation_add(struct twl_store *s, const char *feature,
			     const char *workload, const char *text,
			     const char *fits, const char *author, int64_t now,
			     int64_t *id);

/* twl_store_annotation_delete - delete annotation @id; -ENOENT if absent. */
int twl_store_annotation_delete(struct twl_store *s, int64_t id);

/* --- operations --- */

/*
 * Retention: delete batch ids received before now - batch_days (at least
 * 35 days is enforced by the config), and warnings/usage/unknown rows
 * older than data_days (0 = keep). *deleted may be NULL.
 */
int twl_store_prune(struct twl_store *s, int64_t now, int batch_days,
		    int data_days, int64_t *deleted);

/* Database size in bytes (page_count * page_size). */
int twl_store_db_size(struct twl_store *s, int64_t *bytes);

#endif /* TWL_SERVER_STORE_H */
