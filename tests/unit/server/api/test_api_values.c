// SPDX-License-Identifier: GPL-2.0
/*
 * The values written, end to end: wire format v2 reports with
 * usage[].value and census knobs go in through the real ingest API
 * (enrol + POST /api/v1/reports on an in-process server with TLS);
 * GET /api/v1/features/{id} must answer their summary and value classes
 * exactly, and the linux-mm export must print the classes only with
 * export-show-values, saying otherwise that they were withheld.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "api/export.h"
#include "harness.h"

#define HOST_A \
	"aaaa000000000000000000000000000000000000000000000000000000000001"
#define HOST_B \
	"bbbb000000000000000000000000000000000000000000000000000000000002"
#define BOOT "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f"
#define MIB (1024LL * 1024)
#define GIB (1024 * MIB)

static int batch_no;

static json_t *report(const char *host_id, const char *hostname)
{
	char bid[33];
	json_int_t now = (json_int_t)time(NULL);

	snprintf(bid, sizeof(bid), "%032x", ++batch_no);
	return json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s,"
			 " s:s, s:i}, s:[], s:{s:I, s:[], s:[], s:i, s:b},"
			 " s:{}}",
			 "v", 2, "batch_id", bid, "seq", batch_no, "sent_time",
			 now, "host", "host_id", host_id, "hostname", hostname,
			 "boot_id", BOOT, "kernel", "6.1.0-28-amd64",
			 "cgroup_mode", "v1", "agent_version", "0.2.0",
			 "catalog_version", 2, "usage", "census", "time",
			 now - 30, "hierarchies", "knobs", "cgroups_walked", 10,
			 "truncated", 0, "health");
}

/* A write of @feature's @file to @cgroup by @comm, with value @value. */
static void add_write(json_t *r, const char *feature, const char *file,
		      const char *cgroup, const char *comm, json_t *value)
{
	json_int_t now = (json_int_t)time(NULL);
	json_t *u = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:i,"
		" s:i, s:I, s:I}",
		"boot_id", BOOT, "feature", feature, "file", file, "op",
		value ? "write" : "register_event", "use",
		value ? "configures" : "listens", "cgroup", cgroup, "comm",
		comm, "uid", 0, "writer_cgroup", "/", "container", "",
		"last_pid", 1, "count", 2, "failed", 0, "first_seen", now - 120,
		"last_seen", now - 60);

	if (value)
		json_object_set_new(u, "value", value);
	json_array_append_new(json_object_get(r, "usage"), u);
}

/* A finite value summary {last, min, max, unlimited, unit, source}. */
static json_t *val(json_int_t last, json_int_t min, json_int_t max,
		   bool unlimited, const char *unit)
{
	return json_pack("{s:I, s:I, s:I, s:b, s:s, s:s}", "last", last, "min",
			 min, "max", max, "unlimited", unlimited, "unit", unit,
			 "source", "stored");
}

static void add_knob(json_t *r, const char *feature, const char *file,
		     const char *cgroup, const char *value)
{
	json_array_append_new(
		json_object_get(json_object_get(r, "census"), "knobs"),
		json_pack("{s:s, s:s, s:s, s:s}", "feature", feature, "file",
			  file, "cgroup", cgroup, "value", value));
}

static void post(struct fixture *f, const char *key, json_t *r)
{
	struct http_result res;
	char *body = dump(r);

	http(f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &res);
	if (res.status != 200)
		fail_msg("report rejected (%ld): %.*s", res.status,
			 (int)res.len, res.body);
	http_result_fini(&res);
	free(body);
	json_decref(r);
}

/*
 * web-1: soft limit 256 MiB..512 MiB by systemd, only unlimited by
 * kubelet; oom_kill_disable=1 by dockerd, an OOM listener; use_hierarchy
 * 0 by initscript; census: soft limit 1 GiB, oom_kill_disable 1,
 * use_hierarchy 0. web-2: soft limit 1 GiB..8 GiB and unlimited by java;
 * swappiness 0..10, last 5, by tuned; move_charge 1 and 3 by lxc-start;
 * census: soft limit 2 GiB.
 */
static void ingest(struct fixture *f)
{
	char key[80];
	json_t *r;

	enrol_host(f, HOST_A, key);
	r = report(HOST_A, "web-1");
	add_write(r, "memcg_v1.soft_limit", "memory.soft_limit_in_bytes",
		  "/system.slice/a.service", "systemd",
		  val(256 * MIB, 256 * MIB, 512 * MIB, false, "bytes"));
	add_write(r, "memcg_v1.soft_limit", "memory.soft_limit_in_bytes",
		  "/kubepods/pod1", "kubelet",
		  json_pack("{s:i, s:b, s:s, s:s}", "last", -1, "unlimited", 1,
			    "unit", "bytes", "source", "stored"));
	add_write(r, "memcg_v1.oom_control", "memory.oom_control", "/docker/x",
		  "dockerd", val(1, 1, 1, false, "number"));
	add_write(r, "memcg_v1.oom_control", "memory.oom_control", "/docker/x",
		  "oomd", NULL);
	add_write(r, "memcg_v1.non_hierarchical", "memory.use_hierarchy",
		  "/legacy", "initscript", val(0, 0, 0, false, "number"));
	add_knob(r, "memcg_v1.soft_limit", "memory.soft_limit_in_bytes",
		 "/system.slice/b.service", "1073741824");
	add_knob(r, "memcg_v1.oom_control", "memory.oom_control", "/docker/y",
		 "1");
	add_knob(r, "memcg_v1.non_hierarchical", "memory.use_hierarchy",
		 "/legacy", "0");
	post(f, key, r);

	enrol_host(f, HOST_B, key);
	r = report(HOST_B, "web-2");
	add_write(r, "memcg_v1.soft_limit", "memory.soft_limit_in_bytes",
		  "/docker/abc", "java",
		  val(8 * GIB, 1 * GIB, 8 * GIB, true, "bytes"));
	add_write(r, "memcg_v1.swappiness", "memory.swappiness",
		  "/system.slice/db.service", "tuned",
		  val(5, 0, 10, false, "number"));
	add_write(r, "memcg_v1.move_charge", "memory.move_charge_at_immigrate",
		  "/lxc/c1", "lxc-start", val(3, 1, 3, false, "bitmask"));
	/* the same path as web-1's knob: another cgroup, on another host */
	add_knob(r, "memcg_v1.soft_limit", "memory.soft_limit_in_bytes",
		 "/system.slice/b.service", "2147483648");
	post(f, key, r);
}

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	fixture_start(&f, NULL);
	ingest(&f);
	*state = &f;
	return 0;
}

static void show_values(struct twl_config *cfg)
{
	cfg->export_show_values = true;
}

static int setup_shown(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	fixture_start(&f, show_values);
	ingest(&f);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(*state);
	return 0;
}

/* GET @path as viewer: 200 and its JSON, or the test fails. */
static json_t *get_json(struct fixture *f, const char *path)
{
	struct http_result r;
	json_t *j;

	http(f, "GET", path, f->viewer, NULL, 0, NULL, &r);
	if (r.status != 200 || !r.json)
		fail_msg("GET %s: %ld %.*s", path, r.status, (int)r.len,
			 r.body);
	j = json_incref(r.json);
	http_result_fini(&r);
	return j;
}

/* @got (a JSON value) dumped compactly with sorted keys equals @want. */
static void expect_json(const json_t *got, const char *want)
{
	char *s = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

	assert_non_null(s);
	if (strcmp(s, want))
		fail_msg("got  %s\nwant %s", s, want);
	free(s);
}

static json_t *values_of(struct fixture *f, const char *id)
{
	char path[128];
	json_t *doc, *v;

	snprintf(path, sizeof(path), "/api/v1/features/%s", id);
	doc = get_json(f, path);
	v = json_incref(json_object_get(doc, "values"));
	json_decref(doc);
	assert_non_null(v);
	return v;
}

static void test_feature_bytes(void **state)
{
	json_t *v = values_of(*state, "memcg_v1.soft_limit");

	expect_json(
		v,
		"{\"classes\":[\"soft_limit_in_bytes set on 2 cgroups on 2 hosts:"
		" 256 MiB-8 GiB; reset to unlimited by 2 processes\","
		"\"soft_limit_in_bytes configured on 2 cgroups on 2 hosts"
		" (census): 1 GiB-2 GiB\"],"
		"\"configured\":{\"cgroups\":2,\"hosts\":2,\"max\":2147483648,"
		"\"min\":1073741824},"
		"\"kind\":\"bytes\",\"name\":\"soft_limit_in_bytes\","
		"\"written\":{\"cgroups\":3,\"hosts\":2,\"max\":8589934592,"
		"\"min\":268435456,\"processes\":3,"
		"\"set\":{\"cgroups\":2,\"hosts\":2,\"processes\":2},"
		"\"unlimited\":{\"cgroups\":2,\"hosts\":2,\"processes\":2}}}");
	json_decref(v);
}

static void test_feature_boolean(void **state)
{
	json_t *v = values_of(*state, "memcg_v1.oom_control");

	expect_json(
		v,
		"{\"classes\":[\"oom_kill_disable=1 written on 1 cgroup on 1 host"
		" by dockerd\",\"oom_kill_disable=1 on 1 cgroup on 1 host"
		" (census)\",\"notification listeners: 1 process on 1 host\"],"
		"\"configured\":{\"cgroups\":1,\"hosts\":1,\"max\":1,\"min\":1,"
		"\"values\":[{\"cgroups\":1,\"hosts\":1,\"value\":1}],"
		"\"values_more\":false},"
		"\"kind\":\"boolean\",\"listeners\":{\"cgroups\":1,\"hosts\":1,"
		"\"processes\":1},\"name\":\"oom_kill_disable\","
		"\"written\":{\"cgroups\":1,\"hosts\":1,\"max\":1,\"min\":1,"
		"\"processes\":1,"
		"\"set\":{\"cgroups\":1,\"hosts\":1,\"processes\":1},"
		"\"unlimited\":{\"cgroups\":0,\"hosts\":0,\"processes\":0},"
		"\"values\":[{\"cgroups\":1,\"hosts\":1,\"names\":[\"dockerd\"],"
		"\"processes\":1,\"value\":1}],\"values_more\":false}}");
	json_decref(v);
	v = values_of(*state, "memcg_v1.non_hierarchical");
	expect_json(json_object_get(v, "classes"),
		    "[\"use_hierarchy=0 written on 1 cgroup on 1 host by"
		    " initscript\",\"use_hierarchy=0 on 1 cgroup on 1 host"
		    " (census)\"]");
	json_decref(v);
}

static void test_feature_lists(void **state)
{
	json_t *v = values_of(*state, "memcg_v1.swappiness");

	expect_json(
		json_object_get(v, "classes"),
		"[\"swappiness written: 0 on 1 cgroup, 5 on 1 cgroup, 10 on 1 cgroup;"
		" by 1 process on 1 host\"]");
	json_decref(v);
	v = values_of(*state, "memcg_v1.move_charge");
	expect_json(json_object_get(v, "classes"),
		    "[\"move_charge_at_immigrate written: 0x1 (bit 0) on 1"
		    " cgroup, 0x3 (bits 0,1) on 1 cgroup; by 1 process on 1"
		    " host\"]");
	json_decref(v);
	/* a feature whose writes carry no value a maintainer reads */
	v = values_of(*state, "memcg_v1.force_empty");
	expect_json(v, "{\"classes\":[],\"kind\":\"none\",\"name\":null}");
	json_decref(v);
	/* a range with nothing in it */
	{
		json_t *doc = get_json(*state, "/api/v1/features/"
					       "memcg_v1.soft_limit?since="
					       "2020-01-01&until=2020-01-31");

		expect_json(json_object_get(json_object_get(doc, "values"),
					    "classes"),
			    "[]");
		json_decref(doc);
	}
}

/* The export's body from @path, as a new string. */
static char *export_text(struct fixture *f, const char *path)
{
	struct http_result r;
	char *body;

	http(f, "GET", path, f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	body = strndup(r.body, r.len);
	http_result_fini(&r);
	return body;
}

static void test_export_withheld(void **state)
{
	char *body = export_text(*state, "/api/v1/export/linux-mm?feature="
					 "memcg_v1.soft_limit");
	json_t *j;

	assert_non_null(strstr(
		body,
		"\n  Values written: values withheld (export-show-values)\n"));
	assert_null(strstr(body, "MiB"));
	assert_null(strstr(body, " set on "));
	free(body);
	/* a feature with no value written says nothing about values */
	body = export_text(*state, "/api/v1/export/linux-mm");
	assert_null(strstr(body, "Values written:\n"));
	free(body);
	j = get_json(*state, "/api/v1/export/linux-mm?format=json&feature="
			     "memcg_v1.oom_control");
	expect_json(json_object_get(j, "redaction"),
		    "{\"full_cgroups\":false,\"hide_processes\":false,"
		    "\"show_hosts\":false,\"show_images\":false,"
		    "\"show_labels\":false,\"show_teams\":false,"
		    "\"show_values\":false}");
	{
		json_t *feat =
			json_array_get(json_object_get(j, "features"), 0);

		assert_null(json_object_get(feat, "values"));
		assert_true(
			json_is_true(json_object_get(feat, "values_withheld")));
	}
	json_decref(j);
}

static void test_export_shown(void **state)
{
	char *body = export_text(*state, "/api/v1/export/linux-mm");
	json_t *j;

	assert_non_null(strstr(
		body,
		"\n  Values written:\n"
		"    - soft_limit_in_bytes set on 2 cgroups on 2 hosts: 256 MiB-8 GiB;\n"
		"      reset to unlimited by 2 processes\n"
		"    - soft_limit_in_bytes configured on 2 cgroups on 2 hosts (census):\n"
		"      1 GiB-2 GiB\n"));
	/* a long item wraps at 72 columns */
	assert_non_null(strstr(body,
			       "\n    - move_charge_at_immigrate written:"
			       " 0x1 (bit 0) on 1 cgroup, 0x3\n"
			       "      (bits 0,1) on 1 cgroup; by 1 process"
			       " on 1 host\n"));
	assert_non_null(strstr(
		body,
		"\n  Values written:\n"
		"    - oom_kill_disable=1 written on 1 cgroup on 1 host by dockerd\n"
		"    - oom_kill_disable=1 on 1 cgroup on 1 host (census)\n"
		"    - notification listeners: 1 process on 1 host\n"));
	assert_null(strstr(body, "withheld (export-show-values)"));
	free(body);
	/* hidden process names stay hidden in the values too */
	body = export_text(*state, "/api/v1/export/linux-mm?processes=hide");
	assert_non_null(strstr(
		body, "    - oom_kill_disable=1 written on 1 cgroup on 1 "
		      "host by (hidden)\n"));
	assert_null(strstr(body, "dockerd"));
	free(body);
	j = get_json(*state, "/api/v1/export/linux-mm?format=json&feature="
			     "memcg_v1.swappiness");
	expect_json(
		json_object_get(
			json_object_get(
				json_array_get(json_object_get(j, "features"),
					       0),
				"values"),
			"classes"),
		"[\"swappiness written: 0 on 1 cgroup, 5 on 1 cgroup, 10 on 1 cgroup;"
		" by 1 process on 1 host\"]");
	json_decref(j);
}

/* Host @host's entry of feature @id on its page (GET /api/v1/hosts/ID). */
static json_t *host_feature(struct fixture *f, const char *host, const char *id)
{
	char path[128];
	json_t *doc, *x, *found = NULL;
	size_t i;

	snprintf(path, sizeof(path), "/api/v1/hosts/%s", host);
	doc = get_json(f, path);
	json_array_foreach(
		json_object_get(doc, "features"), i,
		x) if (!strcmp(json_string_value(json_object_get(x, "id")), id))
		found = json_incref(x);
	json_decref(doc);
	if (!found)
		fail_msg("host %s has no feature %s", host, id);
	return found;
}

/*
 * The host page's values are that host's alone: web-1's soft limits
 * (not web-2's 1 GiB-8 GiB), its OOM writes apart from its listener, and
 * the kinds of use beside them.
 */
static void test_host_values(void **state)
{
	json_t *x = host_feature(*state, HOST_A, "memcg_v1.soft_limit");

	expect_json(json_object_get(json_object_get(x, "values"), "classes"),
		    "[\"soft_limit_in_bytes set on 1 cgroup on 1 host:"
		    " 256 MiB-512 MiB; reset to unlimited by 1 process\","
		    "\"soft_limit_in_bytes configured on 1 cgroup on 1 host"
		    " (census): 1 GiB\"]");
	json_decref(x);
	x = host_feature(*state, HOST_A, "memcg_v1.oom_control");
	expect_json(json_object_get(json_object_get(x, "values"), "classes"),
		    "[\"oom_kill_disable=1 written on 1 cgroup on 1 host by"
		    " dockerd\",\"oom_kill_disable=1 on 1 cgroup on 1 host"
		    " (census)\",\"notification listeners: 1 process on 1"
		    " host\"]");
	assert_true(json_is_true(json_object_get(x, "configures")));
	assert_true(json_is_true(json_object_get(x, "listens")));
	assert_false(json_is_true(json_object_get(x, "reads_only")));
	json_decref(x);
	x = host_feature(*state, HOST_B, "memcg_v1.soft_limit");
	expect_json(json_object_get(json_object_get(x, "values"), "classes"),
		    "[\"soft_limit_in_bytes set on 1 cgroup on 1 host:"
		    " 1 GiB-8 GiB; reset to unlimited by 1 process\","
		    "\"soft_limit_in_bytes configured on 1 cgroup on 1 host"
		    " (census): 2 GiB\"]");
	json_decref(x);
}

/* twilight-server export with @flag ("" for none) into a new string. */
static char *cli_text(struct fixture *f, const char *flag)
{
	char out[512], *text = NULL;
	size_t len = 0;
	char *argv[] = { "export",    "--data-dir",	     f->dir,
			 "--feature", "memcg_v1.soft_limit", "--output",
			 out,	      (char *)flag,	     NULL };

	snprintf(out, sizeof(out), "%s/export.txt", f->dir);
	assert_int_equal(twl_export_cli(flag[0] ? 8 : 7, argv), 0);
	assert_int_equal(twl_read_file(out, 1 << 20, &text, &len), 0);
	unlink(out);
	return text;
}

static void test_export_cli(void **state)
{
	char *text = cli_text(*state, "");

	assert_non_null(strstr(text, "\n  Values written: values withheld "
				     "(export-show-values)\n"));
	free(text);
	text = cli_text(*state, "--show-values");
	assert_non_null(strstr(text, "\n    - soft_limit_in_bytes set on 2 "
				     "cgroups on 2 hosts: 256 MiB-8 GiB;\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_bytes),
		cmocka_unit_test(test_feature_boolean),
		cmocka_unit_test(test_feature_lists),
		cmocka_unit_test(test_host_values),
		cmocka_unit_test(test_export_withheld),
		cmocka_unit_test(test_export_cli),
	};
	const struct CMUnitTest shown[] = {
		cmocka_unit_test(test_export_shown),
	};
	int rc = cmocka_run_group_tests_name("values", tests, setup, teardown);

	return rc | cmocka_run_group_tests_name("values shown", shown,
						setup_shown, teardown);
}
