// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded set of record identities (record_dedup.h): a ring of entries in
 * arrival order, so the oldest goes first, and an open-addressing index
 * (linear probing, twice the ring's size) with backward-shift deletion, so
 * that nothing is ever tombstoned and lookups stay short.
 */
#include "record_dedup.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct key {
	uint64_t mono, text_hash, boot_hash;
	uint32_t ord;
};

struct twl_dedup {
	size_t cap, n, head; /* ring: n entries from head (the oldest) */
	size_t mask; /* index slots - 1 */
	struct key *ring;
	uint32_t *slot; /* ring index + 1; 0 = empty */
};

/* FNV-1a, then a final mix so that nearby keys spread over the index. */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint64_t key_hash(const struct key *k)
{
	return mix(k->mono ^ mix(k->text_hash ^ mix(k->boot_hash ^ k->ord)));
}

static bool key_eq(const struct key *a, const struct key *b)
{
	return a->mono == b->mono && a->text_hash == b->text_hash &&
	       a->boot_hash == b->boot_hash && a->ord == b->ord;
}

/* The boot id's digits, lowercased, dashes skipped. */
static uint64_t boot_hash(const char *boot_id)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *p;

	for (p = boot_id; *p; p++) {
		char c = *p >= 'A' && *p <= 'F' ? (char)(*p - 'A' + 'a') : *p;

		if (c != '-')
			h = hash_bytes(&c, 1, h);
	}
	return h;
}

/* The text without trailing white space. */
static uint64_t text_hash(const char *text, size_t len)
{
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t' ||
		       text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	return hash_bytes(text, len, 0xcbf29ce484222325ULL);
}

static void make_key(struct key *k, const char *boot_id, uint64_t mono,
		     uint32_t ord, const char *text, size_t len)
{
	k->boot_hash = boot_hash(boot_id);
	k->text_hash = text_hash(text, len);
	k->mono = mono;
	k->ord = ord;
}

uint64_t twl_dedup_place(const char *cursor)
{
	return hash_bytes(cursor, strlen(cursor), 0xcbf29ce484222325ULL) | 1;
}

uint32_t twl_dedup_ordinal(struct twl_dedup_run *run, const char *boot_id,
			   uint64_t mono_us, const char *text, size_t len,
			   uint64_t pos)
{
	uint64_t bh = boot_hash(boot_id), th = text_hash(text, len);
	uint32_t ord = 0;
	unsigned i;

	if (!pos)
		return 0;
	if (run->n == 0 || run->boot_hash != bh || run->mono != mono_us) {
		run->boot_hash = bh;
		run->mono = mono_us;
		run->n = 0;
	}
	for (i = 0; i < run->n; i++) {
		if (run->at[i].text_hash != th)
			continue;
		if (run->at[i].pos == pos)
			return ord; /* handed in again */
		ord++;
	}
	if (run->n == TWL_DEDUP_RUN_MAX)
		return 0;
	run->at[run->n].text_hash = th;
	run->at[run->n].pos = pos;
	run->n++;
	return ord;
}

struct twl_dedup *twl_dedup_new(size_t cap)
{
	struct twl_dedup *d;
	size_t slots = 2;

	if (cap < 1 || cap > (1u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	while (slots < 2 * cap)
		slots <<= 1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->cap = cap;
	d->mask = slots - 1;
	d->ring = calloc(cap, sizeof(*d->ring));
	d->slot = calloc(slots, sizeof(*d->slot));
	if (!d->ring || !d->slot) {
		twl_dedup_free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void twl_dedup_free(struct twl_dedup *d)
{
	if (!d)
		return;
	free(d->ring);
	free(d->slot);
	free(d);
}

size_t twl_dedup_count(const struct twl_dedup *d)
{
	return d->n;
}

/* The index slot holding ring entry @ri (it is there). */
static size_t find_slot(const struct twl_dedup *d, size_t ri)
{
	size_t s = key_hash(&d->ring[ri]) & d->mask;

	while (d->slot[s] != ri + 1)
		s = (s + 1) & d->mask;
	return s;
}

/* Remove index slot @s, moving later entries of its run back (no tombstones). */
static void unindex(struct twl_dedup *d, size_t s)
{
	size_t next = s;

	d->slot[s] = 0;
	for (;;) {
		size_t home;

		next = (next + 1) & d->mask;
		if (!d->slot[next])
			return;
		home = key_hash(&d->ring[d->slot[next] - 1]) & d->mask;
		/* Move it back when its home is not in (s, next]. */
		if ((next > s && (home <= s || home > next)) ||
		    (next < s && home <= s && home > next)) {
			d->slot[s] = d->slot[next];
			d->slot[next] = 0;
			s = next;
		}
	}
}

/* The empty slot where @k would go, or SIZE_MAX when @k is held. */
static size_t lookup(const struct twl_dedup *d, const struct key *k)
{
	size_t s;

	for (s = key_hash(k) & d->mask; d->slot[s]; s = (s + 1) & d->mask)
		if (key_eq(&d->ring[d->slot[s] - 1], k))
			return SIZE_MAX;
	return s;
}

bool twl_dedup_has(const struct twl_dedup *d, const char *boot_id,
		   uint64_t mono_us, uint32_t ord, const char *text, size_t len)
{
	struct key k;

	make_key(&k, boot_id, mono_us, ord, text, len);
	return lookup(d, &k) == SIZE_MAX;
}

bool twl_boot_id_same(const char *a, const char *b)
{
	for (;;) {
		while (*a == '-')
			a++;
		while (*b == '-')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if ((*a | 0x20) != (*b | 0x20))
			return false;
		a++;
		b++;
	}
}

bool twl_dedup_seen(struct twl_dedup *d, const char *boot_id, uint64_t mono_us,
		    uint32_t ord, const char *text, size_t len)
{
	struct key k;
	size_t s, ri;

	make_key(&k, boot_id, mono_us, ord, text, len);
	s = lookup(d, &k);
	if (s == SIZE_MAX)
		return true;
	if (d->n == d->cap) {
		/* Forget the oldest; its ring place takes the new key. */
		ri = d->head;
		unindex(d, find_slot(d, ri));
		d->head = (d->head + 1) % d->cap;
		d->n--;
		/* The free slot found above may have been filled by the shift. */
		for (s = key_hash(&k) & d->mask; d->slot[s];
		     s = (s + 1) & d->mask)
			;
	} else {
		ri = (d->head + d->n) % d->cap;
	}
	d->ring[ri] = k;
	d->slot[s] = (uint32_t)(ri + 1);
	d->n++;
	return false;
}
