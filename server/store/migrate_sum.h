/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What "migrate-store" computes the same way on both stores (pure, no
 * I/O): a row's canonical form and its hash, the order-independent
 * checksum of a table, and a value written in COPY's text format.
 *
 * A row's canonical form is, per column in the table's column order, a
 * tag (TWL_SUM_NULL, _INT, _TEXT, _BLOB), the value's length as 8 bytes
 * little-endian and the value: an integer in decimal, a text's bytes, a
 * blob as lowercase hex. The row's hash is the first 8 bytes of the
 * SHA-256 of that form (little-endian); a table's checksum is the sum of
 * its rows' hashes modulo 2^64, so the order the rows are read in does
 * not change it, and a changed, missing or extra row does.
 */
#ifndef TWL_SERVER_MIGRATE_SUM_H
#define TWL_SERVER_MIGRATE_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <twilight/util.h>

enum twl_sum_tag {
	TWL_SUM_NULL = 'n',
	TWL_SUM_INT = 'i',
	TWL_SUM_TEXT = 't',
	TWL_SUM_BLOB = 'b',
	TWL_SUM_REAL = 'f', /* SQLite only: no table has one; never equal */
};

/* The largest canonical row (or COPY data piece) handled: 64 MiB. */
#define TWL_SUM_ROW_MAX (64u << 20)

/* The checksum of one table: its rows and the sum of their hashes. */
struct twl_sum {
	int64_t rows;
	uint64_t sum;
};

/*
 * twl_sum_field - append one column of a row's canonical form to @row:
 * @tag and @v[0..@n) (an integer already in decimal; a blob's raw bytes,
 * written as hex here). 0 or -E2BIG, -ENOMEM.
 */
int twl_sum_field(struct twl_buf *row, enum twl_sum_tag tag, const void *v,
		  size_t n);

/* twl_sum_row - add the canonical row @row to @s and empty @row. */
void twl_sum_row(struct twl_sum *s, struct twl_buf *row);

/*
 * twl_copy_field - append one value to a COPY text-format line in @line:
 * a tab before all but the first column (@first), NULL as \N, text with
 * backslash, tab, newline and carriage return escaped, a blob as bytea's
 * \x hex input. 0, -EILSEQ for a text holding a NUL byte (PostgreSQL's
 * text cannot), -E2BIG, -ENOMEM.
 */
int twl_copy_field(struct twl_buf *line, bool first, enum twl_sum_tag tag,
		   const void *v, size_t n);

#endif /* TWL_SERVER_MIGRATE_SUM_H */
