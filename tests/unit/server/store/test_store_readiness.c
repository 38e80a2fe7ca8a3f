// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (twl_read_readiness(): store/read_readiness.c over
 * each backend's queries) on a fleet stored through the ingest path from
 * validated wire documents, against the shipped targets
 * (schema/targets.json) and against targets made from Debian's real
 * linux-config-6.12 files, which kernel/fetch downloads (apt-get
 * download, never installed) into the kernel cache outside the
 * repository. Without them the test fails. Every test runs on SQLite and
 * on a database of the PostgreSQL fixture (pg_fixture.h's BOTH()), and
 * the two must give the same JSON text for the same reports.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "harness.h"
#include "pg_fixture.h"
#include "readiness_fleet.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"
#include "store/store.h"
#include "store/store_read.h"

#define NOW 1764732000LL

/* The store of the test being run, and its SQLite database's directory. */
static struct twl_store *store;
static char tmpdir[64];

/* Store @r (host @hid) through the ingest function of store @ctx. */
static void ingest(const char *hid, json_t *r, void *ctx)
{
	struct twl_verr err;

	if (twl_report_validate(r, &err))
		fail_msg("test report invalid: %s %s %s", err.code, err.field,
			 err.reason);
	assert_int_equal(twl_store_write_begin(ctx), 0);
	assert_int_equal(twl_store_ingest(ctx, hid, r, NOW), 0);
	assert_int_equal(twl_store_write_end(ctx, true), 0);
	json_decref(r);
}

/*
 * A new store of backend @b holding the fleet (readiness_fleet.h); on
 * PostgreSQL with ICU's en-US text order, which answers must not follow.
 */
static struct twl_store *open_fleet(enum backend b)
{
	char path[512];
	struct twl_store *s;

	if (b == POSTGRESQL) {
		pg_fixture_db_icu(path, sizeof(path), "en-US");
	} else {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/twl-readiness-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
		snprintf(path, sizeof(path), "%s/t.db", tmpdir);
	}
	assert_int_equal(twl_store_open(path, &s), 0);
	fleet_seed(NOW, ingest, s);
	return s;
}

static void close_fleet(struct twl_store *s, enum backend b)
{
	char cmd[128];

	twl_store_close(s);
	if (b == SQLITE) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		assert_int_equal(system(cmd), 0);
	}
}

/* The fleet in a store of the backend @state points to (BOTH()). */
static int setup(void **state)
{
	store = open_fleet(*(enum backend *)*state);
	return 0;
}

static int teardown(void **state)
{
	close_fleet(store, *(enum backend *)*state);
	return 0;
}

/* The shipped target @name. */
static json_t *shipped(const char *name)
{
	json_t *doc = twl_targets_shipped(), *t, *out = NULL;
	size_t i;

	assert_non_null(doc);
	json_array_foreach(json_object_get(doc, "targets"), i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")),
			    name))
			out = json_incref(t);
	}
	json_decref(doc);
	assert_non_null(out);
	return out;
}

/*
 * twl_read_readiness() of store @s for target @t, as the API asks it,
 * @base giving the page size, grouping, label filter and deadlines.
 */
static json_t *readiness_of(struct twl_store *s, const json_t *t,
			    const struct twl_readiness_query *base)
{
	json_t *plan = twl_target_plan(t), *ids = json_array(), *v, *out;
	struct twl_readiness_query q = *base;
	size_t i;

	assert_non_null(plan);
	q.since = NOW - 30 * 86400;
	json_array_foreach(json_object_get(plan, "removed"), i, v)
		json_array_append(ids, json_object_get(v, "id"));
	q.removed_json = json_dumps(ids, JSON_COMPACT);
	q.interfaces_json =
		json_dumps(json_object_get(plan, "interfaces"), JSON_COMPACT);
	assert_int_equal(twl_read_readiness(s, &q, &out), 0);
	free((char *)q.removed_json);
	free((char *)q.interfaces_json);
	json_decref(ids);
	json_decref(plan);
	return out;
}

/* twl_read_readiness() for target @t on the test's store. */
static json_t *readiness(const json_t *t, unsigned limit)
{
	struct twl_readiness_query q = { .limit = limit };

	return readiness_of(store, t, &q);
}

/* The fleet (readiness_fleet.h) on the Debian 6.12 target. */
static void test_debian_612(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 100);

	fleet_check_debian_612(doc);
	json_decref(doc);
	json_decref(t);
}

/* A page of one host still counts every host. */
static void test_limit_keeps_counts(void **state)
{
	json_t *t = shipped("debian-12-6.12"), *doc = readiness(t, 1);

	assert_int_equal(fleet_num(doc, "breaks", "count"), 6);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(doc, "breaks"), "hosts")),
			 1);
	json_decref(doc);
	json_decref(t);
}

/* A target that removes nothing of what the fleet uses: the measured
 * hosts are ready; kmsg-6 and kmsg-7 (whose warning no longer counts)
 * are not measured. */
static void test_nothing_removed(void **state)
{
	json_t *t = json_pack("{s:s, s:s, s:{s:b}}", "name", "old", "kernel",
			      "6.1", "config", "CONFIG_MEMCG_V1", 1);
	json_t *doc = readiness(t, 100);

	assert_int_equal(fleet_num(doc, "breaks", "count"), 0);
	assert_int_equal(fleet_num(doc, "ready", "count"), 7);
	assert_int_equal(fleet_num(doc, "not_measured", "count"), 2);
	json_decref(doc);
	json_decref(t);
}

/*
 * cpuset on a v1 hierarchy breaks only where CONFIG_CPUSETS_V1 is off:
 * upstream 6.11 has no such symbol (cpuset v1 is always built there), so
 * cset-13 is ready; upstream 6.15's default n removes it.
 */
/* Whether cset-13 breaks on shipped target @name (and by its interface). */
static bool cset_breaks(const char *name)
{
	json_t *t = shipped(name), *doc = readiness(t, 100);
	bool feature = fleet_feature(doc, FLEET_CPUSET_IFACE) != NULL;
	char buf[256];

	fleet_names(json_object_get(json_object_get(doc, "breaks"), "hosts"),
		    buf, sizeof(buf));
	assert_int_equal(feature, strstr(buf, "cset-13") != NULL);
	json_decref(doc);
	json_decref(t);
	return feature;
}

static void test_cpuset_interface(void **state)
{
	assert_false(cset_breaks("upstream-6.11-defaults"));
	assert_true(cset_breaks("upstream-6.15"));
}

/* Debian's real .config files give the shipped target's answer. */
static void test_real_debian_configs(void **state)
{
	static const char *const flavours[] = { "amd64_none_amd64",
						"amd64_none_cloud-amd64",
						"amd64_rt_amd64" };
	json_t *ship = shipped("debian-12-6.12"), *want = readiness(ship, 100);
	json_t *splan = twl_target_plan(ship);
	char err[256], *text;

	for (size_t i = 0; i < 3; i++) {
		json_t *t, *got, *plan;
		size_t len;

		text = debian_config(flavours[i], &len);
		assert_int_equal(twl_target_from_kconfig("debian-up", text, len,
							 NULL, "uploaded", &t,
							 err, sizeof(err)),
				 0);
		free(text);
		assert_string_equal(
			json_string_value(json_object_get(t, "kernel")),
			"6.12.118");
		plan = twl_target_plan(t);
		assert_true(json_equal(json_object_get(plan, "removed"),
				       json_object_get(splan, "removed")));
		got = readiness(t, 100);
		assert_true(json_equal(got, want));
		json_decref(got);
		json_decref(plan);
		json_decref(t);
	}
	json_decref(splan);
	json_decref(want);
	json_decref(ship);
}

/* ---- both backends, one answer ------------------------------------- */

/* A version 2 report of host @n at NOW, labelled team=@team (NULL: none). */
static json_t *report(int n, const char *hostname, const char *mode,
		      const char *team)
{
	char hid[65], bid[33];
	json_t *r;

	snprintf(hid, sizeof(hid), "%064x", n);
	snprintf(bid, sizeof(bid), "%032x", 0x100 + n);
	r = json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s,"
		      " s:s, s:i}, s:[], s:[], s:[], s:{}}",
		      "v", 2, "batch_id", bid, "seq", 1, "sent_time",
		      (json_int_t)NOW, "host", "host_id", hid, "hostname",
		      hostname, "boot_id", "b0", "kernel", "6.1.0-28-amd64",
		      "cgroup_mode", mode, "agent_version", "0.2.0",
		      "catalog_version", 1, "warnings", "unknown", "usage",
		      "health");
	if (team)
		json_object_set_new(json_object_get(r, "host"), "labels",
				    json_pack("{s:s}", "team", team));
	return r;
}

/* soft_limit used by @comm in @container (op @op, @count times). */
static void use(json_t *r, const char *comm, const char *container,
		const char *op, int count)
{
	char cg[64];

	snprintf(cg, sizeof(cg), "/c/%s", container[0] ? container : "host");
	json_array_append_new(
		json_object_get(r, "usage"),
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s,"
			  " s:i, s:i, s:i, s:i, s:I, s:I}",
			  "boot_id", "b0", "feature", FLEET_SOFT, "file",
			  "memory.soft_limit_in_bytes", "op", op, "use",
			  strcmp(op, "read") ? "configures" : "reads", "cgroup",
			  cg, "comm", comm, "uid", 0, "writer_cgroup", cg,
			  "container", container, "last_pid", 1, "count", count,
			  "failed", 0, "condition_met", 0, "first_seen",
			  (json_int_t)NOW - 100, "last_seen",
			  (json_int_t)NOW - 10));
}

/* Store @r into @s through its ingest function. */
static void put(struct twl_store *s, json_t *r)
{
	ingest(json_string_value(
		       json_object_get(json_object_get(r, "host"), "host_id")),
	       r, s);
}

/*
 * Beside the fleet, hosts labelled by team: pay-9 (payments, v1) whose
 * workloads tie (java in a container and outside it, Zed and alpha, whose
 * byte order is not a locale's) and read as well as write; srch-10
 * (search, v1) with a soft_limit census knob and runtimes; pay-11
 * (payments, v2); q-12 (search, hybrid, nothing measured). Migration
 * status of soft_limit as a whole and of java.
 */
static void add_teams(struct twl_store *s)
{
	struct twl_migration_status m = { .feature = FLEET_SOFT,
					  .workload = "",
					  .status = "migrating",
					  .owner = "team-a",
					  .author = "t",
					  .date = NOW - 86400,
					  .now = NOW };
	json_t *r = report(9, "pay-9", "v1", "payments");

	use(r, "java", "docker:abc", "write", 4);
	use(r, "java", "docker:abc", "read", 2);
	use(r, "java", "", "write", 6);
	use(r, "Zed", "", "write", 1);
	use(r, "alpha", "", "write", 1);
	put(s, r);
	r = report(10, "srch-10", "v1", "search");
	json_object_set_new(
		r, "census",
		json_pack("{s:I, s:[{s:s, s:s, s:[s, s]}], s:[{s:s, s:s, s:s,"
			  " s:s}], s:i, s:b, s:[{s:s, s:s}, {s:s, s:s}]}",
			  "time", (json_int_t)NOW - 5, "hierarchies", "kind",
			  "v1", "mount", "/sys/fs/cgroup/memory", "controllers",
			  "memory", "freezer", "knobs", "feature", FLEET_SOFT,
			  "file", "memory.soft_limit_in_bytes", "cgroup", "/a",
			  "value", "1073741824", "cgroups_walked", 3,
			  "truncated", 0, "runtimes", "name", "systemd",
			  "version", "252", "name", "containerd", "version",
			  "1.6"));
	put(s, r);
	put(s, report(11, "pay-11", "v2", "payments"));
	put(s, report(12, "q-12", "hybrid", "search"));
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
	m.workload = "java";
	m.status = "blocked";
	m.reason = "vendor agent";
	assert_int_equal(twl_store_migration_status_set(s, &m), 0);
}

/* Each answer's JSON text, the deadlines' after it, appended to @out. */
struct answers {
	char *a[16];
	size_t n;
};

static void ask(struct twl_store *s, const char *target,
		const struct twl_readiness_query *base, struct answers *o)
{
	json_t *t = shipped(target), *ship = twl_targets_shipped(), *doc;
	struct twl_readiness_query q = *base;

	assert_true(o->n + 2 <= sizeof(o->a) / sizeof(o->a[0]));
	q.deadlines = json_deep_copy(json_object_get(ship, "deadlines"));
	doc = readiness_of(s, t, &q);
	o->a[o->n++] = json_dumps(doc, JSON_COMPACT);
	o->a[o->n++] = json_dumps(q.deadlines, JSON_COMPACT);
	json_decref(q.deadlines);
	json_decref(doc);
	json_decref(ship);
	json_decref(t);
}

/* The questions, in order: pages, groups, label filters. */
static void ask_all(struct twl_store *s, struct answers *o)
{
	static const char *const deb = "debian-12-6.12";
	struct twl_readiness_query q = { .limit = 100 };

	ask(s, deb, &q, o);
	q.limit = 1;
	ask(s, deb, &q, o);
	q.limit = 100;
	q.group_label = "team";
	ask(s, deb, &q, o);
	q.limit = 2;
	ask(s, deb, &q, o);
	q.limit = 100;
	q.label_key = "team";
	q.label_value = "payments";
	ask(s, deb, &q, o);
	q.group_label = NULL;
	q.label_value = "search";
	ask(s, deb, &q, o);
	q.label_value = "nobody";
	ask(s, deb, &q, o);
}

/* A workload of @arr by @comm whose ops are @ops, or NULL. */
static json_t *workload(json_t *arr, const char *comm, const char *ops)
{
	json_t *w;
	size_t i;

	json_array_foreach(arr, i, w)
	{
		if (!strcmp(json_string_value(json_object_get(w, "comm")),
			    comm) &&
		    !strcmp(json_string_value(json_object_get(w, "ops")), ops))
			return w;
	}
	return NULL;
}

/* What the teams add, on the answer of the whole fleet grouped by team. */
static void check_teams(const char *text)
{
	json_t *doc = json_loads(text, 0, NULL), *f, *w;

	assert_non_null(doc);
	f = fleet_feature(doc, FLEET_SOFT);
	assert_non_null(f);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(f, "migration"), "status")),
			    "migrating");
	w = workload(json_object_get(f, "workloads"), "java", "read,write");
	assert_non_null(w);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(w, "migration"), "status")),
			    "blocked");
	assert_non_null(strstr(text, "\"comm\":\"Zed\""));
	assert_true(strstr(text, "\"comm\":\"Zed\"") <
		    strstr(text, "\"comm\":\"alpha\""));
	assert_non_null(strstr(text, "\"groups\":{\"label\":\"team\","));
	json_decref(doc);
}

/*
 * The fleet and the teams into a SQLite and a PostgreSQL store: every
 * answer is the same JSON text, member and list order and all.
 */
static void test_same_json(void **state)
{
	struct twl_store *sq = open_fleet(SQLITE), *pg = open_fleet(POSTGRESQL);
	struct answers a = { 0 }, b = { 0 };

	(void)state;
	add_teams(sq);
	add_teams(pg);
	ask_all(sq, &a);
	ask_all(pg, &b);
	assert_int_equal(a.n, b.n);
	check_teams(a.a[4]);
	for (size_t i = 0; i < a.n; i++) {
		pg_fixture_same(i, a.a[i], b.a[i]);
		free(a.a[i]);
		free(b.a[i]);
	}
	close_fleet(sq, SQLITE);
	close_fleet(pg, POSTGRESQL);
}

/* @t with the fleet, once per backend (pg_fixture.h's BOTH()). */
#define BOTH_FX(t)                                                          \
	{ #t "/sqlite", t, setup, teardown, &pg_fixture_backends[SQLITE] }, \
	{                                                                   \
#t "/postgresql", t, setup, teardown,                       \
			&pg_fixture_backends[POSTGRESQL]                    \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FX(test_debian_612),
		BOTH_FX(test_limit_keeps_counts),
		BOTH_FX(test_nothing_removed),
		BOTH_FX(test_cpuset_interface),
		BOTH_FX(test_real_debian_configs),
		cmocka_unit_test(test_same_json),
	};

	return cmocka_run_group_tests(tests, NULL, pg_fixture_drop_all);
}
