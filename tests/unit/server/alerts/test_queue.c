// SPDX-License-Identifier: GPL-2.0
/*
 * The alert queue (server/alerts/queue.c): FIFO order, its bound (full:
 * dropped and counted, never waiting), deduplication by key within the
 * window, and bounded memory of keys.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alerts/queue.h"

static char *make(void *arg, const char *id)
{
	char *s = NULL;

	assert_int_equal(strlen(id), TWL_ALERT_ID_CAP - 1);
	assert_true(asprintf(&s, "{\"n\":%d}", *(int *)arg) > 0);
	return s;
}

static int push(struct twl_alert_queue *q, const char *key, int64_t now, int n)
{
	return twl_alert_queue_push(q, "test", key, now, make, &n);
}

static void test_order_and_bound(void **state)
{
	struct twl_alert_queue *q = twl_alert_queue_new(3, 64, 3600);
	struct twl_alert_queue_stats st;
	struct twl_alert_event ev;
	char key[16];
	int i;

	(void)state;
	assert_non_null(q);
	for (i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(push(q, key, 100, i), 0);
	}
	/* full: dropped at once, counted, its key not remembered */
	assert_int_equal(push(q, "k3", 100, 3), -ENOBUFS);
	twl_alert_queue_stats(q, &st);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.waiting, 3);
	for (i = 0; i < 3; i++) {
		char want[16];

		assert_true(twl_alert_queue_pop(q, &ev, 0));
		snprintf(want, sizeof(want), "{\"n\":%d}", i);
		assert_string_equal(ev.body, want);
		assert_int_equal(ev.len, strlen(want));
		assert_string_equal(ev.kind, "test");
		assert_int_equal(ev.at, 100);
		free(ev.body);
	}
	assert_false(twl_alert_queue_pop(q, &ev, 0));
	assert_false(twl_alert_queue_pop(q, &ev, 20));
	/* room again; the dropped key was not remembered */
	assert_int_equal(push(q, "k3", 101, 3), 0);
	twl_alert_queue_free(q);
}

static void test_dedup_window(void **state)
{
	struct twl_alert_queue *q = twl_alert_queue_new(16, 64, 100);
	struct twl_alert_queue_stats st;
	struct twl_alert_event a, b;

	(void)state;
	assert_int_equal(push(q, "same", 1000, 1), 0);
	assert_int_equal(push(q, "same", 1050, 2), -EALREADY);
	assert_int_equal(push(q, "same", 1099, 3), -EALREADY);
	assert_int_equal(push(q, "other", 1050, 4), 0);
	/* past the window: raised again, under another event id */
	assert_int_equal(push(q, "same", 1100, 5), 0);
	twl_alert_queue_stats(q, &st);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.deduplicated, 2);
	assert_true(twl_alert_queue_pop(q, &a, 0));
	assert_true(twl_alert_queue_pop(q, &b, 0));
	free(b.body);
	assert_true(twl_alert_queue_pop(q, &b, 0));
	assert_string_not_equal(a.id, b.id);
	free(a.body);
	free(b.body);
	twl_alert_queue_free(q);
}

/* More keys than slots: memory stays bounded, the oldest are forgotten. */
static void test_dedup_bounded(void **state)
{
	struct twl_alert_queue *q = twl_alert_queue_new(1, 8, 1000000);
	struct twl_alert_event ev;
	char key[16];
	int i, again = 0;

	(void)state;
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		assert_int_equal(push(q, key, i, i), 0);
		assert_true(twl_alert_queue_pop(q, &ev, 0));
		free(ev.body);
	}
	/* the newest 8 are remembered, the first ones forgotten */
	assert_int_equal(push(q, "key99", 200, 0), -EALREADY);
	for (i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		if (push(q, key, 200, 0) == 0) {
			again++;
			assert_true(twl_alert_queue_pop(q, &ev, 0));
			free(ev.body);
		}
	}
	assert_int_equal(again, 8);
	twl_alert_queue_free(q);
}

static void test_refused(void **state)
{
	struct twl_alert_queue *q = twl_alert_queue_new(4, 8, 10);
	int n = 0;

	(void)state;
	assert_int_equal(twl_alert_queue_push(q, "", "k", 1, make, &n),
			 -EINVAL);
	assert_int_equal(twl_alert_queue_push(q, "kind", "", 1, make, &n),
			 -EINVAL);
	assert_int_equal(
		twl_alert_queue_push(q, "a-kind-name-longer-than-31-bytes-xx",
				     "k", 1, make, &n),
		-EINVAL);
	twl_alert_queue_close(q);
	assert_int_equal(push(q, "k", 1, 0), -ENOBUFS);
	twl_alert_queue_free(q);
	assert_null(twl_alert_queue_new(0, 8, 10));
	twl_alert_queue_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_bound),
		cmocka_unit_test(test_dedup_window),
		cmocka_unit_test(test_dedup_bounded),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
