// SPDX-License-Identifier: GPL-2.0
/*
 * Differential fuzzing of twl_json_decode (common/src/json_decode.c), the
 * decoder the server runs on every report, against jansson's json_loadb
 * with JSON_REJECT_DUPLICATES, whose behaviour it promises to reproduce:
 * both must accept or both reject, and accepted trees must be equal
 * (apart from the one documented difference: NUL bytes, see below).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct twl_json_err err;
	json_error_t jerr;
	json_t *want, *got;

	want = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES,
			  &jerr);
	got = twl_json_decode((const char *)data, size, &err);
	if (want && !got && memchr(data, 0, size)) {
		/*
		 * The one documented difference (json_decode.h): jansson
		 * skips a NUL byte after a number or literal. An input it
		 * accepts has no NUL inside a string, so without its NUL
		 * bytes this decoder must accept it and build the same tree.
		 */
		char *s = malloc(size);
		size_t n = 0;

		if (!s)
			abort();
		for (size_t i = 0; i < size; i++)
			if (data[i])
				s[n++] = (char)data[i];
		got = twl_json_decode(s, n, &err);
		free(s);
		if (!got)
			abort();
	}
	if (!want != !got)
		abort(); /* one accepts what the other rejects */
	if (got && !json_equal(got, want))
		abort();
	if (!got && (!err.text[0] || err.offset > size))
		abort();
	json_decref(want);
	json_decref(got);
	return 0;
}
