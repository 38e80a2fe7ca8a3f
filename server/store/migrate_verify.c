// SPDX-License-Identifier: GPL-2.0
/*
 * migrate-store's verification: every table's row count and checksum
 * (migrate_sum.h) computed on the source in one read transaction and on
 * the target in one REPEATABLE READ transaction, so each side is one
 * snapshot, and compared table by table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store/migrate_store_internal.h"
#include "store/postgresql/store_pg_internal.h"

#define PG_INT8 20
#define PG_INT2 21
#define PG_INT4 23
#define PG_BYTEA 17

/* The checksum of @t on the source into @s. */
static int source_sum(struct twl_mig *m, const struct twl_mig_table *t,
		      struct twl_sum *s, struct twl_buf *row)
{
	sqlite3_stmt *st = NULL;
	char sql[4096], num[32];
	const void *v;
	size_t n;
	int ret, rc = SQLITE_ERROR;

	ret = twl_mig_select(t, false, false, sql, sizeof(sql));
	if (!ret && sqlite3_prepare_v2(m->src, sql, -1, &st, NULL))
		ret = -EIO;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < t->n_cols && !ret; i++) {
			enum twl_sum_tag tag =
				twl_mig_src_value(st, i, &v, &n, num);

			ret = twl_sum_field(row, tag, v, n);
		}
		twl_sum_row(s, row);
	}
	sqlite3_finalize(st);
	if (!ret && rc != SQLITE_DONE)
		ret = -EIO;
	if (ret)
		return twl_mig_fail(m, ret, "checksumming %s on the source: %s",
				    t->name, sqlite3_errmsg(m->src));
	return 0;
}

/* Row @i of @r (one row of @t) added to @s. */
static int target_row(const PGresult *r, int n_cols, struct twl_sum *s,
		      struct twl_buf *row)
{
	int ret = 0;

	for (int i = 0; i < n_cols && !ret; i++) {
		const char *v = PQgetvalue(r, 0, i);
		size_t n = (size_t)PQgetlength(r, 0, i);
		Oid type = PQftype(r, i);
		unsigned char *b;

		if (PQgetisnull(r, 0, i)) {
			ret = twl_sum_field(row, TWL_SUM_NULL, "", 0);
		} else if (type == PG_BYTEA) {
			b = PQunescapeBytea((const unsigned char *)v, &n);
			ret = b ? twl_sum_field(row, TWL_SUM_BLOB, b, n) :
				  -ENOMEM;
			PQfreemem(b);
		} else {
			ret = twl_sum_field(row,
					    type == PG_INT8 ||
							    type == PG_INT4 ||
							    type == PG_INT2 ?
						    TWL_SUM_INT :
						    TWL_SUM_TEXT,
					    v, n);
		}
	}
	if (!ret)
		twl_sum_row(s, row);
	return ret;
}

/* The checksum of @t on the target into @s, row by row (single-row mode). */
static int target_sum(struct twl_mig *m, const struct twl_mig_table *t,
		      struct twl_sum *s, struct twl_buf *row)
{
	char sql[4096];
	PGresult *r;
	int ret, err = 0;

	ret = twl_mig_select(t, false, false, sql, sizeof(sql));
	if (!ret && (!PQsendQuery(m->dst, sql) || !PQsetSingleRowMode(m->dst)))
		ret = -EIO;
	while (!ret && (r = PQgetResult(m->dst))) {
		if (PQresultStatus(r) == PGRES_SINGLE_TUPLE)
			err = err ? err : target_row(r, t->n_cols, s, row);
		else if (PQresultStatus(r) != PGRES_TUPLES_OK)
			err = err ? err : twl_pg_errno(m->dst, r);
		PQclear(r);
	}
	ret = ret ? ret : err;
	if (ret)
		return twl_mig_fail(m, ret, "checksumming %s in %s: %s",
				    t->name, m->where, PQerrorMessage(m->dst));
	return 0;
}

/* Both sides of @t compared: 0 equal, 1 not; its line on m->out. */
static int compare(struct twl_mig *m, const struct twl_mig_table *t,
		   const struct twl_sum *a, const struct twl_sum *b)
{
	if (a->rows == b->rows && a->sum == b->sum) {
		fprintf(m->out,
			"%s: %" PRId64 " rows, checksum %016" PRIx64
			": equal\n",
			t->name, a->rows, a->sum);
		return 0;
	}
	fprintf(m->out,
		"%s: MISMATCH: the source has %" PRId64 " rows (checksum "
		"%016" PRIx64 "), the target %" PRId64 " (checksum %016" PRIx64
		")\n",
		t->name, a->rows, a->sum, b->rows, b->sum);
	return 1;
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_verify(struct twl_mig *m, bool *bad)
{
	struct twl_buf row;
	int ret, n_bad = 0;

	twl_buf_init(&row, TWL_SUM_ROW_MAX);
	ret = sqlite3_exec(m->src, "BEGIN", NULL, NULL, NULL) ? -EIO : 0;
	if (ret)
		return twl_mig_fail(m, ret, "reading the source: %s",
				    sqlite3_errmsg(m->src));
	ret = twl_mig_pg(m, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
			 0, NULL);
	for (int i = 0; i < m->n_tables && !ret; i++) {
		struct twl_sum a = { 0 }, b = { 0 };

		ret = source_sum(m, &m->t[i], &a, &row);
		if (!ret)
			ret = target_sum(m, &m->t[i], &b, &row);
		bad[i] = !ret && compare(m, &m->t[i], &a, &b);
		n_bad += bad[i];
	}
	sqlite3_exec(m->src, "COMMIT", NULL, NULL, NULL);
	PQclear(PQexec(m->dst, "COMMIT"));
	twl_buf_fini(&row);
	if (!ret && n_bad)
		ret = twl_mig_fail(m, -EBADMSG,
				   "%d of %d tables differ between the source "
				   "and the target (see the MISMATCH lines)",
				   n_bad, m->n_tables);
	return ret;
}
