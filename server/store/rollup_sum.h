/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A batch's evidence summed per feature before it is written to
 * feature_host (rollup_sum.c), the same for every backend: a report's
 * rows are summed in memory and each feature's row written once, instead
 * of one feature_host upsert per row. Pure: no store, no I/O.
 */
#ifndef TWL_SERVER_ROLLUP_SUM_H
#define TWL_SERVER_ROLLUP_SUM_H

#include <stddef.h>
#include <stdint.h>

#define TWL_ROLLUP_MAX 64

struct twl_rollup_entry {
	char feature[65];
	int64_t first, last, uses, reads, warnings;
	int kinds; /* TWL_KIND_* */
};

struct twl_rollup {
	size_t n; /* 0 to start */
	struct twl_rollup_entry e[TWL_ROLLUP_MAX];
};

/*
 * The evidence a feature_host row holds, a bit each (its kinds column,
 * SQLite migration 015). A host uses a feature when a bit of
 * TWL_KIND_USING is set; it only reads it when its kinds are
 * TWL_KIND_READS alone.
 */
#define TWL_KIND_CONFIGURES 1 /* BPF counted writes */
#define TWL_KIND_LISTENS 2 /* BPF counted eventfd registrations */
#define TWL_KIND_READS 4 /* BPF counted reads */
#define TWL_KIND_WARNING 8 /* a kernel warning (or unknown text matched) */
#define TWL_KIND_CENSUS 16 /* the census saw a non-default value */
#define TWL_KIND_USING 27 /* all but TWL_KIND_READS */

/* twl_kind_of_op - the TWL_KIND_* bit of a usage op ("read" or other: reads) */
int twl_kind_of_op(const char *op);

/*
 * twl_rollup_add - add evidence of @kind (one TWL_KIND_* bit) of
 * @feature ("" adds nothing) between @first and @last to @r: @n is added
 * to its uses (configures, listens), reads or warnings (a census value
 * adds no count). 0, or -ENOSPC when @feature is new and @r is full
 * (nothing added: write @r's sums, empty it, add again).
 */
int twl_rollup_add(struct twl_rollup *r, const char *feature, int64_t first,
		   int64_t last, int kind, int64_t n);

#endif /* TWL_SERVER_ROLLUP_SUM_H */
