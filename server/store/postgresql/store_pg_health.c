// SPDX-License-Identifier: GPL-2.0
/*
 * Fleet health on PostgreSQL (twl_read_health(), store_read.h): the
 * queries store/read_answers.c composes the page from, the SQLite
 * backend's (store/sqlite/store_sqlite_health.c) in PostgreSQL's dialect.
 * Each part is a count and a bounded host list, of the hosts carrying
 * the filter's label when it has one.
 */
#include <stdint.h>

#include "store/postgresql/store_pg_read.h"
#include "store/read_answers.h"
#include "store/store_read.h"

#define LAB TWL_PG_LABELED("host_id")
#define BY_HOST " host_id" TWL_PG_C
#define LIST(where, order, n)                                                 \
	"SELECT " HOST_COLS " FROM hosts WHERE " where LAB " ORDER BY " order \
	"," BY_HOST " LIMIT $" n "::bigint"

/* silent: the whole hours before $1's, then its hour (hosts_last_hour) */
#define SILENT "last_hour <= $1::bigint / 3600 AND last_seen < $1::bigint"
#define LOST "records_lost > 0"
#define REJECTED "key_rejected > 0"
#define PROBE "probe_missing IS NOT NULL AND probe_missing NOT IN ('', '[]')"

/*
 * Host ids machines cloned from one image share: live keys seen since
 * $1 of which two reported different boots in overlapping spells, or one
 * came back to the boot before its last.
 */
#define CLONED_IDS                                                       \
	"SELECT a.host_id FROM host_keys a WHERE a.revoked IS NULL"      \
	" AND a.last_seen >= $1::bigint AND (a.clone_seen >= $1::bigint" \
	" OR EXISTS (SELECT 1 FROM host_keys b"                          \
	" WHERE b.host_id = a.host_id AND b.key_hash <> a.key_hash"      \
	" AND b.revoked IS NULL AND b.last_seen >= $1::bigint"           \
	" AND b.boot_id <> a.boot_id AND a.boot_seen <= b.last_seen"     \
	" AND b.boot_seen <= a.last_seen))"

/* hosts of coverage rows of $1 (a catalog version, a fact bit) */
#define COVERAGE(cond) \
	"host_id IN (SELECT host_id FROM host_coverage WHERE " cond ")"
#define OLDER "catalog_version < $1::bigint"
#define NEWER "catalog_version > $1::bigint"
#define UNCOVERED "(facts & (1::bigint << $1::int)) != 0"

/* Contract: see store_pg_read.h (read_answers.h's order of the parts). */
const char *const twl_pg_health_sql[TWL_RQ_N] = {
	[TWL_RQ_HEALTH] = "SELECT count(*) FROM hosts WHERE " SILENT LAB,
	LIST(SILENT, "last_hour, last_seen", "2"),
	"SELECT count(*) FROM hosts WHERE " LOST LAB,
	LIST(LOST, "records_lost DESC", "1"),
	"SELECT count(*) FROM hosts WHERE " REJECTED LAB,
	LIST(REJECTED, "last_seen DESC", "1"),
	"SELECT count(*) FROM hosts WHERE " PROBE LAB,
	LIST(PROBE, "last_seen DESC", "1"),
	"SELECT count(DISTINCT host_id) FROM (" CLONED_IDS ") c WHERE true" LAB,
	LIST("host_id IN (" CLONED_IDS ")", "host_id" TWL_PG_C, "2"),
	/* the count kept by the trigger, but under a label filter */
	"SELECT CASE WHEN $20::text IS NULL THEN (SELECT hosts"
	" FROM coverage_count WHERE bit = $1::bigint) ELSE (SELECT count(*)"
	" FROM host_coverage WHERE " UNCOVERED LAB ") END",
	LIST(COVERAGE(UNCOVERED), "last_seen DESC", "2"),
	"SELECT count(*) FROM host_coverage WHERE " OLDER LAB,
	LIST(COVERAGE(OLDER), "last_seen DESC", "2"),
	"SELECT count(*) FROM host_coverage WHERE " NEWER LAB,
	LIST(COVERAGE(NEWER), "last_seen DESC", "2"),
};
