// SPDX-License-Identifier: GPL-2.0
/*
 * migrate-store's tables: the source's (sqlite_master, table_info) each
 * matched with the target's of the same name (information_schema), and
 * the statements that read them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/migrate_store_internal.h"
#include "store/postgresql/store_pg_internal.h"

/* A name both dialects take unquoted: lowercase letters, digits, '_'. */
static bool plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= TWL_MIG_NAME)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/*
 * The tables the catalog seed fills from the catalog at every start of an
 * SQLite server (common/src/catgen_sql.c: emptied and refilled, never
 * written by reports): skipped while the target has no such table.
 */
static bool catalog_derived(const char *name)
{
	static const char *const derived[] = {
		"catalog_file",		 "catalog_message",   "catalog_route",
		"catalog_route_address", "catalog_reference",
	};

	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		if (!strcmp(name, derived[i]))
			return true;
	return false;
}

/*
 * Columns the target has and SQLite has not, left out of the copy and
 * the checksum: PostgreSQL's usage.count_prev, the ingest's scratch (its
 * migration 008), NULL until a row next grows.
 */
static bool target_only(const char *table, const char *column)
{
	return !strcmp(table, "usage") && !strcmp(column, "count_prev");
}

/*
 * The SQLite store keeps two tables of the target behind views: its
 * usage rows in usage_key and usage_count, joined by the view usage (its
 * migration 021), and its batch ids in batch_ids, whose view batches
 * gives each row's host id (023). Each view is copied as the table it
 * stands for, keyed as that table was; the tables behind them are not
 * listed, nor host_refs, the numbers they name hosts by (022).
 */
static const char source_tables[] =
	"SELECT name FROM sqlite_master WHERE ((type = 'table'"
	" AND name NOT IN ('usage_key', 'usage_count', 'batch_ids',"
	" 'host_refs')) OR (type = 'view' AND name IN ('usage', 'batches')))"
	" AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";

/* A view has no key in table_info: @column's place in @table's key, or 0. */
static int view_key(const char *table, const char *column)
{
	if (!strcmp(table, "usage"))
		return !strcmp(column, "id");
	if (!strcmp(table, "batches"))
		return !strcmp(column, "host_id")  ? 1 :
		       !strcmp(column, "batch_id") ? 2 :
						     0;
	return 0;
}

/* The target's columns of @t in their order into @t->cols; 1: skip @t. */
static int target_columns(struct twl_mig *m, struct twl_mig_table *t)
{
	static const char sql[] =
		"SELECT column_name, is_identity FROM information_schema.columns"
		" WHERE table_schema = current_schema() AND table_name = $1"
		" ORDER BY ordinal_position";
	const char *v[] = { t->name };
	PGresult *r = NULL;
	int ret, i, n;

	ret = twl_pg_exec(m->dst, sql, 1, v, &r);
	if (ret)
		return twl_mig_fail(m, ret,
				    "reading the columns of %s in %s: %s",
				    t->name, m->where, PQerrorMessage(m->dst));
	t->identity = -1;
	t->n_cols = 0;
	for (i = 0; i < PQntuples(r); i++)
		t->n_cols += !target_only(t->name, PQgetvalue(r, i, 0));
	if (!strcmp(t->name, "kept_answers")) {
		PQclear(r);
		fprintf(m->out,
			"%s: not copied: answers kept by the source's "
			"server, which the target's compute again\n",
			t->name);
		return 1;
	}
	if (!t->n_cols && catalog_derived(t->name)) {
		PQclear(r);
		fprintf(m->out,
			"%s: not copied: the catalog's own data, "
			"which the server makes again from its catalog\n",
			t->name);
		return 1;
	}
	if (!t->n_cols || t->n_cols > TWL_MIG_MAX_COLS)
		ret = twl_mig_fail(m, -EPROTO,
				   "table %s of the source has no place in the "
				   "target (%d columns there)",
				   t->name, t->n_cols);
	for (i = 0, n = 0; !ret && i < PQntuples(r); i++) {
		if (target_only(t->name, PQgetvalue(r, i, 0)))
			continue;
		snprintf(t->cols[n], TWL_MIG_NAME, "%s", PQgetvalue(r, i, 0));
		if (!strcmp(PQgetvalue(r, i, 1), "YES"))
			t->identity = n;
		n++;
	}
	PQclear(r);
	return ret;
}

/* The index of column @name in @t->cols, or -1. */
static int column_index(const struct twl_mig_table *t, const char *name)
{
	for (int i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i], name))
			return i;
	return -1;
}

/* The source's columns of @t: the same set as the target's; the key. */
static int source_columns(struct twl_mig *m, struct twl_mig_table *t)
{
	static const char sql[] =
		"SELECT name, pk FROM pragma_table_info(?1) ORDER BY cid";
	sqlite3_stmt *st = NULL;
	int n = 0, ret = 0, rc = SQLITE_ERROR, i, pk;

	if (sqlite3_prepare_v2(m->src, sql, -1, &st, NULL) ||
	    sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC))
		ret = -EIO;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		n++;
		i = column_index(t, name ? name : "");
		pk = sqlite3_column_int(st, 1);
		if (!pk)
			pk = view_key(t->name, name ? name : "");
		if (i < 0 || pk > TWL_MIG_MAX_KEYS) {
			ret = twl_mig_fail(m, -EPROTO,
					   "column %s.%s of the source has no "
					   "place in the target",
					   t->name, name ? name : "?");
			break;
		}
		if (pk > 0) {
			t->keys[pk - 1] = i;
			t->n_keys = pk > t->n_keys ? pk : t->n_keys;
		}
	}
	sqlite3_finalize(st);
	if (ret == -EPROTO)
		return ret;
	if (ret || rc != SQLITE_DONE)
		return twl_mig_fail(m, -EIO, "reading the columns of %s: %s",
				    t->name, sqlite3_errmsg(m->src));
	if (n != t->n_cols || !t->n_keys)
		return twl_mig_fail(m, -EPROTO,
				    "table %s: %d columns in the source, %d in "
				    "the target, %d key columns",
				    t->name, n, t->n_cols, t->n_keys);
	return 0;
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_tables(struct twl_mig *m)
{
	sqlite3_stmt *st = NULL;
	int ret = 0, rc = SQLITE_ERROR;

	m->n_tables = 0;
	if (sqlite3_prepare_v2(m->src, source_tables, -1, &st, NULL))
		goto out;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct twl_mig_table *t = &m->t[m->n_tables];
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (m->n_tables == TWL_MIG_MAX_TABLES || !name ||
		    !plain_name(name)) {
			ret = twl_mig_fail(m, -EPROTO,
					   "the source has a table this build "
					   "cannot copy: %s",
					   name ? name : "(null)");
			break;
		}
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "%s", name);
		ret = target_columns(m, t);
		if (ret == 1) { /* skipped */
			ret = 0;
			continue;
		}
		if (!ret)
			ret = source_columns(m, t);
		m->n_tables++;
	}
out:
	sqlite3_finalize(st);
	if (!ret && rc != SQLITE_DONE)
		ret = twl_mig_fail(m, -EIO, "listing the source's tables: %s",
				   sqlite3_errmsg(m->src));
	return ret;
}

/* Append @s to @buf at *@len (@cap bytes): 0 or -ENAMETOOLONG. */
static int put(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (n >= cap - *len)
		return -ENAMETOOLONG;
	memcpy(buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* @t's key columns as "a, b" into @buf at *@len. */
static int put_keys(const struct twl_mig_table *t, char *buf, size_t cap,
		    size_t *len)
{
	int ret = 0;

	for (int k = 0; k < t->n_keys && !ret; k++) {
		ret = k ? put(buf, cap, len, ", ") : 0;
		if (!ret)
			ret = put(buf, cap, len, t->cols[t->keys[k]]);
	}
	return ret;
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_columns(const struct twl_mig_table *t, const char *head,
		    const char *tail, char *buf, size_t cap)
{
	size_t len = 0;
	int ret = put(buf, cap, &len, head);

	for (int i = 0; i < t->n_cols && !ret; i++) {
		ret = i ? put(buf, cap, &len, ", ") : 0;
		if (!ret)
			ret = put(buf, cap, &len, t->cols[i]);
	}
	return ret ? ret : put(buf, cap, &len, tail);
}

/* Contract: see migrate_store_internal.h. */
int twl_mig_select(const struct twl_mig_table *t, bool sqlite, bool after,
		   char *buf, size_t cap)
{
	size_t len;
	char num[32];
	int ret = twl_mig_columns(t, "SELECT ", " FROM ", buf, cap);

	len = strlen(buf);
	if (!ret)
		ret = put(buf, cap, &len, t->name);
	if (!sqlite || ret)
		return ret;
	if (after) {
		ret = put(buf, cap, &len, " WHERE (");
		ret = ret ? ret : put_keys(t, buf, cap, &len);
		ret = ret ? ret : put(buf, cap, &len, ") > (");
		for (int k = 0; k < t->n_keys && !ret; k++) {
			snprintf(num, sizeof(num), "%s?%d", k ? ", " : "",
				 k + 1);
			ret = put(buf, cap, &len, num);
		}
		ret = ret ? ret : put(buf, cap, &len, ")");
	}
	ret = ret ? ret : put(buf, cap, &len, " ORDER BY ");
	ret = ret ? ret : put_keys(t, buf, cap, &len);
	snprintf(num, sizeof(num), " LIMIT ?%d", t->n_keys + 1);
	return ret ? ret : put(buf, cap, &len, num);
}

/* Contract: see migrate_store_internal.h. */
enum twl_sum_tag twl_mig_src_value(sqlite3_stmt *st, int i, const void **v,
				   size_t *n, char num[32])
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		*n = (size_t)snprintf(num, 32, "%lld",
				      (long long)sqlite3_column_int64(st, i));
		*v = num;
		return TWL_SUM_INT;
	case SQLITE_FLOAT:
		*n = (size_t)snprintf(num, 32, "%.17g",
				      sqlite3_column_double(st, i));
		*v = num;
		return TWL_SUM_REAL;
	case SQLITE_BLOB:
		*v = sqlite3_column_blob(st, i);
		*n = (size_t)sqlite3_column_bytes(st, i);
		return TWL_SUM_BLOB;
	case SQLITE_TEXT:
		*v = sqlite3_column_text(st, i);
		*n = (size_t)sqlite3_column_bytes(st, i);
		return TWL_SUM_TEXT;
	default:
		*v = "";
		*n = 0;
		return TWL_SUM_NULL;
	}
}
