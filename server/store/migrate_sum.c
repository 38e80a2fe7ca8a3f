// SPDX-License-Identifier: GPL-2.0
/*
 * A row's canonical form, its hash and COPY's text format, computed the
 * same way for the SQLite source and the PostgreSQL target (pure).
 */
#include <errno.h>
#include <string.h>

#include <openssl/sha.h>

#include "store/migrate_sum.h"

/* Append @p[0..@n) to @b as lowercase hex. */
static int add_hex(struct twl_buf *b, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char two[2];
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		two[0] = digits[p[i] >> 4];
		two[1] = digits[p[i] & 15];
		ret = twl_buf_append(b, two, 2);
	}
	return ret;
}

/* Contract: see migrate_sum.h. */
int twl_sum_field(struct twl_buf *row, enum twl_sum_tag tag, const void *v,
		  size_t n)
{
	size_t len = tag == TWL_SUM_BLOB ? 2 * n : tag == TWL_SUM_NULL ? 0 : n;
	unsigned char head[9];
	int i, ret;

	head[0] = (unsigned char)tag;
	for (i = 0; i < 8; i++)
		head[1 + i] = (unsigned char)((uint64_t)len >> (8 * i));
	ret = twl_buf_append(row, head, sizeof(head));
	if (ret || tag == TWL_SUM_NULL)
		return ret;
	if (tag == TWL_SUM_BLOB)
		return add_hex(row, v, n);
	return twl_buf_append(row, v, n);
}

/* Contract: see migrate_sum.h. */
void twl_sum_row(struct twl_sum *s, struct twl_buf *row)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	uint64_t h = 0;
	int i;

	SHA256((const unsigned char *)row->data, row->len, md);
	for (i = 0; i < 8; i++)
		h |= (uint64_t)md[i] << (8 * i);
	s->sum += h;
	s->rows++;
	twl_buf_reset(row);
}

/* Append text @v[0..@n) to @line with COPY's escapes. */
static int add_escaped(struct twl_buf *line, const char *v, size_t n)
{
	size_t i, from = 0;
	char esc[2] = { '\\', 0 };
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		switch (v[i]) {
		case '\0':
			return -EILSEQ;
		case '\\':
			esc[1] = '\\';
			break;
		case '\t':
			esc[1] = 't';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		default:
			continue;
		}
		ret = twl_buf_append(line, v + from, i - from);
		if (!ret)
			ret = twl_buf_append(line, esc, 2);
		from = i + 1;
	}
	return ret ? ret : twl_buf_append(line, v + from, n - from);
}

/* Contract: see migrate_sum.h. */
int twl_copy_field(struct twl_buf *line, bool first, enum twl_sum_tag tag,
		   const void *v, size_t n)
{
	int ret = first ? 0 : twl_buf_append(line, "\t", 1);

	if (ret)
		return ret;
	switch (tag) {
	case TWL_SUM_NULL:
		return twl_buf_append(line, "\\N", 2);
	case TWL_SUM_BLOB: /* bytea's "\x..." with its backslash escaped */
		ret = twl_buf_append(line, "\\\\x", 3);
		return ret ? ret : add_hex(line, v, n);
	default:
		return add_escaped(line, v, n);
	}
}
