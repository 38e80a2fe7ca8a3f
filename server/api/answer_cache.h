/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slow answers kept and served again (answer_cache.c): an answer of the
 * read API that took at least `slow-answer` to compute (a feature's
 * detail, the export's data on a large fleet) is kept, served again while
 * fresh, served stale while a background thread computes it again, and
 * never served older than `slow-answer-max-age`. An answer computed in
 * less time is never kept, so a small fleet is always answered live.
 * See docs/operators-guide.md, "Slow answers".
 */
#ifndef TWL_SERVER_API_ANSWER_CACHE_H
#define TWL_SERVER_API_ANSWER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_answer_cache;

/*
 * How an answer is computed: from the cache's @ctx and the request's
 * @params (plain bytes, compared and copied as they are): 0 with a new
 * document in *@out, or a negative errno.
 */
typedef int (*twl_answer_fn)(void *ctx, const void *params, json_t **out);

/* Most bytes of one answer's parameters. */
#define TWL_ANSWER_PARAMS_MAX 1024

struct twl_answer_cache_opts {
	uint64_t slow_ms; /* keep answers that took this long; 0 = all */
	uint64_t max_age_ms; /* never serve one older; 0 = keep none */
	size_t max_entries; /* least recently served goes first */
	/* how long a kept answer is refreshed for after it was last served */
	uint64_t keep_warm_ms;
	bool no_thread; /* tests: refreshes only by twl_answer_cache_step() */
	uint64_t (*clock_ms)(void); /* tests; NULL = twl_mono_ms() */
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
 * twl_answer_cache_get - the answer of @fn for @params (@len bytes, at
 * most TWL_ANSWER_PARAMS_MAX) into *@out, a new document the caller owns:
 * a copy of a kept answer if one is no older than max_age_ms, else
 * computed now (and kept if that took slow_ms or longer). *@age_ms is how
 * old the answer is (0 when computed now). A kept answer past its refresh
 * time (20 times what it cost, at most half of max_age_ms) is served and
 * computed again in the background. 1 for a kept answer, 0 for one
 * computed now, or @fn's negative errno (then nothing is kept).
 */
int twl_answer_cache_get(struct twl_answer_cache *c, twl_answer_fn fn,
			 const void *params, size_t len, json_t **out,
			 uint64_t *age_ms);

/*
 * twl_answer_cache_touch - after a change an answer cannot see by its age
 * (an annotation, a target): every kept answer is computed again before
 * its refresh time, and is served as it is until then. NULL-safe.
 */
void twl_answer_cache_touch(struct twl_answer_cache *c);

/*
 * twl_answer_cache_step - tests with no_thread: compute the one kept
 * answer most overdue for a refresh, as the thread would. 1 if one was
 * computed, 0 if none was due, or its negative errno.
 */
int twl_answer_cache_step(struct twl_answer_cache *c);

/* twl_answer_cache_count - answers kept now. */
size_t twl_answer_cache_count(struct twl_answer_cache *c);

#endif /* TWL_SERVER_API_ANSWER_CACHE_H */
