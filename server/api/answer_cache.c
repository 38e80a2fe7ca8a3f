// SPDX-License-Identifier: GPL-2.0
/*
 * Slow answers kept and served again (answer_cache.h). A fixed table of
 * at most max_entries answers under one lock; the documents are copied
 * out under it, so a handler never shares one with the refresh thread.
 * Computing and the store's reads and writes never hold the lock: a
 * refresh runs beside the requests. The first computation of an answer
 * holds its slot (busy, no document yet), and requests for the same
 * answer wait on `done` for it; an answer too quick to keep is handed to
 * those waiters only (transient) and then dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <twilight/util.h>

#include "api/answer_cache.h"
#include "api/answer_keep.h"
#include "store/store.h"

/* A kept answer is computed again after this many times its cost. */
#define REFRESH_FACTOR 20
/*
 * Added to the clock, so that an answer read from the store, computed
 * before this machine booted, still has a time on the cache's clock.
 */
#define CLOCK_BASE (1ull << 42)
/* How often the thread looks for another server's touch in the store. */
#define TOUCH_POLL_MS 10000
/* An answer computed ahead that failed is tried again after this. */
#define AHEAD_RETRY_MS 60000

struct entry {
	const struct twl_answer_kind *kind; /* NULL: a free slot */
	unsigned char *params;
	size_t len;
	char key[65]; /* twl_answer_key() */
	json_t *doc; /* NULL while its first computation runs */
	int64_t computed; /* when its computation started, unix ms */
	uint64_t done; /* the same on the cache's clock */
	uint64_t cost; /* how long it took, ms */
	uint64_t served; /* when it was last served */
	uint64_t retry; /* after a failed refresh: not before then */
	unsigned gen; /* the cache's touches when its computation started */
	unsigned waiters; /* requests waiting for its first computation */
	bool busy; /* being computed (again) */
	bool transient; /* computed for the waiters only: not served */
	bool ahead; /* one of the answers computed ahead */
};

/*
 * An answer computed ahead of any request (twl_answer_cache_ahead()):
 * while it is kept, its entry carries `ahead`; when it is not (never
 * computed yet, or quick enough to compute for each request, or failed),
 * it is computed again from `next` on.
 */
struct ahead {
	const struct twl_answer_kind *kind;
	unsigned char *params;
	size_t len;
	char key[65];
	uint64_t next; /* the cache's clock; 0: not yet tried */
};

struct twl_answer_cache {
	void *ctx;
	struct twl_answer_cache_opts o;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the refresh thread's */
	pthread_cond_t done; /* a first computation ended */
	pthread_t thread;
	bool has_thread, stop;
	unsigned gen; /* twl_answer_cache_touch()es so far */
	int64_t touched; /* the store's latest touch seen (unix ms) */
	uint64_t polled; /* when the store's touch was last looked at */
	struct entry *e; /* o.max_entries slots */
	struct ahead ahead[TWL_ANSWER_AHEAD_MAX];
	size_t n_ahead;
	size_t ahead_kept, ahead_quick; /* the first round's outcome */
	uint64_t ahead_t0; /* when the first round started; 0: logged */
};

static uint64_t now_ms(const struct twl_answer_cache *c)
{
	return CLOCK_BASE + (c->o.clock_ms ? c->o.clock_ms() : twl_mono_ms());
}

static int64_t wall_ms(const struct twl_answer_cache *c)
{
	struct timeval tv;

	if (c->o.wall_ms)
		return c->o.wall_ms();
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/*
 * How long after its computation an answer computed ahead that nobody
 * asked for since is computed again: late enough to cost a fraction of a
 * core (at three quarters of max_age_ms, less twice its cost, so that
 * it is never served older than max_age_ms), never sooner than if it
 * had been asked for (@asked).
 */
static uint64_t unasked_after(const struct twl_answer_cache *c,
			      const struct entry *e, uint64_t asked)
{
	uint64_t late = c->o.max_age_ms / 4 * 3;

	late = late > 2 * e->cost ? late - 2 * e->cost : 0;
	return late > asked ? late : asked;
}

/* When @e is to be computed again. */
static uint64_t refresh_at(const struct twl_answer_cache *c,
			   const struct entry *e)
{
	uint64_t after = e->cost * REFRESH_FACTOR;

	if (after > c->o.max_age_ms / 2)
		after = c->o.max_age_ms / 2;
	if (e->ahead && e->served < e->done)
		after = unasked_after(c, e, after);
	if (e->gen != c->gen || e->computed <= c->touched)
		after = 0;
	return e->done + after > e->retry ? e->done + after : e->retry;
}

/* Whether @e is an answer kept to be served. */
static bool kept(const struct entry *e)
{
	return e->kind && e->doc && !e->transient;
}

/*
 * Whether the thread should compute @e again now: an answer computed
 * ahead always, another while it was served within keep_warm_ms.
 */
static bool due(const struct twl_answer_cache *c, const struct entry *e,
		uint64_t now)
{
	return kept(e) && !e->busy && now >= refresh_at(c, e) &&
	       (e->ahead || now - e->served <= c->o.keep_warm_ms);
}

static struct entry *find(struct twl_answer_cache *c, const char *key)
{
	for (size_t i = 0; i < c->o.max_entries; i++) {
		struct entry *e = &c->e[i];

		if (e->kind && !strcmp(e->key, key))
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

/* Whether @e goes before @lru when a slot is needed. */
static bool evict_first(const struct entry *e, const struct entry *lru)
{
	if (e->ahead != lru->ahead)
		return lru->ahead;
	return e->served < lru->served;
}

/*
 * A slot for a new answer: a free one, else the least recently served
 * kept one nobody computes or waits for, those computed ahead last; NULL
 * when there is none.
 */
static struct entry *slot(struct twl_answer_cache *c)
{
	struct entry *lru = NULL;

	for (size_t i = 0; i < c->o.max_entries; i++) {
		struct entry *e = &c->e[i];

		if (!e->kind)
			return e;
		if (kept(e) && !e->busy && !e->waiters &&
		    (!lru || evict_first(e, lru)))
			lru = e;
	}
	if (lru)
		clear(lru);
	return lru;
}

/*
 * Under the lock: a copy of the kept answer of @key into *@out, or of the
 * one a request is computing first (waited for). 1 for a kept answer, 0
 * for one computed for its waiters, -ENOENT when there is none to serve.
 * A first computation that began before the touches a request saw (@gen)
 * is not served to it: the change the request may follow (an annotation
 * posted, then the export asked for) came after that computation's reads.
 * @asked: a request's (refresh_at(), keep_warm_ms and eviction count it),
 * not another answer's computation's.
 */
static int lookup(struct twl_answer_cache *c, const char *key, json_t **out,
		  uint64_t *age_ms, unsigned gen, bool asked)
{
	uint64_t now = now_ms(c);
	struct entry *e = find(c, key);
	int rc = -ENOENT;

	if (e && !e->doc && e->busy) {
		e->waiters++;
		while (e->busy)
			pthread_cond_wait(&c->done, &c->lock);
		e->waiters--;
		now = now_ms(c);
		if (e->gen != gen)
			goto out;
	}
	if (!e || !e->doc)
		goto out;
	*age_ms = now > e->done ? now - e->done : 0;
	if (!e->transient && *age_ms > c->o.max_age_ms)
		goto out;
	*out = json_deep_copy(e->doc);
	if (!*out)
		goto out;
	rc = e->transient ? 0 : 1;
	if (rc && asked) {
		e->served = now;
		if (due(c, e, now))
			pthread_cond_signal(&c->wake);
	}
out:
	if (e && e->transient && !e->waiters)
		clear(e);
	return rc;
}

/*
 * Under the lock: hold a slot for the first computation of @k's answer
 * for @params under @key; NULL when there is none free (the request then
 * computes on its own, as when the parameters are too long).
 */
static struct entry *hold(struct twl_answer_cache *c,
			  const struct twl_answer_kind *k, const void *params,
			  size_t len, const char *key)
{
	struct entry *e = find(c, key);

	if (e && kept(e) && !e->busy && !e->waiters)
		clear(e); /* too old to serve: computed again */
	else if (e) /* being computed again, or handed to waiters */
		return NULL;
	e = slot(c);
	if (!e || !(e->params = malloc(len ? len : 1)))
		return NULL;
	memcpy(e->params, params, len);
	e->kind = k;
	e->len = len;
	memcpy(e->key, key, sizeof(e->key));
	e->busy = true;
	return e;
}

/*
 * Under the lock: the end of @e's first computation, @doc (taken; NULL
 * when it failed), from @computed (unix ms) and @t0 for @cost ms, kept
 * when @keep, served then when @asked (a request's, not another answer's
 * computation's or the round ahead's). Wakes the waiters; frees the slot
 * when nothing stays.
 */
static void settle(struct twl_answer_cache *c, struct entry *e, json_t *doc,
		   int64_t computed, uint64_t t0, uint64_t cost, unsigned gen,
		   bool keep, bool asked)
{
	e->busy = false;
	e->doc = doc;
	e->computed = computed;
	e->done = t0;
	e->cost = cost;
	e->gen = gen;
	e->served = e->ahead || !asked ? 0 : t0 + cost;
	e->transient = !keep;
	if (e->waiters)
		pthread_cond_broadcast(&c->done);
	else if (!keep)
		clear(e);
}

/*
 * Under the lock: a change marked in the store at @at (unix ms) makes
 * the answers kept here that were computed before it due (refresh_at()).
 */
static void seen_touch(struct twl_answer_cache *c, int64_t at)
{
	if (at > c->touched)
		c->touched = at;
}

/*
 * The answer from the store for @e (held), into *@out: 1 when one fresh
 * enough was there (then kept in @e), else 0 and nothing changed.
 */
static int from_store(struct twl_answer_cache *c, struct entry *e, json_t **out,
		      uint64_t *age_ms, bool asked)
{
	struct twl_answer_stored a;

	if (!c->o.store || twl_answer_load(c->o.store, e->key, wall_ms(c),
					   c->o.max_age_ms, &a))
		return 0;
	*out = json_deep_copy(a.doc);
	if (!*out) {
		json_decref(a.doc);
		return 0;
	}
	*age_ms = a.age;
	pthread_mutex_lock(&c->lock);
	seen_touch(c, a.touched);
	settle(c, e, a.doc, a.computed, now_ms(c) - a.age, a.cost, c->gen, true,
	       asked);
	if (!e->ahead && asked)
		e->served = now_ms(c);
	pthread_mutex_unlock(&c->lock);
	return 1;
}

/*
 * Compute @k's answer for @params now into *@out; @e held or NULL.
 * @asked: for a request (lookup()), which counts as serving it.
 */
static int compute(struct twl_answer_cache *c, struct entry *e,
		   const struct twl_answer_kind *k, const void *params,
		   json_t **out, unsigned gen, bool asked)
{
	int64_t computed = wall_ms(c);
	uint64_t t0 = now_ms(c), cost;
	json_t *keep = NULL;
	int rc;

	rc = k->fn(c->ctx, params, out);
	cost = now_ms(c) - t0;
	if (!e)
		return rc;
	if (!rc && c->o.max_age_ms && cost >= c->o.slow_ms) {
		keep = json_deep_copy(*out);
		if (keep && c->o.store)
			twl_answer_save(c->o.store, e->key, keep, computed,
					cost);
	}
	pthread_mutex_lock(&c->lock);
	if (!rc && !keep && e->waiters) /* for the waiters only */
		settle(c, e, json_deep_copy(*out), computed, t0, cost, gen,
		       false, asked);
	else
		settle(c, e, keep, computed, t0, cost, gen, keep != NULL,
		       asked);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* twl_answer_cache_get() (@asked) or twl_answer_cache_get_inner(). */
static int get(struct twl_answer_cache *c, const struct twl_answer_kind *k,
	       const void *params, size_t len, json_t **out, uint64_t *age_ms,
	       bool asked)
{
	struct entry *e = NULL;
	char key[65];
	unsigned gen;
	int rc;

	*out = NULL;
	*age_ms = 0;
	if (len > TWL_ANSWER_PARAMS_MAX ||
	    strlen(k->name) > TWL_ANSWER_NAME_MAX)
		return k->fn(c->ctx, params, out);
	twl_answer_key(c->o.context, k->name, params, len, key);
	pthread_mutex_lock(&c->lock);
	gen = c->gen;
	rc = lookup(c, key, out, age_ms, gen, asked);
	if (rc == -ENOENT && c->o.max_age_ms)
		e = hold(c, k, params, len, key);
	pthread_mutex_unlock(&c->lock);
	if (rc != -ENOENT)
		return rc;
	*age_ms = 0;
	if (e && from_store(c, e, out, age_ms, asked))
		return 1;
	return compute(c, e, k, params, out, gen, asked);
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_get(struct twl_answer_cache *c,
			 const struct twl_answer_kind *k, const void *params,
			 size_t len, json_t **out, uint64_t *age_ms)
{
	return get(c, k, params, len, out, age_ms, true);
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_get_inner(struct twl_answer_cache *c,
			       const struct twl_answer_kind *k,
			       const void *params, size_t len, json_t **out,
			       uint64_t *age_ms)
{
	return get(c, k, params, len, out, age_ms, false);
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

/*
 * Before @e (busy) is computed again, with a store: take a newer answer
 * from it (1: taken; another server computed it since), or leave the
 * refresh to the server that claimed it (0: @e waits a while), else
 * -EAGAIN: compute it here (claimed, or none stored). The lock is not
 * held.
 */
static int adopt_or_claim(struct twl_answer_cache *c, struct entry *e)
{
	struct twl_answer_stored a;
	int64_t wall = wall_ms(c);
	uint64_t wait;
	int rc;

	rc = twl_answer_load(c->o.store, e->key, wall, c->o.max_age_ms, &a);
	if (rc)
		return -EAGAIN; /* none stored (or unreadable): compute */
	pthread_mutex_lock(&c->lock);
	seen_touch(c, a.touched);
	rc = a.computed > e->computed && a.computed > a.touched;
	if (rc) { /* computed since by another server, after every change */
		json_decref(e->doc);
		e->doc = a.doc;
		e->computed = a.computed;
		e->done = now_ms(c) - a.age;
		e->cost = a.cost;
		e->gen = c->gen;
		e->retry = 0;
	}
	pthread_mutex_unlock(&c->lock);
	if (rc)
		return 1;
	json_decref(a.doc);
	if (twl_answer_claim(c->o.store, e->key, wall, e->cost) != 0)
		return -EAGAIN; /* ours (or the store failed): compute */
	wait = e->cost / 4 < 1000  ? 1000 :
	       e->cost / 4 > 60000 ? 60000 :
				     e->cost / 4;
	pthread_mutex_lock(&c->lock);
	e->retry = now_ms(c) + wait;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* After a failed refresh of @e at @t1: the kept one stays; retry later. */
static void refresh_failed(struct twl_answer_cache *c, struct entry *e,
			   uint64_t t1, int rc)
{
	e->retry = t1 + (e->cost * REFRESH_FACTOR > 1000 ?
				 e->cost * REFRESH_FACTOR :
				 1000);
	if (rc == -ECANCELED) /* twl_store_stop_reads(): the server stops */
		return;
	twl_log(LOG_WARNING,
		"cannot compute a kept answer again: %s; the one kept "
		"is served until it is slow-answer-max-age old",
		strerror(-rc));
}

/* Compute @e again; the lock is held on entry and on return. */
static int refresh(struct twl_answer_cache *c, struct entry *e)
{
	int64_t computed = wall_ms(c);
	uint64_t t0 = now_ms(c), t1 = t0;
	unsigned gen = c->gen;
	json_t *doc = NULL;
	int rc = -EAGAIN;

	e->busy = true;
	pthread_mutex_unlock(&c->lock);
	if (c->o.store)
		rc = adopt_or_claim(c, e);
	if (rc == -EAGAIN) {
		rc = e->kind->fn(c->ctx, e->params, &doc);
		t1 = now_ms(c);
		if (!rc && c->o.store)
			twl_answer_save(c->o.store, e->key, doc, computed,
					t1 - t0);
	}
	pthread_mutex_lock(&c->lock);
	e->busy = false;
	if (rc < 0) {
		refresh_failed(c, e, now_ms(c), rc);
		return rc;
	}
	if (!doc) /* taken from the store, or left to another server */
		return rc;
	if (e->computed > computed) {
		json_decref(doc);
		return 1;
	}
	json_decref(e->doc);
	e->doc = doc;
	e->computed = computed;
	e->done = t0;
	e->cost = t1 - t0;
	e->gen = gen;
	e->retry = 0;
	return 1;
}

/*
 * With a store: another server's admin change (twl_store_kept_touch())
 * makes the answers kept here that were computed before it due, as a
 * touch here does. The lock is held on entry and on return.
 */
static void poll_touched(struct twl_answer_cache *c)
{
	int64_t at = 0;
	int rc;

	c->polled = now_ms(c);
	if (!c->o.store)
		return;
	pthread_mutex_unlock(&c->lock);
	rc = twl_store_kept_touched(c->o.store, &at);
	pthread_mutex_lock(&c->lock);
	if (!rc)
		seen_touch(c, at);
}

/*
 * Under the lock: @a was tried at @now, with @rc (negative: failed), and
 * is @is_kept now; when it is tried again if it is not kept then: after
 * max_age_ms if it was quick, AHEAD_RETRY_MS if it failed, never if
 * there was nothing to compute. After the first round over all of them,
 * one line says how it went.
 */
static void tried(struct twl_answer_cache *c, struct ahead *a, uint64_t now,
		  int rc, bool is_kept)
{
	bool first = !a->next;

	if (rc == -ENOENT) /* nothing to compute: a target removed */
		a->next = UINT64_MAX;
	else
		a->next = now + (rc < 0	 ? AHEAD_RETRY_MS :
				 is_kept ? c->o.max_age_ms / 2 :
					   c->o.max_age_ms);
	if (!first || !c->ahead_t0)
		return;
	c->ahead_kept += is_kept;
	c->ahead_quick += rc >= 0 && !is_kept;
	for (size_t i = 0; i < c->n_ahead; i++)
		if (!c->ahead[i].next)
			return;
	twl_log(LOG_INFO,
		"answers computed ahead: %zu kept (slow), %zu quick enough "
		"for each request, %zu not computed, of %zu, in %llu ms",
		c->ahead_kept, c->ahead_quick,
		c->n_ahead - c->ahead_kept - c->ahead_quick, c->n_ahead,
		(unsigned long long)(now - c->ahead_t0));
	c->ahead_t0 = 0;
}

/*
 * The next answer to compute ahead, if one is due and a slot is free for
 * it (one computed ahead never takes a requested one's). Those a request
 * keeps already are marked `ahead` on the way. Under the lock.
 */
static struct ahead *next_ahead(struct twl_answer_cache *c, uint64_t now)
{
	struct ahead *best = NULL;
	bool room = false;

	for (size_t i = 0; i < c->o.max_entries && !room; i++)
		room = !c->e[i].kind;
	for (size_t i = 0; i < c->n_ahead; i++) {
		struct ahead *a = &c->ahead[i];
		struct entry *e = find(c, a->key);

		if (e && kept(e) && !e->ahead) {
			e->ahead = true;
			tried(c, a, now, 0, true);
		}
		if (!e && room && a->next <= now &&
		    (!best || a->next < best->next))
			best = a;
	}
	return best;
}

/*
 * Under the lock (released while it computes): compute @a's answer, or
 * take it from the store, as a request would (tried()): 1, 0 when no
 * slot could be held, or the computation's negative errno.
 */
static int ahead_one(struct twl_answer_cache *c, struct ahead *a)
{
	unsigned gen = c->gen;
	struct entry *e = hold(c, a->kind, a->params, a->len, a->key);
	json_t *doc = NULL;
	uint64_t age;
	int rc;

	if (!e)
		return 0;
	e->ahead = true;
	pthread_mutex_unlock(&c->lock);
	rc = from_store(c, e, &doc, &age, false);
	if (!rc)
		rc = compute(c, e, a->kind, a->params, &doc, gen, false);
	json_decref(doc);
	pthread_mutex_lock(&c->lock);
	e = find(c, a->key);
	tried(c, a, now_ms(c), rc, e && kept(e));
	if (rc < 0 && rc != -ECANCELED && rc != -ENOENT)
		twl_log(LOG_WARNING,
			"cannot compute a %s answer ahead: %s; trying again in "
			"a minute, a request computes it meanwhile",
			a->kind->name, strerror(-rc));
	return rc < 0 ? rc : 1;
}

/*
 * Under the lock: an answer computed ahead never tried yet (after a
 * restart, most are taken from the store at once), else the kept answer
 * most overdue is computed again, else the next answer due ahead: 1 when
 * one was, 0 when none was due, or a computation's negative errno.
 */
static int work(struct twl_answer_cache *c)
{
	struct ahead *a = next_ahead(c, now_ms(c));
	struct entry *e;

	if (a && !a->next)
		return ahead_one(c, a);
	e = most_due(c, now_ms(c));
	if (e)
		return refresh(c, e);
	return a ? ahead_one(c, a) : 0;
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_step(struct twl_answer_cache *c)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	poll_touched(c);
	rc = work(c);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_ahead(struct twl_answer_cache *c,
			   const struct twl_answer_kind *k, const void *params,
			   size_t len)
{
	struct ahead *a;
	char key[65];

	if (len > TWL_ANSWER_PARAMS_MAX ||
	    strlen(k->name) > TWL_ANSWER_NAME_MAX)
		return -E2BIG;
	twl_answer_key(c->o.context, k->name, params, len, key);
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_ahead; i++)
		if (!strcmp(c->ahead[i].key, key))
			goto out;
	if (c->n_ahead == TWL_ANSWER_AHEAD_MAX) {
		pthread_mutex_unlock(&c->lock);
		return -ENOSPC;
	}
	a = &c->ahead[c->n_ahead];
	a->params = malloc(len ? len : 1);
	if (!a->params) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	memcpy(a->params, params, len);
	a->kind = k;
	a->len = len;
	memcpy(a->key, key, sizeof(a->key));
	a->next = 0;
	if (!c->n_ahead++)
		c->ahead_t0 = now_ms(c);
	pthread_cond_signal(&c->wake);
out:
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * The refresh thread: work() (an answer ahead not tried yet, the most
 * overdue kept answer, the next one due ahead), else a second's sleep;
 * the store's touches looked at every TOUCH_POLL_MS.
 */
static void *refresh_main(void *arg)
{
	struct twl_answer_cache *c = arg;
	struct timespec until;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		if (now_ms(c) - c->polled >= TOUCH_POLL_MS)
			poll_touched(c);
		if (work(c))
			continue;
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
	int rc;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->gen++;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	if (!c->o.store)
		return;
	rc = twl_store_kept_touch(c->o.store, wall_ms(c));
	if (rc)
		twl_log(LOG_WARNING,
			"cannot mark the stored kept answers as out of date: "
			"%s; another server may serve one until its refresh",
			strerror(-rc));
}

/* Contract: see answer_cache.h. */
int twl_answer_cache_peek(struct twl_answer_cache *c,
			  const struct twl_answer_kind *k, const void *params,
			  size_t len, json_t **out, uint64_t *age_ms)
{
	struct entry *e;
	char key[65];
	int rc = 0;

	*out = NULL;
	if (!c || len > TWL_ANSWER_PARAMS_MAX ||
	    strlen(k->name) > TWL_ANSWER_NAME_MAX)
		return 0;
	twl_answer_key(c->o.context, k->name, params, len, key);
	pthread_mutex_lock(&c->lock);
	e = find(c, key);
	if (e && e->doc && !e->transient) {
		uint64_t now = now_ms(c);

		*age_ms = now > e->done ? now - e->done : 0;
		if (*age_ms <= c->o.max_age_ms) {
			*out = json_deep_copy(e->doc);
			rc = *out ? 1 : -ENOMEM;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!rc && c->o.store) { /* e.g. before a start's first round */
		struct twl_answer_stored a;

		if (!twl_answer_load(c->o.store, key, wall_ms(c),
				     c->o.max_age_ms, &a)) {
			*out = a.doc;
			*age_ms = a.age;
			rc = 1;
		}
	}
	return rc;
}

/* Contract: see answer_cache.h. */
size_t twl_answer_cache_count(struct twl_answer_cache *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->o.max_entries; i++)
		n += kept(&c->e[i]);
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Contract: see answer_cache.h. */
size_t twl_answer_cache_waiting(struct twl_answer_cache *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->o.max_entries; i++)
		n += c->e[i].waiters;
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
	pthread_cond_init(&c->done, NULL);
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
	for (size_t i = 0; i < c->n_ahead; i++)
		free(c->ahead[i].params);
	free(c->e);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	pthread_cond_destroy(&c->done);
	free(c);
}
