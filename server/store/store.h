/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server storage interface: what handlers, the group-commit
 * writer and the CLI ask of the store. A backend implements it in a
 * folder of its own under store/ (store/sqlite/), together with the read
 * queries of store_read.h; nothing here depends on its engine. Functions
 * return 0 or a negative errno unless said otherwise and log nothing
 * above debug, but for twl_store_open() (the migrations it applies, what
 * failed) and a backend's own threads (a failure they work around, once);
 * callers log once with context.
 *
 * Threading: any thread may call any function, with one exception: the
 * ingest functions between twl_store_write_begin() and
 * twl_store_write_end() belong to the thread that called
 * twl_store_write_begin(), which holds the store's write lock until then
 * (the group-commit writer). Every other write waits for that lock, so
 * that thread must not call them in between.
 *
 * Backend statistics and tuning (twl_store_set_wal_max(),
 * twl_store_wal_catchups(), twl_store_db_size()) may be missing in a
 * backend: then they return -ENOTSUP, and callers leave the setting or
 * the metric out.
 */
#ifndef TWL_SERVER_STORE_H
#define TWL_SERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

/*
 * Open the store at @path, apply pending schema migrations, load the
 * catalog seed and, when the catalog is new to the database,
 * twl_store_catalog_rematch(). @path is a postgresql:// (or postgres://)
 * connection URI for PostgreSQL (store/postgresql/), anything else the
 * SQLite database file
 * (created if missing). Returns 0 and *out, or a negative errno (-EPROTO
 * for a store whose schema is newer than this binary; a failed migration
 * changes nothing).
 */
int twl_store_open(const char *path, struct twl_store **out);

/*
 * twl_store_is_postgresql - whether @db (the db setting) names a
 * PostgreSQL server rather than an SQLite file. Functions about an
 * SQLite write-ahead log (twl_store_set_wal_max(), twl_store_wal_catchups())
 * answer -ENOTSUP on PostgreSQL; every other function answers on both.
 */
bool twl_store_is_postgresql(const char *db);

/*
 * twl_store_set_wal_max - tuning of a backend with a write-ahead log it
 * copies back itself: let the log grow to about @bytes under sustained
 * ingest before the writer copies the rest itself (SQLite:
 * store/sqlite/checkpoint.h; default 256 MiB, at least 8000 pages).
 * Returns the limit in the backend's units (SQLite: pages, > 0), or
 * -ENOTSUP when the backend has no such limit (SQLite without its
 * checkpoint thread: its automatic checkpoints apply).
 */
int twl_store_set_wal_max(struct twl_store *s, uint64_t bytes);

/*
 * twl_store_wal_catchups - backend statistic (/metrics): how often the
 * writer copied the write-ahead log back itself at the limit of
 * twl_store_set_wal_max(), and the seconds that took in all.
 * -ENOTSUP when the backend keeps no such count.
 */
int twl_store_wal_catchups(struct twl_store *s, uint64_t *n, double *seconds);

/*
 * twl_store_ping - whether the store's database answers, cheaply (/healthz
 * asks at every call): SQLite, its file is open and still there;
 * PostgreSQL, one round trip on the store's connection, which is
 * re-established once when it was lost. *@backend: "sqlite" or
 * "postgresql". 0, or a negative errno with what failed in @problem
 * (@cap bytes; never a password).
 */
int twl_store_ping(struct twl_store *s, const char **backend, char *problem,
		   size_t cap);

/*
 * twl_store_check - a quick integrity check of the whole store (SQLite:
 * PRAGMA quick_check, which reads every page once: seconds per GB). 0
 * when sound; -EUCLEAN when not, with the first problem found in
 * @problem (@cap bytes); another negative errno when the check itself
 * could not run.
 */
int twl_store_check(struct twl_store *s, char *problem, size_t cap);

/* Close the store. NULL-safe. */
void twl_store_close(struct twl_store *s);

/*
 * The store's schema version: the number of the newest migration applied
 * (schema/migrations/NNN_*.sql), or a negative errno.
 */
int twl_store_schema_version(struct twl_store *s);

/* --- tokens (hash = SHA-256 hex of the secret) --- */

/*
 * Insert a token; @role ("admin", "viewer" or "agent") is stored as given
 * (auth.h checks it). *@id (may be NULL) gets the new token's id.
 */
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

/*
 * Bind a new key hash to host_id, minted by enrolment token @token_id,
 * unless that token has @max_live unrevoked keys already: then -EDQUOT
 * and nothing is stored.
 */
int twl_store_host_key_add(struct twl_store *s, const char *host_id,
			   const char *hash, int64_t token_id,
			   unsigned max_live, int64_t now);

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

/*
 * Take the write lock and begin a write transaction. On failure nothing
 * is held.
 */
int twl_store_write_begin(struct twl_store *s);

/*
 * Commit (@commit true) or roll back the transaction, then release the
 * write lock. 0 after a commit means everything stored in it survives a
 * crash of the server process (the writer acknowledges only then); a
 * failed commit rolls back.
 */
int twl_store_write_end(struct twl_store *s, bool commit);

/*
 * As twl_store_write_begin(), but the COMMIT of twl_store_write_end()
 * returns before it is durable against a power loss (it is against a
 * crash of the process, and visible to readers): the caller acknowledges
 * nothing it stored until twl_store_sync() has returned 0 after that
 * COMMIT. So the writer stores its next group while the last one syncs.
 * A backend whose commits are durable anyway begins as write_begin does.
 */
int twl_store_write_begin_deferred(struct twl_store *s);

/*
 * Make every commit that returned before this call durable against a
 * power loss. Safe on any thread, without the write lock and while
 * another thread writes. 0 or a negative errno: on failure nothing about
 * those commits is known (the caller must not acknowledge them).
 */
int twl_store_sync(struct twl_store *s);

/* twl_store_ingest*() results besides 0 (stored) and a negative errno. */
enum {
	/* host_id stored batch_id before, with the same body (or before
	 * bodies were hashed): nothing changed */
	TWL_STORE_DUPLICATE = 1,
	/* host_id stored batch_id before with another body: refused */
	TWL_STORE_CONFLICT = 2,
};

/*
 * Store one validated report (twl_report_parse() output) for host_id in
 * a nested transaction of its own. Batch ids are per host: returns 0 when
 * stored, TWL_STORE_DUPLICATE or TWL_STORE_CONFLICT (nothing changed,
 * struct twl_ingest.body_sha256 tells them apart), or a negative errno
 * with this report rolled back alone (the surrounding transaction stays
 * usable).
 */
int twl_store_ingest(struct twl_store *s, const char *host_id,
		     const json_t *report, int64_t now);

struct twl_ingest;

/*
 * The same for a report already flattened by twl_ingest_prepare()
 * (ingest.h): what the group-commit writer calls, so that the JSON work
 * stays on the HTTP threads. Same results as twl_store_ingest(). Times
 * are stored as given: the HTTP path bounds them first
 * (twl_ingest_bound_times()); in->times_clamped is added to the host's
 * row.
 */
int twl_store_ingest_prepared(struct twl_store *s, const char *host_id,
			      const struct twl_ingest *in, int64_t now);

/*
 * twl_store_ingest_deferred - twl_store_ingest_prepared() whose result
 * is put in *@result by twl_store_write_end() at the latest (a store may
 * send a report's last statements with the next report's first: on
 * PostgreSQL one round trip less per report). Each report still fails
 * alone. @host_id, @in and @result must stay valid until then.
 */
void twl_store_ingest_deferred(struct twl_store *s, const char *host_id,
			       const struct twl_ingest *in, int64_t now,
			       int *result);

/*
 * twl_store_catalog_rematch - after the server's catalog changed (a newer
 * binary; a runtime catalog reload calls it too): unknown texts whose
 * feature id the catalog now holds (warnings of agents with a newer
 * catalog, schema/wire-format.md "Catalog skew"), or whose text one of
 * its messages now matches, are matched to that feature and counted in
 * its rollups as ingest would have counted them, in one write
 * transaction of its own. *@n (may be NULL) gets how many texts were
 * matched. twl_store_open() calls it when the catalog differs from the
 * one its database last saw. 0 or a negative errno (nothing changed).
 */
int twl_store_catalog_rematch(struct twl_store *s, int64_t *n);

/*
 * twl_store_catalog_reload - after twl_catalog_install() made another
 * catalog current in a running server: seed the catalog tables from it
 * (one transaction of their own, under the writer's lock), then
 * twl_store_catalog_rematch() and note the catalog as seen in
 * server_meta, as twl_store_open() would on the next start (so it does
 * not match again). *@n (may be NULL) gets how many texts were matched.
 * 0 or a negative errno (-EIO: the seed failed and was rolled back).
 */
int twl_store_catalog_reload(struct twl_store *s, int64_t *n);

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

/*
 * A structured use case: the free text plus optional fields (NULL: not
 * said). @intent "intentional" or "accidental"; @v2_tried "no", "works"
 * or "falls_short"; @shortfall only with "falls_short"; @set_by (the
 * component that sets the knob, at most 128 bytes) and @team (at most 64)
 * free strings. The API checks them first; the store refuses what breaks
 * these rules with -EINVAL.
 */
struct twl_annotation {
	const char *feature, *workload, *text, *fits;
	const char *intent, *set_by, *v2_tried, *shortfall, *team;
	const char *author;
	int64_t now;
};

/*
 * twl_store_annotation_put - store annotation @a as
 * twl_store_annotation_add() does, with its structured fields.
 */
int twl_store_annotation_put(struct twl_store *s,
			     const struct twl_annotation *a, int64_t *id);

/* twl_store_annotation_delete - delete annotation @id; -ENOENT if absent. */
int twl_store_annotation_delete(struct twl_store *s, int64_t id);

/* --- migration status (short admin writes; read in store_read.h) --- */

/* Most statuses stored (features x workloads); more: -EDQUOT. */
#define TWL_STORE_MAX_MIGRATION_STATUS 10000

/*
 * Where one feature's use by one workload stands. @workload is a process
 * name, or NULL/"" for the feature as a whole; @status "migrating",
 * "migrated", "accepted_risk" or "blocked"; @reason required for
 * "blocked" and refused otherwise (at most 1000 bytes); @owner at most 64
 * bytes; @date (Unix seconds) when the status took effect.
 */
struct twl_migration_status {
	const char *feature, *workload, *status, *reason, *owner, *author;
	int64_t date, now;
};

/*
 * twl_store_migration_status_set - set (insert or replace) the status of
 * @m's feature and workload. -EINVAL when @m breaks the rules above,
 * -EDQUOT for a new pair once TWL_STORE_MAX_MIGRATION_STATUS are stored.
 */
int twl_store_migration_status_set(struct twl_store *s,
				   const struct twl_migration_status *m);

/*
 * twl_store_migration_status_delete - forget the status of @feature and
 * @workload (NULL/"": the feature as a whole); -ENOENT if there is none.
 */
int twl_store_migration_status_delete(struct twl_store *s, const char *feature,
				      const char *workload);

/*
 * --- kept answers (server/api/answer_cache.c): slow answers outlive a
 * restart and are shared by the servers of one database ---
 */

/* Most kept answers stored: past it the least recently computed go. */
#define TWL_STORE_MAX_KEPT 64
/* Largest answer stored (bytes of JSON); a larger one: -EFBIG. */
#define TWL_STORE_KEPT_BODY_MAX (16u << 20)

/*
 * A kept answer. @key: 64 hex digits naming what it answers; @computed:
 * when its computation started; @touched: the last change it cannot see
 * (twl_store_kept_touch(); 0: none); both unix ms. @cost: how long it
 * took, ms. @body: its JSON text, @len bytes (twl_store_kept_get():
 * malloc()ed with a NUL after it, the caller frees it).
 */
struct twl_kept {
	char key[65];
	int64_t computed, touched, cost;
	char *body;
	size_t len;
};

/*
 * twl_store_kept_get - the answer stored under @k->key into @k: 0, or
 * -ENOENT when none is, or a negative errno (@k->body NULL then).
 */
int twl_store_kept_get(struct twl_store *s, struct twl_kept *k);

/*
 * twl_store_kept_put - store @k (its @touched is ignored: a stored one
 * stays) unless one computed later is stored already; ends any claim on
 * it. At most TWL_STORE_MAX_KEPT stay. 0, -EFBIG past
 * TWL_STORE_KEPT_BODY_MAX, -EINVAL for a bad key, or a negative errno.
 */
int twl_store_kept_put(struct twl_store *s, const struct twl_kept *k);

/*
 * twl_store_kept_claim - make computing the answer stored under @key
 * again the caller's until @until, unless another's claim holds past
 * @now: 1 when the caller has it, 0 when another has it or none is
 * stored, or a negative errno.
 */
int twl_store_kept_claim(struct twl_store *s, const char *key, int64_t now,
			 int64_t until);

/*
 * twl_store_kept_touch - after a change the stored answers cannot see
 * (an annotation, a migration status): mark every one as touched at @now
 * (unix ms), so a server that reads it computes it again first. 0 or a
 * negative errno.
 */
int twl_store_kept_touch(struct twl_store *s, int64_t now);

/*
 * twl_store_kept_touched - the latest twl_store_kept_touch() of any
 * server on the stored answers into *@at (0 when none is marked), so a
 * server sees another's admin change. 0 or a negative errno.
 */
int twl_store_kept_touched(struct twl_store *s, int64_t *at);

/* --- operations --- */

/*
 * twl_store_stop_reads - for a server that stops after its requests are
 * done: the long reads under way (feature detail, export, readiness: the
 * kept answers' refresh, the alert detector's scan) end as soon as the
 * database notices, and every read begun later fails, with -ECANCELED;
 * writes go on. Not undone for @s.
 */
void twl_store_stop_reads(struct twl_store *s);

/*
 * Retention, in a write transaction of its own: delete batch ids and the
 * unknown texts' per-batch counts received before now - batch_days (at
 * least TWL_WIRE_RESEND_DAYS, enforced by the config: no agent resends a
 * batch older than that), and warnings, usage counters, unknown messages,
 * census values of hosts silent that long and per-host feature rollups
 * older than data_days (0 = keep); the per-host rollups of what went are
 * recounted from the rows kept. *deleted (may be NULL) gets how many rows
 * went.
 */
int twl_store_prune(struct twl_store *s, int64_t now, int batch_days,
		    int data_days, int64_t *deleted);

/*
 * Backend statistic (/metrics): the bytes the store's data takes (SQLite:
 * its pages, as the database file holds them once its write-ahead log is
 * copied back). -ENOTSUP when the backend cannot tell.
 */
int twl_store_db_size(struct twl_store *s, int64_t *bytes);

#endif /* TWL_SERVER_STORE_H */
