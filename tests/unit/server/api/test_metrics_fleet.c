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

/* full.json's times moved to now (its sent_time, now). */
static int64_t shift_to_now(void)
{
	json_t *rep = make_report(HOST, "c0000000000000000000000000000001", 1);
	int64_t shift = (int64_t)time(NULL) -
			json_integer_value(json_object_get(rep, "sent_time"));

	json_decref(rep);
	return shift;
}

/* Label sets bounded by the catalog and the alert kinds, no more. */
static void check_bounded_labels(const char *body)
{
	char series[160];
	int features = 0, events = 0;

	/* bounded labels: one series per catalog feature and kind, no more */
	for (const char *p = body; (p = strstr(p, "\ntwilight_feature_hosts{"));
	     p++)
		features++;
	assert_int_equal(features, 4 * (int)twl_catalog_count());
	for (size_t i = 0; i < twl_catalog_count(); i++) {
		snprintf(
			series, sizeof(series),
			"twilight_feature_hosts{feature=\"%s\",kind=\"using\"}",
			twl_catalog_at(i)->id);
		prom_value_of(body, series);
	}
	/* the alert counters: one series per event type and outcome */
	for (const char *p = body;
	     (p = strstr(p, "\ntwilight_alert_events_total{")); p++)
		events++;
	assert_int_equal(events, TWL_ALERT_KINDS);
	for (int k = 0; k < TWL_ALERT_KINDS; k++) {
		snprintf(series, sizeof(series),
			 "twilight_alert_events_total{type=\"%s\"}",
			 twl_alert_kind_name((enum twl_alert_kind)k));
		prom_value_of(body, series);
	}
}

static void test_fleet_gauges(void **state)
{
	struct fixture *f = *state;
	struct http_result r;

	/* full.json: hybrid; soft_limit written, oom_control registered,
	 * memsw only read; warnings of soft_limit and oom_control */
	post_full_report(f, HOST, "c0000000000000000000000000000001",
			 shift_to_now());
	http(f, "GET", "/metrics", f->viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(prom_check_exposition(r.body) > 0);
	assert_int_equal(
		prom_value_of(r.body, "twilight_hosts{cgroup_mode=\"hybrid\"}"),
		1);
	assert_int_equal(
		prom_value_of(r.body, "twilight_hosts{cgroup_mode=\"v1\"}"), 0);
	assert_int_equal(prom_value_of(r.body, "twilight_hosts_known"), 1);
	/* the report was answered only after a sync made it durable */
	assert_true(prom_value_of(r.body,
				  "twilight_store_sync_seconds_count") >= 1);
	assert_int_equal(
		prom_value_of(r.body,
			      "twilight_store_sync_seconds_bucket{le=\"+Inf\"}"),
		prom_value_of(r.body, "twilight_store_sync_seconds_count"));
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
	check_bounded_labels(r.body);
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
