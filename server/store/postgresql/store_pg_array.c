// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL array literals (store_pg_array.h). The quoting rules are
 * those of PostgreSQL's array input (arrays.sgml, "Array Value Input"):
 * inside double quotes only '"' and '\' need a backslash; whitespace,
 * commas and braces are taken as they are.
 */
#include <string.h>

#include "store/postgresql/store_pg_array.h"

/* '{' before the first element, ',' before the others. */
static int separate(struct twl_buf *b)
{
	return twl_buf_append(b, b->len ? "," : "{", 1);
}

/* Contract: see store_pg_array.h. */
int twl_pg_array_i64(struct twl_buf *b, int64_t v)
{
	int ret = separate(b);

	return ret ? ret : twl_buf_printf(b, "%lld", (long long)v);
}

/* Contract: see store_pg_array.h. */
int twl_pg_array_null(struct twl_buf *b)
{
	int ret = separate(b);

	return ret ? ret : twl_buf_append(b, "NULL", 4);
}

/* Contract: see store_pg_array.h. */
int twl_pg_array_text(struct twl_buf *b, const char *s)
{
	int ret;

	if (!s)
		return twl_pg_array_null(b);
	ret = separate(b);
	if (!ret)
		ret = twl_buf_append(b, "\"", 1);
	while (!ret && *s) {
		size_t n = strcspn(s, "\"\\");

		ret = twl_buf_append(b, s, n);
		s += n;
		if (!ret && *s) {
			char esc[2] = { '\\', *s++ };

			ret = twl_buf_append(b, esc, 2);
		}
	}
	return ret ? ret : twl_buf_append(b, "\"", 1);
}

/* Contract: see store_pg_array.h. */
int twl_pg_array_end(struct twl_buf *b)
{
	return twl_buf_append(b, b->len ? "}" : "{}", b->len ? 1 : 2);
}
