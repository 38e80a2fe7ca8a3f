// SPDX-License-Identifier: GPL-2.0
/*
 * twl_store_stop_reads() (store.h), on each backend: after it every read
 * fails with -ECANCELED while writes go on; on PostgreSQL a feature
 * detail under way (held on a table lock another connection has, so it
 * is surely under way) is cancelled and ends with -ECANCELED. SQLite's
 * long reads end through their progress handler, on the same flag.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "pg_fixture.h"
#include "sqlite_fixture.h"
#include "store/store.h"
#include "store/store_read.h"

#define SOFT "memcg_v1.soft_limit"
#define HOST "c3c3000000000000000000000000000000000000000000000000000000000003"

static char pg_uri[512];

/* A new store of @b with one report in it. */
static struct twl_store *open_one(enum backend b)
{
	struct twl_store *s = NULL;
	json_t *r = report(HOST, "0001");

	if (b == SQLITE) {
		unlink(dbpath);
		assert_int_equal(twl_store_open(dbpath, &s), 0);
	} else {
		pg_fixture_db(pg_uri, sizeof(pg_uri));
		assert_int_equal(twl_store_open(pg_uri, &s), 0);
	}
	ingest_one(s, HOST, r);
	json_decref(r);
	return s;
}

static void test_stop_reads(void **state)
{
	enum backend b = *(enum backend *)*state;
	struct twl_store *s = open_one(b);
	struct twl_read_filter f;
	json_t *doc = NULL, *r;

	memset(&f, 0, sizeof(f));
	assert_int_equal(twl_read_feature(s, SOFT, &f, &doc), 0);
	json_decref(doc);
	twl_store_stop_reads(s);
	assert_int_equal(twl_read_feature(s, SOFT, &f, &doc), -ECANCELED);
	assert_int_equal(twl_read_summary(s, 1000, &doc), -ECANCELED);
	/* writes go on */
	r = report(HOST, "0002");
	ingest_at(s, HOST, r, 2000);
	json_decref(r);
	twl_store_close(s);
}

struct reader {
	struct twl_store *s;
	int rc;
};

static void *read_main(void *arg)
{
	struct reader *rd = arg;
	struct twl_read_filter f;
	json_t *doc = NULL;

	memset(&f, 0, sizeof(f));
	__atomic_store_n(&rd->rc, twl_read_feature(rd->s, SOFT, &f, &doc),
			 __ATOMIC_SEQ_CST);
	json_decref(doc);
	return NULL;
}

static void test_stop_under_way(void **state)
{
	struct twl_store *s = open_one(POSTGRESQL);
	struct reader rd = { s, 1 };
	PGconn *lock = pg_fixture_connect(pg_uri);
	PGresult *res;
	pthread_t t;
	int64_t waiting = 0;

	(void)state;
	res = PQexec(lock, "BEGIN; LOCK TABLE usage IN ACCESS EXCLUSIVE MODE");
	assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	assert_int_equal(pthread_create(&t, NULL, read_main, &rd), 0);
	/* the detail waits for the lock (up to 60 s on a loaded machine) */
	for (int i = 0; i < 600 && !waiting; i++) {
		usleep(100000);
		waiting = pg_q(pg_uri, "SELECT count(*) FROM pg_stat_activity"
				       " WHERE wait_event_type = 'Lock'"
				       " AND datname = current_database()");
	}
	assert_int_equal(waiting, 1);
	twl_store_stop_reads(s);
	/* it ends while the lock is still held (up to 60 s), cancelled */
	for (int i = 0;
	     i < 600 && __atomic_load_n(&rd.rc, __ATOMIC_SEQ_CST) == 1; i++)
		usleep(100000);
	res = PQexec(lock, "ROLLBACK");
	PQclear(res);
	pthread_join(t, NULL);
	assert_int_equal(rd.rc, -ECANCELED);
	PQfinish(lock);
	twl_store_close(s);
}

static int group_teardown(void **state)
{
	pg_fixture_drop_all(state);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_stop_reads),
		cmocka_unit_test(test_stop_under_way),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
