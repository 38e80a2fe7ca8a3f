/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Token-bucket rate limits keyed by a short string (host id, peer IP), in a
 * fixed-size set-associative table: memory is bounded whatever the number
 * of keys; past capacity the least recently used key of a set is evicted
 * (it then starts again with a full bucket).
 */
#ifndef TWL_SERVER_RATELIMIT_H
#define TWL_SERVER_RATELIMIT_H

#include <stdbool.h>

struct twl_ratelimit;

/* rate tokens per second, burst bucket size. NULL with errno on failure. */
struct twl_ratelimit *twl_ratelimit_new(double rate, double burst);
void twl_ratelimit_free(struct twl_ratelimit *rl);

/*
 * Take one token for key at time now (seconds, monotonic). Returns 0 when
 * allowed, else the seconds (>= 1) to wait before the next token.
 */
unsigned twl_ratelimit_take(struct twl_ratelimit *rl, const char *key,
			    double now);

#endif /* TWL_SERVER_RATELIMIT_H */
