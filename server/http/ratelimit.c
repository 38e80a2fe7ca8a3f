// SPDX-License-Identifier: GPL-2.0
/* Bounded token-bucket table (ratelimit.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/ratelimit.h"

#define RL_SETS 4096
#define RL_WAYS 4

struct rl_entry {
	char key[66];
	double tokens;
	double last;
};

struct twl_ratelimit {
	pthread_mutex_t lock;
	double rate, burst;
	struct rl_entry e[RL_SETS][RL_WAYS];
};

/* Contract: see ratelimit.h. */
struct twl_ratelimit *twl_ratelimit_new(double rate, double burst)
{
	struct twl_ratelimit *rl;

	if (!(rate > 0) || !(burst >= 1)) {
		errno = EINVAL;
		return NULL;
	}
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return NULL;
	pthread_mutex_init(&rl->lock, NULL);
	rl->rate = rate;
	rl->burst = burst;
	return rl;
}

/* Contract: see ratelimit.h. */
void twl_ratelimit_free(struct twl_ratelimit *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Contract: see ratelimit.h. */
unsigned twl_ratelimit_take(struct twl_ratelimit *rl, const char *key,
			    double now)
{
	struct rl_entry *set, *hit = NULL, *lru;
	unsigned wait = 0;

	pthread_mutex_lock(&rl->lock);
	set = rl->e[fnv1a(key) % RL_SETS];
	lru = &set[0];
	for (int i = 0; i < RL_WAYS; i++) {
		if (set[i].key[0] &&
		    !strncmp(set[i].key, key, sizeof(set[i].key) - 1)) {
			hit = &set[i];
			break;
		}
		if (set[i].last < lru->last || !set[i].key[0])
			lru = &set[i];
	}
	if (!hit) {
		hit = lru;
		strncpy(hit->key, key, sizeof(hit->key) - 1);
		hit->key[sizeof(hit->key) - 1] = 0;
		hit->tokens = rl->burst;
		hit->last = now;
	}
	hit->tokens += (now - hit->last) * rl->rate;
	if (hit->tokens > rl->burst)
		hit->tokens = rl->burst;
	hit->last = now;
	if (hit->tokens >= 1) {
		hit->tokens -= 1;
	} else {
		wait = (unsigned)ceil((1 - hit->tokens) / rl->rate);
		if (wait < 1)
			wait = 1;
	}
	pthread_mutex_unlock(&rl->lock);
	return wait;
}
