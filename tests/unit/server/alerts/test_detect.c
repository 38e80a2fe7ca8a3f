// SPDX-License-Identifier: GPL-2.0
/*
 * The alert detector (server/alerts/detect.c) on a real database with the
 * example report ingested, scans run at chosen times: the first scan
 * announces nothing, a host's new uses are announced once, silence once
 * per spell, and a use after the quiet window is new again; the
 * readiness step left out of a scan, as its pace asks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alerts/alerts.h"
#include "alerts/detect.h"
#include "sqlite_fixture.h"
#include "store/store.h"
#include "store/store_alerts.h"

#define HOST_A "00000000000000000000000000000a01"
#define HOST_B "00000000000000000000000000000b02"
#define DAY 86400

static const struct twl_detect_opts dopts = { .new_days = 30,
					      .silent_after = 3600 };

/* Events raised so far by kind (the alerts have no webhook: none is sent). */
struct counts {
	uint64_t n[TWL_ALERT_KINDS];
};

static void counts(struct twl_alerts *a, struct counts *c)
{
	struct twl_alerts_stats st;

	twl_alerts_stats(a, &st);
	memcpy(c->n, st.raised_by_kind, sizeof(c->n));
}

/*
 * Scan at @now with @o; the events of each kind it raised must be @want's
 * (new_use, host_silent, records_lost, probe_lost, readiness_worse,
 * migrated_used_again, other).
 */
static void counts_scan(struct twl_store *s, struct twl_alerts *a,
			const struct twl_detect_opts *o, int64_t now,
			const int64_t want[TWL_ALERT_KINDS])
{
	struct counts before, after;
	int k;

	counts(a, &before);
	assert_int_equal(twl_alert_detect_scan(s, a, o, now), 0);
	counts(a, &after);
	for (k = 0; k < TWL_ALERT_KINDS; k++)
		if ((int64_t)(after.n[k] - before.n[k]) != want[k])
			fail_msg("scan at %lld: %s: %llu events, want %lld",
				 (long long)now, twl_alert_kind_name(k),
				 (unsigned long long)(after.n[k] - before.n[k]),
				 (long long)want[k]);
}

/* counts_scan() with the tests' options. */
static void scan(struct twl_store *s, struct twl_alerts *a, int64_t now,
		 const int64_t want[TWL_ALERT_KINDS])
{
	counts_scan(s, a, &dopts, now, want);
}

/* The options of most tests: 30 days for "new", retries after 1 s. */
static const struct twl_alerts_opts test_opts = { .new_days = 30,
						  .rate_per_min = 60,
						  .retry_base_s = 1,
						  .queue_max = 1024,
						  .deliver = { .timeout_s =
								       1 } };

/* Open the test database as *@s and the alerts on it with @o. */
static struct twl_alerts *alerts_open(struct twl_store **s,
				      const struct twl_alerts_opts *o)
{
	struct twl_alerts *a;

	assert_int_equal(twl_store_open(dbpath, s), 0);
	a = twl_alerts_new(*s, o);
	assert_non_null(a);
	return a;
}

/* A host's uses by the rollup: one new_use event each. */
static int64_t host_uses(const char *host)
{
	return qf("SELECT count(*) FROM feature_host WHERE host_id = '%s'"
		  " AND kinds & 27",
		  host);
}

static int64_t comm_uses(void)
{
	return q("SELECT count(*) FROM (SELECT DISTINCT feature_id, comm"
		 " FROM usage WHERE op <> 'read' AND comm <> '')");
}

static const int64_t none[TWL_ALERT_KINDS];

/*
 * The last scan's count per upgrade target (twl_alerts_stats(), the
 * /metrics gauge twilight_readiness_hosts_breaking) is what it stored as
 * that target's state: every shipped target, and @min breaking on one.
 */
static void check_ready(struct twl_alerts *a, int64_t min)
{
	struct twl_alerts_stats st;
	int64_t most = 0;
	char sql[256];

	twl_alerts_stats(a, &st);
	assert_true(st.n_ready >= 3);
	for (size_t i = 0; i < st.n_ready; i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT value FROM alert_state WHERE key = 'ready|%s'",
			 st.ready[i].target);
		assert_int_equal(st.ready[i].breaks, q(sql));
		if (st.ready[i].breaks > most)
			most = st.ready[i].breaks;
	}
	assert_int_equal(most, min);
}

static void test_scans(void **state)
{
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	int64_t t = 100 * DAY, a_uses, b_uses, breaking;
	json_t *r;

	(void)state;
	a = alerts_open(&s, &test_opts);

	r = report(HOST_A, "a0000000000000000000000000000001");
	ingest_at(s, HOST_A, r, t);
	json_decref(r);
	a_uses = host_uses(HOST_A);
	assert_true(a_uses >= 2);
	assert_true(comm_uses() >= 2);
	/* the example host misses a probe, lost no records, and breaks */
	assert_int_equal(q("SELECT records_lost FROM hosts"), 0);
	assert_true(q("SELECT length(probe_missing) FROM hosts") > 2);
	/* the first scan records what it finds, announces nothing */
	scan(s, a, t + 10, none);
	breaking = q("SELECT count(*) FROM alert_state WHERE key LIKE"
		     " 'ready|%' AND value = 1");
	assert_true(breaking >= 1);
	check_ready(a, 1);
	scan(s, a, t + 20, none);

	/*
	 * a new host: its uses are new, the process names are not; its
	 * losses; one more host breaks on the targets A breaks on
	 */
	r = report(HOST_B, "b0000000000000000000000000000001");
	ingest_at(s, HOST_B, r, t + 30);
	json_decref(r);
	b_uses = host_uses(HOST_B);
	{
		int64_t want[TWL_ALERT_KINDS] = { b_uses, 0, 0, 1, breaking };

		scan(s, a, t + 40, want);
	}
	check_ready(a, 2);
	/* the same facts again: nothing */
	r = report(HOST_B, "b0000000000000000000000000000002");
	ingest_at(s, HOST_B, r, t + 50);
	json_decref(r);
	scan(s, a, t + 60, none);

	/* both silent past silent-after: one event each, once */
	scan(s, a, t + 2 * 3600, (const int64_t[TWL_ALERT_KINDS]){ 0, 2 });
	scan(s, a, t + 3 * 3600, none);

	/* an agent that reports lost records: once per new count */
	exec_sql("UPDATE hosts SET records_lost = 5 WHERE host_id = '" HOST_B
		 "'");
	scan(s, a, t + 4 * 3600, (const int64_t[TWL_ALERT_KINDS]){ 0, 0, 1 });
	scan(s, a, t + 5 * 3600, none);
	exec_sql("UPDATE hosts SET records_lost = 7 WHERE host_id = '" HOST_B
		 "'");
	scan(s, a, t + 6 * 3600, (const int64_t[TWL_ALERT_KINDS]){ 0, 0, 1 });

	/*
	 * 40 quiet days later host A uses its features again: new again,
	 * its process names too; the state of the quiet time was pruned.
	 * The hosts seen in 30 days fell to none (readiness got better):
	 * A breaks again, worse.
	 */
	scan(s, a, t + 40 * DAY, none);
	r = report(HOST_A, "a0000000000000000000000000000002");
	ingest_at(s, HOST_A, r, t + 40 * DAY + 10);
	json_decref(r);
	{
		int64_t want[TWL_ALERT_KINDS] = { a_uses + comm_uses(), 0, 0, 0,
						  breaking };

		scan(s, a, t + 40 * DAY + 20, want);
	}
	assert_int_equal(q("SELECT count(*) FROM alert_state"
			   " WHERE key LIKE 'use|%|host|" HOST_B "'"),
			 0);

	twl_alerts_free(a);
	twl_store_close(s);
}

/* Move every time of report @j (and below) @d seconds later. */
static void shift(json_t *j, int64_t d)
{
	static const char *const times[] = { "time", "first_seen", "last_seen",
					     "sent_time" };
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v) shift(v, d);
		return;
	}
	json_object_foreach(j, k, v)
	{
		for (i = 0; i < 4; i++)
			if (!strcmp(k, times[i]) && json_is_integer(v))
				json_integer_set(v, json_integer_value(v) + d);
		shift(v, d);
	}
}

static const struct twl_alerts_opts quiet_opts = { .new_days = 30,
						   .rate_per_min = 60,
						   .retry_base_s = 1,
						   .queue_max = 1024,
						   .deliver = { .timeout_s =
									1 } };

/*
 * A use is new when the last one is older than the quiet window, even
 * while its state is still kept (pruned a day after the window).
 */
static void test_quiet_window(void **state)
{
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	int64_t t = 1764735600, uses; /* the example's sent_time */
	json_t *r, *u;
	size_t i;

	(void)state;
	a = alerts_open(&s, &quiet_opts);
	r = report(HOST_A, "a0000000000000000000000000000001");
	ingest_at(s, HOST_A, r, t);
	json_decref(r);
	scan(s, a, t + 10, none);
	uses = host_uses(HOST_A) + comm_uses();

	/*
	 * 30 days and an hour later its counters grew: the state is kept,
	 * and each use with evidence that new is news
	 */
	r = report_x10(HOST_A, "a0000000000000000000000000000002");
	shift(r, 30 * DAY + 3600);
	ingest_at(s, HOST_A, r, t + 30 * DAY + 3600);
	json_decref(r);
	assert_true(q("SELECT count(*) FROM alert_state WHERE key LIKE"
		      " 'use|%'") >= uses);
	uses = qf("SELECT (SELECT count(*) FROM feature_host WHERE kinds & 27"
		  " AND last_used > %lld) + (SELECT count(*) FROM (SELECT"
		  " DISTINCT feature_id, comm FROM usage WHERE op <> 'read'"
		  " AND comm <> '' AND last_seen > %lld))",
		  (long long)(t + DAY), (long long)(t + DAY));
	assert_true(uses >= 4);
	scan(s, a, t + 30 * DAY + 3610,
	     (const int64_t[TWL_ALERT_KINDS]){ uses });
	/* an hour later, grown again: not news */
	r = report_x10(HOST_A, "a0000000000000000000000000000003");
	json_array_foreach(json_object_get(r, "usage"), i, u)
		json_object_set_new(
			u, "count",
			json_integer(10 * json_integer_value(json_object_get(
						  u, "count"))));
	shift(r, 30 * DAY + 7200);
	ingest_at(s, HOST_A, r, t + 30 * DAY + 7200);
	json_decref(r);
	scan(s, a, t + 30 * DAY + 7210, none);
	twl_alerts_free(a);
	twl_store_close(s);
}

/* The detector's state: the old value read, the new one kept (or the max). */
static void test_state(void **state)
{
	struct twl_alert_kv kv[2] = {
		{ .key = "k", .value = 10, .keep_max = true },
		{ .key = "m", .value = 10 }
	};
	struct twl_store *s = NULL;

	(void)state;
	assert_int_equal(twl_store_open(dbpath, &s), 0);
	assert_int_equal(twl_store_alert_swap(s, kv, 2, 1), 0);
	assert_false(kv[0].had);
	assert_false(kv[1].had);
	kv[0].value = kv[1].value = 5;
	assert_int_equal(twl_store_alert_swap(s, kv, 2, 2), 0);
	assert_true(kv[0].had && kv[0].old == 10);
	assert_true(kv[1].had && kv[1].old == 10);
	kv[0].value = kv[1].value = 7;
	assert_int_equal(twl_store_alert_swap(s, kv, 2, 3), 0);
	assert_int_equal(kv[0].old, 10); /* kept the max */
	assert_int_equal(kv[1].old, 5);
	/* pruned by the time last written; "scan" never */
	kv[0].key = "scan";
	assert_int_equal(twl_store_alert_swap(s, kv, 1, 1), 0);
	assert_int_equal(twl_store_alert_prune(s, 4), 0);
	assert_int_equal(q("SELECT count(*) FROM alert_state"), 1);
	assert_int_equal(
		q("SELECT count(*) FROM alert_state WHERE key = 'scan'"), 1);
	twl_store_close(s);
}

/*
 * The readiness step's pace: a scan with skip_readiness records no
 * target (and raises no readiness event), the next with it does; after
 * a scan with it that took 20 s the next one waits 10 times that, after
 * one under 10 s none.
 */
static void test_ready_pace(void **state)
{
	struct twl_detect_opts o = dopts;
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	json_t *r;

	(void)state;
	assert_int_equal(twl_detect_ready_next(1000, 21000), 21000 + 200000);
	assert_int_equal(twl_detect_ready_next(1000, 10999), 10999);
	assert_int_equal(twl_detect_ready_next(1000, 1000), 1000);
	a = alerts_open(&s, &test_opts);
	r = report(HOST_A, "a0000000000000000000000000000001");
	ingest_at(s, HOST_A, r, 100 * DAY);
	json_decref(r);
	o.skip_readiness = true;
	assert_int_equal(twl_alert_detect_scan(s, a, &o, 100 * DAY + 10), 0);
	assert_int_equal(
		q("SELECT count(*) FROM alert_state WHERE key LIKE 'ready|%'"),
		0);
	assert_true(q("SELECT count(*) FROM alert_state WHERE key = 'scan'") ==
		    1);
	o.skip_readiness = false;
	assert_int_equal(twl_alert_detect_scan(s, a, &o, 100 * DAY + 20), 0);
	assert_true(q("SELECT count(*) FROM alert_state WHERE key LIKE"
		      " 'ready|%'") >= 3);
	check_ready(a, 1);
	twl_alerts_free(a);
	twl_store_close(s);
}

/* kept_breaks: 7 for debian-12-6.12, none kept for any other target. */
static int kept_calls;
static int fake_kept(void *ctx, const char *target, int64_t *count)
{
	assert_ptr_equal(ctx, &kept_calls);
	kept_calls++;
	if (strcmp(target, "debian-12-6.12"))
		return -ENOENT;
	*count = 7;
	return 0;
}

/*
 * The readiness step takes a target's count from the kept answer when
 * there is one (7, more than the one host the store has: raised as
 * worse) and counts the others itself (one host breaking at most).
 */
static void test_ready_kept(void **state)
{
	struct twl_detect_opts o = dopts;
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	json_t *r;
	const int64_t worse[TWL_ALERT_KINDS] = { [TWL_ALERT_READINESS_WORSE] =
							 1 };

	(void)state;
	a = alerts_open(&s, &test_opts);
	r = report(HOST_A, "a0000000000000000000000000000001");
	ingest_at(s, HOST_A, r, 100 * DAY);
	json_decref(r);
	assert_int_equal(twl_alert_detect_scan(s, a, &o, 100 * DAY + 10), 0);
	check_ready(a, 1);
	o.kept_breaks = fake_kept;
	o.kept_ctx = &kept_calls;
	counts_scan(s, a, &o, 100 * DAY + 20, worse);
	assert_true(kept_calls >= 3);
	assert_int_equal(q("SELECT value FROM alert_state"
			   " WHERE key = 'ready|debian-12-6.12'"),
			 7);
	assert_true(q("SELECT max(value) FROM alert_state WHERE key LIKE"
		      " 'ready|%' AND key <> 'ready|debian-12-6.12'") <= 1);
	check_ready(a, 7);
	twl_alerts_free(a);
	twl_store_close(s);
}

/*
 * A workload marked migrated and seen writing the feature after the
 * status's date: raised once per status; set again with a later date
 * that its uses precede, nothing.
 */
static void test_reuse(void **state)
{
	int64_t t = 100 * DAY, want[TWL_ALERT_KINDS] = { 0 };
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	char sql[512];
	json_t *r;

	(void)state;
	a = alerts_open(&s, &test_opts);
	r = report(HOST_A, "a0000000000000000000000000000001");
	ingest_at(s, HOST_A, r, t);
	json_decref(r);
	scan(s, a, t + 10, none);
	/* the writer of one feature is marked migrated the day before */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO migration_status (feature_id, workload, status,"
		 " owner, date, author, updated) SELECT feature_id, comm,"
		 " 'migrated', 'sre', %lld, 'admin', %lld FROM usage WHERE"
		 " op = 'write' AND comm <> '' LIMIT 1",
		 (long long)(t - DAY), (long long)t);
	exec_sql(sql);
	assert_int_equal(q("SELECT count(*) FROM migration_status"), 1);
	want[TWL_ALERT_MIGRATED_USED_AGAIN] = 1;
	scan(s, a, t + 20, want);
	scan(s, a, t + 30, none);
	/* migrated again after its last use: no news */
	exec_sql("UPDATE migration_status SET date ="
		 " (SELECT max(last_seen) + 1 FROM usage)");
	scan(s, a, t + 40, none);
	twl_alerts_free(a);
	twl_store_close(s);
}

/* Raised by other code: deduplicated by key. */
static void test_raise(void **state)
{
	struct twl_alerts_opts o = { .new_days = 30,
				     .rate_per_min = 60,
				     .retry_base_s = 1,
				     .queue_max = 4,
				     .deliver = { .timeout_s = 1 } };
	struct twl_store *s = NULL;
	struct twl_alerts *a;
	json_t *d = json_pack("{s:s}", "feature", "memcg_v1.soft_limit"), *bad;

	(void)state;
	a = alerts_open(&s, &o);
	assert_int_equal(twl_alert_raise(a, "custom_kind", "k1", 5, d), 0);
	assert_int_equal(twl_alert_raise(a, "custom_kind", "k1", 6, d),
			 -EALREADY);
	assert_int_equal(twl_alert_raise(a, "custom_kind", "k2", 6, NULL), 0);
	bad = json_integer(1);
	assert_int_equal(twl_alert_raise(a, "custom_kind", "k3", 6, bad),
			 -EINVAL);
	json_decref(bad);
	assert_int_equal(twl_alert_raise(a, "", "k3", 6, NULL), -EINVAL);
	assert_int_equal(twl_alert_raise(a, "custom_kind", "k3", 6, d), 0);
	{
		struct counts c;

		counts(a, &c);
		assert_int_equal(c.n[TWL_ALERT_OTHER], 3);
	}
	json_decref(d);
	twl_alerts_free(a);
	twl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet_window, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ready_pace, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ready_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raise, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
