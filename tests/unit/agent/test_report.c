// SPDX-License-Identifier: GPL-2.0
/*
 * agent/report.c: one batch being collected (warnings, unknown
 * deprecations, usage, census), its wire document (always a valid report
 * for the shared validator), the caps that end a batch instead of
 * dropping records, text sanitising, and splitting a document in two for
 * HTTP 413 (halves stay valid reports, ids derived, nothing lost).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "agent_test.h"
#include "report.h"

static const struct twl_identity test_id = {
	.host_id =
		"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
	.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
	.hostname = "test-host",
	.kernel = "6.1.0-test",
	.cgroup_mode = "v1",
};

static void make_rec(struct twl_kmsg_record *rec, const char *text,
		     uint64_t seq)
{
	memset(rec, 0, sizeof(*rec));
	rec->format = TWL_FMT_KMSG;
	rec->level = 4;
	rec->facility = 0;
	rec->has_seq = true;
	rec->seq = seq;
	rec->mono_us = 1000 + seq;
	rec->flag = '-';
	rec->text_len = strlen(text);
	memcpy(rec->text, text, rec->text_len + 1);
}

/* A catalog feature that warns, with the index of one of its messages. */
static const struct twl_feature *warning_feature(size_t *msg)
{
	for (size_t i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		if (f->warns && f->n_messages) {
			*msg = 0;
			return f;
		}
	}
	fail_msg("the catalog has no feature with a warning");
	return NULL;
}

/* The document for @r; it must pass the shared validator. */
static json_t *doc_of(struct twl_report *r, uint64_t seq, json_t *health)
{
	struct twl_report_meta meta = {
		.id = &test_id,
		.seq = seq,
		.batch_id = "0123456789abcdef0123456789abcdef",
		.sent_time = 1764732000
	};
	struct twl_verr err;
	json_t *doc = twl_report_to_json(r, &meta, health);

	assert_non_null(doc);
	if (twl_report_validate(doc, &err))
		fail_msg("report.c built an invalid report: %s at %s: %s",
			 err.code, err.field, err.reason);
	return doc;
}

/* This boot's record from /dev/kmsg at Unix time @t (the origin its form says). */
static const struct twl_report_rec *at(int64_t t)
{
	static struct twl_report_rec a;

	memset(&a, 0, sizeof(a));
	a.origin = "kmsg";
	a.time = t;
	return &a;
}

static const char *str_at(json_t *obj, const char *k)
{
	return json_string_value(json_object_get(obj, k));
}

static long long int_at(json_t *obj, const char *k)
{
	return (long long)json_integer_value(json_object_get(obj, k));
}

/* A warning keeps the record's numbers; text and fields become valid UTF-8. */
static void test_add_warning(void **state)
{
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	struct twl_match m;
	size_t msg;
	json_t *doc, *w, *fields;

	assert_non_null(r);
	memset(&m, 0, sizeof(m));
	m.feature = warning_feature(&msg);
	m.message = msg;
	m.n_fields = 2;
	strcpy(m.fields[0].name, "comm");
	strcpy(m.fields[0].value, "bad\xff"
				  "byte");
	strcpy(m.fields[1].name, "pid");
	strcpy(m.fields[1].value, "42");
	make_rec(&rec, "text with \xc3\x28 broken UTF-8", 7);
	rec.level = 3;
	assert_int_equal(twl_report_add_warning(r, &rec, &m, at(1764731000)),
			 0);
	assert_int_equal(twl_report_count(r), 1);

	doc = doc_of(r, 1, NULL);
	w = json_array_get(json_object_get(doc, "warnings"), 0);
	assert_string_equal(str_at(w, "feature"), m.feature->id);
	assert_string_equal(str_at(w, "text"), "text with ?( broken UTF-8");
	assert_int_equal(int_at(w, "kmsg_seq"), 7);
	assert_int_equal(int_at(w, "mono_us"), 1007);
	assert_int_equal(int_at(w, "time"), 1764731000);
	assert_int_equal(int_at(w, "level"), 3);
	assert_string_equal(str_at(w, "origin"), "kmsg");
	fields = json_object_get(w, "fields");
	assert_int_equal(json_object_size(fields), 2);
	assert_string_equal(str_at(fields, "comm"), "bad?byte");
	assert_string_equal(str_at(fields, "pid"), "42");
	/* The record's boot is this one (wire v2). */
	assert_string_equal(str_at(w, "boot_id"), test_id.boot_id);
	assert_string_equal(str_at(w, "kernel"), test_id.kernel);
	/* The document says who sent it, in which version. */
	assert_int_equal(int_at(doc, "v"), TWL_WIRE_VERSION);
	assert_null(json_object_get(json_object_get(doc, "host"), "labels"));
	assert_string_equal(str_at(json_object_get(doc, "host"),
				   "agent_version"),
			    TWL_AGENT_VERSION);
	assert_string_equal(str_at(json_object_get(doc, "host"), "host_id"),
			    test_id.host_id);
	json_decref(doc);
	twl_report_free(r);
}

/*
 * host.labels: the identity's labels as an object, a config without
 * labels sends none, and the valid items only if any slipped past the
 * config check.
 */
static void test_labels(void **state)
{
	struct twl_labels labels = {
		.item = { "team=payments", "env=prod", "zone=eu-west-1a" },
		.n = 3,
	};
	struct twl_identity id = test_id;
	struct twl_report_meta meta = {
		.id = &id,
		.seq = 1,
		.batch_id = "0123456789abcdef0123456789abcdef",
		.sent_time = 1764732000,
	};
	struct twl_report *r = twl_report_new();
	struct twl_verr err;
	json_t *doc, *l;

	(void)state;
	assert_non_null(r);
	id.labels = &labels;
	doc = twl_report_to_json(r, &meta, NULL);
	assert_int_equal(twl_report_validate(doc, &err), 0);
	l = json_object_get(json_object_get(doc, "host"), "labels");
	assert_int_equal(json_object_size(l), 3);
	assert_string_equal(str_at(l, "team"), "payments");
	assert_string_equal(str_at(l, "zone"), "eu-west-1a");
	json_decref(doc);

	strcpy(labels.item[1], "Env=prod");
	strcpy(labels.item[2], "team=again");
	doc = twl_report_to_json(r, &meta, NULL);
	if (twl_report_validate(doc, &err))
		fail_msg("invalid labels reached the report: %s at %s",
			 err.code, err.field);
	l = json_object_get(json_object_get(doc, "host"), "labels");
	assert_int_equal(json_object_size(l), 1);
	assert_string_equal(str_at(l, "team"), "payments");
	json_decref(doc);

	labels.n = 0;
	doc = twl_report_to_json(r, &meta, NULL);
	assert_null(json_object_get(json_object_get(doc, "host"), "labels"));
	json_decref(doc);
	twl_report_free(r);
}

/* Plain dmesg has no priority: the level is the catalog's. */
static void test_dmesg_level_from_catalog(void **state)
{
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	struct twl_match m;
	size_t msg;
	json_t *doc, *w;

	memset(&m, 0, sizeof(m));
	m.feature = warning_feature(&msg);
	m.message = msg;
	make_rec(&rec, "some text", 1);
	rec.format = TWL_FMT_DMESG;
	rec.facility = -1;
	rec.has_seq = false;
	rec.level = 0;
	{
		struct twl_report_rec a = { .origin = "unverified",
					    .source = "dmesg",
					    .time = -5 };

		assert_int_equal(twl_report_add_warning(r, &rec, &m, &a), 0);
	}
	doc = doc_of(r, 1, NULL);
	w = json_array_get(json_object_get(doc, "warnings"), 0);
	assert_int_equal(int_at(w, "level"), m.feature->messages[msg].level);
	assert_string_equal(str_at(w, "origin"), "unverified");
	/* a time before the epoch goes out as 0, never negative */
	assert_int_equal(int_at(w, "time"), 0);
	json_decref(doc);
	twl_report_free(r);
}

/*
 * Records of another boot carry its id and kernel ("unknown" when the log
 * did not hold it) and their source; this boot's get the host's. The same
 * unknown text of two boots cannot share a batch: -ENOSPC.
 */
static void test_other_boot(void **state)
{
	static const char other[] = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";
	struct twl_report_rec a = { .boot_id = other,
				    .kernel = "6.12.1-twl-b",
				    .source = "journal",
				    .origin = "journal",
				    .time = 1796446803 };
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	struct twl_match m;
	size_t msg;
	json_t *doc, *w, *u;

	memset(&m, 0, sizeof(m));
	m.feature = warning_feature(&msg);
	make_rec(&rec, "warned", 0);
	assert_int_equal(twl_report_add_warning(r, &rec, &m, &a), 0);
	a.kernel = NULL;
	assert_int_equal(twl_report_add_warning(r, &rec, &m, &a), 0);
	assert_int_equal(twl_report_add_warning(r, &rec, &m, at(5)), 0);
	make_rec(&rec, "foo 1 is deprecated", 3);
	assert_int_equal(twl_report_add_unknown(r, &rec, &a), 0);
	assert_int_equal(twl_report_add_unknown(r, &rec, &a), 0);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(7)), -ENOSPC);
	doc = doc_of(r, 1, NULL);
	w = json_array_get(json_object_get(doc, "warnings"), 0);
	assert_string_equal(str_at(w, "boot_id"), other);
	assert_string_equal(str_at(w, "kernel"), "6.12.1-twl-b");
	assert_string_equal(str_at(w, "source"), "journal");
	assert_string_equal(str_at(w, "origin"), "journal");
	assert_int_equal(int_at(w, "time"), 1796446803);
	w = json_array_get(json_object_get(doc, "warnings"), 1);
	assert_string_equal(str_at(w, "kernel"), "unknown");
	w = json_array_get(json_object_get(doc, "warnings"), 2);
	assert_string_equal(str_at(w, "boot_id"), test_id.boot_id);
	assert_string_equal(str_at(w, "kernel"), test_id.kernel);
	assert_null(json_object_get(w, "source"));
	u = json_array_get(json_object_get(doc, "unknown"), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "unknown")), 1);
	assert_string_equal(str_at(u, "boot_id"), other);
	assert_string_equal(str_at(u, "kernel"), "unknown");
	assert_string_equal(str_at(u, "source"), "journal");
	assert_int_equal(int_at(u, "count"), 2);
	json_decref(doc);
	twl_report_free(r);
}

/* At the wire cap a batch is full: -ENOSPC, nothing dropped or cut. */
static void test_warning_cap(void **state)
{
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	struct twl_match m;
	size_t msg, i;
	json_t *doc;

	memset(&m, 0, sizeof(m));
	m.feature = warning_feature(&msg);
	for (i = 0; i < TWL_WIRE_MAX_WARNINGS; i++) {
		make_rec(&rec, "warned", i);
		assert_int_equal(twl_report_add_warning(r, &rec, &m, at(1)), 0);
	}
	make_rec(&rec, "one too many", i);
	assert_int_equal(twl_report_add_warning(r, &rec, &m, at(1)), -ENOSPC);
	assert_int_equal(twl_report_count(r), TWL_WIRE_MAX_WARNINGS);
	doc = doc_of(r, 1, NULL);
	json_decref(doc);
	/* After a reset the next batch takes records again. */
	twl_report_reset(r);
	assert_int_equal(twl_report_count(r), 0);
	assert_int_equal(twl_report_add_warning(r, &rec, &m, at(1)), 0);
	twl_report_free(r);
}

/*
 * Unknown deprecations: digits normalised, trailing white space dropped,
 * equal texts counted once with the first record's numbers.
 */
static void test_unknown_counted_once(void **state)
{
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	json_t *doc, *u;

	make_rec(&rec, "foo 12 is deprecated  \n", 5);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(100)), 0);
	make_rec(&rec, "foo 34 is deprecated", 9);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(200)), 0);
	make_rec(&rec, "bar is deprecated", 11);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(300)), 0);
	assert_int_equal(twl_report_count(r), 2);

	doc = doc_of(r, 1, NULL);
	u = json_array_get(json_object_get(doc, "unknown"), 0);
	assert_string_equal(str_at(u, "text"), "foo ## is deprecated");
	assert_int_equal(int_at(u, "count"), 2);
	assert_int_equal(int_at(u, "kmsg_seq"), 5);
	assert_int_equal(int_at(u, "time"), 100);
	assert_string_equal(str_at(u, "boot_id"), test_id.boot_id);
	assert_string_equal(str_at(u, "kernel"), test_id.kernel);
	u = json_array_get(json_object_get(doc, "unknown"), 1);
	assert_string_equal(str_at(u, "text"), "bar is deprecated");
	assert_int_equal(int_at(u, "count"), 1);
	json_decref(doc);
	twl_report_free(r);
}

/* 32 distinct texts fill a batch; repeats of them still count. */
static void test_unknown_cap(void **state)
{
	struct twl_report *r = twl_report_new();
	struct twl_kmsg_record rec;
	char text[64];
	json_t *doc;

	for (int i = 0; i < TWL_WIRE_MAX_UNKNOWN; i++) {
		snprintf(text, sizeof(text), "thing %c is deprecated", 'a' + i);
		make_rec(&rec, text, (uint64_t)i);
		assert_int_equal(twl_report_add_unknown(r, &rec, at(1)), 0);
	}
	make_rec(&rec, "another thing is deprecated", 99);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(1)), -ENOSPC);
	make_rec(&rec, "thing a is deprecated", 100);
	assert_int_equal(twl_report_add_unknown(r, &rec, at(1)), 0);
	assert_int_equal(twl_report_count(r), TWL_WIRE_MAX_UNKNOWN);
	doc = doc_of(r, 1, NULL);
	assert_int_equal(
		int_at(json_array_get(json_object_get(doc, "unknown"), 0),
		       "count"),
		2);
	json_decref(doc);
	twl_report_free(r);
}

static json_t *usage_entry(unsigned i)
{
	char cg[32];

	snprintf(cg, sizeof(cg), "/cg%u", i);
	return json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:i, s:i, s:i, s:i}",
		"boot_id", test_id.boot_id, "feature",
		twl_catalog_find_file("memory.soft_limit_in_bytes")->id, "file",
		"memory.soft_limit_in_bytes", "op", "write", "use",
		"configures", "cgroup", cg, "comm", "runc", "uid", 0,
		"writer_cgroup", "/", "count", 3, "failed", 1, "first_seen", 10,
		"last_seen", 20);
}

/* usage[] entries: reference taken, capped at the wire limit. */
static void test_usage(void **state)
{
	struct twl_report *r = twl_report_new();
	json_t *e = usage_entry(0), *doc;

	assert_non_null(e);
	assert_int_equal(twl_report_add_usage(r, e), 0);
	/* borrowed: ours is still valid, the report holds one more */
	assert_int_equal(e->refcount, 2);
	json_decref(e);
	for (unsigned i = 1; i < TWL_WIRE_MAX_USAGE; i++) {
		e = usage_entry(i);
		assert_int_equal(twl_report_add_usage(r, e), 0);
		json_decref(e);
	}
	e = usage_entry(TWL_WIRE_MAX_USAGE);
	assert_int_equal(twl_report_add_usage(r, e), -ENOSPC);
	json_decref(e);
	assert_int_equal(twl_report_count(r), TWL_WIRE_MAX_USAGE);
	doc = doc_of(r, 1, NULL);
	assert_string_equal(
		str_at(json_array_get(json_object_get(doc, "usage"), 7),
		       "cgroup"),
		"/cg7");
	json_decref(doc);
	twl_report_free(r);
}

/* The census is stolen, replaced, and dropped by a reset; health kept. */
static void test_census_and_health(void **state)
{
	struct twl_report *r = twl_report_new();
	json_t *census = json_pack("{s:i, s:[], s:[], s:i, s:b}", "time", 5,
				   "hierarchies", "knobs", "cgroups_walked", 0,
				   "truncated", 0);
	json_t *health = json_pack("{s:i}", "records_lost", 3), *doc;

	assert_false(twl_report_has_census(r));
	doc = doc_of(r, 1, NULL);
	assert_true(json_is_null(json_object_get(doc, "census")));
	assert_int_equal(json_object_size(json_object_get(doc, "health")), 0);
	json_decref(doc);

	twl_report_set_census(r, census);
	assert_true(twl_report_has_census(r));
	/* a census alone is not a record */
	assert_int_equal(twl_report_count(r), 0);
	doc = doc_of(r, (uint64_t)1 << 60, health);
	assert_true(json_equal(json_object_get(doc, "census"), census));
	assert_int_equal(int_at(json_object_get(doc, "health"), "records_lost"),
			 3);
	/* numbers past 2^53 are capped, never sent inexact */
	assert_int_equal(int_at(doc, "seq"), TWL_WIRE_MAX_INT);
	json_decref(doc);
	json_decref(health);

	twl_report_reset(r);
	assert_false(twl_report_has_census(r));
	twl_report_set_census(r, NULL);
	twl_report_free(r);
	twl_report_free(NULL);
}

static void test_text_sanitize(void **state)
{
	char out[8];

	/* invalid bytes and NUL become '?', valid sequences stay */
	assert_int_equal(
		twl_text_sanitize("a\xff\0\xc3\xa9", 5, out, sizeof(out)), 5);
	assert_string_equal(out, "a??\xc3\xa9");
	/* never cut inside a character: 6 bytes fit, the 2-byte one does not */
	assert_int_equal(
		twl_text_sanitize("abcdef\xc3\xa9", 8, out, sizeof(out)), 6);
	assert_string_equal(out, "abcdef");
	assert_int_equal(twl_text_sanitize("abc", 3, out, 1), 0);
	assert_string_equal(out, "");
	assert_int_equal(twl_text_sanitize("abc", 3, out, 0), 0);
}

/* ---- splitting a report for HTTP 413 ---- */

static char *load_example(const char *name, size_t *len)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char *path = NULL, *buf = NULL;

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	assert_true(asprintf(&path, "%s/schema/examples/%s", src, name) > 0);
	if (twl_read_file(path, TWL_WIRE_MAX_DOC_BYTES, &buf, len))
		fail_msg("cannot read %s", path);
	free(path);
	return buf;
}

static size_t units_of(json_t *doc)
{
	json_t *census = json_object_get(doc, "census");
	size_t n = json_array_size(json_object_get(doc, "warnings")) +
		   json_array_size(json_object_get(doc, "unknown")) +
		   json_array_size(json_object_get(doc, "usage"));

	if (json_is_object(census)) {
		size_t k = json_array_size(json_object_get(census, "knobs"));

		n += k ? k : 1;
	}
	return n;
}

/* A leaf: its one element goes to @all_items. */
static void collect_leaf(json_t *doc, json_t *all_items)
{
	const char *arrs[] = { "warnings", "unknown", "usage" };

	for (size_t i = 0; i < 3; i++) {
		json_t *arr = json_object_get(doc, arrs[i]);

		if (json_array_size(arr))
			json_array_append(all_items, json_array_get(arr, 0));
	}
	if (json_is_object(json_object_get(doc, "census")))
		json_array_append(all_items, json_object_get(doc, "census"));
}

/* The halves of @doc: fresh distinct ids, every unit once, host kept. */
static void check_halves(json_t *doc, const char *a, const char *b)
{
	json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
	const char *ida = str_at(ja, "batch_id"), *idb = str_at(jb, "batch_id");
	const char *id0 = str_at(doc, "batch_id");

	assert_non_null(ida);
	assert_non_null(idb);
	assert_string_not_equal(ida, idb);
	assert_string_not_equal(ida, id0);
	assert_string_not_equal(idb, id0);
	assert_int_equal(units_of(ja) + units_of(jb), units_of(doc));
	assert_true(units_of(ja) >= 1 && units_of(jb) >= 1);
	assert_true(units_of(ja) < units_of(doc) &&
		    units_of(jb) < units_of(doc));
	/* Host and health go to both halves. */
	assert_true(json_equal(json_object_get(ja, "host"),
			       json_object_get(doc, "host")));
	assert_true(json_equal(json_object_get(jb, "health"),
			       json_object_get(doc, "health")));
	json_decref(ja);
	json_decref(jb);
}

/*
 * Split recursively down to single elements: every half is a valid report,
 * ids are fresh and deterministic, and the leaves hold each element once.
 */
static void split_down(const char *json, size_t *leaves, json_t *all_items)
{
	struct twl_verr err;
	char *a = NULL, *b = NULL, *a2 = NULL, *b2 = NULL;
	json_t *doc = twl_report_parse(json, strlen(json), &err);
	int ret;

	if (!doc)
		fail_msg("half is not a valid report: %s at %s: %s", err.code,
			 err.field, err.reason);
	ret = twl_report_split(json, strlen(json), &a, &b);
	if (units_of(doc) < 2) {
		assert_int_equal(ret, -E2BIG);
		collect_leaf(doc, all_items);
		(*leaves)++;
		json_decref(doc);
		return;
	}
	assert_int_equal(ret, 0);
	/* Same input, same halves (ids derived, not random). */
	assert_int_equal(twl_report_split(json, strlen(json), &a2, &b2), 0);
	assert_string_equal(a, a2);
	assert_string_equal(b, b2);
	check_halves(doc, a, b);
	split_down(a, leaves, all_items);
	split_down(b, leaves, all_items);
	free(a);
	free(b);
	free(a2);
	free(b2);
	json_decref(doc);
}

static void test_split_full_example(void **state)
{
	size_t len = 0, leaves = 0;
	char *json = load_example("full.json", &len);
	json_t *doc = json_loads(json, 0, NULL), *items = json_array();
	const char *arrs[] = { "warnings", "unknown", "usage" };
	size_t n_w, n_u, n_us, n_k;

	assert_non_null(doc);
	n_w = json_array_size(json_object_get(doc, "warnings"));
	n_u = json_array_size(json_object_get(doc, "unknown"));
	n_us = json_array_size(json_object_get(doc, "usage"));
	n_k = json_array_size(
		json_object_get(json_object_get(doc, "census"), "knobs"));
	/* the example exercises every array */
	assert_true(n_w && n_u && n_us && n_k);
	split_down(json, &leaves, items);
	assert_int_equal(leaves, n_w + n_u + n_us + n_k);
	/* Every warning, unknown and usage element comes out exactly once. */
	for (size_t i = 0; i < 3; i++) {
		json_t *arr = json_object_get(doc, arrs[i]);

		for (size_t j = 0; j < json_array_size(arr); j++) {
			int hits = 0;

			for (size_t m = 0; m < json_array_size(items); m++)
				hits += json_equal(json_array_get(items, m),
						   json_array_get(arr, j));
			assert_int_equal(hits, 1);
		}
	}
	json_decref(items);
	json_decref(doc);
	free(json);
}

static void test_split_refuses(void **state)
{
	char *a = (char *)1, *b = (char *)1;
	const char *one =
		"{\"v\":1,\"batch_id\":\"ab\",\"warnings\":[1],\"unknown\":[],\"usage\":[]}";

	assert_int_equal(twl_report_split(one, strlen(one), &a, &b), -E2BIG);
	assert_null(a);
	assert_null(b);
	assert_int_equal(twl_report_split("[]", 2, &a, &b), -EINVAL);
	assert_int_equal(twl_report_split("{\"warnings\":[1,2]}", 18, &a, &b),
			 -EINVAL);
	assert_int_equal(twl_report_split("{bad", 4, &a, &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_warning),
		cmocka_unit_test(test_dmesg_level_from_catalog),
		cmocka_unit_test(test_other_boot),
		cmocka_unit_test(test_warning_cap),
		cmocka_unit_test(test_unknown_counted_once),
		cmocka_unit_test(test_unknown_cap),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_census_and_health),
		cmocka_unit_test(test_text_sanitize),
		cmocka_unit_test(test_split_full_example),
		cmocka_unit_test(test_split_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
