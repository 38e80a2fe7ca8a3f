// SPDX-License-Identifier: GPL-2.0
/*
 * The byte pre-scan of twl_report_parse()'s full path: bounds size and
 * depth and checks every string's UTF-8 before the text reaches jansson
 * (whose own depth limit, 2048, is far too deep for us), so those errors
 * name the member they are in. Syntax errors are left to jansson; this
 * only tracks [ { } ] , : and strings closely enough to name the member
 * an error is in.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "wire_internal.h"

/* One open [ or { seen by the pre-scan. */
struct scan_level {
	char type; /* '[' or '{' */
	bool expect_key;
	size_t index;
	size_t key_off, key_len; /* the last member name, copied on failure */
	char key[48];
};

/* Path of the value at the scan position, from the first @depth levels. */
static void scan_path(struct ctx *c, struct scan_level *lv, int depth,
		      const char *buf)
{
	int i;

	wire_path_pop(c, 0);
	for (i = 0; i < depth; i++) {
		if (lv[i].type == '[') {
			wire_path_push_index(c, lv[i].index);
		} else {
			twl_printable_copy(buf + lv[i].key_off, lv[i].key_len,
					   lv[i].key, sizeof(lv[i].key));
			wire_path_push_key(c, lv[i].key);
		}
	}
}

/*
 * The string buf[start..end) just closed: only strings with a NUL or a
 * non-ASCII byte (@not_ascii) need the full UTF-8 check; a member name is
 * remembered for the path.
 */
static int scan_string_end(struct ctx *c, struct scan_level *lv, int depth,
			   const char *buf, size_t start, size_t end,
			   bool is_key, bool not_ascii)
{
	if (not_ascii && !twl_utf8_valid(buf + start, end - start)) {
		scan_path(c, lv, is_key ? depth - 1 : depth, buf);
		return wire_fail(
			c, TWL_VERR_INVALID_UTF8,
			"%s is not valid UTF-8 or contains a NUL byte; send text as UTF-8 (escape other bytes)",
			is_key ? "a member name" : "the string");
	}
	if (is_key) {
		lv[depth - 1].key_off = start;
		lv[depth - 1].key_len = end - start;
	}
	return 0;
}

/* One of [ { } ] , : (or any other byte) outside a string. */
static int scan_punct(struct ctx *c, struct scan_level *lv, int *depth, char ch,
		      const char *buf)
{
	switch (ch) {
	case '{':
	case '[':
		if (*depth == TWL_WIRE_MAX_DEPTH) {
			scan_path(c, lv, *depth, buf);
			return wire_fail(
				c, TWL_VERR_TOO_DEEP,
				"nesting deeper than %d levels of arrays and objects",
				TWL_WIRE_MAX_DEPTH);
		}
		lv[*depth].type = ch;
		lv[*depth].expect_key = ch == '{';
		lv[*depth].index = 0;
		lv[*depth].key_off = 0;
		lv[*depth].key_len = 0;
		(*depth)++;
		break;
	case '}':
	case ']':
		if (*depth > 0)
			(*depth)--;
		break;
	case ',':
		if (*depth > 0) {
			lv[*depth - 1].index++;
			lv[*depth - 1].expect_key = lv[*depth - 1].type == '{';
		}
		break;
	case ':':
		if (*depth > 0)
			lv[*depth - 1].expect_key = false;
		break;
	default:
		break;
	}
	return 0;
}

/* Contract: see wire_internal.h. */
int wire_prescan(struct ctx *c, const char *buf, size_t len)
{
	struct scan_level lv[TWL_WIRE_MAX_DEPTH];
	size_t i, start = 0;
	int depth = 0;
	bool in_str = false, esc = false, is_key = false, not_ascii = false;

	if (len > TWL_WIRE_MAX_DOC_BYTES)
		return wire_fail(
			c, TWL_VERR_TOO_LONG,
			"the document is %zu bytes, more than the %u allowed; split the batch",
			len, TWL_WIRE_MAX_DOC_BYTES);
	for (i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			if (ch == 0 || (unsigned char)ch >= 0x80)
				not_ascii = true;
			if (esc) {
				esc = false;
			} else if (ch == '\\') {
				esc = true;
			} else if (ch == '"') {
				in_str = false;
				if (scan_string_end(c, lv, depth, buf, start, i,
						    is_key, not_ascii))
					return -EINVAL;
			}
			continue;
		}
		if (ch == '"') {
			in_str = true;
			not_ascii = false;
			start = i + 1;
			is_key = depth > 0 && lv[depth - 1].type == '{' &&
				 lv[depth - 1].expect_key;
		} else if (scan_punct(c, lv, &depth, ch, buf)) {
			return -EINVAL;
		}
	}
	/* An unterminated string: jansson reports it. */
	wire_path_pop(c, 0);
	return 0;
}
