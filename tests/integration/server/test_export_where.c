// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's "where and who" and label grouping, end to end:
 * wire v2 reports posted through the real enrolment and ingest API of an
 * in-process server with real TLS (tests/unit/server harness), then the
 * export (GET /api/v1/export/linux-mm and `twilight-server export`) and
 * readiness read back. Workload rows name the process, where the writer
 * runs and the kind of cgroup it used, counted in hosts that never exceed
 * the feature's, sorted by hosts then uses; images, labels and cgroup
 * names are withheld unless a setting shows them, and the text says so;
 * readiness and the export group hosts by a label; the export states how
 * many hosts the distribution's next kernel takes the feature from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "api/export.h"
#include "harness.h"

#define SOFT "memcg_v1.soft_limit"
#define HOST(c) \
	c "000000000000000000000000000000000000000000000000000000000000000"
#define CTR(c) \
	c "123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f.slice"
#define IMAGE "registry.example/openjdk:21"

static struct fixture fx;

/* A usage[] entry: @comm in @wcg (@ct) wrote @cg (@kind) @count times. */
static json_t *usage(const char *comm, const char *wcg, const char *ct,
		     const char *cg, const char *kind, const char *op,
		     const char *image, int count)
{
	json_int_t now = (json_int_t)time(NULL);
	json_t *u = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:i,"
		" s:i, s:i, s:I, s:I}",
		"boot_id", "b0", "feature", SOFT, "file",
		"memory.soft_limit_in_bytes", "op", op, "use",
		twl_wire_use_of_op(op), "cgroup", cg, "target_kind", kind,
		"comm", comm, "uid", 0, "writer_cgroup", wcg, "container", ct,
		"count", count, "failed", 0, "condition_met", 0, "first_seen",
		now - 120, "last_seen", now - 60);

	assert_non_null(u);
	if (image)
		json_object_set_new(u, "image", json_string(image));
	return u;
}

/* runc of containerd.service setting the soft limit of pod container
 * @c: each container a key, and a row, of its own. */
static json_t *runc(const char *c, int count)
{
	char cg[256];

	snprintf(cg, sizeof(cg), POD "/cri-containerd-%s.scope", c);
	return usage("runc", "/system.slice/containerd.service",
		     "systemd:containerd.service", cg, "kubernetes", "write",
		     NULL, count);
}

/* java in docker container @c setting its own soft limit. */
static json_t *java(const char *id, int count)
{
	char cg[128], ct[96];

	snprintf(cg, sizeof(cg), "/system.slice/docker-%s.scope", id);
	snprintf(ct, sizeof(ct), "docker:%s", id);
	return usage("java", cg, ct, cg, "docker", "write", IMAGE, count);
}

/* Enrol @host_id and post a wire v2 report of @usage (stolen). */
static void post(const char *host_id, const char *name, const char *mode,
		 json_t *labels, json_t *usage_arr)
{
	static int seq;
	struct http_result res;
	char key[80], bid[33];
	json_t *r;
	char *body;

	enrol_host(&fx, host_id, key);
	snprintf(bid, sizeof(bid), "%032x", ++seq);
	r = json_pack("{s:i, s:s, s:i, s:I, s:{s:s, s:s, s:s, s:s, s:s, s:s,"
		      " s:i}, s:o, s:{}}",
		      "v", 2, "batch_id", bid, "seq", 1, "sent_time",
		      (json_int_t)time(NULL), "host", "host_id", host_id,
		      "hostname", name, "boot_id", "b0", "kernel",
		      "6.1.0-28-amd64", "cgroup_mode", mode, "agent_version",
		      "0.2.0", "catalog_version", 2, "usage", usage_arr,
		      "health");
	assert_non_null(r);
	if (labels)
		json_object_set_new(json_object_get(r, "host"), "labels",
				    labels);
	body = dump(r);
	http(&fx, "POST", "/api/v1/reports", key, body, strlen(body), NULL,
	     &res);
	if (res.status != 200)
		fail_msg("report rejected (%ld): %.*s", res.status,
			 (int)res.len, res.body);
	http_result_fini(&res);
	free(body);
	json_decref(r);
}

/*
 * web-a (team payments): runc 5 and 1 (two pods), java 7. web-b (team search): runc 3,
 * java 2. batch-c (no label): java 100, memtune 500 (one host, most
 * uses), and runc reading only. web-d: v2, nothing.
 */
static int setup(void **state)
{
	fixture_start(&fx, NULL);
	post(HOST("a"), "web-a.secret", "v1",
	     json_pack("{s:s}", "team", "payments"),
	     json_pack("[o, o, o]", runc(CTR("a"), 5), runc(CTR("b"), 1),
		       java(CTR("1"), 7)));
	post(HOST("b"), "web-b.secret", "v1",
	     json_pack("{s:s}", "team", "search"),
	     json_pack("[o, o]", runc(CTR("c"), 3), java(CTR("2"), 2)));
	post(HOST("c"), "batch-c.secret", "hybrid", NULL,
	     json_pack("[o, o, o]", java(CTR("3"), 100),
		       usage("memtune", "/system.slice/memtune.service",
			     "systemd:memtune.service", "/batch/job1", "other",
			     "write", NULL, 500),
		       usage("runc", "/system.slice/containerd.service",
			     "systemd:containerd.service", "", "root", "read",
			     NULL, 9000)));
	post(HOST("d"), "web-d.secret", "v2", NULL, json_array());
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(&fx);
	return 0;
}

/* GET @path as the admin: 200, the body (a new string), its JSON. */
static char *get(const char *path, json_t **js)
{
	struct http_result r;
	char *body;

	http(&fx, "GET", path, fx.admin, NULL, 0, NULL, &r);
	if (r.status != 200)
		fail_msg("GET %s: %ld %.*s", path, r.status, (int)r.len,
			 r.body);
	body = strndup(r.body, r.len);
	assert_non_null(body);
	if (js)
		*js = json_incref(r.json);
	http_result_fini(&r);
	return body;
}

/* @s with every run of spaces and newlines made one space. */
static char *flat(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n') {
			if (o == out || o[-1] != ' ')
				*o++ = ' ';
			continue;
		}
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* GET @path's body as the admin (200), flattened as flat() does. */
static char *get_flat(const char *path)
{
	char *raw = get(path, NULL), *text = flat(raw);

	free(raw);
	return text;
}

#define GETI(o, k) json_integer_value(json_object_get((o), (k)))
#define GETS(o, k) json_string_value(json_object_get((o), (k)))

/* The soft limit's feature object of an export in JSON. */
static json_t *soft_of(json_t *doc)
{
	json_t *f = json_array_get(json_object_get(doc, "features"), 0);

	assert_non_null(f);
	assert_string_equal(GETS(f, "id"), SOFT);
	return f;
}

static void expect_row(json_t *wl, size_t i, const char *process,
		       const char *place, const char *target, int hosts,
		       int uses)
{
	json_t *w = json_array_get(wl, i);

	if (!w || strcmp(GETS(w, "process"), process) ||
	    strcmp(GETS(w, "place"), place) ||
	    strcmp(GETS(w, "target"), target) || GETI(w, "hosts") != hosts ||
	    GETI(w, "uses") != uses)
		fail_msg("workload %zu: %s, expected %s %s %s %d %d", i,
			 w ? json_dumps(w, JSON_COMPACT) : "none", process,
			 place, target, hosts, uses);
}

static void test_workload_rows(void **state)
{
	json_t *doc, *f, *wl, *w;
	char *body;
	size_t i;

	body = get("/api/v1/export/linux-mm?format=json&feature=" SOFT, &doc);
	f = soft_of(doc);
	assert_int_equal(GETI(f, "hosts_using"), 3);
	wl = json_object_get(f, "workloads");
	/* by hosts, then uses: memtune's 500 uses on one host come last;
	 * runc's two pods on web-a are one host; its reads on batch-c make
	 * no row and no host */
	expect_row(wl, 0, "java", "docker", "docker", 3, 109);
	expect_row(wl, 1, "runc", "systemd_unit", "kubernetes", 2, 9);
	expect_row(wl, 2, "memtune", "systemd_unit", "other", 1, 500);
	assert_int_equal(json_array_size(wl), 3);
	json_array_foreach(wl, i, w)
	{
		assert_true(GETI(w, "hosts") <= GETI(f, "hosts_using"));
		/* no names and no image by default */
		assert_string_equal(GETS(w, "place_name"), "");
		assert_string_equal(GETS(w, "image"), "");
	}
	assert_true(json_is_true(
		json_object_get(json_array_get(wl, 0), "has_image")));
	assert_null(strstr(body, "openjdk"));
	assert_null(strstr(body, "secret"));
	assert_null(strstr(body, "containerd.service"));
	json_decref(doc);
	free(body);
}

static void test_text_default(void **state)
{
	char *raw = get("/api/v1/export/linux-mm?feature=" SOFT, NULL);
	char *text = flat(raw);

	assert_non_null(strstr(text, "- java in a docker container (image"
				     " withheld), on docker container cgroups:"
				     " 3 hosts, 109 uses"));
	assert_non_null(strstr(text, "- runc in a systemd unit, on kubernetes"
				     " pod cgroups: 2 hosts, 9 uses"));
	assert_non_null(strstr(text, "- memtune in a systemd unit, on other"
				     " cgroups: 1 host, 500 uses"));
	assert_true(strstr(text, "- java") < strstr(text, "- runc"));
	assert_true(strstr(text, "- runc") < strstr(text, "- memtune"));
	/* Debian 12 -> 6.12 takes the soft limit from the three v1 hosts */
	assert_non_null(strstr(text, "3 of our hosts will lose this with our"
				     " distribution's next kernel."));
	assert_non_null(strstr(text, "3 of our hosts will lose a cgroup v1"
				     " interface they use with our"
				     " distribution's next kernel"
				     " (debian-12-6.12, Linux 6.12;"));
	assert_non_null(strstr(text, "Withheld from this report: host names"
				     " (export-show-hosts), cgroup names"
				     " (export-show-cgroups), container images"
				     " (export-show-images), host labels"
				     " (export-show-labels), teams"
				     " (export-show-teams), values written"
				     " (export-show-values)."));
	assert_null(strstr(text, "openjdk"));
	assert_null(strstr(text, "payments"));
	free(text);
	free(raw);
}

static void test_show_more(void **state)
{
	json_t *doc, *wl;
	char *raw, *text;

	raw = get("/api/v1/export/linux-mm?feature=" SOFT
		  "&images=show&cgroups=full",
		  NULL);
	text = flat(raw);
	assert_non_null(strstr(text, "image " IMAGE "), on docker container"
				     " cgroups: 1 host, 100 uses"));
	assert_non_null(strstr(text, "- runc in a systemd unit"
				     " (containerd.service), on kubernetes pod"
				     " cgroups: 2 hosts, 9 uses"));
	assert_non_null(strstr(text, "Shown by the sender's choice: cgroup"
				     " names (export-show-cgroups), container"
				     " images (export-show-images)."));
	free(text);
	free(raw);
	/* images alone: the three hosts' java is one workload again */
	free(get("/api/v1/export/linux-mm?format=json&images=show&feature=" SOFT,
		 &doc));
	wl = json_object_get(soft_of(doc), "workloads");
	expect_row(wl, 0, "java", "docker", "docker", 3, 109);
	assert_string_equal(GETS(json_array_get(wl, 0), "image"), IMAGE);
	json_decref(doc);
}

static void test_export_by_label(void **state)
{
	json_t *doc, *g;
	char *raw, *text;

	/* grouped but labels withheld: nothing of them leaves */
	raw = get("/api/v1/export/linux-mm?feature=" SOFT "&group=label:team",
		  NULL);
	assert_null(strstr(raw, "payments"));
	assert_null(strstr(raw, "Hosts using it by"));
	free(raw);
	text = get_flat("/api/v1/export/linux-mm?feature=" SOFT
			"&group=label:team&labels=show");
	assert_non_null(strstr(text, "Hosts using it by team: payments 1,"
				     " search 1, without the label 1"));
	assert_non_null(strstr(text, "host labels (export-show-labels)."));
	free(text);
	free(get("/api/v1/export/linux-mm?format=json&feature=" SOFT
		 "&group=label:team&labels=show",
		 &doc));
	g = json_object_get(json_object_get(soft_of(doc), "by_label"),
			    "groups");
	assert_int_equal(json_array_size(g), 3);
	assert_true(
		json_is_null(json_object_get(json_array_get(g, 2), "value")));
	json_decref(doc);
}

static void expect_group(json_t *values, size_t i, const char *value, int hosts,
			 int breaks, int ready, int unmeasured)
{
	json_t *g = json_array_get(values, i);
	const char *v = GETS(g, "value");

	if (!g || (value ? !v || strcmp(v, value) : v != NULL) ||
	    GETI(g, "hosts") != hosts || GETI(g, "breaks") != breaks ||
	    GETI(g, "ready") != ready || GETI(g, "not_measured") != unmeasured)
		fail_msg("group %zu: %s", i,
			 g ? json_dumps(g, JSON_COMPACT) : "none");
}

static void test_readiness_by_label(void **state)
{
	struct http_result r;
	json_t *doc, *groups;

	free(get("/api/v1/readiness?target=debian-12-6.12&group=label:team",
		 &doc));
	groups = json_object_get(doc, "groups");
	assert_string_equal(GETS(groups, "label"), "team");
	groups = json_object_get(groups, "values");
	assert_int_equal(json_array_size(groups), 3);
	/* without the label: batch-c breaks, web-d (v2) is ready */
	expect_group(groups, 0, NULL, 2, 1, 1, 0);
	expect_group(groups, 1, "payments", 1, 1, 0, 0);
	expect_group(groups, 2, "search", 1, 1, 0, 0);
	assert_int_equal(GETI(json_object_get(doc, "breaks"), "count"), 3);
	json_decref(doc);
	free(get("/api/v1/readiness?target=debian-12-6.12", &doc));
	assert_null(json_object_get(doc, "groups"));
	json_decref(doc);
	http(&fx, "GET", "/api/v1/readiness?target=debian-12-6.12&group=team",
	     fx.admin, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(GETS(r.json, "field"), "group");
	http_result_fini(&r);
	http(&fx, "GET", "/api/v1/export/linux-mm?group=label:Team", fx.admin,
	     NULL, 0, NULL, &r);
	assert_int_equal(r.status, 400);
	http_result_fini(&r);
}

/*
 * label=team=payments counts web-a alone: the fleet, the hosts, workloads,
 * uses and the readiness line are its own; the text says which part of the
 * fleet it counts, naming the label only when labels are shown.
 */
static void test_export_label_filter(void **state)
{
	struct http_result r;
	json_t *doc, *f, *fleet;
	char *text;

	free(get("/api/v1/export/linux-mm?format=json&feature=" SOFT
		 "&label=team%3Dpayments&labels=show",
		 &doc));
	assert_string_equal(GETS(doc, "label"), "team=payments");
	fleet = json_object_get(doc, "fleet");
	assert_int_equal(GETI(fleet, "hosts"), 1);
	assert_int_equal(GETI(fleet, "hosts_v1"), 1);
	assert_int_equal(GETI(fleet, "hosts_hybrid"), 0);
	assert_int_equal(GETI(fleet, "hosts_v2"), 0);
	f = soft_of(doc);
	assert_int_equal(GETI(f, "hosts_using"), 1);
	assert_int_equal(GETI(f, "uses"), 13);
	assert_int_equal(json_array_size(json_object_get(f, "workloads")), 2);
	expect_row(json_object_get(f, "workloads"), 0, "java", "docker",
		   "docker", 1, 7);
	expect_row(json_object_get(f, "workloads"), 1, "runc", "systemd_unit",
		   "kubernetes", 1, 6);
	assert_int_equal(GETI(json_object_get(f, "readiness"), "hosts"), 1);
	json_decref(doc);

	text = get_flat("/api/v1/export/linux-mm?feature=" SOFT
			"&label=team%3Dpayments&labels=show");
	assert_non_null(strstr(text,
			       "Only a part of our fleet is counted"
			       " here: the hosts labelled team=payments."));
	assert_non_null(strstr(text, "Fleet: 1 hosts reporting"));
	assert_non_null(strstr(text, "1 of our hosts will lose"));
	free(text);
	/* labels withheld (the default): the filter's label is too */
	text = get_flat("/api/v1/export/linux-mm?feature=" SOFT
			"&label=team%3Dpayments");
	assert_non_null(strstr(text, "the hosts carrying one operator label"
				     " (withheld)."));
	assert_null(strstr(text, "payments"));
	free(text);
	/* a label no host carries: nothing counted, nothing fails */
	free(get("/api/v1/export/linux-mm?format=json&label=team%3Dnone",
		 &doc));
	assert_int_equal(GETI(json_object_get(doc, "fleet"), "hosts"), 0);
	json_decref(doc);
	http(&fx, "GET", "/api/v1/export/linux-mm?label=team", fx.admin, NULL,
	     0, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(GETS(r.json, "field"), "label");
	http_result_fini(&r);
}

/* `twilight-server export` with the settings of the data directory's
 * configuration file. */
static char *cli_export(const char *conf)
{
	char path[512], out[512],
		*argv[] = { "export", "--data-dir", fx.dir, "--feature",
			    SOFT,     "--output",   out };
	char *text = NULL;

	snprintf(path, sizeof(path), "%s/twilight-server.conf", fx.dir);
	snprintf(out, sizeof(out), "%s/export.txt", fx.dir);
	assert_int_equal(twl_write_file_atomic(path, conf, strlen(conf), 0600),
			 0);
	assert_int_equal(twl_export_cli(7, argv), 0);
	assert_int_equal(twl_read_file(out, 1 << 20, &text, NULL), 0);
	return text;
}

static void test_cli_settings(void **state)
{
	char *raw = cli_export(""), *text = flat(raw);

	assert_null(strstr(text, IMAGE));
	assert_non_null(strstr(text, "(image withheld)"));
	free(text);
	free(raw);
	raw = cli_export("export-show-images = true\n"
			 "export-show-labels = true\n"
			 "export-group-label = team\n"
			 "export-readiness-target = upstream-6.15\n");
	text = flat(raw);
	assert_non_null(strstr(text, "java in a docker container (image " IMAGE
				     "), on docker container cgroups: 3 hosts,"
				     " 109 uses"));
	assert_non_null(strstr(text, "Hosts using it by team: payments 1,"));
	assert_non_null(strstr(text, "Shown by the sender's choice: container"
				     " images (export-show-images), host labels"
				     " (export-show-labels)."));
	/* the target chosen: upstream 6.15 takes the soft limit too */
	assert_non_null(strstr(text, "3 of our hosts will lose a cgroup v1"
				     " interface they use with our"
				     " distribution's next kernel"
				     " (upstream-6.15, Linux 6.15;"));
	assert_null(strstr(text, "debian-12-6.12"));
	free(text);
	free(raw);
	raw = cli_export("export-readiness-target =\n");
	assert_null(strstr(raw, "next kernel"));
	free(raw);
}

/* `twilight-server export --label`: the API's label filter. */
static void test_cli_label(void **state)
{
	char path[512], out[512],
		*argv[] = { "export",	   "--data-dir",   fx.dir, "--feature",
			    SOFT,	   "--output",	   out,	   "--label",
			    "team=search", "--show-labels" };
	char *raw = NULL, *text;

	snprintf(path, sizeof(path), "%s/twilight-server.conf", fx.dir);
	snprintf(out, sizeof(out), "%s/export.txt", fx.dir);
	assert_int_equal(twl_write_file_atomic(path, "", 0, 0600), 0);
	assert_int_equal(twl_export_cli(10, argv), 0);
	assert_int_equal(twl_read_file(out, 1 << 20, &raw, NULL), 0);
	text = flat(raw);
	assert_non_null(strstr(text, "the hosts labelled team=search."));
	assert_non_null(strstr(text, "Fleet: 1 hosts reporting"));
	free(text);
	free(raw);
	argv[8] = "team";
	assert_int_equal(twl_export_cli(10, argv), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_rows),
		cmocka_unit_test(test_text_default),
		cmocka_unit_test(test_show_more),
		cmocka_unit_test(test_export_by_label),
		cmocka_unit_test(test_readiness_by_label),
		cmocka_unit_test(test_cli_settings),
		cmocka_unit_test(test_export_label_filter),
		cmocka_unit_test(test_cli_label),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
