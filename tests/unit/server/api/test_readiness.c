// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness handlers (server/api/readiness.c) against an
 * in-process server with real TLS (tests/unit/server harness): targets
 * uploaded as .config bodies, dropped as files into the data directory's
 * targets folder, listed; readiness of a fleet posted through the real
 * ingest API; bad input answered 400 and nothing stored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "harness.h"

#define HOST_A \
	"aaaa000000000000000000000000000000000000000000000000000000000001"
#define HOST_B \
	"bbbb000000000000000000000000000000000000000000000000000000000002"

#define CONFIG_OFF                                     \
	"#\n# Linux/x86 6.12.5 Kernel Configuration\n" \
	"CONFIG_MEMCG=y\n# CONFIG_MEMCG_V1 is not set\n"
#define CONFIG_ON                                      \
	"#\n# Linux/x86 6.12.5 Kernel Configuration\n" \
	"CONFIG_MEMCG=y\nCONFIG_MEMCG_V1=y\nCONFIG_HZ=250\n"

static struct fixture fx;

/*
 * A version 2 report of @host_id with label team=@team: soft_limit written
 * @count times, or nothing.
 */
static void post_report(const char *host_id, const char *mode, const char *team,
			int count)
{
	int64_t now = time(NULL);
	char bid[33];
	static int seq;
	json_t *r;

	snprintf(bid, sizeof(bid), "%032x", ++seq);
	r = json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s, s:s,"
		      " s:i, s:{s:s}}, s:[], s:{}}",
		      "v", 2, "batch_id", bid, "seq", 1, "sent_time",
		      (json_int_t)now, "host", "host_id", host_id, "hostname",
		      host_id + 60, "boot_id", "b0", "kernel", "6.1.0-28-amd64",
		      "cgroup_mode", mode, "agent_version", "0.1.0",
		      "catalog_version", 1, "labels", "team", team, "usage",
		      "health");
	if (count)
		json_array_append_new(
			json_object_get(r, "usage"),
			json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i,"
				  " s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:I}",
				  "boot_id", "b0", "feature",
				  "memcg_v1.soft_limit", "file",
				  "memory.soft_limit_in_bytes", "op", "write",
				  "use", "configures", "cgroup", "/a", "comm",
				  "java", "uid", 0, "writer_cgroup", "/a",
				  "container", "", "last_pid", 1, "count",
				  count, "failed", 0, "condition_met", 0,
				  "first_seen", (json_int_t)now - 60,
				  "last_seen", (json_int_t)now - 30));
	enrol_and_post(&fx, host_id, r);
	json_decref(r);
}

static int setup(void **state)
{
	fixture_start(&fx, NULL);
	post_report(HOST_A, "v1", "payments", 4);
	post_report(HOST_B, "v2", "search", 0);
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(&fx);
	return 0;
}

static void call(const char *method, const char *path, const char *token,
		 const char *body, struct http_result *r)
{
	http(&fx, method, path, token, body, body ? strlen(body) : 0, NULL, r);
}

static void expect_error(const char *method, const char *path,
			 const char *token, const char *body, long status,
			 const char *code)
{
	struct http_result r;

	call(method, path, token, body, &r);
	if (r.status != status || !r.json ||
	    strcmp(json_string_value(json_object_get(r.json, "error")), code))
		fail_msg("%s %s: %ld %.*s, expected %ld %s", method, path,
			 r.status, (int)r.len, r.body, status, code);
	http_result_fini(&r);
}

/* The names of GET /api/v1/targets, joined by ' '. */
static void target_names(char *out, size_t cap)
{
	struct http_result r;
	json_t *t;
	size_t i, n = 0;

	call("GET", "/api/v1/targets", fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	out[0] = '\0';
	json_array_foreach(json_object_get(r.json, "targets"), i, t)
		n += snprintf(out + n, cap - n, "%s%s", n ? " " : "",
			      json_string_value(json_object_get(t, "name")));
	http_result_fini(&r);
}

static void test_bad_input(void **state)
{
	char names[512];

	expect_error("POST", "/api/v1/targets?name=x", fx.admin,
		     "hello world\n", 400, "bad_config");
	expect_error("POST", "/api/v1/targets?name=x", fx.admin, "", 400,
		     "bad_config");
	expect_error("POST", "/api/v1/targets?name=x", fx.admin,
		     "CONFIG_A=maybe\n", 400, "bad_config");
	/* no release in the header and none given */
	expect_error("POST", "/api/v1/targets?name=x", fx.admin,
		     "# CONFIG_MEMCG_V1 is not set\n", 400, "bad_config");
	expect_error("POST", "/api/v1/targets?name=Bad%2Fname", fx.admin,
		     CONFIG_OFF, 400, "bad_parameter");
	expect_error("POST", "/api/v1/targets", fx.admin, CONFIG_OFF, 400,
		     "bad_parameter");
	expect_error("POST", "/api/v1/targets?name=x&kernel=six", fx.admin,
		     CONFIG_OFF, 400, "bad_parameter");
	expect_error("POST", "/api/v1/targets?name=x", fx.viewer, CONFIG_OFF,
		     403, "forbidden");
	expect_error("POST", "/api/v1/targets?name=debian-12-6.12", fx.admin,
		     CONFIG_OFF, 409, "exists");
	expect_error("GET", "/api/v1/readiness", fx.viewer, NULL, 400,
		     "bad_parameter");
	expect_error("GET", "/api/v1/readiness?target=nope", fx.viewer, NULL,
		     404, "not_found");
	expect_error("GET", "/api/v1/readiness?target=debian-12-6.12&limit=0",
		     fx.viewer, NULL, 400, "bad_parameter");
	expect_error("GET", "/api/v1/readiness?target=debian-12-6.12&days=x",
		     fx.viewer, NULL, 400, "bad_parameter");
	expect_error("GET",
		     "/api/v1/readiness?target=debian-12-6.12&label=team",
		     fx.viewer, NULL, 400, "bad_parameter");
	expect_error("GET",
		     "/api/v1/readiness?target=debian-12-6.12&label=Team=x",
		     fx.viewer, NULL, 400, "bad_parameter");
	/* nothing was stored */
	target_names(names, sizeof(names));
	assert_string_equal(
		names, "debian-12-6.12 upstream-6.11-defaults upstream-6.15");
}

static int64_t count_of(const json_t *doc, const char *part)
{
	return json_integer_value(
		json_object_get(json_object_get(doc, part), "count"));
}

static void test_upload_and_readiness(void **state)
{
	struct http_result r;
	char names[512];

	call("POST", "/api/v1/targets?name=mine-off", fx.admin, CONFIG_OFF, &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(
		json_string_value(json_object_get(r.json, "kernel")), "6.12.5");
	assert_true(json_is_false(json_object_get(
		json_object_get(r.json, "config"), "CONFIG_MEMCG_V1")));
	http_result_fini(&r);
	call("POST", "/api/v1/targets?name=mine-on&kernel=6.13", fx.admin,
	     CONFIG_ON, &r);
	assert_int_equal(r.status, 201);
	http_result_fini(&r);
	target_names(names, sizeof(names));
	assert_string_equal(names, "debian-12-6.12 upstream-6.11-defaults "
				   "upstream-6.15 mine-off mine-on");

	call("GET", "/api/v1/readiness?target=mine-off", fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(r.json, "breaks"), 1);
	assert_int_equal(count_of(r.json, "ready"), 1);
	assert_int_equal(count_of(r.json, "not_measured"), 0);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(r.json, "target"), "name")),
			    "mine-off");
	http_result_fini(&r);
	call("GET", "/api/v1/readiness?target=mine-on", fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(r.json, "breaks"), 0);
	assert_int_equal(count_of(r.json, "ready"), 2);
	http_result_fini(&r);
}

/* GET /api/v1/readiness?target=mine-off&label=@label: @breaks, @ready. */
static void expect_labeled(const char *label, int64_t breaks, int64_t ready)
{
	struct http_result r;
	char path[160];

	snprintf(path, sizeof(path),
		 "/api/v1/readiness?target=mine-off&label=%s", label);
	call("GET", path, fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(r.json, "breaks"), breaks);
	assert_int_equal(count_of(r.json, "ready"), ready);
	assert_int_equal(count_of(r.json, "not_measured"), 0);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(r.json, "breaks"), "hosts")),
			 breaks);
	assert_string_equal(json_string_value(json_object_get(r.json, "label")),
			    label);
	http_result_fini(&r);
}

/* label=KEY=VALUE counts only the hosts carrying it (the unfiltered
 * answer, test_upload_and_readiness: 1 breaks, 1 ready). */
static void test_label_filter(void **state)
{
	struct http_result r;

	expect_labeled("team=payments", 1, 0);
	expect_labeled("team=search", 0, 1);
	expect_labeled("team=nobody", 0, 0);
	/* grouping within the filter: only the filtered hosts' groups */
	call("GET",
	     "/api/v1/readiness?target=mine-off&label=team=search"
	     "&group=label:team",
	     fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(r.json, "groups"), "values")),
			 1);
	http_result_fini(&r);
	call("GET", "/api/v1/readiness?target=mine-off", fx.viewer, NULL, &r);
	assert_true(json_is_null(json_object_get(r.json, "label")));
	http_result_fini(&r);
}

/* Files dropped into <data_dir>/targets count at once; bad ones are
 * listed as errors, not served. */
static void test_dropped_files(void **state)
{
	char path[512];
	struct http_result r;

	snprintf(path, sizeof(path), "%s/targets", fx.dir);
	mkdir(path, 0750);
	snprintf(path, sizeof(path), "%s/targets/dropped.config", fx.dir);
	assert_int_equal(twl_write_file_atomic(path, CONFIG_OFF,
					       strlen(CONFIG_OFF), 0640),
			 0);
	snprintf(path, sizeof(path), "%s/targets/broken.json", fx.dir);
	assert_int_equal(twl_write_file_atomic(path, "{\"name\": 1}", 11, 0640),
			 0);
	call("GET", "/api/v1/targets", fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(json_object_get(r.json, "errors")), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(r.json, "errors"), 0),
			"file")),
		"broken.json");
	http_result_fini(&r);
	call("GET", "/api/v1/readiness?target=dropped", fx.viewer, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(r.json, "breaks"), 1);
	http_result_fini(&r);
	expect_error("GET", "/api/v1/readiness?target=broken", fx.viewer, NULL,
		     404, "not_found");
	/* an upload does not shadow a dropped .config of its name */
	expect_error("POST", "/api/v1/targets?name=dropped", fx.admin,
		     CONFIG_ON, 409, "exists");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_upload_and_readiness),
		cmocka_unit_test(test_label_filter),
		cmocka_unit_test(test_dropped_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
