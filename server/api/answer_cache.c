// SPDX-License-Identifier: GPL-2.0
/*
 * Slow answers kept and served again (answer_cache.h). A fixed table of
 * at most max_entries answers under one lock; the documents are copied
 * out under it, so a handler never shares one with the refresh thread.
 * Computing never holds the lock: a refresh runs beside the requests,
 * and two requests for an answer that is not kept both compute it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>

#include "api/answer_cache.h"

/* A kept answer is computed again after this many times its cost. */
#define REFRESH_FACTOR 20

struct entry {
	twl_answer_fn fn; /* NULL: a free slot */
	unsigned char *params;
	size_t len;
	json_t *doc;
	uint64_t done; /* when the kept answer's computation started */
	uint64_t cost; /* how long it took, ms */
	uint64_t served; /* when it was last served */
	uint64_t retry; /* after a failed refresh: not before then */
	unsigned gen; /* the cache's touches when its computation started */
	bool busy; /* the thread is computing it again */
};

struct twl_answer_cache {
	void *ctx;
	struct twl_answer_cache_opts o;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool has_thread, stop;
	unsigned gen; /* twl_answer_cache_touch()es so far */
	struct entry *e; /* o.max_entries slots */
};

static uint64_t now_ms(const struct twl_answer_cache *c)
{
	return c->o.clock_ms ? c->o.clock_ms() : twl_mono_ms();
}

/* When @e is to be computed again. */
static uint64_t refresh_at(const struct twl_answer_cache *c,
			   const struct entry *e)
{
	uint64_t after = e->cost * REFRESH_FACTOR;

	if (after > c->o.max_age_ms / 2)
		after = c->o.max_age_ms / 2;
	if (e->gen != c->gen)
		after = 0;
	return e->done + after > e->retry ? e->done + after : e->retry;
}

/* Whether the thread should compute @e again now. */
static bool due(const struct twl_answer_cache *c, const struct entry *e,
		uint64_t now)
{
	return e->fn && !e->busy && now >= refresh_at(c, e) &&
	       now - e->served <= c->o.keep_warm_ms;
}

static struct entry *find(struct twl_answer_cache *c, twl_answer_fn fn,
			  const void *params, size_t len)
{
	for (size_t i = 0; i < c->o.max_entries; i++) {
		struct entry *e = &c->e[i];

		if (e->fn == fn && e->len == len &&
		    !memcmp(e->params, params, len))
			return e;
	}
	return NULL;
}

static void clear(struct entry *e)
{
	json_decref(e->doc);
	free(e->params);
	memset(e, 0, sizeof(*e));
}

/* A slot for a new answer: a free one, else the least recently served. */
static struct entry *slot(struct twl_answer_cache *c)
{
	struct entry *lru = NULL;

	for (size_t i = 0; i < c->o.max_entries; i++) {
		struct entry *e = &c->e[i];

		if (!e->fn)
			return e;
		if (!e->busy && (!lru || e->served < lru->served))
			lru = e;
	}
	if (lru)
		clear(lru);
	return lru;
}

/*
 * Keep @doc (taken), computed from @t0 for @cost ms, as @fn's answer for
 * @params, unless a newer one is kept already. Under the lock.
 */
static void put(struct twl_answer_cache *c, twl_answer_fn fn,
		const void *params, size_t len, json_t *doc, uint64_t t0,
		uint64_t cost, unsigned gen)
{
	struct entry *e = find(c, fn, params, len);

	if (e && e->done > t0) {
		json_decref(doc);
		return;
	}
	if (!e) {
		e = slot(c);
		if (!e || !(e->params = malloc(len ? len : 1))) {
			json_decref(doc);
			return;
		}
		memcpy(e->params, params, len);
		e->fn = fn;
		e->len = len;
		e->served = t0 + cost;
	}
	json_decref(e->doc);
	e->doc = doc;
	e->done = t0;
	e->cost = cost;
	e->gen = gen;
	e->retry = 0;
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_get(struct twl_answer_cache *c, twl_answer_fn fn,
			 const void *params, size_t len, json_t **out,
			 uint64_t *age_ms)
{
	uint64_t now = now_ms(c), t0, cost;
	struct entry *e;
	json_t *keep;
	unsigned gen;
	int rc;

	*out = NULL;
	*age_ms = 0;
	if (len > TWL_ANSWER_PARAMS_MAX)
		return fn(c->ctx, params, out);
	pthread_mutex_lock(&c->lock);
	gen = c->gen;
	e = find(c, fn, params, len);
	if (e && now > e->done)
		*age_ms = now - e->done;
	if (e && *age_ms <= c->o.max_age_ms) {
		*out = json_deep_copy(e->doc);
		e->served = now;
		if (due(c, e, now))
			pthread_cond_signal(&c->wake);
	}
	pthread_mutex_unlock(&c->lock);
	if (e && *out)
		return 1;
	*age_ms = 0;
	t0 = now_ms(c);
	rc = fn(c->ctx, params, out);
	cost = now_ms(c) - t0;
	if (rc || !c->o.max_age_ms || cost < c->o.slow_ms)
		return rc;
	keep = json_deep_copy(*out);
	if (!keep)
		return 0;
	pthread_mutex_lock(&c->lock);
	put(c, fn, params, len, keep, t0, cost, gen);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The kept answer most overdue for a refresh, or NULL. Under the lock. */
static struct entry *most_due(struct twl_answer_cache *c, uint64_t now)
{
	struct entry *best = NULL;

	for (size_t i = 0; i < c->o.max_entries; i++) {
		struct entry *e = &c->e[i];

		if (due(c, e, now) &&
		    (!best || refresh_at(c, e) < refresh_at(c, best)))
			best = e;
	}
	return best;
}

/* Compute @e again; the lock is held on entry and on return. */
static int refresh(struct twl_answer_cache *c, struct entry *e)
{
	uint64_t t0 = now_ms(c), t1;
	unsigned gen = c->gen;
	json_t *doc = NULL;
	int rc;

	e->busy = true;
	pthread_mutex_unlock(&c->lock);
	rc = e->fn(c->ctx, e->params, &doc);
	t1 = now_ms(c);
	pthread_mutex_lock(&c->lock);
	e->busy = false;
	if (rc) {
		/* the kept answer ages out at max_age_ms unless a retry works */
		e->retry = t1 + (e->cost * REFRESH_FACTOR > 1000 ?
					 e->cost * REFRESH_FACTOR :
					 1000);
		twl_log(LOG_WARNING,
			"cannot compute a kept answer again: %s; the one kept "
			"is served until it is slow-answer-max-age old",
			strerror(-rc));
		return rc;
	}
	if (e->done > t0) {
		json_decref(doc);
		return 1;
	}
	json_decref(e->doc);
	e->doc = doc;
	e->done = t0;
	e->cost = t1 - t0;
	e->gen = gen;
	e->retry = 0;
	return 1;
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_step(struct twl_answer_cache *c)
{
	struct entry *e;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	e = most_due(c, now_ms(c));
	if (e)
		rc = refresh(c, e);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* The refresh thread: the most overdue answer, or a second's sleep. */
static void *refresh_main(void *arg)
{
	struct twl_answer_cache *c = arg;
	struct timespec until;
	struct entry *e;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		e = most_due(c, now_ms(c));
		if (e) {
			refresh(c, e);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&c->wake, &c->lock, &until);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Contract: see answer_cache.h. */
void twl_answer_cache_touch(struct twl_answer_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->gen++;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

/* Contract: see answer_cache.h. */
size_t twl_answer_cache_count(struct twl_answer_cache *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->o.max_entries; i++)
		n += c->e[i].fn != NULL;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Contract: see answer_cache.h. */
struct twl_answer_cache *
twl_answer_cache_new(void *ctx, const struct twl_answer_cache_opts *o)
{
	struct twl_answer_cache *c = calloc(1, sizeof(*c));

	if (!c || !o->max_entries ||
	    !(c->e = calloc(o->max_entries, sizeof(*c->e)))) {
		free(c);
		errno = o->max_entries ? ENOMEM : EINVAL;
		return NULL;
	}
	c->ctx = ctx;
	c->o = *o;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	if (!o->no_thread && o->max_age_ms) {
		if (pthread_create(&c->thread, NULL, refresh_main, c)) {
			twl_answer_cache_free(c);
			errno = EAGAIN;
			return NULL;
		}
		c->has_thread = true;
	}
	return c;
}

/* Contract: see answer_cache.h. */
void twl_answer_cache_free(struct twl_answer_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
	if (c->has_thread)
		pthread_join(c->thread, NULL);
	for (size_t i = 0; i < c->o.max_entries; i++)
		clear(&c->e[i]);
	free(c->e);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	free(c);
}
