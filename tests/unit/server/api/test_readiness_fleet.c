// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (server/api/readiness.c) of the mixed fleet of
 * readiness_fleet.h seeded through the real ingest API: every host
 * enrolled with the enrolment token and its wire document posted to
 * POST /api/v1/reports of an in-process server with real TLS. The
 * shipped Debian 6.12 target and targets uploaded from Debian's real
 * linux-config-6.12 files (which kernel/fetch downloads into the kernel
 * cache outside the repository; without them the test fails) give the
 * answer the store's own readiness test asserts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "readiness_fleet.h"

static struct fixture fx;

/* Enrol host @hid and post @r as its agent would; fail unless stored. */
static void post(const char *hid, json_t *r, void *ctx)
{
	enrol_and_post(&fx, hid, r);
	json_decref(r);
}

static int setup(void **state)
{
	fixture_start(&fx, NULL);
	fleet_seed(time(NULL), post, NULL);
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(&fx);
	return 0;
}

/* GET /api/v1/readiness of target @name into @r; fails unless 200. */
static void readiness(const char *name, struct http_result *r)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/readiness?target=%s&limit=100",
		 name);
	http(&fx, "GET", path, fx.viewer, NULL, 0, NULL, r);
	if (r->status != 200 || !r->json)
		fail_msg("%s: %ld %.*s", path, r->status, (int)r->len, r->body);
}

static void test_debian_612(void **state)
{
	struct http_result r;

	readiness("debian-12-6.12", &r);
	fleet_check_debian_612(r.json);
	http_result_fini(&r);
}

/* Each of Debian's real 6.12 .config files, uploaded, answers as the
 * shipped target does for the whole fleet. */
static void test_uploaded_debian_configs(void **state)
{
	static const char *const flavours[] = { "amd64_none_amd64",
						"amd64_none_cloud-amd64",
						"amd64_rt_amd64" };
	static const char *const parts[] = { "breaks", "ready",
					     "not_measured" };
	struct http_result want, got;
	char path[96];

	readiness("debian-12-6.12", &want);
	for (size_t i = 0; i < 3; i++) {
		size_t len;
		char *text = debian_config(flavours[i], &len);

		snprintf(path, sizeof(path), "/api/v1/targets?name=debian-%zu",
			 i);
		http(&fx, "POST", path, fx.admin, text, len, NULL, &got);
		free(text);
		assert_int_equal(got.status, 201);
		http_result_fini(&got);
		readiness(path + strlen("/api/v1/targets?name="), &got);
		for (size_t p = 0; p < 3; p++)
			assert_true(json_equal(
				json_object_get(want.json, parts[p]),
				json_object_get(got.json, parts[p])));
		http_result_fini(&got);
	}
	http_result_fini(&want);
}

/* @s with every run of white space one space (a new string). */
static char *squash(const char *s)
{
	char *o = strdup(s), *p = o;

	assert_non_null(o);
	for (; *s; s++) {
		bool ws = *s == ' ' || *s == '\n';

		if (ws && p > o && p[-1] == ' ')
			continue;
		*p++ = ws ? ' ' : *s;
	}
	*p = '\0';
	return o;
}

/*
 * The export's readiness line of a feature says how many of the hosts that
 * lose it only read it (lim-4's monitor), apart from those using it.
 */
static void test_export_line(void **state)
{
	struct http_result r;
	char *text;

	http(&fx, "GET", "/api/v1/export/linux-mm?feature=" FLEET_SOFT,
	     fx.viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	text = squash(r.body);
	if (!strstr(text, "3 of our hosts will lose this with our"
			  " distribution's next kernel (1 of them only reads"
			  " it, as monitoring does)."))
		fail_msg("no readiness line with its readers in:\n%s", text);
	free(text);
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_612),
		cmocka_unit_test(test_uploaded_debian_configs),
		cmocka_unit_test(test_export_line),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
