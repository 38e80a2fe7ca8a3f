/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of migrate-store share (store/migrate_*.c): the two
 * connections and the tables as both stores have them.
 */
#ifndef TWL_SERVER_MIGRATE_STORE_INTERNAL_H
#define TWL_SERVER_MIGRATE_STORE_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "store/migrate_store.h"
#include "store/migrate_sum.h"

#define TWL_MIG_MAX_TABLES 64
#define TWL_MIG_MAX_COLS 48
#define TWL_MIG_MAX_KEYS 8
#define TWL_MIG_NAME 64

/* One table: its columns in the target's order, its primary key. */
struct twl_mig_table {
	char name[TWL_MIG_NAME];
	char cols[TWL_MIG_MAX_COLS][TWL_MIG_NAME];
	int n_cols;
	int keys[TWL_MIG_MAX_KEYS]; /* indexes into cols, the key's order */
	int n_keys;
	int identity; /* the column PostgreSQL numbers (-1: none) */
};

struct twl_mig {
	struct twl_migrate_opts *o;
	sqlite3 *src; /* read-only */
	PGconn *dst;
	char source[4096]; /* the source's real path: store_copy.source */
	char where[512]; /* the target's URI, no password */
	struct twl_mig_table t[TWL_MIG_MAX_TABLES];
	int n_tables;
	unsigned long chunks; /* committed by this run */
	FILE *out; /* @o->out or stderr */
};

/* twl_mig_fail - format @o->err (the caller's one line); returns @err. */
int twl_mig_fail(struct twl_mig *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* twl_mig_pg - run @sql with @n text parameters @v on the target, no rows. */
int twl_mig_pg(struct twl_mig *m, const char *sql, int n, const char *const *v);

/*
 * twl_mig_tables - the source's tables and columns into @m->t, each
 * checked against the target's: the same columns, a primary key. 0, or
 * -EPROTO with @m->o->err naming the difference, or another errno.
 */
int twl_mig_tables(struct twl_mig *m);

/*
 * twl_mig_columns - @head, @t's columns ("a, b, c"), @tail into @buf
 * (@cap bytes). 0 or -ENAMETOOLONG.
 */
int twl_mig_columns(const struct twl_mig_table *t, const char *head,
		    const char *tail, char *buf, size_t cap);

/*
 * twl_mig_src_value - column @i of @st's current row as its checksum tag
 * and bytes (@num holds an integer's decimal form); valid until the next
 * step.
 */
enum twl_sum_tag twl_mig_src_value(sqlite3_stmt *st, int i, const void **v,
				   size_t *n, char num[32]);

/*
 * twl_mig_select - "SELECT cols FROM t" of @t for SQLite (@sqlite true:
 * keyset after ?1.. with LIMIT ?(n_keys+1)) or PostgreSQL (all rows), in
 * @buf (@cap bytes). 0 or -ENAMETOOLONG.
 */
int twl_mig_select(const struct twl_mig_table *t, bool sqlite, bool after,
		   char *buf, size_t cap);

/*
 * twl_mig_copy_table - copy @t's rows the target lacks, chunk by chunk,
 * each chunk and its progress row in one transaction. 0, -EINTR (the
 * test's stop), or a negative errno with @m->o->err set.
 */
int twl_mig_copy_table(struct twl_mig *m, const struct twl_mig_table *t);

/*
 * twl_mig_verify - every table's rows and checksum on both stores, one
 * line each; @bad[i] set for the tables that differ. 0 when all are
 * equal, -EBADMSG when some differ, another negative errno on failure.
 */
int twl_mig_verify(struct twl_mig *m, bool *bad);

/* twl_mig_now - a monotonic time in seconds, for the progress lines. */
double twl_mig_now(void);

#endif /* TWL_SERVER_MIGRATE_STORE_INTERNAL_H */
