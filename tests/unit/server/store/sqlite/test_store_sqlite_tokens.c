// SPDX-License-Identifier: GPL-2.0
/*
 * Tokens and per-host keys (server/store/sqlite/store_sqlite_tokens.c,
 * through http/auth.c): created, resolved, revoked; a key resolves while
 * a long read holds the reader.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "http/auth.h"
#include "sqlite_fixture.h"
#include "store/sqlite/store_sqlite_internal.h" /* twl_store_read_lock */
#include "store/store.h"

struct resolve_arg {
	struct twl_store *s;
	const char *secret;
	int ret;
};

static void *resolve_thread(void *p)
{
	struct resolve_arg *a = p;
	struct twl_principal who;

	a->ret = twl_auth_resolve(a->s, NULL, a->secret, 0, &who);
	return NULL;
}

/*
 * Resolve secret on another thread while this one holds the reader lock,
 * as a long dashboard query does: authentication has a connection of its
 * own and must not wait (5 s allowed).
 */
static int resolve_beside_reader(struct twl_store *s, const char *secret)
{
	struct resolve_arg a = { s, secret, 1 };
	struct timespec t;
	pthread_t th;
	int joined;

	twl_store_read_lock(s);
	assert_int_equal(pthread_create(&th, NULL, resolve_thread, &a), 0);
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 5;
	joined = pthread_timedjoin_np(th, NULL, &t);
	twl_store_read_unlock(s);
	if (joined)
		pthread_join(th, NULL);
	assert_int_equal(joined, 0);
	return a.ret;
}

static void test_tokens_and_keys(void **state)
{
	struct twl_store *s = NULL;
	struct twl_principal who;
	char secret[80], key[80], hostid[65];
	int64_t id;
	int n;

	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(
		twl_auth_token_create(s, "ops", "viewer", 5, secret, &id), 0);
	assert_int_equal(twl_auth_token_create(s, "ops", "superuser", 5, key,
					       NULL),
			 -EINVAL);
	assert_int_equal(twl_auth_resolve(s, NULL, secret, 0, &who), 0);
	assert_int_equal(who.role, TWL_ROLE_VIEWER);
	assert_int_equal(who.token_id, id);
	assert_string_equal(who.name, "ops");
	secret[10] ^= 1; /* one flipped digit: unknown */
	assert_true(twl_auth_resolve(s, NULL, secret, 0, &who) < 0);
	secret[10] ^= 1;
	assert_int_equal(twl_store_token_revoke(s, id, 6), 0);
	assert_int_equal(twl_auth_resolve(s, NULL, secret, 0, &who), -ENOENT);
	assert_int_equal(twl_store_token_revoke(s, id, 6), -ENOENT);

	assert_int_equal(twl_auth_host_key_create(s, "abcd", 1, 10, 5, key), 0);
	assert_int_equal(twl_auth_resolve(s, NULL, key, 0, &who), 0);
	assert_int_equal(who.role, TWL_ROLE_AGENT);
	assert_string_equal(who.host_id, "abcd");
	assert_int_equal(resolve_beside_reader(s, key), 0);
	assert_int_equal(twl_store_host_key_revoke(s, "abcd", 7, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(twl_auth_resolve(s, NULL, key, 0, &who), -EKEYREVOKED);
	assert_int_equal(twl_store_host_key_lookup(s, "0000", hostid), -ENOENT);
	assert_int_equal(twl_auth_resolve(s, NULL, "twlt_short", 0, &who),
			 -EINVAL);
	twl_store_close(s);
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens_and_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
