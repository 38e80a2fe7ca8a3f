// SPDX-License-Identifier: GPL-2.0
/* Strict UTF-8 check (RFC 3629): shortest form, no surrogates, <= U+10FFFF. */
#include <twilight/util.h>

bool twl_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned char c = p[i];
		unsigned char lo = 0x80, hi = 0xbf;
		size_t n, k;

		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		/*
		 * The second byte's range encodes every rule: E0 needs A0..BF
		 * (no overlong), ED needs 80..9F (no surrogate), F0 needs
		 * 90..BF (no overlong), F4 needs 80..8F (<= U+10FFFF).
		 */
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else {
			return false; /* 80..C1 (continuation, overlong), F5..FF */
		}
		if (len - i <= n)
			return false;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return false;
		for (k = 2; k <= n; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xbf)
				return false;
		i += n + 1;
	}
	return true;
}

/* Contract: see util.h. */
size_t twl_utf8_seq_len(const char *s, size_t n)
{
	const unsigned char c = (unsigned char)s[0];
	size_t len;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	return twl_utf8_valid(s, len) ? len : 0;
}
