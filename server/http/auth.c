// SPDX-License-Identifier: GPL-2.0
/* Token and host-key creation and resolution (auth.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

#include "http/auth.h"

static const char *const role_names[] = {
	[TWL_ROLE_AGENT] = "agent",
	[TWL_ROLE_VIEWER] = "viewer",
	[TWL_ROLE_ADMIN] = "admin",
};

/* Contract: see auth.h. */
int twl_role_parse(const char *name)
{
	for (int r = TWL_ROLE_AGENT; r <= TWL_ROLE_ADMIN; r++)
		if (name && !strcmp(name, role_names[r]))
			return r;
	return -1;
}

/* Contract: see auth.h. */
const char *twl_role_name(int role)
{
	return role >= TWL_ROLE_AGENT && role <= TWL_ROLE_ADMIN ?
		       role_names[role] :
		       NULL;
}

static int make_secret(const char *prefix, char *secret, char hash[65])
{
	char hex[65];
	int ret = twl_random_hex(hex, 32);

	if (ret)
		return ret;
	snprintf(secret, TWL_SECRET_LEN + 1, "%s%s", prefix, hex);
	twl_sha256_hex(secret, strlen(secret), hash);
	return 0;
}

/* Contract: see auth.h. */
int twl_auth_token_create(struct twl_store *s, const char *name,
			  const char *role, int64_t now, char *secret,
			  int64_t *id)
{
	char hash[65];
	int ret;

	if (twl_role_parse(role) < 0 || !name || !name[0] || strlen(name) > 63)
		return -EINVAL;
	ret = make_secret("twlt_", secret, hash);
	if (!ret)
		ret = twl_store_token_add(s, name, role, hash, now, id);
	return ret;
}

/* Contract: see auth.h. */
int twl_auth_host_key_create(struct twl_store *s, const char *host_id,
			     int64_t token_id, unsigned max_live, int64_t now,
			     char *secret)
{
	char hash[65];
	int ret = make_secret("twlk_", secret, hash);

	if (!ret)
		ret = twl_store_host_key_add(s, host_id, hash, token_id,
					     max_live, now);
	return ret;
}

static bool well_formed(const char *secret)
{
	if (strlen(secret) != TWL_SECRET_LEN || secret[0] != 't' ||
	    secret[1] != 'w' || secret[2] != 'l' ||
	    (secret[3] != 't' && secret[3] != 'k') || secret[4] != '_')
		return false;
	for (int i = 5; i < TWL_SECRET_LEN; i++)
		if (!((secret[i] >= '0' && secret[i] <= '9') ||
		      (secret[i] >= 'a' && secret[i] <= 'f')))
			return false;
	return true;
}

/* The host of the key whose SHA-256 is @hash: from kc, else the store. */
static int host_key_resolve(struct twl_store *s, struct twl_key_cache *kc,
			    const char *hash, double now, char host_id[65])
{
	unsigned long gen;
	int ret;

	if (!kc)
		return twl_store_host_key_lookup(s, hash, host_id);
	if (twl_key_cache_get(kc, hash, now, host_id))
		return 0;
	gen = twl_key_cache_gen(kc);
	ret = twl_store_host_key_lookup(s, hash, host_id);
	if (!ret)
		twl_key_cache_put(kc, hash, host_id, now, gen);
	return ret;
}

/* Contract: see auth.h. */
int twl_auth_resolve(struct twl_store *s, struct twl_key_cache *kc,
		     const char *secret, double now, struct twl_principal *who)
{
	char hash[65], role[16];
	int ret;

	memset(who, 0, sizeof(*who));
	if (!secret || !well_formed(secret))
		return -EINVAL;
	twl_sha256_hex(secret, TWL_SECRET_LEN, hash);
	if (secret[3] == 'k') {
		ret = host_key_resolve(s, kc, hash, now, who->host_id);
		if (ret)
			return ret;
		memcpy(who->key_hash, hash, sizeof(who->key_hash));
		who->role = TWL_ROLE_AGENT;
		snprintf(who->name, sizeof(who->name), "host:%.58s",
			 who->host_id);
		return 0;
	}
	ret = twl_store_token_lookup(s, hash, role, sizeof(role), who->name,
				     sizeof(who->name), &who->token_id);
	if (ret)
		return ret;
	who->role = twl_role_parse(role);
	return who->role < 0 ? -EINVAL : 0;
}
