// SPDX-License-Identifier: GPL-2.0
/*
 * Unknown deprecation texts fleet-wide on SQLite (twl_read_unknown(),
 * store_read.h): the unknown_deprecations rows of all hosts grouped by
 * text, one page at a time in text order. Texts are stored normalised
 * (digits as '#': the agent's unknown[] texts, and the server's for a
 * warning of a feature id its catalog lacks, ingest.c), so repeats of one
 * message with other numbers are one group. A label filter keeps the
 * rows of the hosts carrying the label.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/* Kernels shown per text, by hosts. */
#define UNKNOWN_KERNELS 10

/*
 * One page of texts after ?1 (the cursor) whose last report is in
 * [?2, ?3], through the index unknown_text (migration 015): the scan
 * stops once ?4 groups passed the filter. last_seen is the latest
 * report that carried the text.
 */
static const char q_unknown[] =
	"SELECT g.text, count(DISTINCT g.host_id), sum(g.count),"
	" min(g.first_time), max(g.received), max(g.matched_feature_id),"
	" max(g.feature_id), (SELECT json_group_array(json_object('kernel', k,"
	" 'hosts', n)) FROM (SELECT coalesce(u.kernel, '') AS k,"
	" count(DISTINCT u.host_id) AS n FROM unknown_deprecations u"
	" WHERE u.text = g.text" TWL_SQL_LABELED(
		"u.host_id") " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ?5))"
			     " FROM unknown_deprecations g INDEXED BY unknown_text"
			     " WHERE g.text > ?1" TWL_SQL_LABELED(
				     "g.host_id") " GROUP BY g.text"
						  " HAVING max(g.received) BETWEEN ?2 AND ?3 ORDER BY g.text LIMIT ?4";

static const struct twl_col unknown_cols[] = {
	{ "text", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "count", 2, TWL_COL_INT },
	{ "first_seen", 3, TWL_COL_INT },
	{ "last_seen", 4, TWL_COL_INT },
	{ "matched_feature", 5, TWL_COL_TEXT },
	{ "feature_id", 6, TWL_COL_TEXT },
	{ "kernels", 7, TWL_COL_JSON_ARRAY },
};
static const struct twl_row unknown_row = TWL_ROW(unknown_cols);

/* Bind @f's cursor, range and @limit + 1 rows to q_unknown's @st. */
static void bind_page(sqlite3_stmt *st, const struct twl_read_filter *f,
		      unsigned limit)
{
	sqlite3_bind_text(st, 1, f && f->cursor ? f->cursor : "", -1,
			  SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f && f->since > 0 ? f->since : 0);
	sqlite3_bind_int64(st, 3, f && f->until > 0 ? f->until : INT64_MAX);
	sqlite3_bind_int(st, 4, (int)limit + 1);
	sqlite3_bind_int(st, 5, UNKNOWN_KERNELS);
}

/* Contract: see store_read.h. */
int twl_read_unknown(struct twl_store *s, const struct twl_read_filter *f,
		     json_t **out)
{
	unsigned limit = twl_rq_limit(f);
	struct twl_rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *arr, *last;
	bool more;
	int rc;

	*out = NULL;
	if (f && f->cursor && strlen(f->cursor) > TWL_READ_MAX_CURSOR)
		return -EINVAL;
	rc = twl_rctx_begin(&c, s, true);
	if (rc)
		return rc;
	if (f && f->label_key[0]) {
		c.label_key = f->label_key;
		c.label_value = f->label_value;
	}
	doc = json_pack("{s:[], s:n}", "texts", "next_cursor");
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	arr = json_object_get(doc, "texts");
	STMT(st, q_unknown);
	bind_page(st, f, limit);
	TRY(twl_rows_into(st, &unknown_row, arr, limit, &more));
	/* One more group exists: the page ends at the last one kept. */
	last = json_array_get(arr, json_array_size(arr) - 1);
	if (more)
		TRY(twl_jset(doc, "next_cursor",
			     json_copy(json_object_get(last, "text"))));
out:
	twl_rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}
