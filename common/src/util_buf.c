// SPDX-License-Identifier: GPL-2.0
/* Capped growable buffer: never grows past its max, all-or-nothing appends. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

void twl_buf_init(struct twl_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

/* Reallocate to @ncap bytes (content, NUL and room), keeping the content. */
static int buf_grow(struct twl_buf *b, size_t ncap)
{
	char *p = realloc(b->data, ncap);

	if (!p)
		return -ENOMEM;
	if (!b->data)
		p[0] = '\0';
	b->data = p;
	b->cap = ncap;
	return 0;
}

/* Make room for @extra more content bytes plus the NUL. */
static int buf_reserve(struct twl_buf *b, size_t extra)
{
	size_t need, ncap;

	if (extra > b->max || b->len > b->max - extra)
		return -E2BIG;
	if (b->len + extra == SIZE_MAX)
		return -ENOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (b->max < SIZE_MAX - 1 && ncap > b->max + 1)
		ncap = b->max + 1;
	return buf_grow(b, ncap);
}

int twl_buf_append(struct twl_buf *b, const void *p, size_t n)
{
	int ret;

	ret = buf_reserve(b, n);
	if (ret)
		return ret;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int twl_buf_printf(struct twl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, ret;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	ret = buf_reserve(b, (size_t)n);
	if (ret)
		return ret;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int twl_buf_reserve(struct twl_buf *b, size_t n, size_t cap)
{
	if (n > b->max || b->len > b->max - n)
		return -E2BIG;
	if (!n || n > cap || b->len + n == SIZE_MAX)
		return 0;
	if (b->len + n + 1 <= b->cap)
		return 0;
	/* exactly what was asked: a claimed size is usually the final one */
	return buf_grow(b, b->len + n + 1);
}

void twl_buf_reset(struct twl_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void twl_buf_fini(struct twl_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}
