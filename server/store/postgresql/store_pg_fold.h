/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A group commit's feature sums on PostgreSQL, kept in memory until the
 * group's end (store_pg_fold.c): each report's twl_rollup entries
 * (store/rollup_sum.h) under its host and its result, so that only the
 * reports that succeeded are written, and the rows in rounds where one
 * (host, feature) row is written more than once. No I/O: the statements
 * that write them are store_pg_rollup.c's.
 */
#ifndef TWL_SERVER_STORE_PG_FOLD_H
#define TWL_SERVER_STORE_PG_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/rollup_sum.h"

/*
 * Entries a group keeps before it writes them at once, between two
 * reports (twl_pg_fold_full()): about 240 reports of 4 features each in
 * a busy group; a report adds at most what its own validated body holds.
 */
#define TWL_PG_FOLD_MAX 16384

struct twl_pg_fold_entry {
	struct twl_rollup_entry e;
	char host[65];
	size_t report; /* its report, an index of twl_pg_fold.r */
	unsigned round; /* set by twl_pg_fold_rounds() */
};

struct twl_ingest;

struct twl_pg_fold_report {
	int *result; /* read at the group's end; NULL: stored alone, kept */
	/* what twl_pg_fold_begin() was given, for a retry of the group */
	const char *host;
	const struct twl_ingest *in;
	int64_t now;
};

struct twl_pg_fold {
	struct twl_pg_fold_entry *e;
	size_t n, cap;
	struct twl_pg_fold_report *r;
	size_t nr, rcap;
};

/*
 * twl_pg_fold_begin - the entries added from now on are a new report's,
 * whose result will be in *@result (>= 0: it succeeded; NULL: kept) when
 * the group ends; @host, @in and @now are kept as given (pointers: valid
 * until the group ends) for a retry. 0 or -ENOMEM.
 */
int twl_pg_fold_begin(struct twl_pg_fold *f, int *result, const char *host,
		      const struct twl_ingest *in, int64_t now);

/*
 * twl_pg_fold_add - @e of @host (at most 64 bytes) added to the current
 * report (twl_pg_fold_begin() first). 0, -EINVAL (no report begun, or a
 * longer host id) or -ENOMEM.
 */
int twl_pg_fold_add(struct twl_pg_fold *f, const char *host,
		    const struct twl_rollup_entry *e);

/*
 * twl_pg_fold_rounds - once every report's result is final: sets each
 * kept entry's round (its row's earlier entries in the group before it)
 * and answers how many rounds there are; entries of reports that failed
 * (a negative result) get UINT_MAX, and UINT_MAX is the answer when
 * memory ran out.
 * Entries of one round name each (host, feature) row once, so one set
 * statement per round writes them as the reports did one by one.
 */
unsigned twl_pg_fold_rounds(struct twl_pg_fold *f);

/* twl_pg_fold_full - whether the group should write its entries now. */
bool twl_pg_fold_full(const struct twl_pg_fold *f);

/* twl_pg_fold_written - forget every entry, keep the reports. */
void twl_pg_fold_written(struct twl_pg_fold *f);

/* twl_pg_fold_empty - forget every entry and report (memory kept). */
void twl_pg_fold_empty(struct twl_pg_fold *f);

/* twl_pg_fold_free - the memory of @f released; @f is empty. */
void twl_pg_fold_free(struct twl_pg_fold *f);

#endif /* TWL_SERVER_STORE_PG_FOLD_H */
