// SPDX-License-Identifier: GPL-2.0
/* The WAL checkpointer thread (checkpoint.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <twilight/util.h>

#include "store/sqlite/checkpoint.h"

struct twl_ckpt {
	sqlite3 *wdb, *db;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool wanted, stop;
	int asked_at; /* twl_ckpt_step()'s; the writer's thread only */
	int last_pages, avg_frames; /* twl_ckpt_busy()'s; the writer's too */
	int limit; /* pages; atomic: set from any thread */
	uint64_t catchups, catchup_ns; /* atomic: written by the writer */
	uint64_t writebacks; /* atomic: written by the thread */
	int dbfd; /* the database file, for writeback; -1: none */
};

/* Contract: see checkpoint.h. */
bool twl_ckpt_near_limit(int pages, int limit)
{
	return pages >= limit - 2 * TWL_CKPT_ASK_PAGES;
}

/* Contract: see checkpoint.h. */
bool twl_ckpt_busy(int frames, int *avg)
{
	*avg += (frames - *avg) / 8;
	return *avg >= TWL_CKPT_BUSY_FRAMES;
}

/* Contract: see checkpoint.h. */
enum twl_ckpt_action twl_ckpt_step(int pages, int limit, bool busy,
				   int *asked_at)
{
	int window = busy ? TWL_CKPT_ASK_PAGES_BUSY : TWL_CKPT_ASK_PAGES;

	if (pages < *asked_at)
		*asked_at = 0; /* the WAL started again from its beginning */
	if (pages >= limit)
		return TWL_CKPT_SELF;
	if (pages - *asked_at >= window ||
	    (twl_ckpt_near_limit(pages, limit) && pages > *asked_at)) {
		*asked_at = pages;
		return TWL_CKPT_ASK;
	}
	return TWL_CKPT_NONE;
}

/* Runs on the writer's thread after each commit (sqlite3_wal_hook). */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct twl_ckpt *c = arg;
	struct timespec t0, t1;
	/* what this commit added (all of it when the WAL started again) */
	int frames = pages >= c->last_pages ? pages - c->last_pages : pages;
	bool busy = twl_ckpt_busy(frames, &c->avg_frames);

	c->last_pages = pages;
	switch (twl_ckpt_step(pages,
			      __atomic_load_n(&c->limit, __ATOMIC_RELAXED),
			      busy, &c->asked_at)) {
	case TWL_CKPT_SELF:
		/*
		 * Returns at once (SQLITE_BUSY) while the thread checkpoints;
		 * otherwise copies what it has not, so that the writer's next
		 * transaction finds every frame copied and restarts the WAL.
		 */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sqlite3_wal_checkpoint_v2(db, name,
					      SQLITE_CHECKPOINT_PASSIVE, NULL,
					      NULL) == SQLITE_OK) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			__atomic_add_fetch(&c->catchups, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(
				&c->catchup_ns,
				(uint64_t)((t1.tv_sec - t0.tv_sec) *
						   1000000000LL +
					   (t1.tv_nsec - t0.tv_nsec)),
				__ATOMIC_RELAXED);
		}
		break;
	case TWL_CKPT_ASK:
		pthread_mutex_lock(&c->lock);
		c->wanted = true;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
		break;
	case TWL_CKPT_NONE:
		break;
	}
	return SQLITE_OK;
}

/* Contract: see checkpoint.h. */
int twl_ckpt_sync_db(sqlite3 *db)
{
	sqlite3_file *f = NULL;
	int rc;

	rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f);
	if (rc != SQLITE_OK)
		return rc;
	if (!f || !f->pMethods)
		return SQLITE_MISUSE; /* not open */
	return f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/*
 * Start the kernel writing back what the pass just copied into the
 * database file, without waiting for it (see checkpoint.h: the catch-up's
 * sync then finds little left to write).
 */
static void start_writeback(struct twl_ckpt *c)
{
	if (c->dbfd < 0)
		return;
	if (sync_file_range(c->dbfd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0)
		__atomic_add_fetch(&c->writebacks, 1, __ATOMIC_RELAXED);
}

static void *ckpt_main(void *arg)
{
	struct twl_ckpt *c = arg;
	bool warned = false;

	pthread_setname_np(pthread_self(), "twl-checkpoint");
	for (;;) {
		int rc, pages = 0;

		pthread_mutex_lock(&c->lock);
		while (!c->wanted && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		c->wanted = false;
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		pthread_mutex_unlock(&c->lock);
		rc = sqlite3_wal_checkpoint_v2(
			c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &pages, NULL);
		/*
		 * so that the writer's catch-up syncs little but its tail:
		 * near the limit a sync, which writes back itself; else the
		 * writeback started
		 */
		if (rc == SQLITE_OK &&
		    twl_ckpt_near_limit(pages,
					__atomic_load_n(&c->limit,
							__ATOMIC_RELAXED)))
			rc = twl_ckpt_sync_db(c->db);
		else if (rc == SQLITE_OK && pages > 0)
			start_writeback(c);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY && !warned) {
			twl_log(LOG_WARNING,
				"WAL checkpoint failed (%s); the writer will checkpoint itself past %d pages",
				sqlite3_errstr(rc),
				__atomic_load_n(&c->limit, __ATOMIC_RELAXED));
			warned = true;
		}
	}
	return NULL;
}

/*
 * A descriptor of the database file for sync_file_range(), which works on
 * any descriptor of the file. Without one the thread only copies, as
 * before (logged once): writeback then waits for the next sync.
 */
static int open_for_writeback(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		twl_log(LOG_WARNING,
			"%s: cannot open for writeback (%s); the writer's WAL catch-ups will sync more",
			path, strerror(errno));
	return fd;
}

/* Contract: see checkpoint.h. */
int twl_ckpt_start(const char *path, sqlite3 *wdb, struct twl_ckpt **out)
{
	struct twl_ckpt *c = calloc(1, sizeof(*c));
	sqlite3_stmt *st = NULL;
	bool wal = false;
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->wdb = wdb;
	c->limit = TWL_CKPT_LIMIT_PAGES;
	c->dbfd = -1;
	rc = sqlite3_open_v2(path, &c->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(c->db);
		free(c);
		return -EIO;
	}
	sqlite3_busy_timeout(c->db, 1000);
	/*
	 * A fresh connection has not read the database yet, and a checkpoint
	 * on it does nothing ("not in WAL mode"): read the journal mode once,
	 * which opens the WAL, and make sure it is WAL.
	 */
	rc = sqlite3_prepare_v2(c->db, "PRAGMA journal_mode", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_text(st, 0) &&
	    !strcmp((const char *)sqlite3_column_text(st, 0), "wal"))
		wal = true;
	sqlite3_finalize(st);
	if (!wal) {
		sqlite3_close(c->db);
		free(c);
		return -EINVAL;
	}
	c->dbfd = open_for_writeback(path);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	rc = pthread_create(&c->thread, NULL, ckpt_main, c);
	if (rc) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
		if (c->dbfd >= 0)
			close(c->dbfd);
		sqlite3_close(c->db);
		free(c);
		return -rc;
	}
	sqlite3_wal_hook(wdb, on_commit, c); /* replaces autocheckpoint */
	*out = c;
	return 0;
}

/* Contract: see checkpoint.h. */
int twl_ckpt_set_limit(struct twl_ckpt *c, int pages)
{
	if (pages < 2 * TWL_CKPT_ASK_PAGES)
		pages = 2 * TWL_CKPT_ASK_PAGES;
	__atomic_store_n(&c->limit, pages, __ATOMIC_RELAXED);
	return pages;
}

/* Contract: see checkpoint.h. */
void twl_ckpt_stats(struct twl_ckpt *c, uint64_t *catchups, uint64_t *ns)
{
	*catchups = __atomic_load_n(&c->catchups, __ATOMIC_RELAXED);
	*ns = __atomic_load_n(&c->catchup_ns, __ATOMIC_RELAXED);
}

/* Contract: see checkpoint.h. */
uint64_t twl_ckpt_writebacks(struct twl_ckpt *c)
{
	return __atomic_load_n(&c->writebacks, __ATOMIC_RELAXED);
}

/* Contract: see checkpoint.h. */
void twl_ckpt_stop(struct twl_ckpt *c)
{
	if (!c)
		return;
	sqlite3_wal_autocheckpoint(c->wdb, 1000); /* SQLite's default */
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	if (c->dbfd >= 0)
		close(c->dbfd);
	sqlite3_close(c->db);
	free(c);
}
