// SPDX-License-Identifier: GPL-2.0
/* Printable-ASCII copies of text from peers, for logs and JSON. */
#include <twilight/util.h>

/* Contract: see util.h. */
size_t twl_printable_copy(const char *in, size_t len, char *out, size_t cap)
{
	size_t i;

	if (!cap)
		return 0;
	for (i = 0; i < len && i + 1 < cap; i++) {
		unsigned char ch = (unsigned char)in[i];

		out[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	out[i] = '\0';
	return i;
}
