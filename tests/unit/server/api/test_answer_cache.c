// SPDX-License-Identifier: GPL-2.0
/*
 * Slow answers kept and served again (server/api/answer_cache.c): the
 * policy on a clock the test moves (kept only when slow, copies out,
 * refreshed after 20 times the cost, never served past max age, touched,
 * kept warm only while served, least recently served evicted, a failed
 * refresh keeps the old answer), then the refresh thread, requests
 * waiting for a first computation under way instead of computing it too,
 * answers kept in an SQLite store (served after a restart, touched,
 * named by the cache's context, shared by two caches as by two servers,
 * a claim held by another), then a real server keeping feature detail
 * and the export's data with an Age header, answering the new data once
 * refreshed, serving both from the store after a restart but not after
 * one with a setting changed, and keeping the answers computed ahead
 * through a plain restart without computing them again.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/catalog.h>

#include "api/answer_cache.h"
#include "api/answer_keep.h"
#include "harness.h"
#include "readiness/target_dir.h"
#include "sqlite_fixture.h"

static uint64_t clock_now;
static uint64_t fake_clock(void)
{
	return clock_now;
}

/* The time of day on the same clock, in unix ms. */
static int64_t fake_wall(void)
{
	return 1700000000000 + (int64_t)clock_now;
}

/* The answer: {"n": calls so far}; each call costs cost_ms on the clock. */
static int calls, fail_with;
static uint64_t cost_ms;
static int answer(void *ctx, const void *params, json_t **out)
{
	(void)ctx;
	(void)params;
	clock_now += cost_ms;
	if (fail_with)
		return fail_with;
	*out = json_pack("{s:i}", "n", ++calls);
	return *out ? 0 : -ENOMEM;
}

static const struct twl_answer_kind answer_kind = { "test", answer };

/* A cache on the fake clocks, keeping its answers in @s (may be NULL). */
static struct twl_answer_cache *cache_on(struct twl_store *s, uint64_t slow,
					 uint64_t max_age, size_t n)
{
	struct twl_answer_cache_opts o = { .slow_ms = slow,
					   .max_age_ms = max_age,
					   .max_entries = n,
					   .keep_warm_ms = 100000,
					   .store = s,
					   .no_thread = true,
					   .clock_ms = fake_clock,
					   .wall_ms = fake_wall };

	return twl_answer_cache_new(NULL, &o);
}

/* As cache_on(@s, 50, 60000, 4), of context @context. */
static struct twl_answer_cache *context_cache(struct twl_store *s,
					      const char *context)
{
	struct twl_answer_cache_opts o = { .slow_ms = 50,
					   .max_age_ms = 60000,
					   .max_entries = 4,
					   .keep_warm_ms = 100000,
					   .store = s,
					   .no_thread = true,
					   .clock_ms = fake_clock,
					   .wall_ms = fake_wall };

	snprintf(o.context, sizeof(o.context), "%s", context);
	return twl_answer_cache_new(NULL, &o);
}

static struct twl_answer_cache *cache(uint64_t slow, uint64_t max_age, size_t n)
{
	clock_now = 1000000;
	calls = 0;
	fail_with = 0;
	cost_ms = 50;
	return cache_on(NULL, slow, max_age, n);
}

/* The "n" of the answer for key @k, and whether it was kept, its age. */
static int get(struct twl_answer_cache *c, int k, int *kept, uint64_t *age)
{
	json_t *doc;
	int rc =
		twl_answer_cache_get(c, &answer_kind, &k, sizeof(k), &doc, age);
	int n;

	assert_true(rc >= 0);
	*kept = rc;
	n = (int)json_integer_value(json_object_get(doc, "n"));
	/* the caller's own copy: changing it changes no kept answer */
	json_object_set_new(doc, "n", json_integer(-1));
	json_decref(doc);
	return n;
}

static void test_fast_not_kept(void **state)
{
	struct twl_answer_cache *c = cache(100, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 0);
	assert_int_equal(twl_answer_cache_count(c), 0);
	twl_answer_cache_free(c);
	/* max age 0: nothing is kept, however slow */
	c = cache(0, 0, 4);
	cost_ms = 5000;
	get(c, 1, &kept, &age);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(twl_answer_cache_count(c), 0);
	twl_answer_cache_free(c);
}

/* Kept at 50 ms: served until 1 s (20 x 50 ms), then refreshed. */
static void test_kept_and_refreshed(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 0);
	assert_int_equal(age, 0);
	clock_now += 300;
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(age, 350);
	assert_int_equal(get(c, 2, &kept, &age), 2); /* another key */
	assert_int_equal(twl_answer_cache_count(c), 2);
	/* key 1 was computed from 1,000,000 at 50 ms: due at +1,000 */
	clock_now = 1000000 + 999;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now = 1000000 + 1000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(get(c, 1, &kept, &age), 3);
	assert_int_equal(kept, 1);
	assert_int_equal(age, 50);
	twl_answer_cache_free(c);
}

/* Never served older than max age; the refresh time is at most half. */
static void test_max_age(void **state)
{
	struct twl_answer_cache *c = cache(50, 10000, 4);
	uint64_t age;
	int kept;

	(void)state;
	cost_ms = 2000; /* 20 x 2 s = 40 s, capped at 5 s */
	get(c, 1, &kept, &age);
	clock_now += 4999 - 2000;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now += 1;
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(age, 5000);
	clock_now += 5000; /* 10,000 ms old: still served, stale */
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(age, 10000);
	clock_now += 1;
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 0);
	twl_answer_cache_free(c);
}

/* A touch makes every kept answer due at once. */
static void test_touch(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	get(c, 1, &kept, &age);
	clock_now += 10;
	assert_int_equal(twl_answer_cache_step(c), 0);
	twl_answer_cache_touch(c);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 1);
	twl_answer_cache_free(c);
}

/* Not served for longer than keep_warm_ms: no longer refreshed. */
static void test_keep_warm(void **state)
{
	struct twl_answer_cache *c = cache(50, 1000000, 4);
	uint64_t age;
	int kept;

	(void)state;
	get(c, 1, &kept, &age);
	clock_now += 100001;
	assert_int_equal(twl_answer_cache_step(c), 0);
	/* served again (stale), it is due again */
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	twl_answer_cache_free(c);
}

/* Two slots: the third answer takes the least recently served one's. */
static void test_evict(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 2);
	uint64_t age;
	int kept;

	(void)state;
	get(c, 1, &kept, &age);
	get(c, 2, &kept, &age);
	clock_now += 10;
	get(c, 1, &kept, &age);
	assert_int_equal(kept, 1);
	get(c, 3, &kept, &age);
	assert_int_equal(twl_answer_cache_count(c), 2);
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(get(c, 2, &kept, &age), 4);
	assert_int_equal(kept, 0);
	twl_answer_cache_free(c);
}

/* A refresh that fails keeps the answer, and is not retried at once. */
static void test_failed_refresh(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	get(c, 1, &kept, &age);
	clock_now += 1000;
	fail_with = -EIO;
	assert_int_equal(twl_answer_cache_step(c), -EIO);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	fail_with = 0;
	clock_now += 1000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	twl_answer_cache_free(c);
}

/* The thread: a kept answer served past its refresh time is computed again. */
static int thread_calls;
static int slow_answer(void *ctx, const void *params, json_t **out)
{
	(void)ctx;
	(void)params;
	usleep(20000);
	*out = json_pack("{s:i}", "n",
			 __atomic_add_fetch(&thread_calls, 1,
					    __ATOMIC_SEQ_CST));
	return *out ? 0 : -ENOMEM;
}

static const struct twl_answer_kind slow_kind = { "slow", slow_answer };

static void test_thread(void **state)
{
	struct twl_answer_cache_opts o = { .slow_ms = 10,
					   .max_age_ms = 600000,
					   .max_entries = 4,
					   .keep_warm_ms = 600000 };
	struct twl_answer_cache *c = twl_answer_cache_new(NULL, &o);
	uint64_t age;
	json_t *doc = NULL;
	int k = 7, n = 0;

	(void)state;
	assert_non_null(c);
	/* up to 60 s for the refresh (about 0.4 s when the machine is idle) */
	for (int i = 0; i < 600 && n < 2; i++) {
		assert_true(twl_answer_cache_get(c, &slow_kind, &k, sizeof(k),
						 &doc, &age) >= 0);
		n = (int)json_integer_value(json_object_get(doc, "n"));
		json_decref(doc);
		usleep(100000);
	}
	assert_int_equal(n, 2);
	twl_answer_cache_free(c);
}

/* ---- answers computed ahead ---------------------------------------- */

static int ahead(struct twl_answer_cache *c, int k)
{
	return twl_answer_cache_ahead(c, &answer_kind, &k, sizeof(k));
}

/*
 * Computed before any request and served kept; computed again while
 * nobody asks for it at 3/4 of max age less twice its cost (60,000 ms,
 * 50 ms: 44,900 ms), at 20 times its cost (1,000 ms) once asked for, and
 * also past keep_warm_ms, unlike an answer only a request keeps.
 */
static void test_ahead(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(ahead(c, 2), 0);
	assert_int_equal(ahead(c, 1), 0); /* once */
	assert_int_equal(twl_answer_cache_step(c), 1); /* 1 from 1,000,000 */
	assert_int_equal(twl_answer_cache_step(c), 1); /* 2 from 1,000,050 */
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 2);
	assert_int_equal(twl_answer_cache_count(c), 2);
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	/* 1 was asked for: due at 20 x 50 ms after it was computed */
	clock_now = 1000000 + 1000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 3);
	/* 2, never asked for: from 1,000,050 + 44,900 */
	clock_now = 1000050 + 44899;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now += 1;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(get(c, 2, &kept, &age), 4);
	assert_int_equal(kept, 1);
	/* past keep_warm_ms (100,000): 1 and 2 still, 3 (requested) not */
	assert_int_equal(get(c, 3, &kept, &age), 5);
	clock_now += 300000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 7);
	twl_answer_cache_free(c);
}

/* The "n" of the answer for @k read by another answer's computation. */
static int get_inner(struct twl_answer_cache *c, int k, int want_kept)
{
	json_t *doc = NULL;
	uint64_t age;
	int n;

	assert_int_equal(twl_answer_cache_get_inner(c, &answer_kind, &k,
						    sizeof(k), &doc, &age),
			 want_kept);
	n = (int)json_integer_value(json_object_get(doc, "n"));
	json_decref(doc);
	return n;
}

/*
 * An answer computed ahead that another answer's computation reads
 * (twl_answer_cache_get_inner(): the export reading a target's readiness)
 * is not asked for by that: at 20 times its cost it is not due, and it
 * is computed again on its unasked schedule (1,000,000 + 44,900); a
 * request's read makes it due at 20 times its cost. Nor is one that such
 * a computation computed first, before the round ahead took it.
 */
static void test_inner_not_asked(void **state)
{
	struct twl_answer_cache *c = cache(50, 60000, 4);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1); /* from 1,000,000 */
	assert_int_equal(get_inner(c, 1, 1), 1);
	clock_now = 1000000 + 1000;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now = 1000000 + 44900;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(calls, 2);
	/* asked for by a request: due 20 x 50 ms after its computation */
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 1);
	clock_now = 1000000 + 44900 + 999;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now += 1;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(calls, 3);
	twl_answer_cache_free(c);
	/* computed first by another answer's computation, then ahead */
	c = cache(50, 60000, 4);
	assert_int_equal(get_inner(c, 1, 0), 1);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 0); /* taken as it is */
	clock_now = 1000000 + 1000;
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 1);
	clock_now = 1000000 + 44900;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(calls, 2);
	twl_answer_cache_free(c);
}

/*
 * Quick: not kept, tried again after max age. Failed: tried again after
 * a minute. Nothing to compute (-ENOENT): never again.
 */
static void test_ahead_not_kept(void **state)
{
	struct twl_answer_cache *c = cache(100, 600000, 4);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_count(c), 0);
	clock_now += 599000;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now += 1000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(calls, 2);
	assert_int_equal(get(c, 1, &kept, &age), 3);
	assert_int_equal(kept, 0);
	twl_answer_cache_free(c);

	c = cache(10, 600000, 4);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(ahead(c, 2), 0);
	fail_with = -EIO;
	assert_int_equal(twl_answer_cache_step(c), -EIO);
	fail_with = -ENOENT;
	assert_int_equal(twl_answer_cache_step(c), -ENOENT);
	fail_with = 0;
	assert_int_equal(twl_answer_cache_step(c), 0);
	clock_now += 60000;
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_count(c), 1);
	clock_now += 36000000; /* ten hours: 2 is never tried again */
	for (int i = 0; i < 4; i++)
		twl_answer_cache_step(c);
	assert_int_equal(calls, 2); /* 1 computed again once */
	twl_answer_cache_free(c);
}

/*
 * Two slots: a request's answer takes the slot of another request's
 * before that of one computed ahead, however long ago that one was
 * served; one computed ahead takes only a free slot.
 */
static void test_ahead_slots(void **state)
{
	struct twl_answer_cache *c = cache(50, 600000, 2);
	uint64_t age;
	int kept;

	(void)state;
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	get(c, 2, &kept, &age);
	clock_now += 10;
	get(c, 3, &kept, &age); /* takes 2's slot */
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(get(c, 2, &kept, &age), 4);
	assert_int_equal(kept, 0);
	/* 1 and 2 kept, no slot free: 5 waits */
	assert_int_equal(ahead(c, 5), 0);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 4);
	twl_answer_cache_free(c);
}

/* ---- requests waiting for a first computation -------------------- */

/* An answer that blocks until the test opens the gate. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open, gate_entered;
static int gate_calls, gate_fail;

static int gated_answer(void *ctx, const void *params, json_t **out)
{
	int n;

	(void)ctx;
	(void)params;
	pthread_mutex_lock(&gate_lock);
	n = ++gate_calls;
	gate_entered = true;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	if (gate_fail && n == 1)
		return gate_fail;
	*out = json_pack("{s:i}", "n", n);
	return *out ? 0 : -ENOMEM;
}

static const struct twl_answer_kind gated_kind = { "gated", gated_answer };

struct request {
	struct twl_answer_cache *c;
	int rc, n;
};

static void *request_main(void *arg)
{
	struct request *r = arg;
	uint64_t age;
	json_t *doc = NULL;
	int k = 1;

	r->rc = twl_answer_cache_get(r->c, &gated_kind, &k, sizeof(k), &doc,
				     &age);
	r->n = (int)json_integer_value(json_object_get(doc, "n"));
	json_decref(doc);
	return NULL;
}

/*
 * Two requests for one answer while its first computation runs: the
 * second waits for the first's (counted by twl_answer_cache_waiting())
 * and gets a copy, kept or not; when that computation fails, or when a
 * change was marked (@touch) after it began and before the second
 * request, the waiter computes on its own.
 */
static void single_flight(uint64_t slow_ms, int fail, bool touch,
			  int want_calls, int want_rc2)
{
	struct twl_answer_cache_opts o = { .slow_ms = slow_ms,
					   .max_age_ms = 600000,
					   .max_entries = 4,
					   .keep_warm_ms = 600000,
					   .no_thread = true };
	struct twl_answer_cache *c = twl_answer_cache_new(NULL, &o);
	struct request r1 = { c, 0, 0 }, r2 = { c, 0, 0 };
	pthread_t t1, t2;

	gate_open = gate_entered = false;
	gate_calls = 0;
	gate_fail = fail;
	assert_int_equal(pthread_create(&t1, NULL, request_main, &r1), 0);
	pthread_mutex_lock(&gate_lock);
	while (!gate_entered)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	if (touch)
		twl_answer_cache_touch(c);
	assert_int_equal(pthread_create(&t2, NULL, request_main, &r2), 0);
	/* the second request waits (up to 60 s on a loaded machine) */
	for (int i = 0; i < 60000 && twl_answer_cache_waiting(c) < 1; i++)
		usleep(1000);
	assert_int_equal(twl_answer_cache_waiting(c), 1);
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_int_equal(gate_calls, want_calls);
	assert_int_equal(r1.rc, fail ? fail : 0);
	assert_int_equal(r2.rc, want_rc2);
	assert_int_equal(r2.n, want_calls);
	if (!fail)
		assert_int_equal(r1.n, 1);
	assert_int_equal(twl_answer_cache_waiting(c), 0);
	twl_answer_cache_free(c);
}

static void test_single_flight(void **state)
{
	(void)state;
	single_flight(0, 0, false, 1, 1); /* kept: the waiter is served it */
	single_flight(3600000, 0, false, 1, 0); /* quick: handed over */
	single_flight(0, -EIO, false, 2, 0); /* failed: the waiter computes */
	/* begun before a change the waiter came after: it computes */
	single_flight(0, 0, true, 2, 0);
	single_flight(3600000, 0, true, 2, 0);
}

/* ---- kept in the store -------------------------------------------- */

/* A new store, the clocks and counters as cache() leaves them. */
static struct twl_store *new_store(void)
{
	struct twl_store *s = NULL;

	twl_answer_cache_free(cache(50, 60000, 4));
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	return s;
}

/*
 * A restarted server (a new cache on the same store) serves the stored
 * answer with its age, until it is older than max age; a touch reaches
 * the stored answers too.
 */
static void test_stored(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *c;
	uint64_t age;
	int kept;

	(void)state;
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(q("SELECT count(*) FROM kept_answers"), 1);
	twl_answer_cache_free(c);
	clock_now += 300;
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(age, 350);
	assert_int_equal(calls, 1);
	/* not due before 20 x 50 ms, as if computed here */
	assert_int_equal(twl_answer_cache_step(c), 0);
	twl_answer_cache_free(c);
	clock_now += 60000; /* older than max age: computed again */
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 0);
	twl_answer_cache_touch(c);
	twl_answer_cache_free(c);
	/* touched before the restart: served, and due at once */
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(get(c, 1, &kept, &age), 3);
	twl_answer_cache_free(c);
	twl_store_close(s);
}

/* A peek at answer @k: its "n", or 0 when there is none to peek at. */
static int peek(struct twl_answer_cache *c, int k, uint64_t *age)
{
	json_t *doc = NULL;
	int rc = twl_answer_cache_peek(c, &answer_kind, &k, sizeof(k), &doc,
				       age);
	int n = rc ? (int)json_integer_value(json_object_get(doc, "n")) : 0;

	assert_true(rc == 0 || rc == 1);
	assert_true(rc ? doc != NULL : doc == NULL);
	json_decref(doc);
	return n;
}

/*
 * The same for an answer another answer's computation takes from the
 * store (a restarted server): then taken by the round ahead as it is, it
 * is not due at 20 times its cost.
 */
static void test_inner_from_store(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *c;

	(void)state;
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1); /* stored */
	twl_answer_cache_free(c);
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(get_inner(c, 1, 1), 1); /* from the store */
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 0); /* taken as it is */
	clock_now += 1000;
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 1);
	twl_answer_cache_free(c);
	twl_store_close(s);
}

/*
 * A peek gets a kept answer, else the store's, or none: it never
 * computes or keeps one, and is no request (an answer computed ahead
 * keeps the pace of one nobody asks for), nor does it see one past max
 * age.
 */
static void test_peek(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *c;
	json_t *doc;
	uint64_t age;
	int k = 1;

	(void)state;
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(peek(c, 1, &age), 0);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	clock_now += 1000; /* past 20 x its cost */
	assert_int_equal(peek(c, 1, &age), 1);
	assert_int_equal(age, 1050); /* from its start */
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 1);
	assert_int_equal(twl_answer_cache_peek(NULL, &answer_kind, &k,
					       sizeof(k), &doc, &age),
			 0);
	/* a restarted cache keeps nothing in memory yet: the store's */
	twl_answer_cache_free(c);
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(peek(c, 1, &age), 1);
	assert_int_equal(age, 1050);
	assert_int_equal(twl_answer_cache_count(c), 0);
	assert_int_equal(peek(c, 2, &age), 0);
	assert_int_equal(calls, 1);
	twl_answer_cache_free(c);
	/* past max age: none */
	c = cache(50, 60000, 4);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	clock_now += 60001;
	assert_int_equal(peek(c, 1, &age), 0);
	twl_answer_cache_free(c);
	twl_store_close(s);
}

/*
 * A cache's context names its stored answers: a restarted cache of the
 * same context serves them and computes them again at their usual time,
 * not at once; one of another context neither serves nor refreshes
 * them.
 */
static void test_context(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *c;
	uint64_t age;
	int kept;

	(void)state;
	c = context_cache(s, "a");
	assert_int_equal(get(c, 1, &kept, &age), 1);
	twl_answer_cache_free(c);
	c = context_cache(s, "b");
	assert_int_equal(get(c, 1, &kept, &age), 2);
	assert_int_equal(kept, 0);
	twl_answer_cache_free(c);
	assert_int_equal(q("SELECT count(*) FROM kept_answers"), 2);
	/* a's own, not due (test_stored: due at 20 x its cost) */
	c = context_cache(s, "a");
	assert_int_equal(get(c, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(age, 100);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 2);
	twl_answer_cache_free(c);
	twl_store_close(s);
}

/*
 * Two servers on one store: one computes an answer again (it claimed
 * the refresh), the other takes that answer from the store instead of
 * computing it; while a third holds the claim, neither computes; an
 * admin's change on one makes the other's answer due.
 */
static void test_shared(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *a, *b;
	int k = 1, kept;
	uint64_t age;
	char key[65];

	(void)state;
	a = cache_on(s, 50, 60000, 4);
	b = cache_on(s, 50, 60000, 4);
	assert_int_equal(get(a, 1, &kept, &age), 1);
	assert_int_equal(get(b, 1, &kept, &age), 1);
	assert_int_equal(kept, 1);
	clock_now += 1000; /* both due */
	assert_int_equal(twl_answer_cache_step(b), 1);
	assert_int_equal(calls, 2);
	assert_int_equal(twl_answer_cache_step(a), 1); /* b's, from the store */
	assert_int_equal(calls, 2);
	assert_int_equal(get(a, 1, &kept, &age), 2);
	assert_int_equal(kept, 1);
	/* another server's claim holds: a waits, b too */
	clock_now += 1000;
	twl_answer_key("", "test", &k, sizeof(k), key);
	assert_int_equal(twl_store_kept_claim(s, key, fake_wall(),
					      fake_wall() + 3600000),
			 1);
	assert_int_equal(twl_answer_cache_step(a), 0);
	assert_int_equal(twl_answer_cache_step(b), 0);
	assert_int_equal(calls, 2);
	/* an admin's change on b: a computes its answer again too */
	clock_now += 3600000;
	assert_int_equal(get(a, 1, &kept, &age), 3);
	assert_int_equal(get(b, 1, &kept, &age), 3);
	assert_int_equal(kept, 1);
	assert_int_equal(twl_answer_cache_step(a), 0); /* not yet due */
	clock_now += 10;
	twl_answer_cache_touch(b);
	assert_int_equal(twl_answer_cache_step(a), 1);
	assert_int_equal(calls, 4);
	assert_int_equal(get(a, 1, &kept, &age), 4);
	twl_answer_cache_free(a);
	twl_answer_cache_free(b);
	twl_store_close(s);
}

/* ---- a real server ------------------------------------------------ */

#define HOST_A \
	"a1a1000000000000000000000000000000000000000000000000000000000001"
#define HOST_B \
	"b2b2000000000000000000000000000000000000000000000000000000000002"
#define SOFT "memcg_v1.soft_limit"

static void keep_all(struct twl_config *cfg)
{
	cfg->slow_answer_ms = 0;
	cfg->slow_answer_max_age_s = 3600;
	cfg->slow_answer_ahead = false; /* each first request computes */
}

/*
 * GET @path until its @key (a member of the answer's top level, or of its
 * first feature for the export) is @want: up to 60 s, as the refresh runs
 * beside the requests. Whether the last answer was a kept one.
 */
static bool wait_for(struct fixture *f, const char *path, const char *key,
		     json_int_t want)
{
	struct http_result r;
	char age[32];
	json_int_t got = -1;
	bool kept = false;

	for (int i = 0; i < 600 && got != want; i++) {
		json_t *o;

		if (i)
			usleep(100000);
		http(f, "GET", path, f->viewer, NULL, 0, NULL, &r);
		assert_int_equal(r.status, 200);
		o = json_object_get(r.json, "features");
		o = o ? json_array_get(o, 0) : r.json;
		got = json_integer_value(json_object_get(o, key));
		kept = http_header(&r, "Age", age, sizeof(age));
		http_result_fini(&r);
	}
	assert_int_equal(got, want);
	return kept;
}

/*
 * Stop @f's server, then (*@stopped, if not NULL: the newest stored
 * answer's computation, once stopped) start it again on the same
 * database.
 */
static void restart_at(struct fixture *f, int64_t *stopped)
{
	twl_server_free(f->srv);
	twl_store_close(f->store);
	if (stopped)
		*stopped = query_int(
			f, "SELECT max(computed) FROM kept_answers", NULL);
	assert_int_equal(twl_store_open(f->cfg.db_path, &f->store), 0);
	f->srv = twl_server_new(&f->cfg, f->store);
	assert_non_null(f->srv);
	f->port = twl_server_port(f->srv);
}

static void restart(struct fixture *f)
{
	restart_at(f, NULL);
}

/* GET @path: whether it was a kept answer; its Age into *@age_s. */
static bool aged_s(struct fixture *f, const char *path, long *age_s)
{
	struct http_result r;
	char age[32];
	bool kept;

	http(f, "GET", path, f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	kept = http_header(&r, "Age", age, sizeof(age));
	*age_s = kept ? strtol(age, NULL, 10) : -1;
	http_result_fini(&r);
	return kept;
}

/* GET @path: whether it was a kept answer (an Age header). */
static bool aged(struct fixture *f, const char *path)
{
	long age_s;

	return aged_s(f, path, &age_s);
}

static void test_server(void **state)
{
	const char *detail = "/api/v1/features/" SOFT;
	const char *export =
		"/api/v1/export/linux-mm?format=json&feature=" SOFT;
	int64_t shift = (int64_t)time(NULL) - FULL_JSON_SENT - 3600;
	struct fixture f;
	struct http_result r;
	char age[32];

	(void)state;
	memset(&f, 0, sizeof(f));
	fixture_start(&f, keep_all);
	post_full_report(&f, HOST_A, "000000000000000000000000000000a1", shift);
	http(&f, "GET", detail, f.viewer, NULL, 0, NULL, &r);
	assert_false(http_header(&r, "Age", age, sizeof(age)));
	assert_int_equal(json_integer_value(json_object_get(r.json, "hosts")),
			 1);
	http_result_fini(&r);
	http(&f, "GET", detail, f.viewer, NULL, 0, NULL, &r);
	assert_true(http_header(&r, "Age", age, sizeof(age)));
	http_result_fini(&r);
	assert_false(wait_for(&f, export, "hosts_using", 1));
	assert_true(wait_for(&f, export, "hosts_using", 1));
	/* a second host: both answers show it once computed again */
	post_full_report(&f, HOST_B, "000000000000000000000000000000b2", shift);
	assert_true(wait_for(&f, detail, "hosts", 2));
	assert_true(wait_for(&f, export, "hosts_using", 2));
	/* a restarted server serves both from the store at once */
	restart(&f);
	http(&f, "GET", detail, f.viewer, NULL, 0, NULL, &r);
	assert_true(http_header(&r, "Age", age, sizeof(age)));
	assert_int_equal(json_integer_value(json_object_get(r.json, "hosts")),
			 2);
	http_result_fini(&r);
	http(&f, "GET", export, f.viewer, NULL, 0, NULL, &r);
	assert_true(http_header(&r, "Age", age, sizeof(age)));
	http_result_fini(&r);
	/* restarted with a setting an answer reads changed: none served */
	f.cfg.silent_after_s += 60;
	restart(&f);
	http(&f, "GET", detail, f.viewer, NULL, 0, NULL, &r);
	assert_false(http_header(&r, "Age", age, sizeof(age)));
	http_result_fini(&r);
	assert_false(aged(&f, export));
	fixture_stop(&f);
}

/* Every answer kept, and the dashboard's computed ahead. */
static void keep_all_ahead(struct twl_config *cfg)
{
	keep_all(cfg);
	cfg->slow_answer_ahead = true;
}

/*
 * A plain restart (the same code, settings, catalog and targets) takes
 * the stored answers computed ahead and does not compute them again at
 * once: 3 s later none is newer, and each is served that old.
 */
static void restart_keeps(struct fixture *f)
{
	int64_t n = count_rows(f, "kept_answers");
	const char *q = "SELECT count(*) FROM kept_answers"
			" WHERE computed > CAST(? AS INT)";
	int64_t before;
	char at[32];
	long age_s;

	restart_at(f, &before);
	sleep(3);
	snprintf(at, sizeof(at), "%lld", (long long)before);
	assert_int_equal(query_int(f, q, at), 0);
	assert_int_equal(count_rows(f, "kept_answers"), n);
	assert_true(aged_s(f, "/api/v1/features/" SOFT, &age_s));
	assert_true(age_s >= 3);
	assert_true(aged_s(f, "/api/v1/export/linux-mm", &age_s));
	assert_true(age_s >= 3);
}

/*
 * Wait for @f's first round of answers computed ahead, every one stored
 * (two per feature, the export, each target's readiness): up to 60 s
 * (about 1 s on an idle machine), making no request meanwhile.
 */
static void wait_round(struct fixture *f)
{
	int64_t want = 2 * (int64_t)twl_catalog_count() + 1, n = 0;
	json_t *targets = NULL, *errors = NULL;

	assert_int_equal(twl_targets_load(f->cfg.data_dir, &targets, &errors),
			 0);
	want += (int64_t)json_array_size(targets);
	json_decref(targets);
	json_decref(errors);
	for (int i = 0; i < 600 && n < want; i++) {
		usleep(100000);
		n = count_rows(f, "kept_answers");
	}
	assert_int_equal(n, want);
}

/*
 * With slow-answer-ahead, a started server computes the dashboard's
 * answers before anyone asks (every one is stored: two per feature, the
 * export, each shipped target's readiness), and the dashboard's own
 * requests for them are served kept (the parameters of the answers
 * computed ahead are those of those requests).
 */
static void test_server_ahead(void **state)
{
	struct fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	fixture_start(&f, keep_all_ahead);
	wait_round(&f);
	assert_true(aged(&f, "/api/v1/features/" SOFT));
	assert_true(aged(&f, "/api/v1/export/linux-mm?feature=" SOFT));
	assert_true(aged(&f, "/api/v1/export/linux-mm"));
	assert_true(aged(&f, "/api/v1/readiness?target=debian-12-6.12"));
	/* other parameters: computed for the request */
	assert_false(aged(&f, "/api/v1/features/" SOFT "?since=86400"));
	restart_keeps(&f);
	fixture_stop(&f);
}

/* Every answer kept and computed ahead; a detector scan every second. */
static void keep_all_ahead_scans(struct twl_config *cfg)
{
	keep_all_ahead(cfg);
	cfg->alert_interval_s = 1;
}

/*
 * The alert detector's readiness step takes a target's count from its
 * kept readiness answer: computed ahead with no host, it still says 0
 * after a host that breaks on the target reported (the answer is not
 * due for 45 minutes), where counting again would say 1.
 */
static void test_server_detector_kept(void **state)
{
	const char *scan = "SELECT value FROM alert_state WHERE key = 'scan'";
	const char *ready = "SELECT value FROM alert_state"
			    " WHERE key = 'ready|debian-12-6.12'";
	int64_t shift = (int64_t)time(NULL) - FULL_JSON_SENT - 3600, after;
	struct fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	fixture_start(&f, keep_all_ahead_scans);
	wait_round(&f); /* no request: one would make its answer due */
	post_full_report(&f, HOST_A, "000000000000000000000000000000a1", shift);
	after = (int64_t)time(NULL) + 1;
	/* a scan that started after the report: up to 60 s */
	for (int i = 0; i < 600 && query_int(&f, scan, NULL) <= after; i++)
		usleep(100000);
	assert_true(query_int(&f, scan, NULL) > after);
	assert_int_equal(query_int(&f, ready, NULL), 0);
	fixture_stop(&f);
}

/*
 * After a restart touched as an admin's change (or a start without a
 * context, answer_context.h) touches it, the answers computed ahead are
 * first all taken from the store, and only then computed again (the
 * touch made them due).
 */
static void test_ahead_restart(void **state)
{
	struct twl_store *s = new_store();
	struct twl_answer_cache *c;

	(void)state;
	c = cache_on(s, 50, 60000, 4);
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(ahead(c, 2), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(q("SELECT count(*) FROM kept_answers"), 2);
	twl_answer_cache_free(c);
	clock_now += 100;
	c = cache_on(s, 50, 60000, 4);
	twl_answer_cache_touch(c);
	clock_now += 10; /* a computation after the touch's ms */
	assert_int_equal(ahead(c, 1), 0);
	assert_int_equal(ahead(c, 2), 0);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(calls, 2); /* both from the store */
	assert_int_equal(twl_answer_cache_count(c), 2);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 1);
	assert_int_equal(twl_answer_cache_step(c), 0);
	assert_int_equal(calls, 4);
	twl_answer_cache_free(c);
	twl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_not_kept),
		cmocka_unit_test(test_kept_and_refreshed),
		cmocka_unit_test(test_max_age),
		cmocka_unit_test(test_touch),
		cmocka_unit_test(test_keep_warm),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_failed_refresh),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_ahead),
		cmocka_unit_test(test_inner_not_asked),
		cmocka_unit_test(test_inner_from_store),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_ahead_not_kept),
		cmocka_unit_test(test_ahead_slots),
		cmocka_unit_test(test_single_flight),
		cmocka_unit_test(test_stored),
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_ahead_restart),
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_server_ahead),
		cmocka_unit_test(test_server_detector_kept),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
