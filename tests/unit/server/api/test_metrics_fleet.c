// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet gauges of GET /metrics (server/api/metrics_fleet.c), scraped
 * from a real server over TLS after a report went through the ingest API,
 * and the whole scrape checked as the Prometheus text format: every sample
 * line well formed, its metric declared by a TYPE line before it, no series
 * twice, and the fleet gauges' label values from bounded sets only.
 */
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

#include "alerts/alerts.h"
#include "harness.h"
#include "prom_text.h"

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
	int features = 0, events = 0;

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
	assert_true(prom_check_exposition(r.body) > 0);
	assert_int_equal(
		prom_value_of(r.body, "twilight_hosts{cgroup_mode=\"hybrid\"}"),
		1);
	assert_int_equal(
		prom_value_of(r.body, "twilight_hosts{cgroup_mode=\"v1\"}"), 0);
	assert_int_equal(prom_value_of(r.body, "twilight_hosts_known"), 1);
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.soft_limit\",kind=\"configures\"}"),
		1);
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.soft_limit\",kind=\"using\"}"),
		1);
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.oom_control\",kind=\"listens\"}"),
		1);
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.oom_control\",kind=\"configures\"}"),
		0);
	/* read only: never among the hosts using it */
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.memsw\",kind=\"reads_only\"}"),
		1);
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_feature_hosts{feature=\"memcg_v1.memsw\",kind=\"using\"}"),
		0);
	assert_true(
		prom_value_of(
			r.body,
			"twilight_feature_warnings{feature=\"memcg_v1.soft_limit\"}") >=
		1);
	assert_int_equal(
		prom_value_of(r.body, "twilight_agents{state=\"silent\"}"), 0);
	/* full.json's agent matched with catalog version 1 */
	assert_int_equal(
		prom_value_of(r.body,
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
		prom_value_of(r.body, series);
	}
	/* the alert counters: one series per event type and outcome */
	for (const char *p = r.body;
	     (p = strstr(p, "\ntwilight_alert_events_total{")); p++)
		events++;
	assert_int_equal(events, TWL_ALERT_KINDS);
	for (int k = 0; k < TWL_ALERT_KINDS; k++) {
		snprintf(series, sizeof(series),
			 "twilight_alert_events_total{type=\"%s\"}",
			 twl_alert_kind_name((enum twl_alert_kind)k));
		prom_value_of(r.body, series);
	}
	assert_int_equal(
		prom_value_of(
			r.body,
			"twilight_webhook_deliveries_total{outcome=\"delivered\"}"),
		0);
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
