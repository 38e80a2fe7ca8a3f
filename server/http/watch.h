/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deadlines for slow clients. libmicrohttpd closes a connection only
 * after `timeout` seconds without a byte, so a client that sends (or
 * reads) one byte at a time keeps a connection for as long as it likes.
 * The watch knows every connection's socket and closes, with
 * shutdown(2), those whose request is overdue:
 *  - a request (its TLS handshake, headers and body, and then the
 *    sending of its answer) must be done within request_timeout of the
 *    moment the connection opened or its previous answer was sent; time
 *    the server itself spends on it (an answer deferred to the database
 *    writer) does not count;
 *  - a body must arrive at min_rate bytes per second or more on average,
 *    counted from the end of the headers, once they are grace seconds old.
 * A thread sweeps once a second. Thread-safe.
 */
#ifndef TWL_SERVER_WATCH_H
#define TWL_SERVER_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct twl_watch;

/* One connection, embedded in its owner's state; fields are watch.c's. */
struct twl_watched {
	struct twl_watched *prev, *next;
	int fd;
	double start; /* the current request's clock started */
	double body_start; /* headers done, body coming; 0: none */
	uint64_t body; /* body bytes so far */
	bool paused, closed;
};

struct twl_watch_opts {
	double request_timeout; /* seconds */
	double min_rate; /* body bytes per second */
	double grace; /* seconds before min_rate applies */
};

/* Why a connection was closed: passed to the close callback. */
enum twl_watch_why { TWL_WATCH_DEADLINE, TWL_WATCH_TOO_SLOW };

/*
 * twl_watch_new - watch with @o, calling @closed(@arg, why) (from the
 * sweeping thread) for each connection it closes. @thread false starts no
 * thread (the caller sweeps; tests). NULL with errno on failure.
 */
struct twl_watch *twl_watch_new(const struct twl_watch_opts *o,
				void (*closed)(void *arg, enum twl_watch_why),
				void *arg, bool thread);

/* Stop the thread and free; watched connections must be removed. */
void twl_watch_free(struct twl_watch *w);

/* Start watching @x, the connection on socket @fd, opened at @now. */
void twl_watch_add(struct twl_watch *w, struct twl_watched *x, int fd,
		   double now);

/* Stop watching @x (before its socket is closed). */
void twl_watch_remove(struct twl_watch *w, struct twl_watched *x);

/* A new request's clock starts at @now (its previous answer was sent). */
void twl_watch_request(struct twl_watch *w, struct twl_watched *x, double now);

/* The headers are in and a body follows, from @now. */
void twl_watch_body(struct twl_watch *w, struct twl_watched *x, double now);

/* @n more body bytes arrived. */
void twl_watch_bytes(struct twl_watch *w, struct twl_watched *x, size_t n);

/*
 * The body is complete (@paused false) or the server now works on the
 * answer itself (@paused true, until twl_watch_resume()).
 */
void twl_watch_body_done(struct twl_watch *w, struct twl_watched *x,
			 bool paused);

/* The server's own work is done: the answer has request_timeout from @now. */
void twl_watch_resume(struct twl_watch *w, struct twl_watched *x, double now);

/* Close every overdue connection at @now; returns how many. */
unsigned twl_watch_sweep(struct twl_watch *w, double now);

#endif /* TWL_SERVER_WATCH_H */
