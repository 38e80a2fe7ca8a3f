/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text from agents as a reader may see it: the exports (export.c) pass
 * every character through twl_escape_unit(), so nothing in them steers a
 * terminal, a mail reader or the direction of text. Pure.
 */
#ifndef TWL_SERVER_ESCAPE_H
#define TWL_SERVER_ESCAPE_H

#include <stddef.h>

/* Room for one rendered unit, its NUL included. */
#define TWL_ESCAPE_UNIT_MAX 8

/*
 * twl_escape_unit - render the unit at @s (@n > 0 bytes left) into @buf
 * (TWL_ESCAPE_UNIT_MAX bytes; *@buf_len bytes written, no NUL counted):
 * a printable UTF-8 character as it is (1 column); a control byte (C0,
 * DEL) or a byte that starts no valid sequence as "\xNN" (4 columns,
 * *@in_len = 1); a valid character that is a C1 control (U+0080-U+009F),
 * a bidi mark, embedding, override or isolate, or a line or paragraph
 * separator as "\uXXXX" (6 columns). Returns the columns; *@in_len gets
 * the input bytes the unit took.
 */
unsigned twl_escape_unit(const unsigned char *s, size_t n, size_t *in_len,
			 char *buf, size_t *buf_len);

#endif /* TWL_SERVER_ESCAPE_H */
