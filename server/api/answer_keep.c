// SPDX-License-Identifier: GPL-2.0
/*
 * The kept answers' copies in the store (answer_keep.h). The name covers
 * the server's version and the context the answers were computed in
 * (answer_context.h: the server's code, the settings, the catalog and the
 * targets), so a server of another version or context neither serves nor
 * refreshes an answer that may differ from its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "api/answer_cache.h"
#include "api/answer_keep.h"
#include "store/store.h"

#ifndef TWL_VERSION
#error "TWL_VERSION must be defined (server/CMakeLists.txt)"
#endif

/* A claim lasts this much longer than twice the last computation. */
#define CLAIM_SLACK_MS 60000

/* Contract: see answer_keep.h. */
void twl_answer_key(const char *context, const char *name, const void *params,
		    size_t len, char key[65])
{
	static const char version[] = TWL_VERSION;
	size_t n = strlen(name), m = strnlen(context, 64);
	unsigned char buf[sizeof(version) + 65 + TWL_ANSWER_NAME_MAX + 1 +
			  TWL_ANSWER_PARAMS_MAX];
	size_t at = 0;

	/* "VERSION\0CONTEXT\0NAME\0PARAMS"; nothing longer is kept */
	if (n > TWL_ANSWER_NAME_MAX || len > TWL_ANSWER_PARAMS_MAX) {
		key[0] = '\0'; /* no store takes it */
		return;
	}
	memcpy(buf, version, sizeof(version));
	at = sizeof(version);
	memcpy(buf + at, context, m);
	buf[at + m] = '\0';
	at += m + 1;
	memcpy(buf + at, name, n + 1);
	at += n + 1;
	memcpy(buf + at, params, len);
	twl_sha256_hex(buf, at + len, key);
}

/* Contract: see answer_keep.h. */
int twl_answer_load(struct twl_store *s, const char *key, int64_t now,
		    uint64_t max_age_ms, struct twl_answer_stored *a)
{
	struct twl_kept k = { .computed = 0 };
	json_error_t err;
	int rc;

	memset(a, 0, sizeof(*a));
	snprintf(k.key, sizeof(k.key), "%s", key);
	rc = twl_store_kept_get(s, &k);
	if (rc) {
		if (rc != -ENOENT && rc != -ECANCELED) /* not: stopping */
			twl_log(LOG_WARNING,
				"cannot read a kept answer from the store: %s;"
				" it is computed instead",
				strerror(-rc));
		return rc;
	}
	if (now - k.computed > (int64_t)max_age_ms) {
		free(k.body);
		return -ENOENT;
	}
	a->doc = json_loadb(k.body, k.len, 0, &err);
	free(k.body);
	if (!a->doc) {
		twl_log(LOG_WARNING,
			"a kept answer in the store is not JSON (%s); it is "
			"computed instead",
			err.text);
		return -EBADMSG;
	}
	a->computed = k.computed;
	a->age = now > k.computed ? (uint64_t)(now - k.computed) : 0;
	a->cost = k.cost > 0 ? (uint64_t)k.cost : 0;
	a->touched = k.touched;
	return 0;
}

/* Contract: see answer_keep.h. */
int twl_answer_save(struct twl_store *s, const char *key, const json_t *doc,
		    int64_t computed, uint64_t cost)
{
	struct twl_kept k = { .computed = computed, .cost = (int64_t)cost };
	int rc;

	snprintf(k.key, sizeof(k.key), "%s", key);
	k.body = json_dumps(doc, JSON_COMPACT);
	if (!k.body)
		return -ENOMEM;
	k.len = strlen(k.body);
	rc = twl_store_kept_put(s, &k);
	free(k.body);
	if (rc)
		twl_log(LOG_WARNING,
			"cannot store a kept answer (%zu bytes): %s; it is kept"
			" by this server only, until it stops",
			k.len, strerror(-rc));
	return rc;
}

/* Contract: see answer_keep.h. */
int twl_answer_claim(struct twl_store *s, const char *key, int64_t now,
		     uint64_t cost)
{
	int rc = twl_store_kept_claim(s, key, now,
				      now + 2 * (int64_t)cost + CLAIM_SLACK_MS);

	if (rc < 0)
		twl_log(LOG_WARNING,
			"cannot claim a kept answer's refresh in the store: %s;"
			" computing it anyway",
			strerror(-rc));
	return rc;
}
