/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tokens and per-host keys on PostgreSQL (store_pg_tokens.c), with the
 * contracts of the store.h functions of the same names
 * (twl_pg_token_add: twl_store_token_add, ...).
 */
#ifndef TWL_SERVER_STORE_PG_TOKENS_H
#define TWL_SERVER_STORE_PG_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

int twl_pg_token_add(struct twl_store *s, const char *name, const char *role,
		     const char *hash, int64_t now, int64_t *id);
int twl_pg_token_lookup(struct twl_store *s, const char *hash, char *role,
			size_t role_cap, char *name, size_t name_cap,
			int64_t *id);
int twl_pg_token_revoke(struct twl_store *s, int64_t id, int64_t now);
int twl_pg_token_list(struct twl_store *s, json_t **out);
int twl_pg_host_key_add(struct twl_store *s, const char *host_id,
			const char *hash, int64_t token_id, unsigned max_live,
			int64_t now);
int twl_pg_host_key_lookup(struct twl_store *s, const char *hash,
			   char host_id[65]);
int twl_pg_host_key_revoke(struct twl_store *s, const char *host_id,
			   int64_t now, int *n);

#endif /* TWL_SERVER_STORE_PG_TOKENS_H */
