/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Matching kernel message texts against the deprecation catalog. Runs on
 * every kernel log line, so the no-match path is a few byte comparisons
 * (see schema/catalog.md, "Matching rules"). All functions are thread-safe
 * and match against the current catalog (twl_catalog_current()); the
 * compiled-in catalog's index is allocated once, on first use, a loaded
 * catalog's when it is installed, and nothing after.
 */
#ifndef TWILIGHT_MATCH_H
#define TWILIGHT_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <twilight/catalog.h>

/* Capacity of one parsed field value, NUL included. */
#define TWL_MATCH_FIELD_MAX 128

struct twl_match {
	const struct twl_feature *feature;
	size_t message; /* index into feature->messages of the text that matched */
	size_t n_fields;
	struct {
		char name[16];
		char value[TWL_MATCH_FIELD_MAX];
	} fields[TWL_CATALOG_MAX_FIELDS];
};

/*
 * twl_match_text - match one decoded message text (\xNN escapes already
 * decoded, printk's trailing newline stripped) against every catalog
 * message. Trailing whitespace (space, tab, CR, LF) of @text is ignored, as
 * it is in the catalog texts. Exact messages must equal the whole text;
 * templates must match the whole text, each field non-empty, free of NUL
 * bytes and at most TWL_MATCH_FIELD_MAX - 1 bytes long (a longer field means
 * the line is not this message: no match). Returns 1 when matched (@out
 * filled: feature, message, n_fields and that many fields), 0 when not
 * (out->feature NULL, out->n_fields 0, field contents unspecified); @out
 * may be NULL to test only.
 */
int twl_match_text(const char *text, size_t len, struct twl_match *out);

/*
 * twl_match_normalized - like twl_match_text(), for a text whose digits were
 * replaced by '#' (twl_normalize_digits(), the wire format's unknown[]
 * texts): a digit in a catalog text matches '#'. For receivers re-matching
 * unknown deprecations against a newer catalog; scans every catalog
 * message (no index), so not for the per-line path. Field values come back
 * normalised ("###").
 */
int twl_match_normalized(const char *text, size_t len, struct twl_match *out);

/*
 * twl_match_index_new - the matcher's index of catalog @c (which must outlive
 * it), or NULL with errno ENOMEM. twl_catalog_install() calls it.
 */
struct twl_match_index *twl_match_index_new(const struct twl_catalog *c);

/* twl_match_index_free - free an index; NULL-safe. */
void twl_match_index_free(struct twl_match_index *x);

/* twl_text_mentions_deprecation - true when @text contains "deprecat" in any case. */
bool twl_text_mentions_deprecation(const char *text, size_t len);

/*
 * twl_normalize_digits - copy @text to @out with every ASCII digit replaced
 * by '#', truncated to at most @cap - 1 bytes without cutting a UTF-8
 * sequence, and NUL-terminated (nothing written when @cap is 0). Returns
 * the number of bytes written before the NUL.
 */
size_t twl_normalize_digits(const char *text, size_t len, char *out,
			    size_t cap);

#endif /* TWILIGHT_MATCH_H */
