// SPDX-License-Identifier: GPL-2.0
/*
 * Slow-client deadlines (watch.h). The list and every record's fields are
 * under one lock; a record leaves the list before libmicrohttpd closes its
 * socket (its close notification comes first), so shutdown() under that
 * lock never reaches a socket number already reused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "http/watch.h"

struct twl_watch {
	struct twl_watch_opts o;
	void (*closed)(void *arg, enum twl_watch_why why);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct twl_watched head; /* list sentinel */
	bool has_thread, stop;
	pthread_t thread;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sweeper(void *arg)
{
	struct twl_watch *w = arg;
	struct timespec until;

	pthread_setname_np(pthread_self(), "twl-watch");
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&w->cond, &w->lock, &until);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		twl_watch_sweep(w, mono());
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Contract: see watch.h. */
struct twl_watch *twl_watch_new(const struct twl_watch_opts *o,
				void (*closed)(void *arg, enum twl_watch_why),
				void *arg, bool thread)
{
	struct twl_watch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;
	int ret;

	if (!w)
		return NULL;
	w->o = *o;
	w->closed = closed;
	w->arg = arg;
	w->head.next = w->head.prev = &w->head;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (thread) {
		ret = pthread_create(&w->thread, NULL, sweeper, w);
		if (ret) {
			twl_watch_free(w);
			errno = ret;
			return NULL;
		}
		w->has_thread = true;
	}
	return w;
}

/* Contract: see watch.h. */
void twl_watch_free(struct twl_watch *w)
{
	if (!w)
		return;
	if (w->has_thread) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Contract: see watch.h. */
void twl_watch_add(struct twl_watch *w, struct twl_watched *x, int fd,
		   double now)
{
	*x = (struct twl_watched){ .fd = fd, .start = now };
	pthread_mutex_lock(&w->lock);
	x->next = w->head.next;
	x->prev = &w->head;
	x->next->prev = x;
	w->head.next = x;
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_remove(struct twl_watch *w, struct twl_watched *x)
{
	pthread_mutex_lock(&w->lock);
	if (x->next) {
		x->prev->next = x->next;
		x->next->prev = x->prev;
		x->next = x->prev = NULL;
	}
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_request(struct twl_watch *w, struct twl_watched *x, double now)
{
	pthread_mutex_lock(&w->lock);
	x->start = now;
	x->body_start = 0;
	x->body = 0;
	x->paused = false;
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_body(struct twl_watch *w, struct twl_watched *x, double now)
{
	pthread_mutex_lock(&w->lock);
	x->body_start = now;
	x->body = 0;
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_bytes(struct twl_watch *w, struct twl_watched *x, size_t n)
{
	pthread_mutex_lock(&w->lock);
	x->body += n;
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_body_done(struct twl_watch *w, struct twl_watched *x,
			 bool paused)
{
	pthread_mutex_lock(&w->lock);
	x->body_start = 0;
	x->paused = paused;
	pthread_mutex_unlock(&w->lock);
}

/* Contract: see watch.h. */
void twl_watch_resume(struct twl_watch *w, struct twl_watched *x, double now)
{
	pthread_mutex_lock(&w->lock);
	x->paused = false;
	x->start = now;
	pthread_mutex_unlock(&w->lock);
}

/* Why @x is overdue at @now, or -1. */
static int overdue(const struct twl_watch *w, const struct twl_watched *x,
		   double now)
{
	double body_age = now - x->body_start;

	if (x->paused || x->closed)
		return -1;
	if (now - x->start > w->o.request_timeout)
		return TWL_WATCH_DEADLINE;
	if (x->body_start > 0 && body_age >= w->o.grace &&
	    (double)x->body < w->o.min_rate * body_age)
		return TWL_WATCH_TOO_SLOW;
	return -1;
}

/* Contract: see watch.h. */
unsigned twl_watch_sweep(struct twl_watch *w, double now)
{
	unsigned n = 0, why[2] = { 0, 0 };

	pthread_mutex_lock(&w->lock);
	for (struct twl_watched *x = w->head.next; x != &w->head; x = x->next) {
		int r = overdue(w, x, now);

		if (r < 0)
			continue;
		/* libmicrohttpd sees the end of the stream and closes it */
		shutdown(x->fd, SHUT_RDWR);
		x->closed = true;
		why[r]++;
		n++;
	}
	pthread_mutex_unlock(&w->lock);
	for (int r = 0; r < 2 && w->closed; r++)
		for (unsigned i = 0; i < why[r]; i++)
			w->closed(w->arg, (enum twl_watch_why)r);
	return n;
}
