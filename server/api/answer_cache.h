/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slow answers kept and served again (answer_cache.c): an answer of the
 * read API that took at least `slow-answer` to compute (a feature's
 * detail, the export's data on a large fleet) is kept, served again while
 * fresh, served stale while a background thread computes it again, and
 * never served older than `slow-answer-max-age`. An answer computed in
 * less time is never kept, so a small fleet is always answered live.
 * Kept answers are also written to the store (twl_store_kept_put()), so
 * a restarted server, or another server on the same PostgreSQL, serves
 * them at once; on PostgreSQL a claim in the store lets one server, not
 * each, compute an answer again. Requests for an answer whose first
 * computation is under way wait for it instead of computing it too.
 * See docs/operators-guide.md, "Slow answers are kept".
 */
#ifndef TWL_SERVER_API_ANSWER_CACHE_H
#define TWL_SERVER_API_ANSWER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_answer_cache;
struct twl_store;

/*
 * How an answer is computed: from the cache's @ctx and the request's
 * @params (plain bytes, compared and copied as they are): 0 with a new
 * document in *@out, or a negative errno.
 */
typedef int (*twl_answer_fn)(void *ctx, const void *params, json_t **out);

/*
 * A kind of answer: @name, stable across restarts and servers (it names
 * the answer in the store, with the server's version and the
 * parameters), and @fn, how it is computed.
 */
struct twl_answer_kind {
	const char *name;
	twl_answer_fn fn;
};

/* Most bytes of one answer's parameters, and of a kind's name. */
#define TWL_ANSWER_PARAMS_MAX 1024
#define TWL_ANSWER_NAME_MAX 64
/* Most answers computed ahead (twl_answer_cache_ahead()). */
#define TWL_ANSWER_AHEAD_MAX 256

struct twl_answer_cache_opts {
	uint64_t slow_ms; /* keep answers that took this long; 0 = all */
	uint64_t max_age_ms; /* never serve one older; 0 = keep none */
	size_t max_entries; /* least recently served goes first */
	/* how long a kept answer is refreshed for after it was last served */
	uint64_t keep_warm_ms;
	/* where kept answers outlive the process (store.h); NULL: memory */
	struct twl_store *store;
	/*
	 * What every answer depends on beside the data and its parameters
	 * (twl_answer_context()): part of each stored answer's name, so a
	 * cache of another context neither serves nor refreshes it. "": none.
	 */
	char context[65];
	bool no_thread; /* tests: refreshes only by twl_answer_cache_step() */
	uint64_t (*clock_ms)(void); /* tests; NULL = twl_mono_ms() */
	int64_t (*wall_ms)(void); /* tests; NULL = the time of day, unix ms */
};

/*
 * twl_answer_cache_new - a cache computing answers with @ctx, with its
 * refresh thread unless @o->no_thread; NULL with errno set.
 * twl_answer_cache_free - stop the thread (a refresh under way finishes
 * first) and free every answer. NULL-safe.
 */
struct twl_answer_cache *
twl_answer_cache_new(void *ctx, const struct twl_answer_cache_opts *o);
void twl_answer_cache_free(struct twl_answer_cache *c);

/*
 * twl_answer_cache_get - the answer of kind @k for @params (@len bytes;
 * past TWL_ANSWER_PARAMS_MAX, or a name past TWL_ANSWER_NAME_MAX, it is
 * computed and not kept) into *@out, a new document the caller
 * owns: a copy of a kept answer if one is no older than max_age_ms (kept
 * here, else in the store), else computed now (and kept if that took
 * slow_ms or longer). A request that finds the answer's first
 * computation under way waits for it and gets a copy. *@age_ms is how
 * old a kept answer is. A kept answer past its refresh time (20 times
 * what it cost, at most half of max_age_ms) is served and computed again
 * in the background. 1 for a kept answer, 0 for one computed for this
 * request (or the one it waited for), or @k->fn's negative errno (then
 * nothing is kept).
 */
int twl_answer_cache_get(struct twl_answer_cache *c,
			 const struct twl_answer_kind *k, const void *params,
			 size_t len, json_t **out, uint64_t *age_ms);

/*
 * twl_answer_cache_get_inner - twl_answer_cache_get() for the computation
 * of another answer (the export's readiness facts): a kept answer found
 * this way is not counted as asked for. So an answer computed ahead that
 * only other answers read is refreshed on its unasked schedule (3/4 of
 * max_age_ms), not at 20 times its cost after each of their
 * computations, and it is neither kept warm nor kept from eviction by
 * them.
 */
int twl_answer_cache_get_inner(struct twl_answer_cache *c,
			       const struct twl_answer_kind *k,
			       const void *params, size_t len, json_t **out,
			       uint64_t *age_ms);

/*
 * twl_answer_cache_touch - after a change an answer cannot see by its age
 * (an annotation, a target): every kept answer is computed again before
 * its refresh time, and is served as it is until then; those in the store
 * are marked too (twl_store_kept_touch()), and another server's cache on
 * the same store treats its answers computed before the mark the same
 * way once its thread sees the mark (every 10 s). NULL-safe.
 */
void twl_answer_cache_touch(struct twl_answer_cache *c);

/*
 * twl_answer_cache_ahead - have the refresh thread compute @k's answer for
 * @params (@len bytes) ahead of any request, when it has no refresh due,
 * as a request would (from the store if it is there): kept if it is slow
 * (slow_ms), and then computed again while nobody asks for it too, at
 * three quarters of max_age_ms less twice its cost (so it is never
 * served older than max_age_ms), or as any kept answer while it is asked
 * for. One that is quick is not kept and is tried again after
 * max_age_ms; one that fails, after a minute; one whose computation
 * finds nothing to compute (-ENOENT: a target removed) never again. An
 * answer computed ahead is the last a request's answer takes the slot
 * of, and one computed ahead takes only a free slot. Registering the
 * same answer again does nothing. 0, or -E2BIG (parameters or name too
 * long), -ENOSPC (TWL_ANSWER_AHEAD_MAX registered), -ENOMEM.
 */
int twl_answer_cache_ahead(struct twl_answer_cache *c,
			   const struct twl_answer_kind *k, const void *params,
			   size_t len);
/*
 * twl_answer_cache_step - tests with no_thread: look for the store's
 * touches and refresh the one kept answer most overdue, as the thread
 * would, else compute the next answer due ahead: 1 if one was computed
 * (or a newer one taken from the store), 0 if none was due or another
 * server's claim holds it, or a refresh's negative errno.
 */
int twl_answer_cache_step(struct twl_answer_cache *c);

/*
 * twl_answer_cache_peek - a copy of the answer of kind @k for @params
 * (@len bytes) into *@out and its age into *@age_ms, if this cache keeps
 * one no older than max_age_ms, else if its store has one (as after a
 * start, before the answers are taken from it): 1; else 0. Nothing is
 * computed or kept, and a peek is no request (the answer's refreshes
 * keep the pace of an answer nobody asks for). -ENOMEM; NULL @c: 0.
 */
int twl_answer_cache_peek(struct twl_answer_cache *c,
			  const struct twl_answer_kind *k, const void *params,
			  size_t len, json_t **out, uint64_t *age_ms);

/*
 * twl_answer_cache_count - answers kept now (in memory).
 * twl_answer_cache_waiting - requests waiting now for the first
 * computation of an answer that another request is computing.
 */
size_t twl_answer_cache_count(struct twl_answer_cache *c);
size_t twl_answer_cache_waiting(struct twl_answer_cache *c);

#endif /* TWL_SERVER_API_ANSWER_CACHE_H */
