/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PostgreSQL array literals as text parameters (store_pg_array.c), for
 * one statement over arrays instead of one per row: {1,NULL,3} or
 * {"a",NULL,"b\"c"}. Pure: no connection, no I/O.
 * Every element is written the way PostgreSQL's array input reads it
 * back unchanged: numbers as decimal, texts always double-quoted with
 * '"' and '\' escaped by a backslash, absent values as NULL.
 */
#ifndef TWL_SERVER_STORE_PG_ARRAY_H
#define TWL_SERVER_STORE_PG_ARRAY_H

#include <stdint.h>

#include <twilight/util.h>

/*
 * twl_pg_array_i64 / _text / _null - append one element to the array in
 * @b (the first opens it with '{'); twl_pg_array_end - close it ("{}"
 * when empty). @s NULL is NULL. 0, or -E2BIG / -ENOMEM from @b (then @b
 * holds no usable literal: start again with twl_buf_reset()).
 */
int twl_pg_array_i64(struct twl_buf *b, int64_t v);
int twl_pg_array_text(struct twl_buf *b, const char *s);
int twl_pg_array_null(struct twl_buf *b);
int twl_pg_array_end(struct twl_buf *b);

#endif /* TWL_SERVER_STORE_PG_ARRAY_H */
