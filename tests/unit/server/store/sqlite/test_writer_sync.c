// SPDX-License-Identifier: GPL-2.0
/*
 * The group-commit writer (server/store/writer.c) acknowledges a batch
 * only once a power loss cannot take it back, now that its COMMIT does not
 * wait for the disk and a thread of its own syncs the WAL
 * (server/store/sqlite/wal_sync.h). A simulated disk under SQLite
 * (shim_vfs.h) keeps each file as it was at its last sync; every
 * acknowledgement rebuilds the database a power loss would leave from
 * those copies and looks for the batch there.
 */
#include <pthread.h>
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
#include "shim_vfs.h"
#include "sqlite_fixture.h"
#include "store/ingest.h"
#include "store/store.h"
#include "store/writer.h"

#define BATCHES 24

/* The disk: each file's content at its last sync (shim hooks). */
static pthread_mutex_t disk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned char *db, *wal;
	sqlite3_int64 db_len, wal_len;
	int wal_syncs;
} disk;

static int disk_sync(int flags, sqlite3_file *real, int sync_flags)
{
	unsigned char **keep, *now;
	sqlite3_int64 *keep_len, len;

	(void)sync_flags;
	if (flags & SQLITE_OPEN_MAIN_DB) {
		keep = &disk.db;
		keep_len = &disk.db_len;
	} else if (flags & SQLITE_OPEN_WAL) {
		keep = &disk.wal;
		keep_len = &disk.wal_len;
	} else {
		return SQLITE_OK;
	}
	pthread_mutex_lock(&disk_mu);
	/* read under the lock: what the file holds when the sync starts */
	now = shim_read_all(real, &len);
	if (now) {
		free(*keep);
		*keep = now;
		*keep_len = len;
		disk.wal_syncs += !!(flags & SQLITE_OPEN_WAL);
	}
	pthread_mutex_unlock(&disk_mu);
	return now ? SQLITE_OK : SQLITE_IOERR_FSYNC;
}

static const struct shim_hooks disk_hooks = { .sync = disk_sync };

/* Rows of @batch in the database a power loss now would leave. */
static int64_t batch_after_power_loss(const char *batch)
{
	char img[160], sql[128];
	sqlite3_stmt *st = NULL;
	sqlite3 *db;
	int64_t n = -1;

	snprintf(img, sizeof(img), "%s/image.db", dir);
	pthread_mutex_lock(&disk_mu);
	db = shim_open_image(img, disk.db, disk.db_len, disk.wal, disk.wal_len);
	pthread_mutex_unlock(&disk_mu);
	assert_non_null(db);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM batches WHERE batch_id = '%s'", batch);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

struct job {
	char batch[40];
	int result, calls;
	int64_t durable; /* its rows after a power loss, when answered */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int n_done;

static void done(void *arg, int result, struct twl_ingest *in)
{
	struct job *j = arg;
	int64_t durable = batch_after_power_loss(j->batch);

	twl_ingest_free(in);
	pthread_mutex_lock(&mu);
	j->result = result;
	j->durable = durable;
	j->calls++;
	n_done++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/*
 * Batches submitted back to back (so groups commit while earlier ones
 * sync): each answered exactly once, stored, and already in what a power
 * loss at the moment of its answer would leave.
 */
static void test_ack_after_sync(void **state)
{
	struct twl_writer_opts o = { .commit_max = 4,
				     .queue_max = 64,
				     .batch_days = 35 };
	static struct job jobs[BATCHES];
	struct twl_store *s = NULL;
	struct twl_metrics *m;
	struct twl_writer *w;
	int syncs;

	(void)state;
	unlink(dbpath);
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	m = twl_metrics_new();
	assert_non_null(m);
	w = twl_writer_new(s, m, &o);
	assert_non_null(w);
	pthread_mutex_lock(&disk_mu);
	syncs = disk.wal_syncs;
	pthread_mutex_unlock(&disk_mu);
	for (int i = 0; i < BATCHES; i++) {
		struct twl_ingest *in = NULL;
		json_t *r;

		snprintf(jobs[i].batch, sizeof(jobs[i].batch), "%032x", i + 1);
		r = report("h1", jobs[i].batch);
		assert_int_equal(twl_ingest_prepare(r, "h1", &in), 0);
		json_decref(r);
		assert_int_equal(twl_writer_submit(w, "h1", in, time(NULL),
						   done, &jobs[i]),
				 0);
	}
	pthread_mutex_lock(&mu);
	while (n_done < BATCHES)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	twl_writer_free(w);
	for (int i = 0; i < BATCHES; i++) {
		assert_int_equal(jobs[i].calls, 1);
		assert_int_equal(jobs[i].result, 0);
		assert_int_equal(jobs[i].durable, 1);
	}
	/* the WAL synced for the groups, not once per batch necessarily */
	assert_true(disk.wal_syncs > syncs);
	twl_metrics_free(m);
	twl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_after_sync),
	};

	/* below the store's WAL buffer, which layers over the default */
	if (shim_vfs_register("twl-disk", &disk_hooks, 1) != SQLITE_OK)
		return 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
