// SPDX-License-Identifier: GPL-2.0
/* The group-commit writer thread (writer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/util.h>

#include "store/ingest.h"
#include "store/writer.h"

struct job {
	struct job *next;
	char host_id[65];
	struct twl_ingest *in;
	int64_t now;
	int result;
	twl_writer_done_fn done;
	void *arg;
};

struct twl_writer {
	struct twl_store *s;
	struct twl_metrics *m;
	struct twl_writer_opts o;
	pthread_t thread, syncer;
	pthread_mutex_t lock;
	pthread_cond_t cond, sync_cond;
	struct job *head, **tail;
	/* committed, waiting for the sync thread (twl_store_sync()) */
	struct job *sync_head, **sync_tail;
	unsigned queued;
	bool stop, sync_stop;
	time_t last_prune;
};

/* Hand each batch of @jobs its result (@ret: the group's, if it failed). */
static void finish(struct twl_writer *w, struct job *jobs, int ret)
{
	struct job *j, *next;

	for (j = jobs; j; j = next) {
		next = j->next;
		if (ret)
			j->result = ret; /* nothing of this group is durable */
		twl_metrics_store_result(w->m, j->result);
		if (j->result == 0 || j->result == TWL_STORE_DUPLICATE)
			twl_metrics_ingest(w->m, j->result,
					   twl_ingest_rows(j->in));
		else if (!ret)
			twl_log(LOG_ERR,
				"storing batch from host %s failed: %s",
				j->host_id, strerror(-j->result));
		j->done(j->arg, j->result, j->in);
		free(j);
	}
}

/*
 * Store a group in one transaction whose COMMIT does not wait for the
 * disk, and hand it to the sync thread, which answers it once synced:
 * meanwhile this thread stores the next group.
 */
static void run_group(struct twl_writer *w, struct job *jobs, unsigned n)
{
	struct job *j, **last = &jobs;
	int ret;

	ret = twl_store_write_begin_deferred(w->s);
	if (!ret) {
		for (j = jobs; j; j = j->next)
			twl_store_ingest_deferred(w->s, j->host_id, j->in,
						  j->now, &j->result);
		ret = twl_store_write_end(w->s, true);
	}
	if (ret) {
		twl_log(LOG_ERR,
			"storing %u batches failed (%s); agents will resend them",
			n, strerror(-ret));
		finish(w, jobs, ret);
		return;
	}
	twl_metrics_commit(w->m, n);
	while (*last)
		last = &(*last)->next;
	pthread_mutex_lock(&w->lock);
	*w->sync_tail = jobs;
	w->sync_tail = last;
	pthread_cond_signal(&w->sync_cond);
	pthread_mutex_unlock(&w->lock);
}

/*
 * The sync thread: one sync for every group committed since the last one
 * began, then their answers. A failed sync leaves unknown what the disk
 * holds (the kernel may have dropped the pages it could not write), so no
 * answer is safe, not even an error: an agent that resent would be told
 * "duplicate" by the commit still in the page cache. The server stops;
 * restarted, SQLite recovers what the disk holds and agents resend the
 * rest.
 */
static void *syncer_main(void *arg)
{
	struct twl_writer *w = arg;
	struct job *jobs;
	uint64_t t0;
	int ret;

	pthread_setname_np(pthread_self(), "twl-sync");
	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->sync_head && !w->sync_stop)
			pthread_cond_wait(&w->sync_cond, &w->lock);
		jobs = w->sync_head;
		w->sync_head = NULL;
		w->sync_tail = &w->sync_head;
		pthread_mutex_unlock(&w->lock);
		if (!jobs)
			break;
		t0 = twl_mono_ns();
		ret = twl_store_sync(w->s);
		twl_metrics_sync(w->m, (double)(twl_mono_ns() - t0) / 1e9);
		if (ret) {
			twl_log(LOG_CRIT,
				"syncing the database's WAL failed (%s): stopping without answering batches that may not be on the disk; check the disk, then restart the server (agents resend them)",
				strerror(-ret));
			abort();
		}
		finish(w, jobs, 0);
	}
	return NULL;
}

static void maybe_prune(struct twl_writer *w)
{
	time_t now = time(NULL);
	int64_t deleted = 0;
	int ret;

	if (now - w->last_prune < 3600)
		return;
	w->last_prune = now;
	ret = twl_store_prune(w->s, now, (int)w->o.batch_days,
			      (int)w->o.data_days, &deleted);
	if (ret)
		twl_log(LOG_WARNING,
			"retention pass failed (%s); will retry in an hour",
			strerror(-ret));
	else if (deleted)
		twl_log(LOG_INFO, "retention: deleted %lld rows",
			(long long)deleted);
}

/*
 * With few batches waiting, let more arrive for commit_delay_ms before
 * storing them, so that they share one COMMIT (writer.h). A sleep, not a
 * wait on w->cond, which every submit signals: woken by each arrival the
 * writer would spend what it means to save. A stop waits out the sleep.
 * Called and returns with w->lock held.
 */
static void gather(struct twl_writer *w)
{
	struct timespec d = { 0, 0 };

	if (!w->o.commit_delay_ms || w->stop ||
	    w->queued >= TWL_WRITER_GATHER_BELOW ||
	    w->queued >= w->o.commit_max)
		return;
	d.tv_sec = w->o.commit_delay_ms / 1000;
	d.tv_nsec = (long)(w->o.commit_delay_ms % 1000) * 1000000L;
	pthread_mutex_unlock(&w->lock);
	nanosleep(&d, NULL);
	pthread_mutex_lock(&w->lock);
}

static void *writer_main(void *arg)
{
	struct twl_writer *w = arg;

	pthread_setname_np(pthread_self(), "twl-writer");
	for (;;) {
		struct job *jobs, *j, **cut;
		unsigned n = 0;
		struct timespec until;

		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stop) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 60;
			pthread_cond_timedwait(&w->cond, &w->lock, &until);
			if (!w->head && !w->stop) {
				pthread_mutex_unlock(&w->lock);
				maybe_prune(w);
				pthread_mutex_lock(&w->lock);
			}
		}
		if (!w->head && w->stop) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		gather(w);
		jobs = w->head;
		cut = &w->head;
		for (j = w->head; j && n < w->o.commit_max; j = j->next) {
			cut = &j->next;
			n++;
		}
		w->head = *cut;
		*cut = NULL;
		if (!w->head)
			w->tail = &w->head;
		w->queued -= n;
		pthread_mutex_unlock(&w->lock);
		run_group(w, jobs, n);
		maybe_prune(
			w); /* also under constant load: a time check, hourly work */
	}
	return NULL;
}

/* Answer everything committed, then end the sync thread. */
static void stop_syncer(struct twl_writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->sync_stop = true;
	pthread_cond_signal(&w->sync_cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->syncer, NULL);
}

/* Contract: see writer.h. */
struct twl_writer *twl_writer_new(struct twl_store *s, struct twl_metrics *m,
				  const struct twl_writer_opts *o)
{
	struct twl_writer *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return NULL;
	w->s = s;
	w->m = m;
	w->o = *o;
	w->tail = &w->head;
	w->sync_tail = &w->sync_head;
	w->last_prune = 0;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->sync_cond, NULL);
	ret = pthread_create(&w->syncer, NULL, syncer_main, w);
	if (ret)
		goto fail;
	ret = pthread_create(&w->thread, NULL, writer_main, w);
	if (ret) {
		stop_syncer(w);
		goto fail;
	}
	return w;
fail:
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->sync_cond);
	free(w);
	errno = ret;
	return NULL;
}

/* Contract: see writer.h. */
void twl_writer_free(struct twl_writer *w)
{
	if (!w)
		return;
	twl_writer_stop(w);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->sync_cond);
	free(w);
}

/* Contract: see writer.h. */
void twl_writer_stop(struct twl_writer *w)
{
	bool join;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	join = !w->stop;
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (join) {
		pthread_join(w->thread, NULL);
		stop_syncer(w);
	}
}

/* Contract: see writer.h. */
int twl_writer_submit(struct twl_writer *w, const char *host_id,
		      struct twl_ingest *in, int64_t now,
		      twl_writer_done_fn done, void *arg)
{
	struct job *j = calloc(1, sizeof(*j));
	int ret = 0;

	if (!j)
		return -ENOMEM;
	snprintf(j->host_id, sizeof(j->host_id), "%s", host_id);
	j->in = in;
	j->now = now;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&w->lock);
	if (w->stop || w->queued >= w->o.queue_max) {
		ret = w->stop ? -ESHUTDOWN : -EAGAIN;
	} else {
		*w->tail = j;
		w->tail = &j->next;
		w->queued++;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (ret)
		free(j);
	return ret;
}
