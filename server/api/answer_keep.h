/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kept answers' copies in the store (answer_keep.c, for
 * answer_cache.c): named by a hash, written as JSON text, read back with
 * their age, and claimed for a refresh. Times here are unix ms.
 */
#ifndef TWL_SERVER_API_ANSWER_KEEP_H
#define TWL_SERVER_API_ANSWER_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

/*
 * twl_answer_key - the store's name of the answer of kind @name for
 * @params (@len bytes), of this server's version, computed in @context
 * (twl_answer_context(); "" for none; its first 64 bytes count): SHA-256
 * in hex; "" past TWL_ANSWER_NAME_MAX or TWL_ANSWER_PARAMS_MAX
 * (answer_cache.h).
 */
void twl_answer_key(const char *context, const char *name, const void *params,
		    size_t len, char key[65]);

/* An answer read from the store. */
struct twl_answer_stored {
	json_t *doc; /* the caller's */
	int64_t computed; /* when its computation started */
	uint64_t age; /* ms since then, at the load's @now */
	uint64_t cost; /* ms */
	int64_t touched; /* the last change it cannot see (0: none) */
};

/*
 * twl_answer_load - the answer stored under @key into @a, if it is no
 * older than @max_age_ms at @now: 0, -ENOENT (none, or too old), or a
 * negative errno (a failure, logged).
 */
int twl_answer_load(struct twl_store *s, const char *key, int64_t now,
		    uint64_t max_age_ms, struct twl_answer_stored *a);

/*
 * twl_answer_save - store @doc as the answer under @key, computed from
 * @computed for @cost ms. A failure is logged (the answer stays kept in
 * memory) and its negative errno returned.
 */
int twl_answer_save(struct twl_store *s, const char *key, const json_t *doc,
		    int64_t computed, uint64_t cost);

/*
 * twl_answer_claim - whether this server computes the answer under @key
 * again, now (@now) that its last computation took @cost ms: 1 when it
 * has the claim (for twice that and a minute more), 0 when another
 * server has it, or a negative errno (logged).
 */
int twl_answer_claim(struct twl_store *s, const char *key, int64_t now,
		     uint64_t cost);

#endif /* TWL_SERVER_API_ANSWER_KEEP_H */
