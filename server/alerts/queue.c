// SPDX-License-Identifier: GPL-2.0
/*
 * The alert queue: a ring of events under one mutex, and a set-associative
 * table of recent dedup keys (64 bits of each key's SHA-256) so memory is
 * bounded whatever the number of keys.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include "alerts/queue.h"

#define DEDUP_WAYS 8

struct dedup_slot {
	uint64_t hash; /* 0: empty */
	int64_t at;
};

struct twl_alert_queue {
	pthread_mutex_t lock;
	pthread_cond_t more;
	bool closed;
	struct twl_alert_event *ring;
	size_t cap, head, n;
	struct dedup_slot *seen;
	size_t n_seen; /* a power of two, >= DEDUP_WAYS */
	int64_t window;
	struct twl_alert_queue_stats st;
};

/* Contract: see queue.h. */
struct twl_alert_queue *twl_alert_queue_new(size_t cap, size_t dedup_cap,
					    int64_t window)
{
	struct twl_alert_queue *q;
	size_t n = DEDUP_WAYS;

	if (!cap || window < 0) {
		errno = EINVAL;
		return NULL;
	}
	while (n < dedup_cap && n < ((size_t)1 << 24))
		n *= 2;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->ring = calloc(cap, sizeof(*q->ring));
	q->seen = calloc(n, sizeof(*q->seen));
	if (!q->ring || !q->seen) {
		twl_alert_queue_free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->cap = cap;
	q->n_seen = n;
	q->window = window;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->more, NULL);
	return q;
}

/* Contract: see queue.h. */
void twl_alert_queue_free(struct twl_alert_queue *q)
{
	size_t i;

	if (!q)
		return;
	if (q->ring) {
		for (i = 0; i < q->n; i++)
			free(q->ring[(q->head + i) % q->cap].body);
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->more);
	}
	free(q->ring);
	free(q->seen);
	free(q);
}

static uint64_t key_hash(const char *key)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	uint64_t h;

	SHA256((const unsigned char *)key, strlen(key), md);
	memcpy(&h, md, sizeof(h));
	return h ? h : 1;
}

/*
 * The slot of @h in its set: its own when seen within the window, else
 * the one to take (empty, expired or the oldest); *@fresh says which.
 */
static struct dedup_slot *dedup_find(struct twl_alert_queue *q, uint64_t h,
				     int64_t now, bool *fresh)
{
	struct dedup_slot *set =
		q->seen + (h & (q->n_seen - 1) & ~(uint64_t)(DEDUP_WAYS - 1));
	struct dedup_slot *victim = set;
	int i;

	*fresh = false;
	for (i = 0; i < DEDUP_WAYS; i++) {
		if (set[i].hash == h && now - set[i].at < q->window) {
			*fresh = true;
			return set + i;
		}
		if (set[i].hash == h || !set[i].hash)
			return set + i;
		if (set[i].at < victim->at)
			victim = set + i;
	}
	return victim;
}

static void event_id(const char *key, int64_t now, char id[TWL_ALERT_ID_CAP])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	uint64_t h = key_hash(key);
	unsigned char in[16];
	int i;

	memcpy(in, &h, 8);
	memcpy(in + 8, &now, 8);
	SHA256(in, sizeof(in), md);
	for (i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", md[i]);
}

/* Contract: see queue.h. */
int twl_alert_queue_push(struct twl_alert_queue *q, const char *kind,
			 const char *key, int64_t now,
			 char *(*make)(void *arg, const char *id), void *arg)
{
	struct twl_alert_event *ev;
	struct dedup_slot *slot;
	uint64_t h;
	bool fresh;
	int rc = 0;

	if (!kind || !*kind || strlen(kind) >= TWL_ALERT_KIND_CAP || !key ||
	    !*key)
		return -EINVAL;
	h = key_hash(key);
	pthread_mutex_lock(&q->lock);
	slot = dedup_find(q, h, now, &fresh);
	if (fresh) {
		q->st.deduplicated++;
		rc = -EALREADY;
		goto out;
	}
	if (q->n == q->cap || q->closed) {
		q->st.dropped++;
		rc = -ENOBUFS;
		goto out;
	}
	ev = &q->ring[(q->head + q->n) % q->cap];
	memset(ev, 0, sizeof(*ev));
	event_id(key, now, ev->id);
	ev->body = make(arg, ev->id);
	if (!ev->body) {
		rc = -ENOMEM;
		goto out;
	}
	ev->len = strlen(ev->body);
	snprintf(ev->kind, sizeof(ev->kind), "%s", kind);
	ev->at = now;
	q->n++;
	q->st.queued++;
	slot->hash = h;
	slot->at = now;
	pthread_cond_signal(&q->more);
out:
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* Contract: see queue.h. */
bool twl_alert_queue_pop(struct twl_alert_queue *q, struct twl_alert_event *ev,
			 int wait_ms)
{
	struct timespec until;
	bool got = false;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->n && !q->closed && wait_ms > 0 &&
	       pthread_cond_timedwait(&q->more, &q->lock, &until) == 0)
		;
	if (q->n) {
		*ev = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->n--;
		got = true;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

/* Contract: see queue.h. */
void twl_alert_queue_close(struct twl_alert_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->lock);
}

/* Contract: see queue.h. */
void twl_alert_queue_stats(struct twl_alert_queue *q,
			   struct twl_alert_queue_stats *out)
{
	pthread_mutex_lock(&q->lock);
	*out = q->st;
	out->waiting = q->n;
	pthread_mutex_unlock(&q->lock);
}
