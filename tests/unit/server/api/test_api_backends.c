// SPDX-License-Identifier: GPL-2.0
/*
 * The read API answers the same on both store backends: two in-process
 * servers with real TLS, one on SQLite and one on a database of the
 * PostgreSQL fixture, get the same reports through POST /api/v1/reports
 * (the mixed fleet of readiness_fleet.h and hosts sending the full wire
 * example; the fleet's hosts labelled by team), and the summary, host
 * lists, one host, fleet health, unknown texts, feature detail, the
 * linux-mm export (JSON, text and CSV), the fleet metrics and upgrade
 * readiness must then answer the same, but for the members that hold
 * the time of the answer itself and the server's own certificate, and
 * for what follows the time each server received a report or enrolled a
 * host: a host's first and last seen (and an unknown text's), and so the
 * order of host lists, and its keys' last enrolment
 * (align_receive_times()). The order itself is compared byte for byte
 * in test_store_read.c's test_same_json and test_same_export and
 * test_store_readiness.c's test_same_json, on stores given the same
 * times.
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

#include "api/export.h"
#include "harness.h"
#include "pg_fixture.h"
#include "store/store.h"
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

/*
 * A host of the readiness fleet, labelled team=payments (odd host
 * numbers) or team=search (even ones), posted to both.
 */
static void post_fleet(const char *hid, json_t *r, void *ctx)
{
	bool odd = (hid[strlen(hid) - 1] - '0') % 2;

	json_object_set_new(json_object_get(r, "host"), "labels",
			    json_pack("{s:s}", "team",
				      odd ? "payments" : "search"));
	post_both(hid, r, ctx);
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
	fleet_seed(now, post_fleet, NULL);
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

static int by_host_id(const void *x, const void *y)
{
	const char *a = json_string_value(
		json_object_get(*(json_t *const *)x, "host_id"));
	const char *b = json_string_value(
		json_object_get(*(json_t *const *)y, "host_id"));

	return strcmp(a ? a : "", b ? b : "");
}

/* Every array of hosts in @j in host id order (in place). */
static void sort_hosts(json_t *j)
{
	json_t *v, *items[256];
	const char *k;
	size_t i, n = json_array_size(j);

	if (json_is_object(j)) {
		json_object_foreach(j, k, v) sort_hosts(v);
		return;
	}
	if (!json_is_array(j) || !n || n > 256 ||
	    !json_object_get(json_array_get(j, 0), "host_id"))
		return;
	for (i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(j, i));
	qsort(items, n, sizeof(items[0]), by_host_id);
	json_array_clear(j);
	for (i = 0; i < n; i++)
		json_array_append_new(j, items[i]);
}

/* Where @b's @key is @a's or at most the seeding's minute later, @a's. */
static void align_time(json_t *a, json_t *b, const char *key)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
	json_int_t d = json_integer_value(y) - json_integer_value(x);

	if (json_is_integer(x) && json_is_integer(y) && d >= 0 && d <= 60)
		json_object_set(b, key, x);
}

/*
 * A host's first_seen and last_seen are the times each server received
 * its report (so is an unknown text's last_seen: the latest report that
 * carried it), and its keys' last_enrolled the time each enrolled it:
 * the PostgreSQL server's may be the seconds between the two posts later.
 * Where @b's differ from @a's by at most the seeding's minute, @b takes
 * @a's; any other difference stays to be found. The host lists, ordered
 * by those times, are put in host id order first.
 */
static void align_receive_times(json_t *a, json_t *b)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(a) && json_is_object(b)) {
		if (json_object_get(a, "host_id") ||
		    json_object_get(a, "text")) {
			align_time(a, b, "first_seen");
			align_time(a, b, "last_seen");
		}
		align_time(a, b, "last_enrolled");
		json_object_foreach(a, k, v)
			align_receive_times(v, json_object_get(b, k));
	} else if (json_is_array(a) && json_is_array(b)) {
		json_array_foreach(a, i, v)
			align_receive_times(v, json_array_get(b, i));
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
	sort_hosts(r[SQLITE].json);
	sort_hosts(r[POSTGRESQL].json);
	align_receive_times(r[SQLITE].json, r[POSTGRESQL].json);
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

static void test_fleet_reads(void **state)
{
	char path[160], hid[65];

	same_json("/api/v1/summary");
	same_json("/api/v1/hosts?limit=100");
	same_json("/api/v1/hosts?feature=" FLEET_SOFT "&limit=100");
	same_json("/api/v1/hosts?cgroup_mode=v1&kernel=6.1*&limit=100");
	same_json("/api/v1/health?limit=100");
	same_json("/api/v1/unknown?limit=100");
	host_id(1, hid);
	snprintf(path, sizeof(path), "/api/v1/hosts/%s", hid);
	same_json(path);
	snprintf(path, sizeof(path), "/api/v1/hosts/%064x", 1);
	same_json(path);
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

/*
 * Fail unless @path answers the same bytes on both servers. The text's
 * date is the day of the answer: when a day ended between the two, the
 * PostgreSQL server's is compared with a SQLite answer made after it.
 */
static void same_body(const char *path)
{
	const char *const tok[2] = { fx[SQLITE].viewer, fx[POSTGRESQL].viewer };
	struct http_result r[2], again;
	bool same;

	get_both(path, tok, r);
	same = r[SQLITE].len == r[POSTGRESQL].len &&
	       !memcmp(r[SQLITE].body, r[POSTGRESQL].body, r[SQLITE].len);
	if (!same) {
		http(&fx[SQLITE], "GET", path, tok[SQLITE], NULL, 0, NULL,
		     &again);
		same = again.len == r[POSTGRESQL].len &&
		       !memcmp(again.body, r[POSTGRESQL].body, again.len);
		http_result_fini(&again);
	}
	if (!same)
		fail_msg("%s answers differently on the two backends:\n"
			 "sqlite:\n%.*s\npostgresql:\n%.*s",
			 path, (int)r[SQLITE].len, r[SQLITE].body,
			 (int)r[POSTGRESQL].len, r[POSTGRESQL].body);
	http_result_fini(&r[0]);
	http_result_fini(&r[1]);
}

/*
 * The export of the fleet, as the API gives it: its data (JSON) and its
 * renderings, with every name shown and grouped by a label, and of one
 * feature over a day; and the mail to linux-mm.
 */
static void test_export(void **state)
{
	static const char *const q[] = {
		"",
		"?hosts=show&cgroups=full&images=show&labels=show&group=label:env",
		"?feature=" FLEET_SOFT "&days=1&hosts=show",
	};
	static const char *const fmt[] = { "json", "text", "csv" };
	struct http_result r;
	char path[256];

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		for (size_t k = 0; k < sizeof(fmt) / sizeof(fmt[0]); k++) {
			snprintf(path, sizeof(path),
				 "/api/v1/export/linux-mm%s%sformat=%s", q[i],
				 q[i][0] ? "&" : "?", fmt[k]);
			if (k)
				same_body(path);
			else
				same_json(path);
		}
	/* what was compared is the fleet's use */
	http(&fx[POSTGRESQL], "GET",
	     "/api/v1/export/linux-mm?format=json&feature=" FLEET_SOFT,
	     fx[POSTGRESQL].viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(
		json_array_size(json_object_get(
			json_array_get(json_object_get(r.json, "features"), 0),
			"workloads")) > 0);
	http_result_fini(&r);
	/* the mail's body (its .eml's Date has the answer's second) */
	same_body("/api/v1/export/linux-mm/messages?list=linux-mm@kvack.org"
		  "&part=body");
}

/*
 * `twilight-server export --format json` of backend @b's store (SQLite:
 * the server's data directory; PostgreSQL: --db, its URI): its exit
 * status, and the export in *@doc when 0.
 */
static int cli_export(enum backend b, json_t **doc)
{
	char out[300], dir[300];
	char *argv[] = { "export",   "--data-dir", dir,	   "--format", "json",
			 "--output", out,	   "--db", pg_uri };
	int rc;

	snprintf(dir, sizeof(dir), "%s", fx[b].dir);
	snprintf(out, sizeof(out), "%s/export.json", fx[b].dir);
	rc = twl_export_cli(b == POSTGRESQL ? 9 : 7, argv);
	*doc = rc ? NULL : json_load_file(out, 0, NULL);
	assert_true(rc || *doc);
	return rc;
}

/* `twilight-server export` on a PostgreSQL store: the same export as on SQLite. */
static void test_export_cli(void **state)
{
	json_t *doc[2];

	assert_int_equal(cli_export(POSTGRESQL, &doc[POSTGRESQL]), 0);
	assert_int_equal(cli_export(SQLITE, &doc[SQLITE]), 0);
	for (int b = 0; b < 2; b++)
		drop_answer_times(doc[b]);
	if (!json_equal(doc[SQLITE], doc[POSTGRESQL])) {
		char *a = dump(doc[SQLITE]), *p = dump(doc[POSTGRESQL]);

		fprintf(stderr, "sqlite:     %s\npostgresql: %s\n", a, p);
		free(a);
		free(p);
		fail_msg("the export's command answers differently");
	}
	assert_true(json_array_size(
			    json_object_get(doc[POSTGRESQL], "features")) > 1);
	json_decref(doc[SQLITE]);
	json_decref(doc[POSTGRESQL]);
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

/* POST migration status @body as the admin of both servers. */
static void status_both(const char *body)
{
	struct http_result r;

	for (int b = 0; b < 2; b++) {
		http(&fx[b], "POST", "/api/v1/migration-status", fx[b].admin,
		     body, strlen(body), NULL, &r);
		if (r.status != 200)
			fail_msg("migration status on %s: %ld %.*s",
				 b == SQLITE ? "sqlite" : "postgresql",
				 r.status, (int)r.len, r.body);
		http_result_fini(&r);
	}
}

/*
 * Upgrade readiness of the shipped Debian 6.12 target (breaking by
 * workload, with migration statuses), a page of one host, grouped by
 * team, and of one team.
 */
static void test_readiness(void **state)
{
	static const char *const q[] = {
		"limit=100",
		"limit=1",
		"group=label:team&limit=100",
		"label=team=payments&group=label:team&limit=100",
		"label=team=search&limit=100",
	};
	struct http_result r;
	char path[160];

	status_both("{\"feature\":\"" FLEET_SOFT "\",\"status\":"
		    "\"migrating\",\"owner\":\"team-payments\","
		    "\"date\":\"2026-11-02\"}");
	status_both("{\"feature\":\"" FLEET_SOFT "\",\"workload\":\"java\","
		    "\"status\":\"blocked\",\"reason\":\"vendor agent\","
		    "\"owner\":\"team-payments\",\"date\":\"2026-11-02\"}");
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		snprintf(path, sizeof(path),
			 "/api/v1/readiness?target=debian-12-6.12&%s", q[i]);
		same_json(path);
	}
	/*
	 * what was compared: hosts breaking, the statuses, and the groups
	 * of both teams and of the unlabelled (full.json's hosts)
	 */
	http(&fx[SQLITE], "GET",
	     "/api/v1/readiness?target=debian-12-6.12&group=label:team",
	     fx[SQLITE].viewer, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(fleet_num(r.json, "breaks", "count") > 0);
	assert_non_null(strstr(r.body, "\"vendor agent\""));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(r.json, "groups"), "values")),
			 3);
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_reads),
		cmocka_unit_test(test_feature_reads),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_export_cli),
		cmocka_unit_test(test_fleet_metrics),
		cmocka_unit_test(test_readiness),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
