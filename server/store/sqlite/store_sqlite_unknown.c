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

#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_read.h"

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

/* Contract: see store_sqlite_internal.h. */
const char *const twl_sqlite_unknown_sql[TWL_RQ_N] = {
	[TWL_RQ_UNKNOWN] = q_unknown,
};
