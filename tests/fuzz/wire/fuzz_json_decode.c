// SPDX-License-Identifier: GPL-2.0
/*
 * Differential fuzzing of twl_json_decode (common/src/json_decode.c), the
 * decoder the server runs on every report, against jansson's json_loadb
 * with JSON_REJECT_DUPLICATES, whose behaviour it promises to reproduce:
 * both must accept or both reject, and accepted trees must be equal
 * (apart from the one documented difference: NUL bytes, see below).
 * twl_json_decode_nested() with a small cap must give the same tree when
 * the document nests within the cap, and fail when it does not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 4 /* small, so that the fuzzer reaches it often */

/* Levels of arrays and objects in v (a scalar is 0). */
static int nesting(json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;
	int max = 0, d;

	if (json_is_object(v))
		json_object_foreach(v, key, item)
		{
			d = nesting(item);
			max = d > max ? d : max;
		}
	else if (json_is_array(v))
		json_array_foreach(v, i, item)
		{
			d = nesting(item);
			max = d > max ? d : max;
		}
	else
		return 0;
	return max + 1;
}

/* twl_json_decode_nested(CAP) against the uncapped decoder. */
static void check_cap(const uint8_t *data, size_t size)
{
	json_t *full = twl_json_decode((const char *)data, size, NULL);
	json_t *capped =
		twl_json_decode_nested((const char *)data, size, CAP, NULL);

	if (capped ? !json_equal(capped, full) || nesting(full) > CAP :
		     full && nesting(full) <= CAP)
		abort();
	json_decref(full);
	json_decref(capped);
}

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
	check_cap(data, size);
	return 0;
}
