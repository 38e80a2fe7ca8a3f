// SPDX-License-Identifier: GPL-2.0
/*
 * The read API answers the same on both store backends: two in-process
 * servers with real TLS, one on SQLite and one on a database of the
 * PostgreSQL fixture, get the same reports through POST /api/v1/reports
 * (the mixed fleet of readiness_fleet.h and hosts sending the full wire
 * example), and feature detail and the fleet metrics must then answer
 * byte for byte the same, but for the members that hold the time of the
 * answer itself and the server's own certificate. (The fleet reads are
 * compared in test_store_read.c, on stores given the same receive times:
 * two servers receive a report in different seconds, and a host's
 * first_seen, last_seen and the health lists' order follow them.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"
#include "pg_fixture.h"
#include "readiness_fleet.h"

static struct fixture fx[2]; /* [SQLITE], [POSTGRESQL] */
static char pg_uri[512];

/* The PostgreSQL server's store: a fresh database of the fixture. */
static void on_postgresql(struct twl_config *cfg)
{
	snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", pg_uri);
}

/* Enrol host @hid on both servers and post @r to each. */
static void post_both(const char *hid, json_t *r, void *ctx)
{
	enrol_and_post(&fx[SQLITE], hid, r);
	enrol_and_post(&fx[POSTGRESQL], hid, r);
	json_decref(r);
}

static void host_id(int n, char out[65])
{
	snprintf(out, 65, "%064x", 0x100 + n);
}

static int setup(void **state)
{
	int64_t now = time(NULL);
	char hid[65];

	pg_fixture_db(pg_uri, sizeof(pg_uri));
	fixture_start(&fx[SQLITE], NULL);
	fixture_start(&fx[POSTGRESQL], on_postgresql);
	fleet_seed(now, post_both, NULL);
	for (int n = 1; n <= 3; n++) {
		host_id(n, hid);
		for (int b = 0; b < 2; b++) {
			char batch[40];
			json_t *r;

			snprintf(batch, sizeof(batch), "ba7c%02x%02x", n, b);
			r = make_report_shifted(hid, batch, 1 + b,
						now - FULL_JSON_SENT -
							3600 * (n + b));
			post_both(hid, r, NULL);
		}
	}
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(&fx[SQLITE]);
	fixture_stop(&fx[POSTGRESQL]);
	return pg_fixture_drop_all(state);
}

/*
 * Members that are not stored data: the time an answer was made, and
 * the server's own certificate (a file in each server's data directory).
 */
static void drop_answer_times(json_t *j)
{
	static const char *const keys[] = { "generated", "now", "certificate" };
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(j)) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			json_object_del(j, keys[i]);
		json_object_foreach(j, k, v) drop_answer_times(v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) drop_answer_times(v);
	}
}

/* GET @path on both servers with @token; fail unless both answer 200. */
static void get_both(const char *path, const char *const token[2],
		     struct http_result r[2])
{
	for (int b = 0; b < 2; b++) {
		http(&fx[b], "GET", path, token[b], NULL, 0, NULL, &r[b]);
		if (r[b].status != 200)
			fail_msg("%s on %s: %ld %.*s", path,
				 b == SQLITE ? "sqlite" : "postgresql",
				 r[b].status, (int)r[b].len, r[b].body);
	}
}

/* Fail unless @path answers the same JSON on both servers. */
static void same_json(const char *path)
{
	const char *const tok[2] = { fx[SQLITE].viewer, fx[POSTGRESQL].viewer };
	struct http_result r[2];

	get_both(path, tok, r);
	assert_non_null(r[SQLITE].json);
	assert_non_null(r[POSTGRESQL].json);
	drop_answer_times(r[SQLITE].json);
	drop_answer_times(r[POSTGRESQL].json);
	if (!json_equal(r[SQLITE].json, r[POSTGRESQL].json)) {
		char *a = dump(r[SQLITE].json), *b = dump(r[POSTGRESQL].json);

		fprintf(stderr, "%s\nsqlite:     %s\npostgresql: %s\n", path, a,
			b);
		free(a);
		free(b);
		fail_msg("%s answers differently on the two backends", path);
	}
	http_result_fini(&r[0]);
	http_result_fini(&r[1]);
}

static void test_feature_reads(void **state)
{
	static const char *const ids[] = { FLEET_SOFT, FLEET_OOM, FLEET_IFACE,
					   "memcg_v1.kmem_tcp_limit",
					   "cgroup_v1.freezer" };
	char path[160];

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(path, sizeof(path), "/api/v1/features/%s", ids[i]);
		same_json(path);
	}
}

/* The lines of @body whose metric is one of the fleet's gauges, in order. */
static void fleet_lines(const char *body, size_t len, char *out, size_t cap)
{
	static const char *const names[] = { "twilight_agents",
					     "twilight_feature_hosts",
					     "twilight_feature_warnings",
					     "twilight_hosts" };
	const char *p = body, *end = body + len;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			size_t k = strlen(names[i]);

			if (l > k && !strncmp(p, names[i], k) &&
			    (p[k] == '{' || p[k] == ' ')) {
				assert_true(n + l + 1 < cap);
				memcpy(out + n, p, l);
				n += l;
				out[n++] = '\n';
			}
		}
		p += l + 1;
	}
	out[n] = '\0';
}

static void test_fleet_metrics(void **state)
{
	const char *const tok[2] = { fx[SQLITE].admin, fx[POSTGRESQL].admin };
	static char lines[2][65536];
	struct http_result r[2];

	get_both("/metrics", tok, r);
	for (int b = 0; b < 2; b++)
		fleet_lines(r[b].body, r[b].len, lines[b], sizeof(lines[b]));
	assert_non_null(strstr(lines[SQLITE], "twilight_feature_hosts{"));
	assert_string_equal(lines[SQLITE], lines[POSTGRESQL]);
	http_result_fini(&r[0]);
	http_result_fini(&r[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_reads),
		cmocka_unit_test(test_fleet_metrics),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
