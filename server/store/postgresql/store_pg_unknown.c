// SPDX-License-Identifier: GPL-2.0
/*
 * Unknown deprecation texts fleet-wide on PostgreSQL (twl_read_unknown(),
 * store_read.h): the query store/read_answers.c pages them with, the
 * SQLite backend's (store/sqlite/store_sqlite_unknown.c) in PostgreSQL's
 * dialect: the unknown_deprecations rows of all hosts grouped by text,
 * one page at a time in text order (as bytes, TWL_PG_C), with each
 * text's kernels by hosts as a JSON array.
 */
#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/store_read.h"

/*
 * One page of texts after $1 (the cursor) whose last report is in
 * [$2, $3], $4 of them; $5 kernels each. last_seen is the latest report
 * that carried the text.
 */
static const char q_unknown[] =
	"SELECT g.text, count(DISTINCT g.host_id), sum(g.count),"
	" min(g.first_time), max(g.received),"
	" max(g.matched_feature_id" TWL_PG_C "), max(g.feature_id" TWL_PG_C "),"
	" (SELECT coalesce(json_agg(json_build_object('kernel', k, 'hosts', n)"
	" ORDER BY n DESC, k), '[]') FROM (SELECT coalesce(u.kernel, '')" TWL_PG_C
	" AS k, count(DISTINCT u.host_id) AS n"
	" FROM unknown_deprecations u WHERE u.text = g.text" TWL_PG_LABELED(
		"u.host_id") " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $5::bigint) t)"
			     " FROM unknown_deprecations g WHERE g.text" TWL_PG_C
			     " > $1" TWL_PG_LABELED(
				     "g.host_id") " GROUP BY g.text"
						  " HAVING max(g.received) BETWEEN $2::bigint AND $3::bigint"
						  " ORDER BY g.text" TWL_PG_C
						  " LIMIT $4::bigint";

/* Contract: see store_pg_read.h. */
const char *const twl_pg_unknown_sql[TWL_RQ_N] = {
	[TWL_RQ_UNKNOWN] = q_unknown,
};
