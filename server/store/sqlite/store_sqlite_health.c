// SPDX-License-Identifier: GPL-2.0
/*
 * Fleet health on SQLite (twl_read_health(), store_read.h): the queries
 * of the hosts whose silence, losses or blindness would otherwise read as
 * "no usage", host ids cloned machines share, boots whose start no log
 * source covered, and agents whose catalog differs from the server's.
 * store/read_answers.c composes the page from them in one read
 * transaction; each part is a count and a bounded host list, of the
 * hosts carrying the filter's label when it has one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_read.h"

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

/* Contract: see store_sqlite_internal.h (read_answers.c's parts). */
const char *const twl_sqlite_health_sql[TWL_RQ_N] = {
	[TWL_RQ_HEALTH] = q_silent_count,
	q_silent_list,
	q_lost_count,
	q_lost_list,
	q_rej_count,
	q_rej_list,
	q_probe_count,
	q_probe_list,
	q_cloned_count,
	q_cloned_list,
	q_uncov_count,
	q_uncov_list,
	q_cat_old_count,
	q_cat_old_list,
	q_cat_new_count,
	q_cat_new_list,
};
