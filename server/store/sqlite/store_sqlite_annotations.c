// SPDX-License-Identifier: GPL-2.0
/*
 * Annotations on SQLite: listed on a read context like the read API
 * (twl_read_annotations(), store_read.h; every export carries them),
 * added and deleted on the writer connection in short transactions of
 * their own (twl_store_annotation_*(), store.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_read.h"
#include "store/store_rules.h"
#include "store/sqlite/store_sqlite_internal.h"

static const char q_ann_list[] =
	"SELECT id, feature_id, workload, text, fits, author, created, intent,"
	" set_by, v2_tried, shortfall, team FROM annotations WHERE (?1 IS NULL OR feature_id = ?1)"
	" ORDER BY feature_id, created, id LIMIT 10000"; /* the cap */

/* Contract: see store_sqlite_internal.h. */
int twl_rq_annotations_into(struct twl_rctx *c, const char *feature,
			    json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = twl_rctx_stmt(c, q_ann_list, &rc);
	if (!st)
		return rc;
	if (feature)
		sqlite3_bind_text(st, 1, feature, -1, SQLITE_STATIC);
	return twl_rows_into(st, &twl_annotation_row, arr, SIZE_MAX, NULL);
}

/* Contract: see store_read.h. */
int twl_read_annotations(struct twl_store *s, const char *feature, json_t **out)
{
	struct twl_rctx c;
	json_t *doc;
	int rc;

	*out = NULL;
	doc = json_pack("{s:[]}", "annotations");
	if (!doc)
		return -ENOMEM;
	rc = twl_rctx_begin(&c, s, false);
	if (!rc) {
		rc = twl_rq_annotations_into(
			&c, feature, json_object_get(doc, "annotations"));
		twl_rctx_end(&c);
	}
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* Contract: see store_sqlite_internal.h. */
int twl_admin_write(struct twl_store *s, const char *sql,
		    int (*bind)(sqlite3_stmt *, void *), void *arg,
		    int64_t *changes_or_id, bool want_id)
{
	sqlite3 *db = twl_store_admin_write_lock(s);
	sqlite3_stmt *st = NULL;
	int r, rc = 0;

	if (!db)
		return -EIO;
	r = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (r != SQLITE_OK) {
		rc = twl_sqlite_errno(r);
		goto unlock;
	}
	r = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (r == SQLITE_OK)
		r = bind(st, arg);
	if (r == SQLITE_OK)
		r = sqlite3_step(st);
	if (r != SQLITE_DONE) {
		rc = twl_sqlite_errno(r);
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto unlock;
	}
	if (want_id && !sqlite3_changes(db)) {
		/* The insert's WHERE refused it: the cap is reached. */
		rc = -EDQUOT;
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto unlock;
	}
	*changes_or_id = want_id ? sqlite3_last_insert_rowid(db) :
				   sqlite3_changes(db);
	sqlite3_finalize(st);
	r = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (r != SQLITE_OK) {
		rc = twl_sqlite_errno(r);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
unlock:
	twl_store_admin_write_unlock(s);
	return rc;
}

/* Bind @v as text, or NULL when @v is NULL. */
static int bind_opt(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) :
		   sqlite3_bind_null(st, i);
}

static int bind_ann_add(sqlite3_stmt *st, void *p)
{
	const struct twl_annotation *a = p;
	const char *const texts[] = { a->feature, a->workload, a->text,
				      a->fits,	  a->author,   a->intent,
				      a->set_by,  a->v2_tried, a->shortfall,
				      a->team };
	int r = SQLITE_OK;
	size_t i;

	for (i = 0; r == SQLITE_OK && i < sizeof(texts) / sizeof(texts[0]); i++)
		r = bind_opt(st, (int)i + 1, texts[i]);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int64(st, 11, a->now);
	if (r == SQLITE_OK)
		r = sqlite3_bind_int(st, 12, TWL_STORE_MAX_ANNOTATIONS);
	return r;
}

/* Contract: see store.h. */
int twl_store_annotation_put(struct twl_store *s,
			     const struct twl_annotation *a, int64_t *id)
{
	int64_t newid = 0;
	int rc;

	if (!twl_annotation_valid(a))
		return -EINVAL;
	rc = twl_admin_write(
		s,
		"INSERT INTO annotations(feature_id, workload, text, fits, author,"
		" intent, set_by, v2_tried, shortfall, team, created)"
		" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11"
		" WHERE (SELECT count(*) FROM annotations) < ?12",
		bind_ann_add, (void *)a, &newid, true);
	if (!rc && id)
		*id = newid;
	return rc;
}

static int bind_ann_del(sqlite3_stmt *st, void *p)
{
	return sqlite3_bind_int64(st, 1, *(int64_t *)p);
}

/* Contract: see store.h. */
int twl_store_annotation_delete(struct twl_store *s, int64_t id)
{
	int64_t changes = 0;
	int rc;

	rc = twl_admin_write(s, "DELETE FROM annotations WHERE id = ?1",
			     bind_ann_del, &id, &changes, false);
	if (!rc && !changes)
		rc = -ENOENT;
	return rc;
}
