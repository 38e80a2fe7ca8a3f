// SPDX-License-Identifier: GPL-2.0
/*
 * migrate-store's copy of one table: chunks of the source's rows in
 * primary key order after the last one copied, each sent with COPY FROM
 * STDIN and committed with its progress row (store_copy), the table's
 * triggers off inside that transaction so the rollups are copied as
 * they are rather than counted twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "store/migrate_store_internal.h"
#include "store/postgresql/store_pg_internal.h"

/* COPY data is sent in pieces of about this size. */
#define SEND_BYTES (256u << 10)

/* One chunk being copied. */
struct chunk {
	const struct twl_mig_table *t;
	sqlite3_stmt *st;
	json_t *cursor; /* the last key copied (NULL: none yet) */
	struct twl_buf line;
	int64_t rows;
};

/* @t's progress row: its cursor (a new reference or NULL) and whether done. */
static int progress(struct twl_mig *m, const struct twl_mig_table *t,
		    json_t **cursor, bool *done)
{
	const char *v[] = { t->name };
	PGresult *r = NULL;
	int ret;

	*cursor = NULL;
	ret = twl_pg_exec(m->dst,
			  "SELECT cursor, done FROM store_copy WHERE tbl = $1",
			  1, v, &r);
	if (ret)
		return twl_mig_fail(m, ret, "reading the copy's progress: %s",
				    PQerrorMessage(m->dst));
	if (PQntuples(r) != 1) {
		PQclear(r);
		return twl_mig_fail(m, -EPROTO, "no progress row for %s",
				    t->name);
	}
	*done = !strcmp(PQgetvalue(r, 0, 1), "t");
	if (!PQgetisnull(r, 0, 0))
		*cursor = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
	ret = PQgetisnull(r, 0, 0) || *cursor ? 0 : -EPROTO;
	PQclear(r);
	return ret ? twl_mig_fail(m, ret, "%s: unreadable cursor", t->name) : 0;
}

/* Bind @c->cursor's key values and the chunk's size to @c->st. */
static int bind_chunk(struct chunk *c, unsigned rows)
{
	int k = 0, rc = SQLITE_OK;

	sqlite3_reset(c->st);
	for (; c->cursor && k < c->t->n_keys && !rc; k++) {
		json_t *v = json_array_get(c->cursor, (size_t)k);

		if (json_is_integer(v))
			rc = sqlite3_bind_int64(c->st, k + 1,
						json_integer_value(v));
		else if (json_is_string(v))
			rc = sqlite3_bind_text(c->st, k + 1,
					       json_string_value(v),
					       (int)json_string_length(v),
					       SQLITE_TRANSIENT);
		else
			return -EPROTO;
	}
	if (!rc)
		rc = sqlite3_bind_int64(c->st, c->t->n_keys + 1, rows);
	return rc ? -EIO : 0;
}

/* The current row's key as a JSON array into @c->cursor. */
static int remember_key(struct chunk *c)
{
	json_t *a = json_array();
	int ret = a ? 0 : -ENOMEM;

	for (int k = 0; k < c->t->n_keys && !ret; k++) {
		int i = c->t->keys[k];
		json_t *v;

		switch (sqlite3_column_type(c->st, i)) {
		case SQLITE_INTEGER:
			v = json_integer(sqlite3_column_int64(c->st, i));
			break;
		case SQLITE_TEXT:
			v = json_stringn(
				(const char *)sqlite3_column_text(c->st, i),
				(size_t)sqlite3_column_bytes(c->st, i));
			break;
		default: /* keys are integers or texts in every table */
			json_decref(a);
			return -EPROTO;
		}
		/* jansson takes UTF-8 only, as PostgreSQL's text does */
		ret = !v ? -EILSEQ : json_array_append_new(a, v) ? -ENOMEM : 0;
	}
	json_decref(c->cursor);
	c->cursor = a;
	return ret;
}

/* The current row as one COPY line appended to @c->line. */
static int add_line(struct chunk *c)
{
	char num[32];
	const void *v;
	size_t n;
	int ret = 0;

	for (int i = 0; i < c->t->n_cols && !ret; i++) {
		enum twl_sum_tag tag = twl_mig_src_value(c->st, i, &v, &n, num);

		ret = twl_copy_field(&c->line, i == 0, tag, v, n);
	}
	return ret ? ret : twl_buf_append(&c->line, "\n", 1);
}

/* Send what @c->line holds to the COPY in progress. */
static int send_lines(struct twl_mig *m, struct chunk *c)
{
	int ok = PQputCopyData(m->dst, c->line.data, (int)c->line.len);

	twl_buf_reset(&c->line);
	return ok == 1 ? 0 : -EIO;
}

/* COPY INTO @t (@cols) FROM STDIN started on the target. */
static int copy_start(struct twl_mig *m, const struct twl_mig_table *t,
		      const char *cols)
{
	char sql[4200];
	PGresult *r;
	int ret = 0;

	snprintf(sql, sizeof(sql), "COPY %s (%s", t->name, cols);
	r = PQexec(m->dst, sql);
	if (PQresultStatus(r) != PGRES_COPY_IN)
		ret = twl_mig_fail(m, twl_pg_errno(m->dst, r),
				   "copying into %s in %s: %s", t->name,
				   m->where, PQerrorMessage(m->dst));
	PQclear(r);
	return ret;
}

/* The COPY ended (aborted when @ret): @ret, or the COPY's own failure. */
static int copy_end(struct twl_mig *m, const struct twl_mig_table *t, int ret)
{
	PGresult *r;
	int err;

	if (PQputCopyEnd(m->dst, ret ? "the source could not be read" : NULL) !=
		    1 &&
	    !ret)
		ret = -EIO;
	while ((r = PQgetResult(m->dst))) {
		err = PQresultStatus(r) == PGRES_COMMAND_OK ?
			      0 :
			      twl_pg_errno(m->dst, r);
		if (err && !ret)
			ret = twl_mig_fail(m, err, "copying into %s in %s: %s",
					   t->name, m->where,
					   PQerrorMessage(m->dst));
		PQclear(r);
	}
	return ret;
}

/* The source rows of one chunk sent as COPY data. */
static int copy_rows(struct twl_mig *m, struct chunk *c)
{
	char cols[4096];
	int ret, rc = SQLITE_DONE;

	ret = twl_mig_columns(c->t, "", ") FROM STDIN", cols, sizeof(cols));
	if (!ret)
		ret = copy_start(m, c->t, cols);
	if (ret)
		return ret;
	while (!ret && (rc = sqlite3_step(c->st)) == SQLITE_ROW) {
		ret = add_line(c);
		if (!ret)
			ret = remember_key(c);
		if (!ret && c->line.len >= SEND_BYTES)
			ret = send_lines(m, c);
		c->rows++;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = twl_mig_fail(m, -EIO, "reading %s from the source: %s",
				   c->t->name, sqlite3_errmsg(m->src));
	else if (ret == -EILSEQ)
		twl_mig_fail(m, ret,
			     "a text of %s holds a NUL byte or is not UTF-8: "
			     "PostgreSQL's text cannot store it",
			     c->t->name);
	if (!ret && c->line.len)
		ret = send_lines(m, c);
	return copy_end(m, c->t, ret);
}

/* The chunk's progress, in its transaction; the identity moved on at the end. */
static int save_progress(struct twl_mig *m, struct chunk *c, bool last)
{
	char *cur = c->cursor ? json_dumps(c->cursor, JSON_COMPACT) : NULL;
	char rows[21], sql[512];
	const char *v[] = { c->t->name, cur, twl_pg_i64(rows, c->rows),
			    last ? "t" : "f" };
	const struct twl_mig_table *t = c->t;
	int ret;

	if (c->cursor && !cur)
		return -ENOMEM;
	ret = twl_mig_pg(m,
			 "UPDATE store_copy SET cursor = $2, rows = rows + $3,"
			 " done = $4 WHERE tbl = $1",
			 4, v);
	free(cur);
	if (ret || !last || t->identity < 0)
		return ret;
	/* the next row the server adds gets an id after the copied ones */
	snprintf(sql, sizeof(sql),
		 "SELECT setval(pg_get_serial_sequence('%s', '%s'),"
		 " coalesce(max(%s), 0) + 1, false) FROM %s",
		 t->name, t->cols[t->identity], t->cols[t->identity], t->name);
	return twl_mig_pg(m, sql, 0, NULL);
}

/* ALTER TABLE @t @what TRIGGER USER (inside the chunk's transaction). */
static int triggers(struct twl_mig *m, const struct twl_mig_table *t,
		    const char *what)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "ALTER TABLE %s %s TRIGGER USER", t->name,
		 what);
	return twl_mig_pg(m, sql, 0, NULL);
}

/* One chunk of @c->t in one target transaction; *@last: the table's end. */
static int one_chunk(struct twl_mig *m, struct chunk *c, unsigned size,
		     bool *last)
{
	char sql[160];
	int ret;

	c->rows = 0;
	ret = bind_chunk(c, size);
	if (ret)
		return twl_mig_fail(m, ret, "%s: cannot resume after %s",
				    c->t->name, "its cursor");
	ret = twl_mig_pg(m, "BEGIN", 0, NULL);
	if (!ret)
		ret = triggers(m, c->t, "DISABLE");
	snprintf(sql, sizeof(sql), "DELETE FROM %s", c->t->name);
	if (!ret && !c->cursor) /* a migration's seed rows, or a recopy */
		ret = twl_mig_pg(m, sql, 0, NULL);
	if (!ret)
		ret = copy_rows(m, c);
	*last = c->rows < size;
	if (!ret)
		ret = save_progress(m, c, *last);
	if (!ret)
		ret = triggers(m, c->t, "ENABLE");
	if (!ret)
		ret = twl_mig_pg(m, "COMMIT", 0, NULL);
	else
		PQclear(PQexec(m->dst, "ROLLBACK"));
	return ret;
}

/* @c->st: the next chunk's SELECT (after the cursor when there is one). */
static int prepare(struct twl_mig *m, struct chunk *c)
{
	char sql[4096];
	int ret;

	sqlite3_finalize(c->st);
	c->st = NULL;
	ret = twl_mig_select(c->t, true, c->cursor != NULL, sql, sizeof(sql));
	if (!ret && sqlite3_prepare_v2(m->src, sql, -1, &c->st, NULL))
		ret = twl_mig_fail(m, -EIO, "reading %s from the source: %s",
				   c->t->name, sqlite3_errmsg(m->src));
	return ret;
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_copy_table(struct twl_mig *m, const struct twl_mig_table *t)
{
	unsigned size = m->o->chunk_rows ? m->o->chunk_rows :
					   TWL_MIGRATE_CHUNK_ROWS;
	struct chunk c = { .t = t };
	double t0 = twl_mig_now();
	bool done = false, last = false;
	int64_t rows = 0;
	int ret;

	twl_buf_init(&c.line, TWL_SUM_ROW_MAX);
	ret = progress(m, t, &c.cursor, &done);
	if (!ret && done) {
		fprintf(m->out, "%s: copied by an earlier run\n", t->name);
		goto out;
	}
	while (!ret && !last) {
		ret = prepare(m, &c);
		if (!ret)
			ret = one_chunk(m, &c, size, &last);
		rows += ret ? 0 : c.rows;
		if (!ret && ++m->chunks == m->o->stop_after_chunks)
			ret = twl_mig_fail(m, -EINTR,
					   "stopped after %lu chunks (testing)",
					   m->chunks);
	}
	if (ret && !m->o->err[0])
		twl_mig_fail(m, ret, "copying %s: %s", t->name, strerror(-ret));
	fprintf(m->out, "%s: %lld rows copied in %.1f s%s\n", t->name,
		(long long)rows, twl_mig_now() - t0, last ? "" : ", stopped");
out:
	sqlite3_finalize(c.st);
	json_decref(c.cursor);
	twl_buf_fini(&c.line);
	return ret;
}
