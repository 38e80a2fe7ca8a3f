// SPDX-License-Identifier: GPL-2.0
/*
 * Annotations on PostgreSQL (store.h, store_read.h), with the SQLite
 * backend's rules (store_rules.h) and JSON. Several servers may add at
 * once: the cap of rows is counted after a lock on the table that only
 * writers of annotations take, so two cannot both take its last place;
 * readers never wait for it.
 */
#include <errno.h>
#include <stdint.h>

#include "store/postgresql/store_pg_admin.h"
#include "store/postgresql/store_pg_internal.h"
#include "store/postgresql/store_pg_query.h"
#include "store/store.h"
#include "store/store_rules.h"

static const char q_list[] =
	"SELECT id, feature_id, workload, text, fits, author, created, intent,"
	" set_by, v2_tried, shortfall, team FROM annotations"
	" WHERE $1::text IS NULL OR feature_id = $1"
	" ORDER BY feature_id COLLATE \"C\", created, id LIMIT 10000";

static const struct twl_pg_col list_cols[] = {
	{ "id", TWL_PG_INT },	      { "feature", TWL_PG_TEXT },
	{ "workload", TWL_PG_TEXT },  { "text", TWL_PG_TEXT },
	{ "fits", TWL_PG_TEXT },      { "author", TWL_PG_TEXT },
	{ "created", TWL_PG_INT },    { "intent", TWL_PG_TEXT },
	{ "set_by", TWL_PG_TEXT },    { "v2_tried", TWL_PG_TEXT },
	{ "shortfall", TWL_PG_TEXT }, { "team", TWL_PG_TEXT },
};

/* Contract: see store_pg_admin.h. */
int twl_pg_read_annotations(struct twl_store *s, const char *feature,
			    json_t **out)
{
	const char *v[1] = { feature };

	return twl_pg_list(s, q_list, 1, v, list_cols,
			   sizeof(list_cols) / sizeof(list_cols[0]),
			   "annotations", out);
}

struct put {
	const struct twl_annotation *a;
	int64_t id;
};

static int tx_put(PGconn *conn, void *arg)
{
	struct put *p = arg;
	const struct twl_annotation *a = p->a;
	char now[21], cap[21];
	const char *v[12] = { a->feature,
			      a->workload,
			      a->text,
			      a->fits,
			      a->author,
			      a->intent,
			      a->set_by,
			      a->v2_tried,
			      a->shortfall,
			      a->team,
			      twl_pg_i64(now, a->now),
			      twl_pg_i64(cap, TWL_STORE_MAX_ANNOTATIONS) };
	PGresult *r;
	int ret;

	ret = twl_pg_exec(conn,
			  "LOCK TABLE annotations IN SHARE ROW EXCLUSIVE MODE",
			  0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(
			conn,
			"INSERT INTO annotations(feature_id, workload, text,"
			" fits, author, intent, set_by, v2_tried, shortfall,"
			" team, created) SELECT $1, $2, $3, $4, $5, $6, $7, $8,"
			" $9, $10, $11::bigint WHERE (SELECT count(*)"
			" FROM annotations) < $12::bigint RETURNING id",
			12, v, &r);
	if (ret)
		return ret;
	ret = PQntuples(r) == 1 ? 0 : -EDQUOT;
	if (!ret)
		p->id = twl_pg_int(r, 0, 0);
	PQclear(r);
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_annotation_put(struct twl_store *s, const struct twl_annotation *a,
			  int64_t *id)
{
	struct put p = { a, 0 };
	int ret;

	if (!twl_annotation_valid(a))
		return -EINVAL;
	ret = twl_pg_tx(s, tx_put, &p);
	if (!ret && id)
		*id = p.id;
	return ret;
}

/* Contract: see store_pg_admin.h. */
int twl_pg_annotation_delete(struct twl_store *s, int64_t id)
{
	char i[21];
	const char *v[1] = { twl_pg_i64(i, id) };
	return twl_pg_change(s, "DELETE FROM annotations WHERE id = $1::bigint",
			     1, v);
}
