/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Secrets: API tokens ("twlt_" + 64 hex) and per-host keys ("twlk_" + 64
 * hex). Only their SHA-256 is stored; a presented secret is hashed and
 * looked up by hash, so the stored value never meets the secret and timing
 * reveals nothing usable about either.
 */
#ifndef TWL_SERVER_AUTH_H
#define TWL_SERVER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "http/key_cache.h"
#include "store/store.h"

#define TWL_SECRET_LEN 69 /* prefix(5) + 64 hex */

/* Role name <-> enum twl_role; -1 / NULL for unknown. */
int twl_role_parse(const char *name);
const char *twl_role_name(int role);

/*
 * Create a token with role ("admin", "viewer", "agent") and name; the
 * secret (TWL_SECRET_LEN + 1 bytes) is returned once and never stored.
 */
int twl_auth_token_create(struct twl_store *s, const char *name,
			  const char *role, int64_t now, char *secret,
			  int64_t *id);

/*
 * Create a per-host key for host_id, minted by enrolment token @token_id;
 * secret as above. -EDQUOT when that token has @max_live live keys
 * already (enroll-max-keys).
 */
int twl_auth_host_key_create(struct twl_store *s, const char *host_id,
			     int64_t token_id, unsigned max_live, int64_t now,
			     char *secret);

/*
 * Resolve a presented secret into who. 0 on success; -ENOENT unknown,
 * -EKEYREVOKED revoked host key, -EINVAL malformed, other negative errno
 * on storage errors. A host key is first looked for in @kc (NULL: none)
 * at @now (monotonic seconds), and one found live in the store is put
 * there (key_cache.h); API tokens are looked up in the store every time.
 */
int twl_auth_resolve(struct twl_store *s, struct twl_key_cache *kc,
		     const char *secret, double now, struct twl_principal *who);

#endif /* TWL_SERVER_AUTH_H */
