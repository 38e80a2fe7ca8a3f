// SPDX-License-Identifier: GPL-2.0
/*
 * The group-commit writer (server/store/writer.c) on a SQLite store:
 * batches queued while the writer is busy share one COMMIT, a failing
 * batch rolls back alone, each batch is acknowledged only once its
 * COMMIT is visible to another connection, a full queue refuses with
 * -EAGAIN, stopping stores everything queued first, and with
 * commit-delay a few batches wait for more to share their COMMIT.
 *
 * The writer is held busy deterministically: a commit hook on the
 * writer's connection counts commits and holds the first one, a first
 * batch's, until the test opens a gate. (Not the done callback: it runs
 * on the writer's sync thread, and the writer goes on meanwhile.)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/metrics.h"
#include "harness.h"
#include "sqlite_fixture.h"
#include "store/ingest.h"
#include "store/sqlite/store_sqlite_internal.h" /* the commit hook */
#include "store/store.h"
#include "store/writer.h"

#define HOST "0123"
#define JOBS 8

/* One submitted batch and what its done callback saw. */
struct job {
	char batch[40];
	struct twl_ingest *in;
	int calls, result;
	int64_t commits; /* commits counted when done ran */
	int64_t visible; /* its batch row, from another connection, then */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static int n_done;
static int64_t commits;

static int on_commit(void *arg)
{
	int64_t n = __atomic_add_fetch(&commits, 1, __ATOMIC_SEQ_CST);

	(void)arg;
	pthread_mutex_lock(&mu);
	pthread_cond_broadcast(&cv);
	while (n == 1 && !gate_open)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return 0;
}

/* Until the writer is in the COMMIT of jobs[0]'s group (held there). */
static void wait_first_commit(void)
{
	pthread_mutex_lock(&mu);
	while (__atomic_load_n(&commits, __ATOMIC_SEQ_CST) < 1)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

/* Rows of batch in the batches table, on a connection of its own. */
static int64_t batch_rows(const char *batch)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM batches WHERE batch_id = '%s'", batch);
	return q(sql);
}

/* Runs on the writer's sync thread, after the group's COMMIT (writer.h). */
static void done(void *arg, int result, struct twl_ingest *in)
{
	struct job *j = arg;
	int64_t seen = __atomic_load_n(&commits, __ATOMIC_SEQ_CST);
	int64_t visible = batch_rows(j->batch);

	twl_ingest_free(in);
	pthread_mutex_lock(&mu);
	j->commits = seen;
	j->visible = visible;
	j->result = result;
	j->calls++;
	n_done++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void wait_done(int n)
{
	pthread_mutex_lock(&mu);
	while (n_done < n)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void open_gate(void)
{
	pthread_mutex_lock(&mu);
	gate_open = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Prepare the example report of host as batch (its second warning
 * "boom" when fail) and queue it; the result of twl_writer_submit(). */
static int submit_as(struct twl_writer *w, struct job *j, const char *host,
		     const char *batch, bool fail)
{
	json_t *r = make_report(host, batch, 1);

	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->result = -1000;
	if (fail)
		json_object_set_new(
			json_array_get(json_object_get(r, "warnings"), 1),
			"text", json_string("boom"));
	assert_int_equal(twl_ingest_prepare(r, host, &j->in), 0);
	json_decref(r);
	return twl_writer_submit(w, host, j->in, time(NULL), done, j);
}

static int submit(struct twl_writer *w, struct job *j, const char *batch)
{
	return submit_as(w, j, HOST, batch, false);
}

struct env {
	struct twl_store *s;
	struct twl_metrics *m;
	struct twl_writer *w;
	struct job jobs[JOBS];
};

/*
 * A store whose warnings with text "boom" fail to insert, and a writer on
 * it with a queue of queue_max and commit-delay delay_ms, whose first
 * COMMIT waits until open_gate().
 */
static void env_open(struct env *e, unsigned queue_max, unsigned delay_ms)
{
	struct twl_writer_opts o = { .commit_max = 64,
				     .commit_delay_ms = delay_ms,
				     .queue_max = queue_max,
				     .batch_days = 35 };
	sqlite3 *db;

	memset(e, 0, sizeof(*e));
	gate_open = false;
	n_done = 0;
	commits = 0;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &e->s), 0);
	exec_sql(
		"CREATE TRIGGER boom BEFORE INSERT ON warnings"
		" WHEN NEW.text = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END");
	db = twl_store_admin_write_lock(e->s);
	sqlite3_commit_hook(db, on_commit, NULL);
	twl_store_admin_write_unlock(e->s);
	e->m = twl_metrics_new();
	assert_non_null(e->m);
	e->w = twl_writer_new(e->s, e->m, &o);
	assert_non_null(e->w);
}

/* env_open() without commit-delay, the writer held in the COMMIT of a
 * first batch (jobs[0]) until open_gate(). */
static void env_start(struct env *e, unsigned queue_max)
{
	env_open(e, queue_max, 0);
	assert_int_equal(submit(e->w, &e->jobs[0], "a0"), 0);
	wait_first_commit(); /* the writer waits in jobs[0]'s COMMIT */
}

static void env_stop(struct env *e)
{
	twl_writer_free(e->w);
	twl_metrics_free(e->m);
	twl_store_close(e->s);
	unlink(dbpath);
}

/*
 * Batches queued while the writer is busy go into one transaction: one
 * COMMIT for all of them, the failing one rolled back alone, a replay
 * answered 1; each is acknowledged after its COMMIT, which another
 * connection already sees.
 */
static void test_group_commit(void **state)
{
	static const char *const batch[] = {
		"a0", "b1", "c2", "d3", "e4", "b1"
	};
	struct env e;
	struct job *j = e.jobs;

	(void)state;
	env_start(&e, 64);
	for (int i = 1; i < 6; i++)
		assert_int_equal(submit_as(e.w, &j[i], i == 3 ? "0999" : HOST,
					   batch[i], i == 3),
				 0);
	open_gate();
	wait_done(6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(j[i].calls, 1);
	assert_int_equal(j[0].result, 0);
	assert_int_equal(j[0].visible, 1);
	assert_true(j[0].commits >= 1);
	for (int i = 1; i < 6; i++) {
		/* answered after their COMMIT, the last (below) */
		assert_true(j[i].commits == 3);
		if (i == 3)
			continue;
		assert_int_equal(j[i].result, i == 5 ? 1 : 0);
		assert_int_equal(j[i].visible, 1);
	}
	assert_true(j[3].result < 0);
	assert_int_equal(j[3].visible, 0);
	/* its batch id and host row, written before the warning, are gone */
	assert_int_equal(batch_rows("d3"), 0);
	assert_int_equal(q("SELECT count(*) FROM hosts WHERE host_id = '0999'"),
			 0);
	assert_int_equal(q("SELECT count(*) FROM batches"), 4);
	/*
	 * Three COMMITs in all, one for the five: jobs[0]'s (held), the first
	 * retention pass (the writer runs it after its first group), theirs.
	 */
	assert_int_equal(__atomic_load_n(&commits, __ATOMIC_SEQ_CST), 3);
	env_stop(&e);
}

/*
 * commit-delay: with fewer than TWL_WRITER_GATHER_BELOW batches waiting,
 * the writer lets more arrive before it stores them, so that a first
 * batch and the four submitted straight after it share its COMMIT (the
 * first). Without the wait the first is stored alone, and the gate holds
 * its COMMIT while the others queue for a later one (the third).
 */
static void test_gather(void **state)
{
	struct env e;
	struct job *j = e.jobs;
	char batch[8];

	(void)state;
	env_open(&e, 64, 1000);
	for (int i = 0; i < 5; i++) {
		snprintf(batch, sizeof(batch), "g%d", i);
		assert_int_equal(submit(e.w, &j[i], batch), 0);
	}
	wait_first_commit();
	open_gate();
	wait_done(5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(j[i].result, 0);
		assert_int_equal(j[i].visible, 1);
		/* COMMIT 1 is the group's; 2 may be the first retention
		 * pass, run before the sync thread answered; a batch that
		 * missed the group waited for the gate, then for COMMIT 3 */
		if (j[i].commits < 1 || j[i].commits > 2)
			fail_msg("batch %d was answered after COMMIT %lld: it "
				 "did not share the first",
				 i, (long long)j[i].commits);
	}
	env_stop(&e);
}

/* A full queue refuses a batch with -EAGAIN, leaving it to the caller. */
static void test_queue_full(void **state)
{
	struct env e;
	struct job *j = e.jobs;

	(void)state;
	env_start(&e, 2);
	assert_int_equal(submit(e.w, &j[1], "b1"), 0);
	assert_int_equal(submit(e.w, &j[2], "c2"), 0);
	assert_int_equal(submit(e.w, &j[3], "d3"), -EAGAIN);
	twl_ingest_free(j[3].in); /* still the caller's */
	open_gate();
	wait_done(3);
	assert_int_equal(j[1].result, 0);
	assert_int_equal(j[2].result, 0);
	assert_int_equal(q("SELECT count(*) FROM batches"), 3);
	/* room again */
	assert_int_equal(submit(e.w, &j[4], "e4"), 0);
	wait_done(4);
	assert_int_equal(j[4].result, 0);
	assert_int_equal(j[3].calls, 0);
	env_stop(&e);
}

static void *stopper(void *w)
{
	twl_writer_stop(w);
	return NULL;
}

/*
 * Stopping the writer while batches wait stores them all before the
 * thread ends (each acknowledged once, stored), and refuses later ones.
 */
static void test_stop_drains(void **state)
{
	struct job **all = NULL, *j;
	size_t n = 0, cap = 0;
	struct env e;
	pthread_t th;
	char batch[32];
	int ret;

	(void)state;
	env_start(&e, 1 << 20);
	/* queued behind jobs[0], then queued until the stopper has asked */
	assert_int_equal(submit(e.w, &e.jobs[1], "b1"), 0);
	assert_int_equal(pthread_create(&th, NULL, stopper, e.w), 0);
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			all = realloc(all, cap * sizeof(*all));
			assert_non_null(all);
		}
		j = calloc(1, sizeof(*j));
		assert_non_null(j);
		snprintf(batch, sizeof(batch), "p%zu", n);
		ret = submit(e.w, j, batch);
		if (ret == -ESHUTDOWN)
			break;
		assert_int_equal(ret, 0);
		all[n++] = j;
		usleep(1000);
	}
	twl_ingest_free(j->in);
	free(j);
	open_gate();
	assert_int_equal(pthread_join(th, NULL), 0);
	/* the thread has ended: every queued batch was stored before */
	assert_int_equal(n_done, 2 + (int)n);
	assert_int_equal(e.jobs[1].calls, 1);
	assert_int_equal(e.jobs[1].result, 0);
	assert_int_equal(e.jobs[1].visible, 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(all[i]->calls, 1);
		assert_int_equal(all[i]->result, 0);
		assert_int_equal(all[i]->visible, 1);
		free(all[i]);
	}
	free(all);
	assert_int_equal(q("SELECT count(*) FROM batches"), 2 + (int64_t)n);
	assert_int_equal(submit(e.w, &e.jobs[2], "late"), -ESHUTDOWN);
	twl_ingest_free(e.jobs[2].in);
	env_stop(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_stop_drains),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
