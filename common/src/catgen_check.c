// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog parser: the checks across records. Ids are unique; a control file
 * belongs to one feature's files and to at most one feature's event_files;
 * a text belongs to one feature; templates of different features that can
 * meet the same line differ in specificity (the matcher's tie-break).
 */
#include <string.h>

#include "catgen.h"

/*
 * Can one line match both templates? Conservatively yes when the first
 * literal of one starts with the first literal of the other. (An exact
 * text that a template matches is always more specific than the template:
 * it holds the template's literals and at least one byte per field.)
 */
static bool templates_overlap(const struct gmsg *a, const struct gmsg *b)
{
	size_t n = a->lit_lens[0] < b->lit_lens[0] ? a->lit_lens[0] :
						     b->lit_lens[0];

	return !memcmp(a->lits[0], b->lits[0], n);
}

/* Is a file of @fa's list @key also in @fb's (earlier in it when a == b)? */
static int check_file_lists(const struct gfeat *fa, size_t a,
			    const struct gfeat *fb, size_t b, bool events)
{
	json_t *la = events ? fa->event_files : fa->files,
	       *lb = events ? fb->event_files : fb->files, *x, *y;
	const char *key = events ? "event_files" : "files";
	size_t i, j;

	json_array_foreach(la, i, x)
	{
		json_array_foreach(lb, j, y)
		{
			if ((b == a && j >= i) ||
			    strcmp(json_string_value(x), json_string_value(y)))
				continue;
			return gen_fail(
				W_FEATURE, a, fa->id,
				"%s[%zu]: duplicate file \"%s\" (already in features[%zu] %s)",
				key, i, json_string_value(x), b, fb->id);
		}
	}
	return 0;
}

/* Message @i of features[a] against message @j of features[b]. */
static int check_message_pair(const struct gfeat *fa, size_t a, size_t i,
			      const struct gfeat *fb, size_t b, size_t j)
{
	const struct gmsg *ma = &fa->msgs[i], *mb = &fb->msgs[j];

	if (ma->exact && mb->exact && ma->trimmed_len == mb->trimmed_len &&
	    !memcmp(ma->text, mb->text, ma->trimmed_len) &&
	    (b != a || !strcmp(ma->text, mb->text)))
		return gen_fail(
			W_FEATURE, a, fa->id,
			"messages[%zu].text: duplicate of features[%zu] %s messages[%zu]%s",
			i, b, fb->id, j,
			b == a ? "" : " (a text belongs to one feature)");
	if (!ma->exact && !mb->exact && !strcmp(ma->text, mb->text))
		return gen_fail(
			W_FEATURE, a, fa->id,
			"messages[%zu].text: duplicate template of features[%zu] %s",
			i, b, fb->id);
	if (b != a && !ma->exact && !mb->exact &&
	    ma->specificity == mb->specificity && templates_overlap(ma, mb))
		return gen_fail(
			W_FEATURE, a, fa->id,
			"messages[%zu].text: ambiguous: a line can match this template and the one of %s messages[%zu], and both have %zu literal bytes (make one more specific)",
			i, fb->id, j, ma->specificity);
	return 0;
}

/* Every message of features[a] against the earlier ones of features[b]. */
static int check_messages(const struct gfeat *fa, size_t a,
			  const struct gfeat *fb, size_t b)
{
	int err;

	for (size_t i = 0; i < fa->n_msgs; i++) {
		for (size_t j = 0; j < fb->n_msgs && (b != a || j < i); j++) {
			err = check_message_pair(fa, a, i, fb, b, j);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Contract: see catgen.h. */
int gen_check_cross(const struct catalog *c)
{
	int err;

	for (size_t a = 0; a < c->n_feats; a++) {
		const struct gfeat *fa = &c->feats[a];

		for (size_t b = 0; b <= a; b++) {
			const struct gfeat *fb = &c->feats[b];

			if (b < a && !strcmp(fa->id, fb->id))
				return gen_fail(
					W_FEATURE, a, fa->id,
					"field \"id\": duplicate of features[%zu]",
					b);
			err = check_file_lists(fa, a, fb, b, false);
			if (!err)
				err = check_file_lists(fa, a, fb, b, true);
			if (!err)
				err = check_messages(fa, a, fb, b);
			if (err)
				return err;
		}
	}
	return 0;
}
