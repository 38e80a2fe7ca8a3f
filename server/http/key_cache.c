// SPDX-License-Identifier: GPL-2.0
/* Host keys resolved recently (key_cache.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/key_cache.h"

#define KC_SETS 4096 /* 16,384 hosts' keys in 2.25 MiB (144-byte entries) */
#define KC_WAYS 4
#define KC_LOCKS 64 /* sets share a lock by index modulo KC_LOCKS */

struct kc_entry {
	char hash[64]; /* the key's SHA-256 in hex, not NUL-terminated */
	char host_id[65];
	double until; /* monotonic; 0 = empty */
};

struct twl_key_cache {
	double ttl;
	atomic_ulong gen; /* twl_key_cache_forget_host() calls */
	pthread_mutex_t lock[KC_LOCKS];
	struct kc_entry e[KC_SETS][KC_WAYS];
};

/* Contract: see key_cache.h. */
struct twl_key_cache *twl_key_cache_new(double ttl)
{
	struct twl_key_cache *kc;

	if (!(ttl > 0)) {
		errno = EINVAL;
		return NULL;
	}
	kc = calloc(1, sizeof(*kc));
	if (!kc)
		return NULL;
	kc->ttl = ttl;
	for (int i = 0; i < KC_LOCKS; i++)
		pthread_mutex_init(&kc->lock[i], NULL);
	return kc;
}

/* Contract: see key_cache.h. */
void twl_key_cache_free(struct twl_key_cache *kc)
{
	if (!kc)
		return;
	for (int i = 0; i < KC_LOCKS; i++)
		pthread_mutex_destroy(&kc->lock[i]);
	free(kc);
}

/*
 * The set of @hash: its first 8 hex digits. A SHA-256 of a random secret
 * spreads evenly; a client that chooses secrets to fill one set only makes
 * those keys be looked up in the store again.
 */
static unsigned set_of(const char *hash)
{
	uint32_t v = 0;

	for (int i = 0; i < 8; i++) {
		char c = hash[i];

		v = v << 4 |
		    (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v % KC_SETS;
}

/* Contract: see key_cache.h. */
bool twl_key_cache_get(struct twl_key_cache *kc, const char *hash, double now,
		       char host_id[65])
{
	unsigned s = set_of(hash);
	struct kc_entry *set = kc->e[s];
	bool hit = false;

	pthread_mutex_lock(&kc->lock[s % KC_LOCKS]);
	for (int i = 0; i < KC_WAYS && !hit; i++) {
		if (set[i].until > now && !memcmp(set[i].hash, hash, 64)) {
			memcpy(host_id, set[i].host_id, 65);
			hit = true;
		}
	}
	pthread_mutex_unlock(&kc->lock[s % KC_LOCKS]);
	return hit;
}

/* Contract: see key_cache.h. */
unsigned long twl_key_cache_gen(struct twl_key_cache *kc)
{
	return atomic_load(&kc->gen);
}

/* Contract: see key_cache.h. */
void twl_key_cache_put(struct twl_key_cache *kc, const char *hash,
		       const char *host_id, double now, unsigned long gen)
{
	unsigned s = set_of(hash);
	struct kc_entry *set = kc->e[s], *to = &set[0];

	pthread_mutex_lock(&kc->lock[s % KC_LOCKS]);
	/* under the lock: a forget that follows sees this entry */
	if (atomic_load(&kc->gen) != gen) {
		pthread_mutex_unlock(&kc->lock[s % KC_LOCKS]);
		return;
	}
	for (int i = 0; i < KC_WAYS; i++) {
		if (!memcmp(set[i].hash, hash, 64)) {
			to = &set[i];
			break;
		}
		if (set[i].until < to->until)
			to = &set[i];
	}
	memcpy(to->hash, hash, 64);
	strncpy(to->host_id, host_id, sizeof(to->host_id) - 1);
	to->host_id[sizeof(to->host_id) - 1] = 0;
	to->until = now + kc->ttl;
	pthread_mutex_unlock(&kc->lock[s % KC_LOCKS]);
}

/* Contract: see key_cache.h. */
void twl_key_cache_forget_host(struct twl_key_cache *kc, const char *host_id)
{
	atomic_fetch_add(&kc->gen, 1);
	for (unsigned s = 0; s < KC_SETS; s++) {
		pthread_mutex_lock(&kc->lock[s % KC_LOCKS]);
		for (int i = 0; i < KC_WAYS; i++)
			if (!strcmp(kc->e[s][i].host_id, host_id))
				memset(&kc->e[s][i], 0, sizeof(kc->e[s][i]));
		pthread_mutex_unlock(&kc->lock[s % KC_LOCKS]);
	}
}
