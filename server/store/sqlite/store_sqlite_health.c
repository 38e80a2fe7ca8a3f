// SPDX-License-Identifier: GPL-2.0
/*
 * Fleet health on SQLite (twl_read_health(), store_read.h): the hosts
 * whose silence, losses or blindness would otherwise read as "no usage",
 * host ids cloned machines share, boots whose start no log source covered,
 * and agents whose catalog differs from the server's. One read transaction
 * (store_sqlite_rctx.c); each part is a count and a bounded host list,
 * of the hosts carrying the filter's label when it has one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include <twilight/catalog.h>

#include "store/ingest.h"
#include "store/store_read.h"
#include "store/sqlite/store_sqlite_internal.h"

/*
 * as q_hosts_since (store_sqlite_export.c): the whole hours before ?1's,
 * then its hour
 */
static const char q_silent_count[] =
	"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
	" WHERE last_hour < ?1 / 3600" TWL_SQL_LABELED(
		"host_id") ") +"
			   " (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
			   " WHERE last_hour = ?1 / 3600 AND last_seen < ?1" TWL_SQL_LABELED(
				   "host_id") ")";

/* last_hour first: the index's order, the same as last_seen's */
static const char q_silent_list[] =
	"SELECT " HOST_COLS " FROM hosts INDEXED BY hosts_last_hour"
	" WHERE last_hour <= ?1 / 3600 AND last_seen < ?1" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_hour, last_seen, host_id LIMIT ?2";

static const char q_lost_count[] =
	"SELECT count(*) FROM hosts WHERE records_lost > 0" TWL_SQL_LABELED(
		"host_id");

static const char q_lost_list[] =
	"SELECT " HOST_COLS
	" FROM hosts WHERE records_lost > 0" TWL_SQL_LABELED(
		"host_id") " ORDER BY records_lost DESC, host_id LIMIT ?1";

static const char q_rej_count[] =
	"SELECT count(*) FROM hosts WHERE key_rejected > 0" TWL_SQL_LABELED(
		"host_id");

static const char q_rej_list[] =
	"SELECT " HOST_COLS
	" FROM hosts WHERE key_rejected > 0" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_seen DESC, host_id LIMIT ?1";

static const char q_probe_count[] =
	"SELECT count(*) FROM hosts WHERE probe_missing IS NOT NULL"
	" AND probe_missing NOT IN ('', '[]')" TWL_SQL_LABELED("host_id");

static const char q_probe_list[] =
	"SELECT " HOST_COLS " FROM hosts WHERE probe_missing IS NOT NULL"
	" AND probe_missing NOT IN ('', '[]')" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_seen DESC, host_id LIMIT ?1";

/*
 * Host ids machines cloned from one image share (migration 011): live
 * keys seen since ?1 of which two reported different boots in
 * overlapping spells, or one came back to the boot before its last.
 */
#define CLONED_IDS                                                   \
	"SELECT a.host_id FROM host_keys a WHERE a.revoked IS NULL"  \
	" AND a.last_seen >= ?1 AND (a.clone_seen >= ?1 OR EXISTS (" \
	"SELECT 1 FROM host_keys b WHERE b.host_id = a.host_id"      \
	" AND b.key_hash <> a.key_hash AND b.revoked IS NULL"        \
	" AND b.last_seen >= ?1 AND b.boot_id <> a.boot_id"          \
	" AND a.boot_seen <= b.last_seen AND b.boot_seen <= a.last_seen))"

static const char q_cloned_count[] =
	"SELECT count(DISTINCT host_id) FROM (" CLONED_IDS
	") WHERE 1" TWL_SQL_LABELED("host_id");

static const char q_cloned_list[] =
	"SELECT " HOST_COLS " FROM hosts WHERE host_id IN (" CLONED_IDS
	")" TWL_SQL_LABELED("host_id") " ORDER BY host_id LIMIT ?2";

/*
 * Agents whose catalog differs from the server's (?1 = its version):
 * an older agent cannot name the newer features, a newer one sends ids
 * this server keeps as unknown texts until its own catalog learns them.
 */
static const char q_cat_old_count[] =
	"SELECT count(*) FROM host_coverage WHERE catalog_version < ?1" TWL_SQL_LABELED(
		"host_id");

static const char q_cat_old_list[] =
	"SELECT " HOST_COLS " FROM hosts WHERE host_id IN (SELECT host_id"
	" FROM host_coverage WHERE catalog_version < ?1)" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_seen DESC, host_id LIMIT ?2";

static const char q_cat_new_count[] =
	"SELECT count(*) FROM host_coverage WHERE catalog_version > ?1" TWL_SQL_LABELED(
		"host_id");

static const char q_cat_new_list[] =
	"SELECT " HOST_COLS " FROM hosts WHERE host_id IN (SELECT host_id"
	" FROM host_coverage WHERE catalog_version > ?1)" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_seen DESC, host_id LIMIT ?2";

/*
 * Hosts whose current boot's start no log source covered
 * (TWL_FACT_BOOT_UNCOVERED, migration 014): records of that boot's first minutes may be lost, so
 * "no warning" there proves nothing. The count is the trigger-kept one.
 */
static const char q_uncov_count[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT hosts FROM coverage_count WHERE bit = ?1)"
	" ELSE (SELECT count(*) FROM host_coverage WHERE facts & (1 << ?1)" TWL_SQL_LABELED(
		"host_id") ") END";

static const char q_uncov_list[] =
	"SELECT " HOST_COLS " FROM hosts WHERE host_id IN (SELECT host_id"
	" FROM host_coverage WHERE facts & (1 << ?1))" TWL_SQL_LABELED(
		"host_id") " ORDER BY last_seen DESC, host_id LIMIT ?2";

static int health_part(struct twl_rctx *c, const char *qcount,
		       const char *qlist, int64_t arg, bool has_arg,
		       unsigned limit, json_t *doc, const char *key)
{
	sqlite3_stmt *st;
	json_t *part, *arr;
	int64_t n;
	int rc = 0;

	st = twl_rctx_stmt(c, qcount, &rc);
	if (!st)
		return rc;
	if (has_arg)
		sqlite3_bind_int64(st, 1, arg);
	rc = twl_one_int(st, &n);
	if (rc)
		return rc;
	part = json_pack("{s:I, s:[]}", "count", (json_int_t)n, "hosts");
	if ((rc = twl_jset(doc, key, part)))
		return rc;
	arr = json_object_get(part, "hosts");
	st = twl_rctx_stmt(c, qlist, &rc);
	if (!st)
		return rc;
	if (has_arg) {
		sqlite3_bind_int64(st, 1, arg);
		sqlite3_bind_int(st, 2, (int)limit);
	} else {
		sqlite3_bind_int(st, 1, (int)limit);
	}
	return twl_rows_into(st, &twl_host_row, arr, SIZE_MAX, NULL);
}

/* The health page's "catalog" part: agents older or newer than us. */
static int health_catalog(struct twl_rctx *c, unsigned limit, json_t *doc)
{
	int64_t v = twl_catalog_version();
	json_t *cat = json_pack("{s:I}", "version", (json_int_t)v);
	int rc;

	rc = twl_jset(doc, "catalog", cat);
	if (rc)
		return rc;
	rc = health_part(c, q_cat_old_count, q_cat_old_list, v, true, limit,
			 cat, "older");
	if (rc)
		return rc;
	return health_part(c, q_cat_new_count, q_cat_new_list, v, true, limit,
			   cat, "newer");
}

/* Contract: see store_read.h. */
int twl_read_health(struct twl_store *s, int64_t now, int64_t silent_after,
		    const struct twl_read_filter *f, json_t **out)
{
	unsigned limit = twl_rq_limit(f);
	struct twl_rctx c;
	json_t *doc;
	int rc;

	*out = NULL;
	if (silent_after <= 0)
		return -EINVAL;
	doc = json_pack("{s:I, s:I}", "generated", (json_int_t)now,
			"silent_after", (json_int_t)silent_after);
	if (!doc)
		return -ENOMEM;
	rc = twl_rctx_begin(&c, s, true);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	if (f && f->label_key[0]) {
		c.label_key = f->label_key;
		c.label_value = f->label_value;
	}
	TRY(health_part(&c, q_silent_count, q_silent_list, now - silent_after,
			true, limit, doc, "silent"));
	TRY(health_part(&c, q_lost_count, q_lost_list, 0, false, limit, doc,
			"records_lost"));
	TRY(health_part(&c, q_rej_count, q_rej_list, 0, false, limit, doc,
			"key_rejected"));
	TRY(health_part(&c, q_probe_count, q_probe_list, 0, false, limit, doc,
			"probe_missing"));
	TRY(health_part(&c, q_cloned_count, q_cloned_list, now - silent_after,
			true, limit, doc, "cloned"));
	TRY(health_part(&c, q_uncov_count, q_uncov_list,
			TWL_FACT_BOOT_UNCOVERED, true, limit, doc,
			"boot_uncovered"));
	TRY(health_catalog(&c, limit, doc));
out:
	twl_rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}
