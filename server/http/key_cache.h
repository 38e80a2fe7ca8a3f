/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host keys resolved recently, so that an agent's report is authorised
 * without a read of the store: that read was a transaction on the
 * credential connection under one lock for every HTTP thread, with the
 * page cache dropped after each of the writer's commits (its file locks
 * and page reads were two to five system calls per report). Entries map a
 * key's SHA-256 (never the key) to its host, and live for the key-cache
 * setting's seconds; only keys found live are kept, so an unknown or
 * revoked key is looked up every time.
 *
 * Revocation through this process (DELETE /api/v1/host-keys/HOST_ID) removes
 * the host's entries at once (twl_key_cache_forget_host()). A key revoked
 * by another server process on the same database (PostgreSQL) is refused
 * here once its entry expires, within key-cache seconds.
 *
 * The table is fixed in size and set-associative: memory is bounded
 * whatever the number of hosts, and past capacity a set's entry that
 * expires first is replaced (its key is then looked up again).
 */
#ifndef TWL_SERVER_KEY_CACHE_H
#define TWL_SERVER_KEY_CACHE_H

#include <stdbool.h>

struct twl_key_cache;

/*
 * twl_key_cache_new - an empty cache whose entries live @ttl seconds (> 0).
 * NULL with errno on failure.
 */
struct twl_key_cache *twl_key_cache_new(double ttl);

/* Free kc. NULL-safe. */
void twl_key_cache_free(struct twl_key_cache *kc);

/*
 * twl_key_cache_get - the host of the key whose SHA-256 is @hash (64 hex
 * characters) into @host_id, when an entry put less than the ttl before
 * @now (monotonic seconds) holds it. False when none does.
 */
bool twl_key_cache_get(struct twl_key_cache *kc, const char *hash, double now,
		       char host_id[65]);

/*
 * twl_key_cache_gen - the count of twl_key_cache_forget_host() calls so
 * far: read it before looking a key up in the store, and pass it to
 * twl_key_cache_put().
 */
unsigned long twl_key_cache_gen(struct twl_key_cache *kc);

/*
 * twl_key_cache_put - remember that the key whose SHA-256 is @hash is
 * @host_id's and live, as looked up at @now. Replaces an entry of the
 * same hash. Does nothing when a host was forgotten since @gen was read
 * (the look-up may predate a revocation).
 */
void twl_key_cache_put(struct twl_key_cache *kc, const char *hash,
		       const char *host_id, double now, unsigned long gen);

/* twl_key_cache_forget_host - drop every entry of @host_id. */
void twl_key_cache_forget_host(struct twl_key_cache *kc, const char *host_id);

#endif /* TWL_SERVER_KEY_CACHE_H */
