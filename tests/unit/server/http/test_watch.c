// SPDX-License-Identifier: GPL-2.0
/*
 * Slow-client deadlines (server/http/watch.c) on socket pairs, swept at
 * chosen times: a request past request_timeout is closed, a paused one
 * (the server's own work) is not, and gets a full request_timeout when it
 * resumes; a body below min_rate after the grace is closed, a steady one
 * is not; a new request starts a new clock; removed sockets are never
 * touched.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/watch.h"

static const struct twl_watch_opts opts = { .request_timeout = 60,
					    .min_rate = 1000,
					    .grace = 5 };

static unsigned closed[2];

static void on_close(void *arg, enum twl_watch_why why)
{
	closed[why]++;
}

/* Whether the peer of sv[0] sees the end of the stream. */
static bool shut(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, 0) == 1 && read(fd, &c, 1) == 0;
}

struct pair {
	int sv[2];
	struct twl_watched x;
};

static void pair_open(struct twl_watch *w, struct pair *p, double now)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->sv), 0);
	twl_watch_add(w, &p->x, p->sv[0], now);
}

static void pair_close(struct twl_watch *w, struct pair *p)
{
	twl_watch_remove(w, &p->x);
	close(p->sv[0]);
	close(p->sv[1]);
}

static void test_deadline(void **state)
{
	struct twl_watch *w = twl_watch_new(&opts, on_close, NULL, false);
	struct pair slow, paused, fresh;

	memset(closed, 0, sizeof(closed));
	pair_open(w, &slow, 1000);
	pair_open(w, &paused, 1000);
	pair_open(w, &fresh, 1000);
	twl_watch_body_done(w, &paused.x, true);
	twl_watch_request(w, &fresh.x, 1050); /* its previous answer went */
	assert_int_equal(twl_watch_sweep(w, 1060), 0);
	assert_false(shut(slow.sv[1]));
	assert_int_equal(twl_watch_sweep(w, 1060.5), 1);
	assert_true(shut(slow.sv[1]));
	assert_int_equal(closed[TWL_WATCH_DEADLINE], 1);
	assert_int_equal(twl_watch_sweep(w, 1061), 0); /* once */
	assert_false(shut(paused.sv[1]));
	/* the server's work is done: the answer gets a full timeout */
	twl_watch_resume(w, &paused.x, 1200);
	assert_int_equal(twl_watch_sweep(w, 1259), 1); /* fresh: 1050 + 60 */
	assert_true(shut(fresh.sv[1]));
	assert_false(shut(paused.sv[1]));
	assert_int_equal(twl_watch_sweep(w, 1261), 1);
	assert_true(shut(paused.sv[1]));
	pair_close(w, &slow);
	pair_close(w, &paused);
	pair_close(w, &fresh);
	twl_watch_free(w);
}

static void test_min_rate(void **state)
{
	struct twl_watch *w = twl_watch_new(&opts, on_close, NULL, false);
	struct pair steady, trickle;

	memset(closed, 0, sizeof(closed));
	pair_open(w, &steady, 0);
	pair_open(w, &trickle, 0);
	twl_watch_body(w, &steady.x, 1);
	twl_watch_body(w, &trickle.x, 1);
	/* within the grace even nothing is fine */
	assert_int_equal(twl_watch_sweep(w, 5.5), 0);
	twl_watch_bytes(w, &steady.x, 10000);
	twl_watch_bytes(w, &trickle.x, 10);
	assert_int_equal(twl_watch_sweep(w, 7), 1);
	assert_true(shut(trickle.sv[1]));
	assert_false(shut(steady.sv[1]));
	assert_int_equal(closed[TWL_WATCH_TOO_SLOW], 1);
	/* 10000 bytes in 10 s is exactly the rate; less is too slow */
	assert_int_equal(twl_watch_sweep(w, 11), 0);
	assert_int_equal(twl_watch_sweep(w, 11.5), 1);
	assert_true(shut(steady.sv[1]));
	pair_close(w, &steady);
	pair_close(w, &trickle);
	twl_watch_free(w);
}

/* A body that is complete no longer needs a rate. */
static void test_body_done(void **state)
{
	struct twl_watch *w = twl_watch_new(&opts, on_close, NULL, false);
	struct pair p;

	pair_open(w, &p, 0);
	twl_watch_body(w, &p.x, 0);
	twl_watch_bytes(w, &p.x, 100);
	twl_watch_body_done(w, &p.x, false);
	assert_int_equal(twl_watch_sweep(w, 30), 0);
	/* removed: never touched again */
	twl_watch_remove(w, &p.x);
	assert_int_equal(twl_watch_sweep(w, 1000), 0);
	assert_false(shut(p.sv[1]));
	close(p.sv[0]);
	close(p.sv[1]);
	twl_watch_free(w);
}

/* The thread sweeps by itself. */
static void test_thread(void **state)
{
	struct twl_watch_opts quick = { .request_timeout = 0.2,
					.min_rate = 1,
					.grace = 5 };
	struct twl_watch *w = twl_watch_new(&quick, NULL, NULL, true);
	struct pair p;
	struct pollfd pf;

	assert_non_null(w);
	pair_open(w, &p, 0); /* opened long ago on the monotonic clock */
	pf = (struct pollfd){ .fd = p.sv[1], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 10000), 1);
	assert_true(shut(p.sv[1]));
	pair_close(w, &p);
	twl_watch_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_min_rate),
		cmocka_unit_test(test_body_done),
		cmocka_unit_test(test_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
