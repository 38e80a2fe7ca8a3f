// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred answers (http.h: twl_request_defer, twl_defer_complete) against
 * an in-process server serving this file's own routes, with one HTTP
 * thread so that a second request's handler runs only after the first
 * one's returned: completed before the handler returned (by another
 * thread) and after it (from the HTTP thread and from a plain thread),
 * a client gone before completion, a handle taken and not used, a
 * deferral without a handle; a handler working past request-timeout
 * still answers, and so does one under way when the server stops. Every completed state must be released
 * exactly once; ASan (sanitizer builds) catches leaks and use after free.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "harness.h"
#include "http/http.h"

/* What a completion hands over; freed by release(). */
struct tstate {
	int id;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct twl_defer *held; /* from GET /hold, until completed */
static int completions, answers, releases;

static int t_answer(struct twl_server *srv, void *state, int result,
		    struct twl_response *resp)
{
	struct tstate *st = state;

	pthread_mutex_lock(&lock);
	answers++;
	pthread_mutex_unlock(&lock);
	return twl_response_json(resp, 200,
				 json_pack("{si si}", "result", result, "id",
					   st->id));
}

static void t_release(void *state)
{
	free(state);
	pthread_mutex_lock(&lock);
	releases++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static const struct twl_defer_ops t_ops = { t_answer, t_release };

static void complete(struct twl_defer *d, int result, int id)
{
	struct tstate *st = malloc(sizeof(*st));

	assert_non_null(st);
	st->id = id;
	pthread_mutex_lock(&lock);
	completions++;
	pthread_mutex_unlock(&lock);
	twl_defer_complete(d, result, st);
}

static void *complete_thread(void *arg)
{
	complete(arg, 7, 1);
	return NULL;
}

/* Completed by another thread before the handler returns. */
static int h_early(struct twl_server *srv, const struct twl_request *req,
		   struct twl_response *resp)
{
	struct twl_defer *d = twl_request_defer(req, &t_ops);
	pthread_t t;

	if (!d || twl_request_defer(req, &t_ops)) /* one handle per request */
		return -EINVAL;
	if (pthread_create(&t, NULL, complete_thread, d))
		return -EAGAIN;
	pthread_join(t, NULL);
	return TWL_HANDLER_DEFERRED;
}

/* Deferred; completed later by GET /release or by the test. */
static int h_hold(struct twl_server *srv, const struct twl_request *req,
		  struct twl_response *resp)
{
	struct twl_defer *d = twl_request_defer(req, &t_ops);

	if (!d)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	held = d;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return TWL_HANDLER_DEFERRED;
}

/* Completes the held handle from the (only) HTTP thread. */
static int h_release(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	struct twl_defer *d;

	pthread_mutex_lock(&lock);
	d = held;
	held = NULL;
	pthread_mutex_unlock(&lock);
	if (!d)
		return twl_response_error(resp, 409, "nothing_held", NULL, "");
	complete(d, 3, 2);
	return twl_response_json(resp, 200, json_pack("{ss}", "status", "ok"));
}

/* Takes a handle, then answers at once after all. */
static int h_unused(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	if (!twl_request_defer(req, &t_ops))
		return -EINVAL;
	return twl_response_error(resp, 418, "teapot", NULL, "not deferred");
}

/* Completes its handle at once, then answers itself anyway. */
static int h_completed_unused(struct twl_server *srv,
			      const struct twl_request *req,
			      struct twl_response *resp)
{
	struct twl_defer *d = twl_request_defer(req, &t_ops);

	if (!d)
		return -EINVAL;
	complete(d, 5, 3);
	return twl_response_json(resp, 201, json_pack("{ss}", "status", "own"));
}

/* Claims to defer without a handle: a handler bug the server survives. */
static int h_no_handle(struct twl_server *srv, const struct twl_request *req,
		       struct twl_response *resp)
{
	return TWL_HANDLER_DEFERRED;
}

/* Works 2.5 s, past the slow fixture's request-timeout of 1 s. */
static int h_slow(struct twl_server *srv, const struct twl_request *req,
		  struct twl_response *resp)
{
	struct timespec ts = { 2, 500000000 };

	nanosleep(&ts, NULL);
	return twl_response_json(resp, 200, json_pack("{si}", "id", 9));
}

/* Says it began, then works 0.5 s: under way when the server stops. */
static atomic_int stop_entered;
static int h_at_stop(struct twl_server *srv, const struct twl_request *req,
		     struct twl_response *resp)
{
	struct timespec ts = { 0, 500000000 };

	atomic_store(&stop_entered, 1);
	nanosleep(&ts, NULL);
	return twl_response_json(resp, 200, json_pack("{si}", "id", 11));
}

static const struct twl_route t_table[] = {
	{ "GET", "/slow", TWL_ROLE_PUBLIC, h_slow },
	{ "GET", "/at-stop", TWL_ROLE_PUBLIC, h_at_stop },
	{ "GET", "/early", TWL_ROLE_PUBLIC, h_early },
	{ "GET", "/hold", TWL_ROLE_PUBLIC, h_hold },
	{ "GET", "/release", TWL_ROLE_PUBLIC, h_release },
	{ "GET", "/unused", TWL_ROLE_PUBLIC, h_unused },
	{ "GET", "/completed-unused", TWL_ROLE_PUBLIC, h_completed_unused },
	{ "GET", "/no-handle", TWL_ROLE_PUBLIC, h_no_handle },
	{ NULL, NULL, 0, NULL },
};

static const struct twl_route *const t_routes[] = { t_table, NULL };

static void one_thread(struct twl_config *cfg)
{
	cfg->threads = 1;
}

static void slow_config(struct twl_config *cfg)
{
	cfg->threads = 1;
	cfg->request_timeout_s = 1;
	cfg->conn_timeout_s = 60;
}

static int setup(void **state)
{
	static struct fixture f;

	completions = answers = releases = 0;
	held = NULL;
	fixture_start_routes(&f, one_thread, t_routes);
	*state = &f;
	return 0;
}

/* Stop the server (closing every connection), then balance the books. */
static int teardown(void **state)
{
	fixture_stop(*state);
	assert_null(held);
	assert_int_equal(releases, completions);
	return 0;
}

static void expect_json(struct fixture *f, const char *path, long status,
			const char *key, int value)
{
	struct http_result r;

	http(f, "GET", path, NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, status);
	assert_non_null(r.json);
	assert_int_equal(json_integer_value(json_object_get(r.json, key)),
			 value);
	http_result_fini(&r);
}

static void wait_held(void)
{
	pthread_mutex_lock(&lock);
	while (!held)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

struct client {
	struct fixture *f;
	atomic_int quit;
	int rc;
	struct http_result r;
};

static void *hold_client(void *arg)
{
	struct client *c = arg;

	c->rc = http_try_quit(c->f, "GET", "/hold", NULL, NULL, 0, NULL,
			      &c->quit, &c->r);
	return NULL;
}

static void test_complete_before_return(void **state)
{
	struct fixture *f = *state;

	expect_json(f, "/early", 200, "result", 7);
	expect_json(f, "/early", 200, "id", 1);
	assert_int_equal(answers, 2);
	assert_int_equal(releases, 2);
}

static void test_complete_after_return(void **state)
{
	struct client c = { .f = *state };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, hold_client, &c), 0);
	wait_held();
	/* one HTTP thread: /hold's handler has returned and it is suspended */
	expect_json(c.f, "/release", 200, "result", 0);
	pthread_join(t, NULL);
	assert_int_equal(c.rc, CURLE_OK);
	assert_int_equal(c.r.status, 200);
	assert_int_equal(
		json_integer_value(json_object_get(c.r.json, "result")), 3);
	assert_int_equal(json_integer_value(json_object_get(c.r.json, "id")),
			 2);
	http_result_fini(&c.r);
	assert_int_equal(releases, 1);
}

static void test_complete_from_other_thread(void **state)
{
	struct client c = { .f = *state };
	struct twl_defer *d;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, hold_client, &c), 0);
	wait_held();
	pthread_mutex_lock(&lock);
	d = held;
	held = NULL;
	pthread_mutex_unlock(&lock);
	complete(d, -EIO, 4);
	pthread_join(t, NULL);
	assert_int_equal(c.rc, CURLE_OK);
	assert_int_equal(c.r.status, 200);
	assert_int_equal(
		json_integer_value(json_object_get(c.r.json, "result")), -EIO);
	http_result_fini(&c.r);
}

static void test_client_gone(void **state)
{
	struct client c = { .f = *state };
	struct twl_defer *d;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, hold_client, &c), 0);
	wait_held();
	atomic_store(&c.quit, 1);
	pthread_join(t, NULL);
	assert_int_equal(c.rc, CURLE_ABORTED_BY_CALLBACK);
	http_result_fini(&c.r);
	/* the client is gone; the work finishes anyway */
	pthread_mutex_lock(&lock);
	d = held;
	held = NULL;
	pthread_mutex_unlock(&lock);
	complete(d, 0, 5);
	/*
	 * The server goes on serving; the gone client's state is released
	 * exactly once by the time it stops (teardown counts; ASan sees a
	 * leak or a use after free).
	 */
	expect_json(c.f, "/early", 200, "result", 7);
}

static void test_handle_not_used(void **state)
{
	struct fixture *f = *state;
	struct http_result r;

	http(f, "GET", "/unused", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 418);
	http_result_fini(&r);
	http(f, "GET", "/completed-unused", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 201);
	http_result_fini(&r);
	assert_int_equal(answers, 0);
	assert_int_equal(releases, 1); /* the completed state, not answered */
	http(f, "GET", "/no-handle", NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 500);
	assert_non_null(r.json);
	assert_string_equal(json_string_value(json_object_get(r.json, "error")),
			    "internal");
	http_result_fini(&r);
}

/*
 * request-timeout bounds the client, not the server's own work: a
 * handler that works past it still answers (the connection was shut
 * down under it before).
 */
static void test_slow_handler(void **state)
{
	struct fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	fixture_start_routes(&f, slow_config, t_routes);
	expect_json(&f, "/slow", 200, "id", 9);
	fixture_stop(&f);
}

struct stop_client {
	struct fixture *f;
	struct http_result r;
	int curl;
};

static void *stop_client_main(void *arg)
{
	struct stop_client *sc = arg;

	sc->curl =
		http_try(sc->f, "GET", "/at-stop", NULL, NULL, 0, NULL, &sc->r);
	return NULL;
}

/*
 * A request under way when the server stops gets its answer: the stop
 * waits (up to 2 s) for it before the daemon closes the connections.
 */
static void test_stop_answers(void **state)
{
	struct fixture f;
	struct stop_client sc = { .f = &f };
	pthread_t t;

	(void)state;
	memset(&f, 0, sizeof(f));
	atomic_store(&stop_entered, 0);
	fixture_start_routes(&f, one_thread, t_routes);
	assert_int_equal(pthread_create(&t, NULL, stop_client_main, &sc), 0);
	for (int i = 0; i < 6000 && !atomic_load(&stop_entered); i++)
		usleep(10000);
	assert_true(atomic_load(&stop_entered));
	fixture_stop(&f);
	pthread_join(t, NULL);
	assert_int_equal(sc.curl, 0);
	assert_int_equal(sc.r.status, 200);
	http_result_fini(&sc.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_handler),
		cmocka_unit_test(test_stop_answers),
		cmocka_unit_test_setup_teardown(test_complete_before_return,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_after_return,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_from_other_thread,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_gone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_handle_not_used, setup,
						teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
