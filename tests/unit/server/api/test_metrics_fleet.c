// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet gauges of GET /metrics (server/api/metrics_fleet.c), scraped
 * from a real server over TLS after a report went through the ingest API,
 * and the whole scrape checked as the Prometheus text format: every sample
 * line well formed, its metric declared by a TYPE line before it, no series
 * twice, and the fleet gauges' label values from bounded sets only.
 */
#include <regex.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <twilight/catalog.h>

#include "harness.h"

#define HOST "00000000000000000000000000000000000000000000000000000000000000a1"

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	fixture_start(f, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(*state);
	free(*state);
	return 0;
}

/* The metric name of a sample line (up to '{' or ' ') into @out. */
static void metric_of(const char *line, char *out, size_t cap)
{
	size_t n = strcspn(line, "{ ");

	assert_true(n < cap);
	memcpy(out, line, n);
	out[n] = '\0';
}

/*
 * Check @text as the exposition format; return the number of samples.
 * TYPE lines name the metric (histograms: its _bucket, _sum and _count).
 */
static int check_exposition(const char *text)
{
	regex_t sample;
	char *copy = strdup(text), *save = NULL, *line;
	char declared[64][96], seen[512][256], name[96];
	int nd = 0, ns = 0;

	assert_int_equal(
		regcomp(&sample,
			"^[a-zA-Z_:][a-zA-Z0-9_:]*"
			"(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\""
			"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\")*\\})?"
			" -?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?$",
			REG_EXTENDED | REG_NOSUB),
		0);
	assert_true(text[strlen(text) - 1] == '\n');
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# TYPE ", 7)) {
			assert_true(nd < 64);
			assert_int_equal(sscanf(line + 7, "%95s", declared[nd]),
					 1);
			nd++;
			continue;
		}
		if (!strncmp(line, "# HELP ", 7))
			continue;
		if (regexec(&sample, line, 0, NULL, 0))
			fail_msg("not a sample line: '%s'", line);
		metric_of(line, name, sizeof(name));
		bool ok = false;
		for (int i = 0; i < nd && !ok; i++) {
			size_t n = strlen(declared[i]);

			ok = !strncmp(name, declared[i], n) &&
			     (!name[n] || !strcmp(name + n, "_bucket") ||
			      !strcmp(name + n, "_sum") ||
			      !strcmp(name + n, "_count"));
		}
		if (!ok)
			fail_msg("sample of undeclared metric: '%s'", line);
		/* the series (name and labels) once */
		size_t key = strcspn(line, " ");
		assert_true(key < sizeof(seen[0]) && ns < 512);
		for (int i = 0; i < ns; i++)
			if (!strncmp(seen[i], line, key) && !seen[i][key])
				fail_msg("series twice: '%s'", line);
		memcpy(seen[ns], line, key);
		seen[ns++][key] = '\0';
	}
	regfree(&sample);
	free(copy);
	return ns;
}

/* The value of the series @series (name and labels, exactly) in @text. */
static long long value_of(const char *text, const char *series)
{
	char needle[256];
	const char *p;

	snprintf(needle, sizeof(needle), "\n%s ", series);
	p = strstr(text, needle);
	if (!p)
		fail_msg("no series %s", series);
	return strtoll(p + strlen(needle), NULL, 10);
}

/*
 * Move every time of @j (full.json's are of December 2025) by @delta
 * seconds, so that the report falls in the gauges' 30-day window.
 */
static void shift_times(json_t *j, json_int_t delta)
{
	static const char *const keys[] = { "time", "first_seen", "last_seen",
					    "sent_time" };
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v) shift_times(v, delta);
		return;
	}
	json_object_foreach(j, k, v)
	{
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i]) && json_is_integer(v))
				json_integer_set(v,
						 json_integer_value(v) + delta);
		shift_times(v, delta);
	}
}

static void test_fleet_gauges(void **state)
{
	struct fixture *f = *state;
	struct http_result r;
	char key[80], *body, series[160];
	json_t *rep;
	int features = 0;

	enrol_host(f, HOST, key);
	/* full.json: hybrid; soft_limit written, oom_control registered,
	 * memsw only read; warnings of soft_limit and oom_control */
	rep = make_report(HOST, "c0000000000000000000000000000001", 1);
	shift_times(rep, (json_int_t)time(NULL) -
				 json_integer_value(
					 json_object_get(rep, "sent_time")));
	body = dump(rep);
	http(f, "POST", "/api/v1/reports", key, body, strlen(body), NULL, &r);
	assert_int_equal(r.status, 200);
	http_result_fini(&r);
	free(body);
	json_decref(rep);

	http(f, "GET", "/metrics", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(check_exposition(r.body) > 0);
	assert_int_equal(
		value_of(r.body, "twilight_hosts{cgroup_mode=\"hybrid\"}"), 1);
	assert_int_equal(value_of(r.body, "twilight_hosts{cgroup_mode=\"v1\"}"),
			 0);
	assert_int_equal(value_of(r.body, "twilight_hosts_known"), 1);
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.soft_limit\",kind=\"configures\"}"),
		1);
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.soft_limit\",kind=\"using\"}"),
		1);
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.oom_control\",kind=\"listens\"}"),
		1);
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.oom_control\",kind=\"configures\"}"),
		0);
	/* read only: never among the hosts using it */
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.memsw\",kind=\"reads_only\"}"),
		1);
	assert_int_equal(
		value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.memsw\",kind=\"using\"}"),
		0);
	assert_true(
		value_of(
			r.body,
			"twilight_feature_warnings{feature=\"memcg_v1.soft_limit\"}") >=
		1);
	assert_int_equal(value_of(r.body, "twilight_agents{state=\"silent\"}"),
			 0);
	/* full.json's agent matched with catalog version 1 */
	assert_int_equal(value_of(r.body,
				  "twilight_agents{state=\"catalog_older\"}"),
			 twl_catalog_version() > 1 ? 1 : 0);
	/* bounded labels: one series per catalog feature and kind, no more */
	for (const char *p = r.body;
	     (p = strstr(p, "\ntwilight_feature_hosts{")); p++)
		features++;
	assert_int_equal(features, 4 * (int)twl_catalog_count());
	for (size_t i = 0; i < twl_catalog_count(); i++) {
		snprintf(
			series, sizeof(series),
			"twilight_feature_hosts{feature=\"%s\",kind=\"using\"}",
			twl_catalog_at(i)->id);
		value_of(r.body, series);
	}
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fleet_gauges, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
