// SPDX-License-Identifier: GPL-2.0
/* Characters of agent text made safe to show (escape.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

#include "api/escape.h"

/* The code point of the valid sequence @s of @l bytes. */
static uint32_t code_point(const unsigned char *s, size_t l)
{
	static const unsigned char lead_bits[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t c = s[0] & lead_bits[l];

	for (size_t i = 1; i < l; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

/*
 * Characters no reader should get raw, though valid UTF-8: C1 controls
 * (U+0080-U+009F; U+009B is a one-byte CSI to many terminals), the bidi
 * marks, embeddings, overrides and isolates (U+202E shows "gnp.exe" as
 * "exe.png") and the line and paragraph separators.
 */
static bool controlled(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x61c || c == 0x200e ||
	       c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

/* Contract: see escape.h. */
unsigned twl_escape_unit(const unsigned char *s, size_t n, size_t *in_len,
			 char *buf, size_t *buf_len)
{
	size_t l = twl_utf8_seq_len((const char *)s, n);
	uint32_t c;

	if (!l || (l == 1 && (s[0] < 0x20 || s[0] == 0x7f))) {
		*buf_len = (size_t)snprintf(buf, TWL_ESCAPE_UNIT_MAX, "\\x%02x",
					    s[0]);
		*in_len = 1;
		return 4;
	}
	*in_len = l;
	c = code_point(s, l);
	if (controlled(c)) {
		*buf_len = (size_t)snprintf(buf, TWL_ESCAPE_UNIT_MAX, "\\u%04x",
					    (unsigned)c);
		return 6;
	}
	memcpy(buf, s, l);
	*buf_len = l;
	return 1;
}
