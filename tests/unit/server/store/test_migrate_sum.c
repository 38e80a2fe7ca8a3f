// SPDX-License-Identifier: GPL-2.0
/*
 * What migrate-store computes alike on both stores (store/migrate_sum.h):
 * COPY's text format, exact to the byte, and a table checksum that does
 * not depend on the rows' order but on every value, its type and NULL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store/migrate_sum.h"

/* @line's bytes as a string (its buffer is NUL-terminated). */
static const char *text(const struct twl_buf *line)
{
	return line->data ? line->data : "";
}

static void test_copy_text(void **state)
{
	static const unsigned char blob[] = { 0x00, 0xff, 0x5c, 0x09 };
	static const char odd[] = "a\tb\\c\nd\re";
	struct twl_buf line;

	(void)state;
	twl_buf_init(&line, 1024);
	assert_int_equal(twl_copy_field(&line, true, TWL_SUM_INT, "-42", 3), 0);
	assert_int_equal(twl_copy_field(&line, false, TWL_SUM_TEXT, odd,
					strlen(odd)),
			 0);
	assert_int_equal(twl_copy_field(&line, false, TWL_SUM_NULL, "", 0), 0);
	assert_int_equal(twl_copy_field(&line, false, TWL_SUM_BLOB, blob,
					sizeof(blob)),
			 0);
	assert_int_equal(twl_copy_field(&line, false, TWL_SUM_TEXT, "", 0), 0);
	assert_string_equal(text(&line),
			    "-42\ta\\tb\\\\c\\nd\\re\t\\N\t\\\\x00ff5c09\t");
	/* PostgreSQL's text cannot hold a NUL: refused, not cut short */
	assert_int_equal(twl_copy_field(&line, false, TWL_SUM_TEXT, "a\0b", 3),
			 -EILSEQ);
	/* capped */
	twl_buf_reset(&line);
	line.max = 8;
	assert_int_equal(twl_copy_field(&line, true, TWL_SUM_TEXT, "123456789",
					9),
			 -E2BIG);
	twl_buf_fini(&line);
}

/* The checksum of rows given as (tag, value) pairs, @n columns each. */
static struct twl_sum sum_of(const enum twl_sum_tag *tags,
			     const char *const *vals, int rows, int n)
{
	struct twl_sum s = { 0 };
	struct twl_buf row;

	twl_buf_init(&row, TWL_SUM_ROW_MAX);
	for (int r = 0; r < rows; r++) {
		for (int i = 0; i < n; i++)
			assert_int_equal(twl_sum_field(&row, tags[r * n + i],
						       vals[r * n + i],
						       strlen(vals[r * n + i])),
					 0);
		twl_sum_row(&s, &row);
	}
	twl_buf_fini(&row);
	return s;
}

static void test_checksum(void **state)
{
	const enum twl_sum_tag t3[] = {
		TWL_SUM_INT,  TWL_SUM_TEXT, TWL_SUM_INT,
		TWL_SUM_TEXT, TWL_SUM_INT,  TWL_SUM_TEXT
	};
	const char *const ab[] = { "1", "a", "2", "b", "3", "c" };
	const char *const ba[] = { "3", "c", "1", "a", "2", "b" };
	const char *const changed[] = { "1", "a", "2", "B", "3", "c" };
	const char *const moved[] = { "1", "a", "2b", "", "3", "c" };
	const enum twl_sum_tag as_text[] = { TWL_SUM_TEXT, TWL_SUM_TEXT,
					     TWL_SUM_INT,  TWL_SUM_TEXT,
					     TWL_SUM_INT,  TWL_SUM_TEXT };
	const enum twl_sum_tag as_null[] = { TWL_SUM_INT, TWL_SUM_TEXT,
					     TWL_SUM_INT, TWL_SUM_TEXT,
					     TWL_SUM_INT, TWL_SUM_NULL };
	const char *const empty[] = { "1", "a", "2", "b", "3", "" };
	const enum twl_sum_tag tt[] = { TWL_SUM_TEXT, TWL_SUM_TEXT };
	const char *const split1[] = { "a", "tb" };
	const char *const split2[] = { "at", "b" };
	struct twl_sum a = sum_of(t3, ab, 3, 2), b = sum_of(t3, ba, 3, 2);

	(void)state;
	assert_int_equal(a.rows, 3);
	assert_true(a.sum != 0);
	/* the order of the rows does not matter */
	assert_int_equal(a.sum, b.sum);
	/* a value, a boundary between values, a type, NULL vs '' do */
	assert_true(sum_of(t3, changed, 3, 2).sum != a.sum);
	assert_true(sum_of(t3, moved, 3, 2).sum != a.sum);
	assert_true(sum_of(as_text, ab, 3, 2).sum != a.sum);
	assert_true(sum_of(as_null, empty, 3, 2).sum !=
		    sum_of(t3, empty, 3, 2).sum);
	/* where one text ends and the next begins */
	assert_true(sum_of(tt, split1, 1, 2).sum !=
		    sum_of(tt, split2, 1, 2).sum);
	/* a row missing changes the count and the sum */
	b = sum_of(t3, ab, 2, 2);
	assert_int_equal(b.rows, 2);
	assert_true(b.sum != a.sum);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_text),
		cmocka_unit_test(test_checksum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
