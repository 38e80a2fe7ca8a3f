// SPDX-License-Identifier: GPL-2.0
/*
 * Matching kernel message texts against the catalog's messages.
 *
 * Most kernel log lines match nothing, so the no-match path must be cheap:
 * every catalog message starts with a literal of at least 4 bytes (the
 * generator checks this), and an index keyed by those 4 bytes (a small hash
 * table, one per catalog: the compiled-in one's built on first use, a
 * loaded one's when it is installed) leaves one 4-byte load, one multiply
 * and usually an empty bucket per line. Only lines whose first 4 bytes
 * equal a catalog message's are compared in full.
 *
 * When several messages match one line (an exact text that a template of
 * another feature also matches, such as "cpuset.sched_relax_domain_level
 * is deprecated" and "cpuset.{file} is deprecated"), the most specific one
 * wins: the one with the most literal bytes. Each bucket is kept sorted by
 * specificity, highest first, so the first match found is the answer.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/match.h>

#define KEY_LEN 4
#define BUCKET_BITS 7
#define N_BUCKETS (1u << BUCKET_BITS)

struct idx_entry {
	uint32_t key;
	const struct twl_feature *feature;
	size_t message;
};

struct twl_match_index {
	struct idx_entry *entries; /* grouped by bucket, catalog order inside */
	size_t start[N_BUCKETS + 1];
};

/* The compiled-in catalog's index, built on first use. */
static struct twl_match_index *compiled_idx;
static pthread_once_t compiled_once = PTHREAD_ONCE_INIT;

static uint32_t load_key(const char *p)
{
	uint32_t k;

	memcpy(&k, p, KEY_LEN);
	return k;
}

static unsigned bucket_of(uint32_t key)
{
	return (key * 2654435761u) >> (32 - BUCKET_BITS);
}

static size_t specificity_of(const struct idx_entry *e)
{
	return e->feature->messages[e->message].specificity;
}

/*
 * Insert an entry into bucket @b, which holds @n entries sorted by
 * specificity, highest first; equal ones keep catalog order.
 */
static void bucket_insert(struct idx_entry *b, size_t n, uint32_t key,
			  const struct twl_feature *f, size_t message)
{
	size_t spec = f->messages[message].specificity;

	while (n > 0 && specificity_of(&b[n - 1]) < spec) {
		b[n] = b[n - 1];
		n--;
	}
	b[n] = (struct idx_entry){ .key = key,
				   .feature = f,
				   .message = message };
}

/* Contract: see match.h. */
struct twl_match_index *twl_match_index_new(const struct twl_catalog *c)
{
	struct twl_match_index *x = calloc(1, sizeof(*x));
	size_t n = 0, fill[N_BUCKETS] = { 0 };
	const struct twl_feature *f;

	for (size_t i = 0; i < c->n_features; i++)
		n += c->features[i].n_messages;
	if (x)
		x->entries = calloc(n ? n : 1, sizeof(*x->entries));
	if (!x || !x->entries) {
		free(x);
		return NULL;
	}
	for (size_t i = 0; i < c->n_features; i++)
		for (size_t j = 0; j < c->features[i].n_messages; j++)
			x->start[bucket_of(load_key(
					 c->features[i].messages[j].literals[0])) +
				 1]++;
	for (unsigned b = 0; b < N_BUCKETS; b++)
		x->start[b + 1] += x->start[b];
	for (size_t i = 0; i < c->n_features; i++) {
		f = &c->features[i];
		for (size_t j = 0; j < f->n_messages; j++) {
			uint32_t key = load_key(f->messages[j].literals[0]);
			unsigned b = bucket_of(key);

			bucket_insert(&x->entries[x->start[b]], fill[b]++, key,
				      f, j);
		}
	}
	return x;
}

/* Contract: see match.h. */
void twl_match_index_free(struct twl_match_index *x)
{
	if (x)
		free(x->entries);
	free(x);
}

static void compiled_build(void)
{
	compiled_idx = twl_match_index_new(&twl_catalog_compiled);
}

/* @c's index; NULL (scan linearly) when it could not be allocated. */
static const struct twl_match_index *index_of(const struct twl_catalog *c)
{
	if (c->index)
		return c->index;
	if (c != &twl_catalog_compiled)
		return NULL;
	pthread_once(&compiled_once, compiled_build);
	return compiled_idx;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Store field @k (name from @m) with value @v[0..@n) in @out; false if unfit. */
static bool put_field(const struct twl_catalog_message *m, size_t k,
		      const char *v, size_t n, struct twl_match *out)
{
	if (n == 0 || n >= TWL_MATCH_FIELD_MAX || memchr(v, '\0', n))
		return false;
	if (out) {
		size_t nl = strnlen(m->field_names[k],
				    sizeof(out->fields[k].name) - 1);

		memcpy(out->fields[k].name, m->field_names[k], nl);
		out->fields[k].name[nl] = '\0';
		memcpy(out->fields[k].value, v, n);
		out->fields[k].value[n] = '\0';
	}
	return true;
}

/*
 * Compare @n bytes of line @t with catalog literal @lit. With @norm the line
 * has had its digits replaced by '#' (wire format unknown[] texts), so a
 * digit in the literal matches '#'.
 */
static bool lit_eq(const char *t, const char *lit, size_t n, bool norm)
{
	if (!norm)
		return !memcmp(t, lit, n);
	for (size_t i = 0; i < n; i++) {
		char c = (lit[i] >= '0' && lit[i] <= '9') ? '#' : lit[i];

		if (t[i] != c)
			return false;
	}
	return true;
}

/* First occurrence of @lit in @t[0..@n), NULL if none. */
static const char *lit_find(const char *t, size_t n, const char *lit,
			    size_t llen, bool norm)
{
	if (!norm)
		return memmem(t, n, lit, llen);
	for (size_t i = 0; i + llen <= n; i++)
		if (lit_eq(t + i, lit, llen, true))
			return t + i;
	return NULL;
}

/*
 * Match template @m against the whole of @t[0..@n) (trailing whitespace
 * already cut). Each field but the last ends at the first occurrence of the
 * literal after it; the last literal must end the text (so a last field
 * such as comm may itself contain that literal); an empty last literal lets
 * the last field run to the end; a template without fields matches any
 * text that starts with it.
 */
static bool match_template(const struct twl_catalog_message *m, const char *t,
			   size_t n, bool norm, struct twl_match *out)
{
	size_t pos = m->literal_lens[0];

	if (n < pos || !lit_eq(t, m->literals[0], pos, norm))
		return false;
	for (size_t k = 0; k < m->n_fields; k++) {
		const char *lit = m->literals[k + 1];
		size_t llen = m->literal_lens[k + 1];
		const char *end;

		if (k + 1 == m->n_fields) {
			if (n < pos + 1 + llen ||
			    !lit_eq(t + n - llen, lit, llen, norm))
				return false;
			return put_field(m, k, t + pos, n - llen - pos, out);
		}
		if (n <= pos + 1)
			return false;
		end = lit_find(t + pos + 1, n - pos - 1, lit, llen, norm);
		if (!end ||
		    !put_field(m, k, t + pos, (size_t)(end - (t + pos)), out))
			return false;
		pos = (size_t)(end - t) + llen;
	}
	return true;
}

static bool match_one(const struct twl_feature *f, size_t j, const char *t,
		      size_t n, bool norm, struct twl_match *out)
{
	const struct twl_catalog_message *m = &f->messages[j];

	if (m->match == TWL_MATCH_EXACT) {
		if (n != m->literal_lens[0] ||
		    !lit_eq(t, m->literals[0], n, norm))
			return false;
	} else if (!match_template(m, t, n, norm, out)) {
		return false;
	}
	if (out) {
		out->feature = f;
		out->message = j;
		out->n_fields = m->n_fields;
	}
	return true;
}

/* Cheap reset (the match struct is over 1 KiB; this runs on every line). */
static void clear(struct twl_match *out)
{
	if (out) {
		out->feature = NULL;
		out->message = 0;
		out->n_fields = 0;
	}
}

/*
 * Try every catalog message (no index) and keep the most specific match;
 * among equally specific ones the first in catalog order. The winner is
 * matched again at the end to fill @out with its fields.
 */
static int match_scan(const struct twl_catalog *c, const char *text, size_t len,
		      bool norm, struct twl_match *out)
{
	const struct twl_feature *f, *best = NULL;
	size_t best_j = 0;

	for (size_t i = 0; i < c->n_features; i++) {
		f = &c->features[i];
		for (size_t j = 0; j < f->n_messages; j++) {
			if ((best &&
			     f->messages[j].specificity <=
				     best->messages[best_j].specificity) ||
			    !match_one(f, j, text, len, norm, NULL))
				continue;
			best = f;
			best_j = j;
		}
	}
	if (!best)
		return 0;
	return match_one(best, best_j, text, len, norm, out) ? 1 : 0;
}

int twl_match_text(const char *text, size_t len, struct twl_match *out)
{
	const struct twl_catalog *c = twl_catalog_current();
	const struct twl_match_index *x;
	uint32_t key;

	clear(out);
	if (!text)
		return 0;
	while (len > 0 && is_ws(text[len - 1]))
		len--;
	if (len < KEY_LEN)
		return 0;
	x = index_of(c);
	if (!x)
		return match_scan(c, text, len, false, out);
	key = load_key(text);
	for (size_t e = x->start[bucket_of(key)];
	     e < x->start[bucket_of(key) + 1]; e++) {
		if (x->entries[e].key != key)
			continue;
		if (match_one(x->entries[e].feature, x->entries[e].message,
			      text, len, false, out))
			return 1;
		clear(out);
	}
	return 0;
}

int twl_match_normalized(const char *text, size_t len, struct twl_match *out)
{
	clear(out);
	if (!text)
		return 0;
	while (len > 0 && is_ws(text[len - 1]))
		len--;
	return match_scan(twl_catalog_current(), text, len, true, out);
}

/* Horspool shift for "deprecat", case-insensitive: distance from the last
 * occurrence of @c among the first 7 letters to the end of the word. */
static size_t dep_shift(unsigned char c)
{
	switch (c | 0x20) {
	case 'a':
		return 1;
	case 'c':
		return 2;
	case 'e':
		return 3;
	case 'r':
		return 4;
	case 'p':
		return 5;
	case 'd':
		return 7;
	default:
		return 8;
	}
}

bool twl_text_mentions_deprecation(const char *text, size_t len)
{
	static const char word[] = "deprecat";
	const size_t wlen = sizeof(word) - 1;

	if (!text || len < wlen)
		return false;
	/* Horspool: look at the window's last byte, skip up to 8 bytes on a miss */
	for (size_t i = 0; i + wlen <= len;
	     i += dep_shift((unsigned char)text[i + wlen - 1])) {
		size_t k = 0;

		if ((text[i + wlen - 1] | 0x20) != 't')
			continue;
		while (k < wlen - 1 && (text[i + k] | 0x20) == word[k])
			k++;
		if (k == wlen - 1)
			return true;
	}
	return false;
}

size_t twl_normalize_digits(const char *text, size_t len, char *out, size_t cap)
{
	size_t n;

	if (!out || cap == 0)
		return 0;
	n = text ? len : 0;
	if (n > cap - 1) {
		n = cap - 1;
		/* do not cut a UTF-8 sequence: drop its lead and continuation bytes */
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (text[i] >= '0' && text[i] <= '9') ? '#' : text[i];
	out[n] = '\0';
	return n;
}
