// SPDX-License-Identifier: GPL-2.0
/*
 * Connections per peer key (conntrack.h): open addressing with linear
 * probing over twice as many slots as keys, so chains stay short, and
 * deletion by shifting the chain back (no tombstones to pile up).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "http/conntrack.h"
#include "http/peer.h"

struct slot {
	char key[TWL_PEER_KEY_MAX]; /* "" = free */
	unsigned n;
};

struct twl_conntrack {
	pthread_mutex_t lock;
	uint64_t seed;
	size_t mask, used, cap;
	struct slot *s;
};

/* Contract: see conntrack.h. */
struct twl_conntrack *twl_conntrack_new(unsigned keys)
{
	struct twl_conntrack *ct;
	size_t slots = 2;
	char hex[17];

	if (!keys) {
		errno = EINVAL;
		return NULL;
	}
	while (slots < 2 * (size_t)keys)
		slots *= 2;
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return NULL;
	ct->s = calloc(slots, sizeof(*ct->s));
	if (!ct->s || twl_random_hex(hex, 8)) {
		twl_conntrack_free(ct);
		errno = ENOMEM;
		return NULL;
	}
	ct->seed = strtoull(hex, NULL, 16);
	ct->mask = slots - 1;
	ct->cap = keys;
	pthread_mutex_init(&ct->lock, NULL);
	return ct;
}

/* Contract: see conntrack.h. */
void twl_conntrack_free(struct twl_conntrack *ct)
{
	if (!ct)
		return;
	if (ct->s)
		pthread_mutex_destroy(&ct->lock);
	free(ct->s);
	free(ct);
}

/* FNV-1a from a random start, then a final mix: the slot of @key. */
static size_t home(const struct twl_conntrack *ct, const char *key)
{
	uint64_t h = 14695981039346656037ull ^ ct->seed;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 1099511628211ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h & ct->mask;
}

/* The slot holding @key, or the free slot that ends its chain. */
static struct slot *find(struct twl_conntrack *ct, const char *key)
{
	size_t i = home(ct, key);

	while (ct->s[i].key[0] && strcmp(ct->s[i].key, key))
		i = (i + 1) & ct->mask;
	return &ct->s[i];
}

/* Contract: see conntrack.h. */
unsigned twl_conntrack_count(struct twl_conntrack *ct, const char *key)
{
	unsigned n;

	pthread_mutex_lock(&ct->lock);
	n = find(ct, key)->n;
	pthread_mutex_unlock(&ct->lock);
	return n;
}

/* Contract: see conntrack.h. */
int twl_conntrack_add(struct twl_conntrack *ct, const char *key, unsigned max)
{
	struct slot *sl;
	int ret = 0;

	if (!key[0] || strlen(key) >= TWL_PEER_KEY_MAX)
		return -EINVAL;
	pthread_mutex_lock(&ct->lock);
	sl = find(ct, key);
	if (sl->n >= max) {
		ret = -EUSERS;
	} else if (!sl->key[0] && ct->used >= ct->cap) {
		ret = -ENOSPC;
	} else {
		if (!sl->key[0]) {
			strcpy(sl->key, key);
			ct->used++;
		}
		sl->n++;
	}
	pthread_mutex_unlock(&ct->lock);
	return ret;
}

/* Free slot @i and move later members of its chain back into the gap. */
static void vacate(struct twl_conntrack *ct, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t h;

		ct->s[i] = (struct slot){ 0 };
		do {
			j = (j + 1) & ct->mask;
			if (!ct->s[j].key[0])
				return;
			h = home(ct, ct->s[j].key);
			/* stays if its home lies cyclically in (i, j] */
		} while (i <= j ? (i < h && h <= j) : (i < h || h <= j));
		ct->s[i] = ct->s[j];
		i = j;
	}
}

/* Contract: see conntrack.h. */
void twl_conntrack_del(struct twl_conntrack *ct, const char *key)
{
	struct slot *sl;

	pthread_mutex_lock(&ct->lock);
	sl = find(ct, key);
	if (sl->key[0] && sl->n && --sl->n == 0) {
		vacate(ct, (size_t)(sl - ct->s));
		ct->used--;
	}
	pthread_mutex_unlock(&ct->lock);
}
