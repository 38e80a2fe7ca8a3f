// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the catalog matcher: twl_match_text(),
 * twl_match_normalized(), twl_text_mentions_deprecation() and
 * twl_normalize_digits() on arbitrary bytes. Checks the contracts as well as
 * memory safety: a match names a catalog feature, fields are NUL-terminated
 * and within their caps, normalisation never grows the text nor leaves a
 * digit behind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/match.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct twl_match m;
	char norm[4096];
	size_t n, i;

	if (twl_match_text(text, size, &m) == 1) {
		if (!m.feature || twl_catalog_find(m.feature->id) != m.feature)
			abort();
		if (m.message >= m.feature->n_messages ||
		    m.n_fields > TWL_CATALOG_MAX_FIELDS)
			abort();
		for (i = 0; i < m.n_fields; i++)
			if (!memchr(m.fields[i].value, 0,
				    TWL_MATCH_FIELD_MAX) ||
			    !memchr(m.fields[i].name, 0,
				    sizeof(m.fields[i].name)))
				abort();
	}
	n = twl_normalize_digits(text, size, norm, sizeof(norm));
	if (n >= sizeof(norm) || n > size || norm[n] != '\0')
		abort();
	for (i = 0; i < n; i++)
		if (norm[i] >= '0' && norm[i] <= '9')
			abort();
	if (twl_match_normalized(norm, n, &m) == 1 && !m.feature)
		abort();
	(void)twl_text_mentions_deprecation(text, size);
	return 0;
}
