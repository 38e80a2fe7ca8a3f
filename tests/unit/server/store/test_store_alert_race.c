// SPDX-License-Identifier: GPL-2.0
/*
 * Two servers' alert detectors on one PostgreSQL database swapping the
 * same key of alert_state at once (twl_store_alert_swap()): exactly one
 * of them finds the key missing, so that only one raises the event and
 * its webhooks are delivered once. The interleaving is forced: a third
 * transaction holds the key's insert open, both stores' swaps start and
 * wait for it (seen in pg_locks), then it rolls back and the two race.
 * SQLite needs no such test: one writer per database, each swap one
 * write transaction.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pg_fixture.h"
#include "store/postgresql/store_pg_internal.h" /* the stores' pids */
#include "store/store.h"
#include "store/store_alerts.h"

static char pguri[512];

/* One server's swap of one key, run in a thread. */
struct racer {
	struct twl_store *s;
	struct twl_alert_kv kv;
	int ret;
};

static void *swap_thread(void *arg)
{
	struct racer *r = arg;

	r->ret = twl_store_alert_swap(r->s, &r->kv, 1, 5000);
	return NULL;
}

/* Block until the connection of @s waits for a lock (the key's row). */
static void wait_for_lock(struct twl_store *s)
{
	char type[32];
	int64_t id;

	pg_fixture_wait_lock(pguri, PQbackendPID(twl_pg_of(s)->conn), type,
			     sizeof(type), &id);
	assert_string_equal(type, "transactionid");
}

static void exec_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
}

/*
 * Both swaps of @key (a use's, keeping the maximum, when @keep_max) start
 * before either commits; exactly one finds the key missing and the other
 * reads the value the first stored.
 */
static void race(const char *key, bool keep_max)
{
	/* not on the stack: a failed check leaves the threads running */
	static struct racer r[2];
	PGconn *blocker = pg_fixture_connect(pguri);
	char sql[200];
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++) {
		memset(&r[i].kv, 0, sizeof(r[i].kv));
		r[i].kv.key = key;
		r[i].kv.value = 100 + i;
		r[i].kv.keep_max = keep_max;
		r[i].ret = -1;
		assert_int_equal(twl_store_open(pguri, &r[i].s), 0);
	}
	/* the key's insert held open: both swaps wait for it */
	exec_ok(blocker, "BEGIN");
	snprintf(sql, sizeof(sql),
		 "INSERT INTO alert_state(key, value, at) VALUES ('%s', 1, 1)",
		 key);
	exec_ok(blocker, sql);
	for (i = 0; i < 2; i++) {
		assert_int_equal(
			pthread_create(&t[i], NULL, swap_thread, &r[i]), 0);
		wait_for_lock(r[i].s);
	}
	exec_ok(blocker, "ROLLBACK");
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(r[i].ret, 0);
	}
	/* one found it missing (news), the other what the first stored */
	assert_int_equal(r[0].kv.had + r[1].kv.had, 1);
	i = r[0].kv.had ? 0 : 1;
	assert_int_equal(r[i].kv.old, r[1 - i].kv.value);
	snprintf(sql, sizeof(sql),
		 "SELECT value FROM alert_state WHERE key = '%s'", key);
	assert_int_equal(pg_q(pguri, sql), keep_max ? 101 : r[i].kv.value);
	PQfinish(blocker);
	twl_store_close(r[0].s);
	twl_store_close(r[1].s);
}

static void test_new_fact_once(void **state)
{
	(void)state;
	pg_fixture_db(pguri, sizeof(pguri));
	race("host_silent|h1|last_seen|1", false);
}

static void test_new_use_once(void **state)
{
	(void)state;
	pg_fixture_db(pguri, sizeof(pguri));
	race("use|memcg_v1|host|h1", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_fact_once),
		cmocka_unit_test(test_new_use_once),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
