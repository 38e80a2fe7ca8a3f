// SPDX-License-Identifier: GPL-2.0
/*
 * The processing core end to end (source -> classify -> batch -> sink ->
 * state): restarts neither re-send nor skip, lost records reach health,
 * batches split at the wire caps, user-space lines never count, a record
 * seen on /dev/kmsg and handed in by the journal goes out once, records
 * of other boots keep their boot and kernel, health.boots says where the
 * live view starts, and every document passes the shared validator.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/wire.h>

#include "agent_test.h"
#include "pump.h"
#include "record_dedup.h"

#define SOFT                                                                         \
	"soft_limit_in_bytes is deprecated and will be removed. Please report your " \
	"usecase to linux-mm@kvack.org if you depend on this functionality."
#define MOVE                                                                            \
	"Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please report " \
	"your usecase to linux-mm@kvack.org if you depend on this functionality."

#define MAX_DOCS 16

struct sink {
	json_t *docs[MAX_DOCS];
	size_t n;
	int fail_next; /* negative errno to return once */
};

static int capture(void *ctx, const char *json, size_t len)
{
	struct sink *s = ctx;
	struct twl_verr err;
	json_t *doc;

	if (s->fail_next) {
		int r = s->fail_next;

		s->fail_next = 0;
		return r;
	}
	doc = twl_report_parse(json, len, &err);
	if (!doc)
		fail_msg("agent produced an invalid report: %s at %s: %s",
			 err.code, err.field, err.reason);
	if (s->n >= MAX_DOCS)
		fail_msg("too many batches");
	s->docs[s->n++] = doc;
	return 0;
}

static void sink_clear(struct sink *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		json_decref(s->docs[i]);
	memset(s, 0, sizeof(*s));
}

static struct twl_identity ident = {
	.host_id =
		"9c1f4e2b7a3d5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7",
	.hostname = "test-host",
	.boot_id = "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f",
	.kernel = "6.1.0-test",
	.cgroup_mode = "v1",
};

/*
 * One agent run: load state from @dir for boot @boot, read all of @path,
 * flush. Returns the flush result.
 */
static int run_once(const char *dir, const char *boot, const char *path,
		    struct sink *sink)
{
	struct twl_pump_cfg pc = { .id = &ident,
				   .state_dir = dir,
				   .sink = capture,
				   .sink_ctx = sink };
	struct twl_kmsg_source *src;
	struct twl_state st;
	struct twl_pump *p;
	int ret;

	assert_int_equal(twl_state_load(dir, &st), 0);
	twl_state_for_boot(&st, boot);
	p = twl_pump_new(&pc, &st);
	assert_non_null(p);
	src = twl_kmsg_source_open(path);
	assert_non_null(src);
	twl_pump_set_source(p, src);
	ret = twl_pump_drain(p);
	if (ret == -ENODATA)
		ret = twl_pump_flush(p, false);
	twl_pump_free(p);
	twl_kmsg_source_free(src);
	return ret;
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static json_t *warnings(json_t *doc)
{
	return json_object_get(doc, "warnings");
}

static json_int_t warn_seq(json_t *doc, size_t i)
{
	return json_integer_value(
		json_object_get(json_array_get(warnings(doc), i), "kmsg_seq"));
}

static void test_restart_resumes_without_duplicates(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "kmsg");
	struct sink sink = { 0 };
	const char *boot_b = "0b0b0b0b-0000-4000-8000-000000000000";

	append(path,
	       "6,1,100,-;boot noise\n4,2,200,-;" SOFT
	       "\n6,3,300,-;more noise\n"
	       "4,4,400,-;" MOVE
	       "\n6,5,500,-;noise\n4,6,600,-;Non-hierarchical mode is "
	       "deprecated. Please report your usecase to linux-mm@kvack.org if you "
	       "depend on this functionality.\n");
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 3);
	assert_int_equal(warn_seq(sink.docs[0], 0), 2);
	assert_int_equal(warn_seq(sink.docs[0], 2), 6);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[0], "seq")), 1);
	sink_clear(&sink);

	/* Restart with two new records: only they are sent. */
	append(path, "6,7,700,-;noise\n4,8,800,-;" SOFT
		     "\n6,9,900,-;noise\n4,10,1000,-;" MOVE "\n");
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 2);
	assert_int_equal(warn_seq(sink.docs[0], 0), 8);
	assert_int_equal(warn_seq(sink.docs[0], 1), 10);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[0], "seq")), 2);
	sink_clear(&sink);

	/* Restart with nothing new: no batch at all. */
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 0);
	assert_int_equal(sink.n, 0);

	/* A new boot: sequence numbers restart, everything is new. */
	snprintf(ident.boot_id, sizeof(ident.boot_id), "%s", boot_b);
	assert_int_equal(run_once(dir, boot_b, path, &sink), 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 5);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[0], "seq")), 3);
	snprintf(ident.boot_id, sizeof(ident.boot_id),
		 "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f");
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

static void test_sink_failure_never_skips(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "kmsg");
	struct sink sink = { 0 };
	struct twl_state st;

	append(path, "4,2,200,-;" SOFT "\n6,3,300,-;noise\n");
	sink.fail_next = -ENOSPC; /* the spool is full: batch not durable */
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), -ENOSPC);
	assert_int_equal(sink.n, 0);
	assert_int_equal(twl_state_load(dir, &st), 0);
	assert_false(st.have_last_seq); /* the position did not move */
	/* Next run sends the same record. */
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 1);
	assert_int_equal(warn_seq(sink.docs[0], 0), 2);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[0], "seq")), 1);
	assert_int_equal(twl_state_load(dir, &st), 0);
	assert_true(st.have_last_seq);
	assert_int_equal(st.last_seq, 3);
	assert_int_equal(st.host_seq, 1);
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

/* Scripted /dev/kmsg that overwrites records (EPIPE). */
struct script {
	const char *const *recs; /* NULL entry = EPIPE */
	size_t n, i;
};

static ssize_t script_read(void *ctx, char *buf, size_t cap)
{
	struct script *s = ctx;
	size_t len;

	if (s->i >= s->n)
		return -EAGAIN;
	if (!s->recs[s->i]) {
		s->i++;
		return -EPIPE;
	}
	len = strlen(s->recs[s->i]);
	memcpy(buf, s->recs[s->i++], len);
	return (ssize_t)len;
}

static const struct twl_kmsg_source_ops script_ops = { .read = script_read };

static void test_lost_records_in_health(void **state)
{
	static const char *const recs[] = {
		"6,1,1,-;a\n",
		NULL,
		"4,9,9,-;" SOFT "\n",
		"6,10,10,-;b\n",
	};
	struct script sc = { recs, 4, 0 };
	struct twl_pump_cfg pc = { .id = &ident, .sink = capture };
	struct sink sink = { 0 };
	struct twl_kmsg_source *src;
	struct twl_state st = { 0 };
	struct twl_pump_stats ps;
	struct twl_pump *p;
	json_t *h;

	pc.sink_ctx = &sink;
	src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	p = twl_pump_new(&pc, &st);
	assert_non_null(src);
	assert_non_null(p);
	twl_pump_set_source(p, src);
	assert_int_equal(twl_pump_drain(p), 0); /* EAGAIN after the script */
	twl_pump_stats(p, &ps);
	assert_int_equal(ps.records_lost, 7);
	assert_int_equal(twl_pump_flush(p, false), 1);
	h = json_object_get(sink.docs[0], "health");
	assert_int_equal(json_integer_value(json_object_get(h, "records_lost")),
			 7);
	assert_int_equal(
		json_integer_value(json_object_get(h, "parse_failures")), 0);
	assert_true(json_integer_value(json_object_get(h, "rss_kb")) > 0);
	assert_non_null(json_object_get(h, "cpu_ms"));
	/* No sender: its members are absent (unknown), not zero. */
	assert_null(json_object_get(h, "spool_bytes"));
	sink_clear(&sink);
	twl_pump_free(p);
	twl_kmsg_source_free(src);
}

static void test_split_at_warning_cap(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "kmsg");
	struct sink sink = { 0 };
	char line[200];
	FILE *f;
	int i;

	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 1; i <= 300; i++)
		fprintf(f,
			"4,%d,%d,-;option changes via remount are deprecated (pid=%d comm=mount)\n",
			i, i * 10, 1000 + i);
	assert_int_equal(fclose(f), 0);
	(void)line;
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 2);
	assert_int_equal(json_array_size(warnings(sink.docs[0])),
			 TWL_WIRE_MAX_WARNINGS);
	assert_int_equal(json_array_size(warnings(sink.docs[1])),
			 300 - TWL_WIRE_MAX_WARNINGS);
	assert_int_equal(warn_seq(sink.docs[1], 0), TWL_WIRE_MAX_WARNINGS + 1);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[0], "seq")), 1);
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[1], "seq")), 2);
	{
		json_t *fl = json_object_get(
			json_array_get(warnings(sink.docs[0]), 0), "fields");

		assert_string_equal(
			json_string_value(json_object_get(fl, "pid")), "1001");
		assert_string_equal(
			json_string_value(json_object_get(fl, "comm")),
			"mount");
	}
	assert_string_not_equal(
		json_string_value(json_object_get(sink.docs[0], "batch_id")),
		json_string_value(json_object_get(sink.docs[1], "batch_id")));
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

static void test_unknown_normalised_and_split(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "kmsg");
	struct sink sink = { 0 };
	json_t *u;
	FILE *f;
	int i;

	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "4,1,10,-;xt_foo: option 12 is DEPRECATED\n");
	fprintf(f, "4,2,20,-;xt_foo: option 34 is DEPRECATED\n");
	/* 40 distinct texts (letters differ, so digits do not merge them). */
	for (i = 0; i < 40; i++)
		fprintf(f, "4,%d,%d,-;mod_%c%c: feature deprecated\n", 3 + i,
			30 + i, 'a' + i % 26, 'a' + i / 26);
	/* A user-space line with a deprecation text never counts. */
	fprintf(f, "14,50,500,-;userland says something is deprecated\n");
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 2);
	u = json_object_get(sink.docs[0], "unknown");
	assert_int_equal(json_array_size(u), TWL_WIRE_MAX_UNKNOWN);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(u, 0), "text")),
			    "xt_foo: option ## is DEPRECATED");
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(u, 0), "count")),
			 2);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(u, 0), "kmsg_seq")),
			 1);
	u = json_object_get(sink.docs[1], "unknown");
	assert_int_equal(json_array_size(u), 41 - TWL_WIRE_MAX_UNKNOWN);
	for (i = 0; i < (int)json_array_size(u); i++)
		assert_null(
			strstr(json_string_value(json_object_get(
				       json_array_get(u, (size_t)i), "text")),
			       "userland"));
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

static void test_user_facility_never_counts(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "kmsg");
	struct sink sink = { 0 };

	/* Exact catalog text, but written by user space (facility 1 and 3). */
	append(path, "12,1,100,-;" SOFT "\n28,2,200,-;" MOVE "\n");
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 0);
	assert_int_equal(sink.n, 0);
	free(path);
	test_rmtree(dir);
}

static void test_dmesg_origin_unverified(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "dmesg");
	struct sink sink = { 0 };
	json_t *w;

	append(path,
	       "[    0.000000] Linux version 6.1.0\n[   41.233567] [  T312] " SOFT
	       "\n<12>[   42.000000] " MOVE "\n");
	/* dmesg has no sequence numbers: nothing to resume, no state needed. */
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(sink.n, 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])),
			 1); /* <12> is user space */
	w = json_array_get(warnings(sink.docs[0]), 0);
	assert_string_equal(json_string_value(json_object_get(w, "origin")),
			    "unverified");
	assert_string_equal(json_string_value(json_object_get(w, "feature")),
			    "memcg_v1.soft_limit");
	assert_int_equal(json_integer_value(json_object_get(w, "kmsg_seq")), 0);
	assert_int_equal(json_integer_value(json_object_get(w, "mono_us")),
			 41233567);
	/* No priority in plain dmesg: the catalog's level for this text. */
	assert_int_equal(json_integer_value(json_object_get(w, "level")), 4);
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

static void test_heartbeat_and_census(void **state)
{
	struct twl_pump_cfg pc = { .id = &ident, .sink = capture };
	struct sink sink = { 0 };
	struct twl_state st = { 0 };
	struct twl_pump *p;
	json_t *census;

	pc.sink_ctx = &sink;
	p = twl_pump_new(&pc, &st);
	assert_non_null(p);
	assert_int_equal(twl_pump_flush(p, false), 0); /* nothing due */
	assert_int_equal(twl_pump_flush(p, true), 1); /* heartbeat */
	census = json_pack("{s:I, s:[], s:[], s:i, s:b}", "time",
			   (json_int_t)1764732000, "hierarchies", "knobs",
			   "cgroups_walked", 0, "truncated", 0);
	twl_pump_set_census(p, census);
	assert_int_equal(twl_pump_flush(p, false), 1); /* census is due */
	assert_int_equal(sink.n, 2);
	assert_true(json_is_null(json_object_get(sink.docs[0], "census")));
	assert_true(json_is_object(json_object_get(sink.docs[1], "census")));
	assert_int_equal(
		json_integer_value(json_object_get(sink.docs[1], "seq")), 2);
	assert_int_equal(twl_pump_flush(p, false), 0); /* census sent once */
	sink_clear(&sink);
	twl_pump_free(p);
}

/* A stand-in for agent/bpf: @n valid usage entries on the first collect. */
struct fake_bpf {
	int n, calls;
	json_t *health_seen;
	char warned[64];
};

static int fake_collect(void *ctx, json_t *usage)
{
	struct fake_bpf *f = ctx;
	int i;

	if (f->calls++)
		return 0;
	for (i = 0; i < f->n; i++) {
		json_t *e = json_pack(
			"{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:I}",
			"boot_id", ident.boot_id, "feature",
			"memcg_v1.soft_limit", "file",
			"memory.soft_limit_in_bytes", "op", "write", "use",
			"configures", "cgroup", "/c", "comm", "x", "uid", i,
			"writer_cgroup", "/", "container", "", "last_pid", 1,
			"count", 2, "failed", 0, "condition_met", 1,
			"first_seen", (json_int_t)1764732000, "last_seen",
			(json_int_t)1764732001);

		assert_non_null(e);
		assert_int_equal(json_array_append_new(usage, e), 0);
	}
	return i;
}

static void fake_health(void *ctx, json_t *health)
{
	json_object_set_new(health, "map_overflows", json_integer(0));
	json_object_set_new(health, "probe_missing",
			    json_pack("[s]", "memcg_v1.soft_limit"));
}

static void fake_warning(void *ctx, const char *feature, uint64_t mono_us)
{
	struct fake_bpf *f = ctx;

	snprintf(f->warned, sizeof(f->warned), "%s", feature);
}

static void test_usage_split_and_bpf_hooks(void **state)
{
	struct fake_bpf fb = { .n = TWL_WIRE_MAX_USAGE + 904 };
	struct twl_pump_cfg pc = { .id = &ident,
				   .sink = capture,
				   .collect_usage = fake_collect,
				   .health_extra = fake_health,
				   .on_warning = fake_warning };
	static const char *const recs[] = { "4,1,1,-;" SOFT "\n" };
	struct script sc = { recs, 1, 0 };
	struct sink sink = { 0 };
	struct twl_kmsg_source *src;
	struct twl_state st = { 0 };
	struct twl_pump *p;
	json_t *h;

	pc.sink_ctx = &sink;
	pc.hook_ctx = &fb;
	src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	p = twl_pump_new(&pc, &st);
	assert_non_null(src);
	assert_non_null(p);
	twl_pump_set_source(p, src);
	assert_int_equal(twl_pump_drain(p), 0);
	assert_string_equal(fb.warned, "memcg_v1.soft_limit");
	/* 5000 usage entries: two batches, each valid and within the cap. */
	assert_int_equal(twl_pump_flush(p, false), 2);
	assert_int_equal(sink.n, 2);
	assert_int_equal(
		json_array_size(json_object_get(sink.docs[0], "usage")),
		TWL_WIRE_MAX_USAGE);
	assert_int_equal(
		json_array_size(json_object_get(sink.docs[1], "usage")), 904);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 1);
	assert_int_equal(json_array_size(warnings(sink.docs[1])), 0);
	h = json_object_get(sink.docs[1], "health");
	assert_int_equal(json_array_size(json_object_get(h, "probe_missing")),
			 1);
	/* Nothing new: no batch. */
	assert_int_equal(twl_pump_flush(p, false), 0);
	sink_clear(&sink);
	twl_pump_free(p);
	twl_kmsg_source_free(src);
}

/* ---- Records of other sources (the journal) ---- */

#define BOOT_HEX "2f6d7a1e8a4b4c1d9e0f1a2b3c4d5e6f" /* ident's boot */
#define OTHER "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"

/* A verified journal record of @boot at @mono us, received at @wall_us. */
static void journal_rec(struct twl_log_record *r, const char *boot,
			uint64_t mono, int64_t wall_us, const char *text)
{
	memset(r, 0, sizeof(*r));
	r->format = TWL_LOG_JOURNAL;
	r->k.format = TWL_FMT_UNKNOWN;
	r->k.level = 4;
	r->k.mono_us = mono;
	r->has_mono = r->has_level = r->has_wall = true;
	r->verified = r->facility_verified = true;
	r->wall_us = wall_us;
	snprintf(r->k.text, sizeof(r->k.text), "%s", text);
	r->k.text_len = strlen(r->k.text);
	snprintf(r->boot_id, sizeof(r->boot_id), "%s", boot);
}

static int spooled_calls;

static void count_spooled(void *ctx)
{
	(void)ctx;
	spooled_calls++;
}

/*
 * The journal's copy of a /dev/kmsg warning (same boot, stamp, text) is
 * not sent again, in either order; another boot's warning keeps its boot,
 * kernel, source, origin and receive time and reaches no BPF hook; a
 * record already handled before the resume point is remembered too.
 */
static void test_journal_records_once(void **state)
{
	static const char *const recs[] = {
		"4,3,3018562,-;" SOFT "\n",
		"4,7,7000000,-;" MOVE "\n",
	};
	struct script sc = { recs, 2, 0 };
	struct fake_bpf fb = { 0 };
	struct twl_pump_cfg pc = { .id = &ident,
				   .sink = capture,
				   .on_warning = fake_warning,
				   .hook_ctx = &fb,
				   .on_spooled = count_spooled };
	struct sink sink = { 0 };
	struct twl_state st = { 0 };
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_kmsg_source *src;
	struct twl_pump_stats ps;
	struct twl_pump *p;
	json_t *w;

	assert_non_null(r);
	pc.sink_ctx = &sink;
	st.have_last_seq = true;
	st.last_seq = 3; /* seq 3 was sent by an earlier run */
	src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	p = twl_pump_new(&pc, &st);
	assert_non_null(src);
	assert_non_null(p);
	twl_pump_set_source(p, src);
	assert_int_equal(twl_pump_drain(p), 0);
	/* The journal: seq 3's copy (skipped on kmsg), seq 7's (read on kmsg). */
	journal_rec(r, BOOT_HEX, 3018562, 1796360401018602LL, SOFT "\n ");
	assert_int_equal(twl_pump_add(p, r, ident.kernel, 0), 0);
	journal_rec(r, BOOT_HEX, 7000000, 1796360405000000LL, MOVE);
	assert_int_equal(twl_pump_add(p, r, ident.kernel, 0), 0);
	/* This boot, a record kmsg never had: sent, the host's boot id. */
	journal_rec(r, BOOT_HEX, 1000, 1796360398001040LL, SOFT);
	assert_int_equal(twl_pump_add(p, r, ident.kernel, 0), 1);
	/* Another boot: its own members; the BPF cross-check never sees it. */
	fb.warned[0] = '\0';
	journal_rec(r, OTHER, 5500000, 1796446803500040LL, SOFT);
	assert_int_equal(twl_pump_add(p, r, "6.12.1-twl-b", 0), 1);
	assert_string_equal(fb.warned, "");
	assert_int_equal(twl_pump_add(p, r, "6.12.1-twl-b", 0), 0);
	r->k.facility = 1; /* user space: never */
	r->k.mono_us = 1;
	assert_int_equal(twl_pump_add(p, r, NULL, 0), 0);
	twl_pump_stats(p, &ps);
	assert_int_equal(ps.duplicates, 3);
	assert_int_equal(ps.warnings, 3);
	assert_int_equal(spooled_calls, 0);
	assert_int_equal(twl_pump_flush(p, false), 1);
	assert_int_equal(spooled_calls, 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 3);
	w = json_array_get(warnings(sink.docs[0]), 0);
	assert_int_equal(json_integer_value(json_object_get(w, "kmsg_seq")), 7);
	assert_string_equal(json_string_value(json_object_get(w, "source")),
			    "kmsg");
	w = json_array_get(warnings(sink.docs[0]), 1);
	assert_string_equal(json_string_value(json_object_get(w, "boot_id")),
			    ident.boot_id);
	assert_string_equal(json_string_value(json_object_get(w, "origin")),
			    "journal");
	assert_int_equal(json_integer_value(json_object_get(w, "time")),
			 1796360398);
	w = json_array_get(warnings(sink.docs[0]), 2);
	assert_string_equal(json_string_value(json_object_get(w, "boot_id")),
			    OTHER);
	assert_string_equal(json_string_value(json_object_get(w, "kernel")),
			    "6.12.1-twl-b");
	assert_string_equal(json_string_value(json_object_get(w, "source")),
			    "journal");
	assert_int_equal(json_integer_value(json_object_get(w, "time")),
			 1796446803);
	sink_clear(&sink);
	twl_pump_free(p);
	twl_kmsg_source_free(src);
	free(r);
}

/*
 * A warning the kernel printed twice within one tick of a coarse printk
 * clock (same stamp, same text, two sequence numbers) is sent twice; the
 * journal's copies of both (two cursors) are not sent again, nor is one
 * of them handed in a second time (the same cursor); after a restart that
 * resumes past both, the source's skipped copies keep them sent.
 */
static void test_repeats_in_one_tick_count(void **state)
{
	static const char *const recs[] = {
		"4,3,3016000,-;" SOFT "\n",
		"4,4,3016000,-;" SOFT "\n",
		"4,5,3020000,-;" MOVE "\n",
	};
	struct script sc = { recs, 3, 0 };
	struct twl_pump_cfg pc = { .id = &ident, .sink = capture };
	struct sink sink = { 0 };
	struct twl_state st = { 0 };
	struct twl_log_record *r = malloc(sizeof(*r));
	struct twl_kmsg_source *src;
	struct twl_pump_stats ps;
	struct twl_pump *p;

	assert_non_null(r);
	pc.sink_ctx = &sink;
	src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	p = twl_pump_new(&pc, &st);
	assert_non_null(src);
	assert_non_null(p);
	twl_pump_set_source(p, src);
	assert_int_equal(twl_pump_drain(p), 0);
	journal_rec(r, BOOT_HEX, 3016000, 1796360401016000LL, SOFT);
	assert_int_equal(twl_pump_add(p, r, ident.kernel,
				      twl_dedup_place("s=a;i=1")),
			 0);
	assert_int_equal(twl_pump_add(p, r, ident.kernel,
				      twl_dedup_place("s=a;i=2")),
			 0);
	assert_int_equal(twl_pump_add(p, r, ident.kernel,
				      twl_dedup_place("s=a;i=2")),
			 0);
	twl_pump_stats(p, &ps);
	assert_int_equal(ps.warnings, 3);
	assert_int_equal(ps.duplicates, 3);
	assert_int_equal(twl_pump_flush(p, false), 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 3);
	assert_int_equal(warn_seq(sink.docs[0], 0), 3);
	assert_int_equal(warn_seq(sink.docs[0], 1), 4);
	sink_clear(&sink);
	twl_pump_free(p);
	twl_kmsg_source_free(src);

	/* A restart: the kernel's records again, resuming after seq 5. */
	st.have_last_seq = true;
	st.last_seq = 5;
	sc.i = 0;
	src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
	p = twl_pump_new(&pc, &st);
	assert_non_null(src);
	assert_non_null(p);
	twl_pump_set_source(p, src);
	assert_int_equal(twl_pump_drain(p), 0);
	assert_int_equal(twl_pump_add(p, r, ident.kernel,
				      twl_dedup_place("s=a;i=2")),
			 0);
	assert_int_equal(twl_pump_add(p, r, ident.kernel,
				      twl_dedup_place("s=a;i=1")),
			 0);
	twl_pump_stats(p, &ps);
	assert_int_equal(ps.warnings, 0);
	assert_int_equal(ps.duplicates, 2);
	twl_pump_free(p);
	twl_kmsg_source_free(src);
	free(r);
}

/* A failed sink takes nothing: the record can be handed in again and goes out. */
static void test_journal_record_retried(void **state)
{
	struct twl_pump_cfg pc = { .id = &ident,
				   .sink = capture,
				   .on_spooled = count_spooled };
	struct twl_log_record *r = malloc(sizeof(*r));
	struct sink sink = { 0 };
	struct twl_state st = { 0 };
	struct twl_pump *p;
	int i;

	assert_non_null(r);
	pc.sink_ctx = &sink;
	p = twl_pump_new(&pc, &st);
	assert_non_null(p);
	for (i = 0; i < TWL_WIRE_MAX_WARNINGS; i++) {
		journal_rec(r, OTHER, 1000 + i, 1796446803500040LL, SOFT);
		assert_int_equal(twl_pump_add(p, r, "6.1", 0), 1);
	}
	spooled_calls = 0;
	sink.fail_next = -ENOSPC;
	journal_rec(r, OTHER, 99, 1796446803500040LL, MOVE);
	assert_int_equal(twl_pump_add(p, r, "6.1", 0), -ENOSPC);
	assert_int_equal(spooled_calls, 0);
	assert_int_equal(twl_pump_add(p, r, "6.1", 0), 1);
	assert_int_equal(spooled_calls, 1);
	assert_int_equal(twl_pump_flush(p, false), 1);
	assert_int_equal(sink.n, 2);
	assert_int_equal(json_array_size(warnings(sink.docs[1])), 1);
	sink_clear(&sink);
	twl_pump_free(p);
	free(r);
}

/* A saved journal JSON log: each boot's records with the kernel its "Linux version" named. */
static void test_saved_log_kernels(void **state)
{
	char *dir = test_mkdtemp(), *path = test_path(dir, "k.json");
	struct sink sink = { 0 };
	json_t *w;

	append(path,
	       "{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"_BOOT_ID\":\"" OTHER
	       "\",\"_SOURCE_MONOTONIC_TIMESTAMP\":\"0\",\"MESSAGE\":\"Linux version 6.12.1-twl-b (gcc) #2\"}\n"
	       "{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"_BOOT_ID\":\"" OTHER
	       "\",\"_SOURCE_MONOTONIC_TIMESTAMP\":\"5\",\"MESSAGE\":\"" SOFT
	       "\"}\n"
	       "{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"_BOOT_ID\":\"" BOOT_HEX
	       "\",\"_SOURCE_MONOTONIC_TIMESTAMP\":\"5\",\"MESSAGE\":\"" SOFT
	       "\"}\n"
	       "{\"_TRANSPORT\":\"kernel\",\"SYSLOG_FACILITY\":\"0\",\"_BOOT_ID\":\"c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
	       "\",\"_SOURCE_MONOTONIC_TIMESTAMP\":\"5\",\"MESSAGE\":\"" SOFT
	       "\"}\n");
	assert_int_equal(run_once(dir, ident.boot_id, path, &sink), 1);
	assert_int_equal(json_array_size(warnings(sink.docs[0])), 3);
	w = json_array_get(warnings(sink.docs[0]), 0);
	assert_string_equal(json_string_value(json_object_get(w, "kernel")),
			    "6.12.1-twl-b");
	assert_string_equal(json_string_value(json_object_get(w, "source")),
			    "journal_json");
	w = json_array_get(warnings(sink.docs[0]), 1);
	assert_string_equal(json_string_value(json_object_get(w, "boot_id")),
			    ident.boot_id);
	assert_string_equal(json_string_value(json_object_get(w, "kernel")),
			    ident.kernel);
	w = json_array_get(warnings(sink.docs[0]), 2);
	assert_string_equal(json_string_value(json_object_get(w, "kernel")),
			    "unknown");
	sink_clear(&sink);
	free(path);
	test_rmtree(dir);
}

/* The first record of the boot the live view saw: in health.boots, kept across runs. */
static void test_live_coverage(void **state)
{
	static const char *const late[] = { "6,57,9000000,-;a\n",
					    "6,58,9000001,-;b\n" };
	static const char *const later[] = { "6,60,9500000,-;c\n" };
	static const char *const start[] = { "6,0,0,-;Linux version 6.1\n" };
	struct script sc = { late, 2, 0 };
	struct twl_pump_cfg pc = { .id = &ident,
				   .sink = capture,
				   .live = true };
	char *dir = test_mkdtemp();
	struct sink sink = { 0 };
	struct twl_kmsg_source *src;
	struct twl_state st = { 0 };
	struct twl_pump *p;
	json_t *b;

	pc.sink_ctx = &sink;
	pc.state_dir = dir;
	for (int run = 0; run < 3; run++) {
		if (run == 1)
			sc = (struct script){ later, 1, 0 };
		if (run == 2) {
			sc = (struct script){ start, 1, 0 };
			assert_int_equal(twl_state_load(dir, &st), 0);
			twl_state_for_boot(&st, "another-boot");
		} else {
			assert_int_equal(twl_state_load(dir, &st), 0);
			twl_state_for_boot(&st, ident.boot_id);
		}
		src = twl_kmsg_source_new(TWL_SRC_RECORDS, &script_ops, &sc);
		p = twl_pump_new(&pc, &st);
		assert_non_null(p);
		twl_pump_set_source(p, src);
		assert_int_equal(twl_pump_drain(p), 0);
		assert_int_equal(twl_pump_flush(p, true), 1);
		b = json_array_get(
			json_object_get(json_object_get(sink.docs[run],
							"health"),
					"boots"),
			0);
		assert_non_null(b);
		assert_string_equal(
			json_string_value(json_object_get(b, "boot_id")),
			ident.boot_id);
		assert_string_equal(
			json_string_value(json_object_get(b, "kernel")),
			ident.kernel);
		/* Runs 1 and 2 of this boot: the view started at 57 (0..56 overwritten). */
		assert_int_equal(json_integer_value(
					 json_object_get(b, "first_kmsg_seq")),
				 run < 2 ? 57 : 0);
		assert_int_equal(
			json_is_true(json_object_get(b, "start_covered")),
			run == 2);
		twl_pump_free(p);
		twl_kmsg_source_free(src);
	}
	sink_clear(&sink);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_resumes_without_duplicates),
		cmocka_unit_test(test_sink_failure_never_skips),
		cmocka_unit_test(test_lost_records_in_health),
		cmocka_unit_test(test_split_at_warning_cap),
		cmocka_unit_test(test_unknown_normalised_and_split),
		cmocka_unit_test(test_user_facility_never_counts),
		cmocka_unit_test(test_dmesg_origin_unverified),
		cmocka_unit_test(test_heartbeat_and_census),
		cmocka_unit_test(test_usage_split_and_bpf_hooks),
		cmocka_unit_test(test_journal_records_once),
		cmocka_unit_test(test_repeats_in_one_tick_count),
		cmocka_unit_test(test_journal_record_retried),
		cmocka_unit_test(test_saved_log_kernels),
		cmocka_unit_test(test_live_coverage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
