// SPDX-License-Identifier: GPL-2.0
/*
 * Upkeep of the PostgreSQL store (store_pg_ingest.h): retention with
 * SQLite's rules (store/sqlite/store_sqlite_maint.c), unknown texts
 * matched to the catalog as it is now (store_sqlite_catalog.c's rules,
 * the match computed here in C since PostgreSQL cannot call the
 * server's matcher), the database's size and the start-up check. The
 * writes run in ingest transactions (twl_pg_write_begin()), under the
 * ingest lock of all servers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>

#include "store/catalog_print.h"
#include "store/postgresql/migrate_pg.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"

/* Run @sql with @cut as $1 on the writer; its rows added to *@total. */
static int exec_cut(struct twl_pg *p, const char *sql, int64_t cut,
		    int64_t *total)
{
	struct twl_pg_args a = { 0 };
	PGresult *r;
	int ret;

	twl_pg_arg_i64(&a, cut);
	ret = twl_pg_exec(p->wconn, sql, a.n, a.v, &r);
	if (ret)
		return ret;
	*total += twl_pg_changed(r);
	PQclear(r);
	return 0;
}

/*
 * Retention keeps the rollups a recount of the rows it keeps: the
 * (feature, host) pairs whose rows it deletes are noted first, then
 * recounted from feature_host_recount, and dropped when nothing of them
 * is left. feature_day, a history, only grows.
 */
static const char *const prune_note[] = {
	"INSERT INTO pg_temp.pruned SELECT feature_id, host_id"
	" FROM usage WHERE last_seen < $1::bigint ON CONFLICT DO NOTHING",
	"INSERT INTO pg_temp.pruned SELECT feature_id, host_id"
	" FROM warnings WHERE received < $1::bigint ON CONFLICT DO NOTHING",
	"INSERT INTO pg_temp.pruned SELECT matched_feature_id, host_id"
	" FROM unknown_deprecations WHERE received < $1::bigint"
	" AND matched_feature_id IS NOT NULL ON CONFLICT DO NOTHING",
	"INSERT INTO pg_temp.pruned SELECT feature_id, host_id"
	" FROM census_knobs WHERE time < $1::bigint ON CONFLICT DO NOTHING",
	"INSERT INTO pg_temp.pruned SELECT feature_id, host_id"
	" FROM feature_host WHERE last_used < $1::bigint"
	" ON CONFLICT DO NOTHING",
};

static const char *const prune_del[] = {
	"DELETE FROM warnings WHERE received < $1::bigint",
	"DELETE FROM usage WHERE last_seen < $1::bigint",
	"DELETE FROM unknown_deprecations WHERE received < $1::bigint",
	"DELETE FROM census_knobs WHERE time < $1::bigint",
};

/* $1 unused but typed: exec_cut() passes it to every statement */
static const char *const prune_recount[] = {
	"UPDATE feature_host SET (first_used, last_used, last_hour, uses, reads,"
	" warnings, kinds) = (SELECT r.first_used, r.last_used,"
	" r.last_used / 3600, r.uses, r.reads, r.warnings, r.kinds"
	" FROM feature_host_recount r"
	" WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)"
	" WHERE $1::bigint IS NOT NULL AND (feature_id, host_id) IN"
	" (SELECT feature_id, host_id FROM pg_temp.pruned) AND EXISTS"
	" (SELECT 1 FROM feature_host_recount r"
	" WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)",
	"DELETE FROM feature_host WHERE $1::bigint IS NOT NULL"
	" AND (feature_id, host_id) IN"
	" (SELECT feature_id, host_id FROM pg_temp.pruned) AND NOT EXISTS"
	" (SELECT 1 FROM feature_host_recount r"
	" WHERE r.feature_id = feature_host.feature_id"
	" AND r.host_id = feature_host.host_id)",
};

/* Delete the data rows older than @cut, the rollups recounted. */
static int prune_data(struct twl_pg *p, int64_t cut, int64_t *total)
{
	int64_t ignored = 0;
	size_t i;
	int ret;

	ret = twl_pg_exec(p->wconn,
			  "CREATE TEMP TABLE IF NOT EXISTS pruned("
			  "feature_id TEXT, host_id TEXT,"
			  " PRIMARY KEY (feature_id, host_id))"
			  " ON COMMIT DELETE ROWS",
			  0, NULL, NULL);
	for (i = 0; !ret && i < sizeof(prune_note) / sizeof(*prune_note); i++)
		ret = exec_cut(p, prune_note[i], cut, &ignored);
	for (i = 0; !ret && i < sizeof(prune_del) / sizeof(*prune_del); i++)
		ret = exec_cut(p, prune_del[i], cut, total);
	/* a recounted row is not a deleted one: the deletions only count */
	if (!ret)
		ret = exec_cut(p, prune_recount[0], cut, &ignored);
	if (!ret)
		ret = exec_cut(p, prune_recount[1], cut, total);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_prune(struct twl_store *s, int64_t now, int batch_days,
		 int data_days, int64_t *deleted)
{
	struct twl_pg *p = twl_pg_of(s);
	int64_t total = 0, cut = now - (int64_t)batch_days * 86400;
	int ret;

	ret = twl_pg_write_begin(s);
	if (ret)
		return ret;
	ret = exec_cut(p, "DELETE FROM batches WHERE received < $1::bigint",
		       cut, &total);
	/* what replays of those batches would add again */
	if (!ret)
		ret = exec_cut(
			p,
			"DELETE FROM unknown_counts WHERE received < $1::bigint",
			cut, &total);
	if (!ret && data_days > 0)
		ret = prune_data(p, now - (int64_t)data_days * 86400, &total);
	ret = ret ? (twl_pg_write_end(s, false), ret) :
		    twl_pg_write_end(s, true);
	if (!ret && deleted)
		*deleted = total;
	return ret;
}

/*
 * The catalog feature an unknown text now belongs to, or NULL: a text
 * with a feature id (a warning the catalog lacked) belongs to that id
 * once the catalog holds it, one without is matched by its text.
 */
static const char *rematch_of(const char *id, const char *text)
{
	const struct twl_feature *f = NULL;
	struct twl_match m;

	if (id)
		f = twl_catalog_find(id);
	else if (twl_match_normalized(text, strlen(text), &m) == 1)
		f = m.feature;
	return f ? f->id : NULL;
}

/* Each unmatched (feature id, text) that matches now, into pg_temp.rematch. */
static int rematch_list(struct twl_pg *p)
{
	PGresult *r;
	int ret;

	ret = twl_pg_exec(
		p->wconn,
		"CREATE TEMP TABLE IF NOT EXISTS rematch("
		"feature_id TEXT, text TEXT NOT NULL, f TEXT NOT NULL)"
		" ON COMMIT DELETE ROWS",
		0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(p->wconn,
				  "SELECT DISTINCT feature_id, text"
				  " FROM unknown_deprecations"
				  " WHERE matched_feature_id IS NULL",
				  0, NULL, &r);
	if (ret)
		return ret;
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		const char *id = PQgetisnull(r, i, 0) ? NULL :
							PQgetvalue(r, i, 0);
		const char *v[3] = { id, PQgetvalue(r, i, 1),
				     rematch_of(id, PQgetvalue(r, i, 1)) };

		if (v[2])
			ret = twl_pg_exec(p->wconn,
					  "INSERT INTO pg_temp.rematch"
					  " VALUES($1, $2, $3)",
					  3, v, NULL);
	}
	PQclear(r);
	return ret;
}

/*
 * The matched texts summed per (feature, host) into feature_host as the
 * writer would have at ingest: warnings, never uses (8 =
 * TWL_KIND_WARNING; the triggers keep feature_day and feature_hour),
 * then marked matched. Both select the same rows.
 */
static const char rematch_rollup[] =
	"INSERT INTO feature_host(feature_id, host_id, first_used, last_used,"
	" warnings, last_hour, kinds)"
	" SELECT m.f, u.host_id, min(u.first_time), max(u.first_time),"
	" sum(u.count), max(u.first_time) / 3600, 8"
	" FROM unknown_deprecations u JOIN pg_temp.rematch m"
	" ON m.text = u.text AND m.feature_id IS NOT DISTINCT FROM u.feature_id"
	" WHERE u.matched_feature_id IS NULL GROUP BY m.f, u.host_id"
	" ON CONFLICT (host_id, feature_id) DO UPDATE SET"
	" first_used = least(feature_host.first_used, excluded.first_used),"
	" last_used = greatest(feature_host.last_used, excluded.last_used),"
	" last_hour = greatest(feature_host.last_hour, excluded.last_hour),"
	" warnings = feature_host.warnings + excluded.warnings,"
	" kinds = feature_host.kinds | excluded.kinds";

static const char rematch_mark[] =
	"UPDATE unknown_deprecations u SET matched_feature_id = m.f"
	" FROM pg_temp.rematch m WHERE m.text = u.text"
	" AND m.feature_id IS NOT DISTINCT FROM u.feature_id"
	" AND u.matched_feature_id IS NULL";

/* Contract: see store_pg_ingest.h. */
int twl_pg_catalog_rematch(struct twl_store *s, int64_t *n)
{
	struct twl_pg *p = twl_pg_of(s);
	PGresult *r = NULL;
	int ret;

	if (n)
		*n = 0;
	ret = twl_pg_write_begin(s);
	if (ret)
		return ret;
	ret = rematch_list(p);
	if (!ret)
		ret = twl_pg_exec(p->wconn, rematch_rollup, 0, NULL, NULL);
	if (!ret)
		ret = twl_pg_exec(p->wconn, rematch_mark, 0, NULL, &r);
	if (!ret && n)
		*n = twl_pg_changed(r);
	PQclear(r);
	return ret ? (twl_pg_write_end(s, false), ret) :
		     twl_pg_write_end(s, true);
}

/* 1 when server_meta says catalog @print was matched, 0 if not, or -errno. */
static int catalog_seen(struct twl_pg *p, const char *print)
{
	const char *v[1] = { TWL_CATALOG_META_KEY };
	PGresult *r;
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(p->conn,
			  "SELECT value FROM server_meta WHERE key = $1", 1, v,
			  &r);
	pthread_mutex_unlock(&p->lock);
	if (ret)
		return ret;
	ret = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), print);
	PQclear(r);
	return ret;
}

static int catalog_note(struct twl_pg *p, const char *print)
{
	const char *v[2] = { TWL_CATALOG_META_KEY, print };
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(
		p->conn,
		"INSERT INTO server_meta(key, value) VALUES($1, $2)"
		" ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		2, v, NULL);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_catalog_check(struct twl_store *s)
{
	struct twl_pg *p = twl_pg_of(s);
	char print[64];
	int64_t n = 0;
	int ret;

	twl_catalog_print(print, sizeof(print));
	ret = catalog_seen(p, print);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = twl_pg_catalog_rematch(s, &n);
	if (!ret)
		ret = catalog_note(p, print);
	if (ret)
		twl_log(LOG_ERR,
			"%s: matching unknown deprecation texts to catalog %s failed: %s (is the database full or read-only?)",
			p->where, print, strerror(-ret));
	else if (n)
		twl_log(LOG_NOTICE,
			"%s: catalog %s is new to this database: %" PRId64
			" unknown deprecation texts matched to its features",
			p->where, print, n);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_catalog_reload(struct twl_store *s, int64_t *n)
{
	char print[64];
	int ret;

	twl_catalog_print(print, sizeof(print));
	ret = twl_pg_catalog_rematch(s, n);
	return ret ? ret : catalog_note(twl_pg_of(s), print);
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_db_size(struct twl_store *s, int64_t *bytes)
{
	struct twl_pg *p = twl_pg_of(s);
	PGresult *r;
	int ret;

	twl_pg_lock(p);
	ret = twl_pg_exec(p->conn,
			  "SELECT pg_database_size(current_database())", 0,
			  NULL, &r);
	pthread_mutex_unlock(&p->lock);
	if (ret)
		return ret;
	*bytes = twl_pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}

/*
 * Contract: see store_pg_ingest.h. PostgreSQL checks its own pages (data
 * checksums, its own recovery); what is checked here is that the
 * database answers and its schema is the one this binary migrated to.
 */
int twl_pg_check(struct twl_store *s, char *problem, size_t cap)
{
	struct twl_pg *p = twl_pg_of(s);
	int v;

	problem[0] = '\0';
	twl_pg_lock(p);
	v = twl_pg_schema_version(p->conn);
	if (v < 0)
		snprintf(problem, cap, "%s", PQerrorMessage(p->conn));
	pthread_mutex_unlock(&p->lock);
	if (v >= 0 && v != twl_pg_migrate_latest()) {
		snprintf(problem, cap, "schema version %d, expected %d", v,
			 twl_pg_migrate_latest());
		return -EUCLEAN;
	}
	return v < 0 ? v : 0;
}
