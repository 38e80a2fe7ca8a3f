/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the SQLite backend's tests share: a temporary directory with the
 * path of a database in it, SQL run on a connection of the test's own
 * (so only committed rows count), and reports to ingest.
 */
#ifndef TWL_TEST_SQLITE_FIXTURE_H
#define TWL_TEST_SQLITE_FIXTURE_H

#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* The directory and the database path in it (setup() .. teardown()). */
extern char dir[64];
extern char dbpath[128];

/* cmocka group setup and teardown: make and remove dir. */
int setup(void **state);
int teardown(void **state);

/* The first column of the first row of sql (-1: no row). */
int64_t q(const char *sql);
/* q() of a statement formatted like printf. */
int64_t qf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run sql; fails the test on an error. */
void exec_sql(const char *sql);

/* The example report (full.json) of host with batch id batch. */
json_t *report(const char *host, const char *batch);
/* The example report again, each usage counter times ten. */
json_t *report_x10(const char *host, const char *batch);
/* Store r for host at now in a commit of its own (must store). */
void ingest_at(struct twl_store *s, const char *host, json_t *r, int64_t now);
/* r's usage, warnings, unknown texts and census moved to boot and time t. */
void move_to(json_t *r, const char *boot, int64_t t);
/* ingest_at() at time 1000. */
void ingest_one(struct twl_store *s, const char *host, json_t *r);

/*
 * Every rollup equals a GROUP BY recount of the raw rows (usage, warnings,
 * matched unknown texts, census values, hosts, host coverage): feature_host
 * per (feature, host), feature_hour per (feature, hour) and kind,
 * feature_comm per process and kind, host_hour per cgroup mode and hour,
 * coverage_count per fact. True after retention pruning too: fails the
 * test otherwise.
 */
void check_recount(void);

/*
 * check_recount(), and feature_day holds each feature's last use and (no
 * rows pruned) its uses, reads and warnings: fails the test otherwise.
 */
void check_buckets(void);

#endif
