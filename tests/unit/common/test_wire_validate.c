// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven checks of twl_report_validate()/twl_report_parse(): each
 * case changes one member of a valid base report and states the expected
 * outcome. Boundaries are tested exactly at and one past each cap.
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

#include <twilight/cgroup_class.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "wire_test.h"

#define BOOT "2f6d7a1e-8a4b-4c1d-9e0f-1a2b3c4d5e6f"

static const char base_text[] =
	"{\"v\":1,\"batch_id\":\"0123456789abcdef\",\"seq\":5,\"sent_time\":1764732000,"
	"\"host\":{\"host_id\":\"abcdef\",\"hostname\":\"h\",\"boot_id\":\"" BOOT
	"\","
	"\"kernel\":\"6.1.0\",\"cgroup_mode\":\"v1\",\"agent_version\":\"0.1.0\","
	"\"catalog_version\":1},"
	"\"warnings\":[{\"feature\":\"cgroup_v1.remount\",\"text\":\"option changes via remount "
	"are deprecated (pid=1 comm=mount)\",\"kmsg_seq\":10,\"mono_us\":100,\"time\":1764732000,"
	"\"level\":4,\"fields\":{\"pid\":\"1\",\"comm\":\"mount\"},\"origin\":\"kmsg\"}],"
	"\"unknown\":[{\"text\":\"foo is deprecated\",\"kmsg_seq\":11,\"mono_us\":101,"
	"\"time\":1764732000,\"count\":1,\"origin\":\"kmsg\"}],"
	"\"usage\":[{\"boot_id\":\"" BOOT
	"\",\"feature\":\"memcg_v1.soft_limit\","
	"\"file\":\"memory.soft_limit_in_bytes\",\"op\":\"write\",\"cgroup\":\"/a\",\"comm\":\"bash\","
	"\"uid\":0,\"writer_cgroup\":\"/\",\"container\":\"\",\"last_pid\":1,\"count\":3,"
	"\"failed\":1,\"condition_met\":3,\"first_seen\":1764732000,\"last_seen\":1764732001}],"
	"\"census\":{\"time\":1764732000,\"hierarchies\":[{\"kind\":\"v1\","
	"\"mount\":\"/sys/fs/cgroup/memory\",\"controllers\":[\"memory\"]}],"
	"\"knobs\":[{\"feature\":\"memcg_v1.swappiness\",\"file\":\"memory.swappiness\","
	"\"cgroup\":\"/a\",\"value\":\"10\"}],\"cgroups_walked\":2,\"truncated\":false},"
	"\"health\":{\"records_lost\":0,\"probes\":[{\"name\":\"cgroup_file_write\","
	"\"state\":\"attached\",\"reason\":\"\"}],\"probe_missing\":[\"memcg_v1.oom_control\"],"
	"\"last_error\":\"\",\"key_rejected\":false}}";

#define BOOT2 "9a8b7c6d-8a4b-4c1d-9e0f-1a2b3c4d5e6f"

/* base_text in wire version 2, with every member version 2 added. */
static const char base2_text[] =
	"{\"v\":2,\"batch_id\":\"0123456789abcdef\",\"seq\":5,\"sent_time\":1764732000,"
	"\"host\":{\"host_id\":\"abcdef\",\"hostname\":\"h\",\"boot_id\":\"" BOOT
	"\","
	"\"kernel\":\"6.1.0\",\"cgroup_mode\":\"v1\",\"agent_version\":\"0.2.0\","
	"\"catalog_version\":1,\"labels\":{\"team\":\"payments\",\"env\":\"prod\"}},"
	"\"warnings\":[{\"feature\":\"cgroup_v1.remount\",\"text\":\"option changes via remount "
	"are deprecated (pid=1 comm=mount)\",\"kmsg_seq\":10,\"mono_us\":100,\"time\":1764732000,"
	"\"level\":4,\"fields\":{\"pid\":\"1\",\"comm\":\"mount\"},\"origin\":\"journal\","
	"\"boot_id\":\"" BOOT2
	"\",\"kernel\":\"6.0.9\",\"source\":\"journal_export\"}],"
	"\"unknown\":[{\"text\":\"foo is deprecated\",\"kmsg_seq\":11,\"mono_us\":101,"
	"\"time\":1764732000,\"count\":1,\"origin\":\"unverified\",\"boot_id\":\"" BOOT
	"\",\"kernel\":\"6.1.0\",\"source\":\"dmesg_x\"}],"
	"\"usage\":[{\"boot_id\":\"" BOOT
	"\",\"feature\":\"memcg_v1.soft_limit\","
	"\"file\":\"memory.soft_limit_in_bytes\",\"op\":\"write\",\"use\":\"configures\","
	"\"cgroup\":\"/a\",\"target_kind\":\"other\",\"comm\":\"bash\","
	"\"uid\":0,\"writer_cgroup\":\"/\",\"container\":\"\",\"image\":\"registry.example.org/ops/tool:1.2\","
	"\"last_pid\":1,\"count\":3,\"failed\":1,\"condition_met\":3,\"first_seen\":1764732000,"
	"\"last_seen\":1764732001,\"value\":{\"last\":1048576,\"min\":4096,\"max\":2097152,"
	"\"unlimited\":true,\"unit\":\"bytes\",\"source\":\"stored\"}}],"
	"\"census\":{\"time\":1764732000,\"hierarchies\":[{\"kind\":\"v1\","
	"\"mount\":\"/sys/fs/cgroup/memory\",\"controllers\":[\"memory\"]}],"
	"\"knobs\":[{\"feature\":\"memcg_v1.swappiness\",\"file\":\"memory.swappiness\","
	"\"cgroup\":\"/a\",\"value\":\"10\",\"target_kind\":\"other\"}],\"cgroups_walked\":2,"
	"\"truncated\":false,\"runtimes\":[{\"name\":\"containerd\",\"version\":\"1.7.2\","
	"\"cgroup_driver\":\"systemd\"}]},"
	"\"health\":{\"records_lost\":0,\"probes\":[{\"name\":\"cgroup_file_write\","
	"\"state\":\"not_built\",\"reason\":\"\"}],\"probe_missing\":[\"memcg_v1.oom_control\"],"
	"\"last_error\":\"\",\"key_rejected\":false,\"controllers\":[{\"name\":\"memory\","
	"\"state\":\"attached\",\"reason\":\"\"}],\"boots\":[{\"boot_id\":\"" BOOT
	"\",\"kernel\":\"6.1.0\",\"first_kmsg_seq\":0,\"first_journal_us\":12,"
	"\"start_covered\":true}],\"journal_missed\":0,\"journal_errors\":0,"
	"\"entries_dropped\":0}}";

static json_t *parse_base(const char *text)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);

	if (!doc)
		fail_msg("base report does not parse: %s", jerr.text);
	return doc;
}

static json_t *base(void)
{
	return parse_base(base_text);
}

static json_t *base2(void)
{
	return parse_base(base2_text);
}

/*
 * Walk "a.b[2].c" in @doc and set the last step to @value (stolen), or
 * delete it when @value is NULL. An index equal to the array size appends.
 */
static void set_at(json_t *doc, const char *path, json_t *value)
{
	char key[128];
	json_t *cur = doc;
	const char *p = path;

	for (;;) {
		bool is_index = *p == '[';
		size_t idx = 0, n = 0;
		json_t *next;

		if (is_index) {
			idx = strtoul(p + 1, (char **)&p, 10);
			assert_true(*p == ']');
			p++;
		} else {
			while (*p && *p != '.' && *p != '[' &&
			       n + 1 < sizeof(key))
				key[n++] = *p++;
			key[n] = '\0';
		}
		if (*p == '.')
			p++;
		if (!*p) {
			if (is_index && value && idx == json_array_size(cur))
				assert_int_equal(
					json_array_append_new(cur, value), 0);
			else if (is_index && value)
				assert_int_equal(
					json_array_set_new(cur, idx, value), 0);
			else if (is_index)
				assert_int_equal(json_array_remove(cur, idx),
						 0);
			else if (value)
				assert_int_equal(json_object_set_new(cur, key,
								     value),
						 0);
			else
				assert_int_equal(json_object_del(cur, key), 0);
			return;
		}
		next = is_index ? json_array_get(cur, idx) :
				  json_object_get(cur, key);
		if (!next)
			fail_msg("test bug: %s has no step before '%s'", path,
				 p);
		cur = next;
	}
}

static json_t *get_at(json_t *doc, const char *path)
{
	char key[128];
	json_t *cur = doc;
	const char *p = path;

	while (*p && cur) {
		size_t n = 0;

		if (*p == '[') {
			size_t idx = strtoul(p + 1, (char **)&p, 10);

			p++;
			cur = json_array_get(cur, idx);
		} else {
			while (*p && *p != '.' && *p != '[' &&
			       n + 1 < sizeof(key))
				key[n++] = *p++;
			key[n] = '\0';
			cur = json_object_get(cur, key);
		}
		if (*p == '.')
			p++;
	}
	if (!cur)
		fail_msg("test bug: no %s in the base report", path);
	return cur;
}

/* A string of exactly @len bytes made of copies of @unit. */
static json_t *repeat(size_t len, const char *unit)
{
	size_t u = strlen(unit), i;
	char *s = malloc(len + 1);
	json_t *v;

	assert_non_null(s);
	assert_int_equal(len % u, 0);
	for (i = 0; i < len; i += u)
		memcpy(s + i, unit, u);
	s[len] = '\0';
	v = json_stringn(s, len);
	free(s);
	assert_non_null(v);
	return v;
}

/*
 * twl_wire_decode() on doc's text must do what twl_report_parse() does
 * (same error, byte for byte), and a valid report with usage[] must take
 * its fast path, which leaves usage[] out of the jansson document.
 */
static void expect_wire(json_t *doc, const char *what)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	struct twl_verr err, werr;
	struct twl_wire_report r;
	json_t *want;
	int ret;

	/* Invalid UTF-8 set with json_stringn_nocheck() has no JSON text
	 * (test_prescan_strings puts such bytes in text). */
	if (!text)
		return;
	want = twl_report_parse(text, strlen(text), &err);
	ret = twl_wire_decode(text, strlen(text), &r, &werr);
	if (!want != !!ret)
		fail_msg("%s: twl_wire_decode %s it", what,
			 ret ? "rejects" : "accepts");
	if (ret) {
		if (memcmp(&err, &werr, sizeof(err)))
			fail_msg("%s: twl_wire_decode says %s at '%s': %s",
				 what, werr.code, werr.field, werr.reason);
	} else {
		if (json_object_get(want, "usage") &&
		    json_object_get(r.doc, "usage"))
			fail_msg("%s: valid, but not decoded by the fast path",
				 what);
		assert_int_equal(r.n_usage, json_array_size(json_object_get(
						    want, "usage")));
		twl_wire_release(&r);
	}
	json_decref(want);
	free(text);
}

static void expect(json_t *doc, const char *code, const char *field,
		   const char *what)
{
	struct twl_verr err;
	int ret = twl_report_validate(doc, &err);

	expect_wire(doc, what);

	if (!code) {
		if (ret)
			fail_msg("%s: rejected with %s at '%s': %s", what,
				 err.code, err.field, err.reason);
		return;
	}
	if (!ret)
		fail_msg("%s: accepted, expected %s at '%s'", what, code,
			 field);
	if (strcmp(err.code, code) || strcmp(err.field, field))
		fail_msg("%s: got %s at '%s' (%s), expected %s at '%s'", what,
			 err.code, err.field, err.reason, code, field);
	assert_int_equal(ret, strcmp(code, TWL_VERR_UNSUPPORTED_VERSION) ?
				      -EINVAL :
				      -EPROTONOSUPPORT);
	assert_true(err.reason[0] != '\0');
}

struct mcase {
	const char *path; /* member to change */
	const char *json; /* new value as JSON text; NULL: delete (or use rep) */
	size_t rep; /* instead of json: a string of rep bytes of unit */
	const char *unit;
	const char *code; /* NULL: must be accepted */
	const char *field;
	const char *path2, *json2; /* a second change (json2 NULL: delete) */
};

#define OK(p, j)                                      \
	{                                             \
		p, j, 0, NULL, NULL, NULL, NULL, NULL \
	}
#define BAD(p, j, c, f)                         \
	{                                       \
		p, j, 0, NULL, c, f, NULL, NULL \
	}
#define OK_LEN(p, n, u)                               \
	{                                             \
		p, NULL, n, u, NULL, NULL, NULL, NULL \
	}
#define BAD_LEN(p, n, u, c)                     \
	{                                       \
		p, NULL, n, u, c, p, NULL, NULL \
	}
#define DEL(p, c, f)                               \
	{                                          \
		p, NULL, 0, NULL, c, f, NULL, NULL \
	}
/* Two changes at once: member @p to @j and @p2 to @j2 (NULL: deleted). */
#define BAD2(p, j, p2, j2, c, f)            \
	{                                   \
		p, j, 0, NULL, c, f, p2, j2 \
	}

static const struct mcase member_cases[] = {
	/* the base itself, and optional members left out */
	OK("seq", "5"),
	DEL("warnings", NULL, NULL),
	DEL("unknown", NULL, NULL),
	DEL("usage", NULL, NULL),
	DEL("census", NULL, NULL),
	OK("census", "null"),
	DEL("warnings[0].fields", NULL, NULL),
	DEL("usage[0].container", NULL, NULL),
	DEL("usage[0].last_pid", NULL, NULL),
	DEL("usage[0].condition_met", NULL, NULL),
	DEL("health.probes[0].reason", NULL, NULL),
	OK("health", "{}"),
	/* required members */
	DEL("batch_id", "missing_field", "batch_id"),
	DEL("seq", "missing_field", "seq"),
	DEL("sent_time", "missing_field", "sent_time"),
	DEL("host", "missing_field", "host"),
	DEL("health", "missing_field", "health"),
	DEL("host.cgroup_mode", "missing_field", "host.cgroup_mode"),
	DEL("host.catalog_version", "missing_field", "host.catalog_version"),
	DEL("warnings[0].feature", "missing_field", "warnings[0].feature"),
	DEL("warnings[0].origin", "missing_field", "warnings[0].origin"),
	DEL("unknown[0].count", "missing_field", "unknown[0].count"),
	DEL("usage[0].boot_id", "missing_field", "usage[0].boot_id"),
	DEL("usage[0].comm", "missing_field", "usage[0].comm"),
	DEL("usage[0].failed", "missing_field", "usage[0].failed"),
	DEL("census.truncated", "missing_field", "census.truncated"),
	DEL("census.hierarchies[0].controllers", "missing_field",
	    "census.hierarchies[0].controllers"),
	DEL("health.probes[0].state", "missing_field",
	    "health.probes[0].state"),
	/* types */
	BAD("seq", "\"5\"", "wrong_type", "seq"),
	BAD("seq", "5.0", "wrong_type", "seq"),
	BAD("host", "[]", "wrong_type", "host"),
	BAD("host.hostname", "7", "wrong_type", "host.hostname"),
	BAD("warnings", "{}", "wrong_type", "warnings"),
	BAD("warnings[0]", "\"x\"", "wrong_type", "warnings[0]"),
	BAD("warnings[0].fields", "[]", "wrong_type", "warnings[0].fields"),
	BAD("warnings[0].fields.pid", "1", "wrong_type",
	    "warnings[0].fields.pid"),
	BAD("census.truncated", "0", "wrong_type", "census.truncated"),
	BAD("health.key_rejected", "\"no\"", "wrong_type",
	    "health.key_rejected"),
	BAD("health.probe_missing[0]", "null", "wrong_type",
	    "health.probe_missing[0]"),
	BAD("health", "null", "wrong_type", "health"),
	BAD("census.hierarchies[0].controllers[0]", "true", "wrong_type",
	    "census.hierarchies[0].controllers[0]"),
	/* unknown members, at every level */
	BAD("extra", "1", "unknown_field", "extra"),
	BAD("host.ip", "\"10.0.0.1\"", "unknown_field", "host.ip"),
	BAD("usage[0].pid", "1", "unknown_field", "usage[0].pid"),
	BAD("census.knobs[0].default", "\"0\"", "unknown_field",
	    "census.knobs[0].default"),
	BAD("health.probes[0].id", "1", "unknown_field", "health.probes[0].id"),
	BAD("health.rss", "1", "unknown_field", "health.rss"),
	/* feature ids: any well-formed id (catalog skew), malformed ones not */
	OK("warnings[0].feature", "\"memcg_v1.kmem_tcp_limit\""),
	OK("warnings[0].feature", "\"memcg_v1.oom_control\""),
	OK("warnings[0].feature", "\"memcg_v1.bogus\""),
	OK("usage[0].feature", "\"memcg_v9.future_knob\""),
	OK("census.knobs[0].feature", "\"x.y\""),
	OK("health.probe_missing[0]", "\"cgroup_v3.z_9\""),
	BAD("warnings[0].feature", "\"\"", "bad_value", "warnings[0].feature"),
	BAD("usage[0].feature", "\"MEMCG_V1.SOFT_LIMIT\"", "bad_value",
	    "usage[0].feature"),
	BAD("census.knobs[0].feature", "\"x\"", "bad_value",
	    "census.knobs[0].feature"),
	BAD("health.probe_missing[0]", "\"y\"", "bad_value",
	    "health.probe_missing[0]"),
	BAD("warnings[0].feature", "\"memcg v1.x\"", "bad_value",
	    "warnings[0].feature"),
	BAD("warnings[0].feature", "\"memcg-v1.x\"", "bad_value",
	    "warnings[0].feature"),
	OK_LEN("usage[0].feature", TWL_WIRE_MAX_FEATURE, "a."),
	BAD_LEN("usage[0].feature", TWL_WIRE_MAX_FEATURE + 1, ".", "too_long"),
	/* string caps: exactly at the cap, one byte over */
	OK_LEN("usage[0].comm", TWL_WIRE_MAX_COMM, "c"),
	BAD_LEN("usage[0].comm", TWL_WIRE_MAX_COMM + 1, "c", "too_long"),
	OK_LEN("warnings[0].text", 1024, "t"),
	BAD_LEN("warnings[0].text", 1025, "t", "too_long"),
	OK_LEN("warnings[0].text", 1024,
	       "\xc3\xa9"), /* caps count bytes: 512 x U+00E9 */
	BAD_LEN("warnings[0].text", 1026, "\xc3\xa9", "too_long"),
	OK_LEN("unknown[0].text", 1024, "u"),
	BAD_LEN("unknown[0].text", 1025, "u", "too_long"),
	OK_LEN("host.hostname", 255, "h"),
	BAD_LEN("host.hostname", 256, "h", "too_long"),
	OK_LEN("host.kernel", 64, "k"),
	BAD_LEN("host.kernel", 65, "k", "too_long"),
	OK_LEN("batch_id", 64, "a"),
	BAD_LEN("batch_id", 65, "a", "too_long"),
	OK_LEN("usage[0].cgroup", 1024, "/"),
	BAD_LEN("usage[0].cgroup", 1025, "/", "too_long"),
	OK_LEN("warnings[0].fields.comm", 127, "m"),
	BAD_LEN("warnings[0].fields.comm", 128, "m", "too_long"),
	OK_LEN("health.last_error", 1024, "e"),
	BAD_LEN("health.last_error", 1025, "e", "too_long"),
	OK("warnings[0].fields.abcdefghijklmno",
	   "\"x\""), /* name of 15 bytes */
	BAD("warnings[0].fields.abcdefghijklmnop", "\"x\"", "too_long",
	    "warnings[0].fields.abcdefghijklmnop"),
	/* empty strings and identifiers */
	OK("usage[0].cgroup", "\"\""),
	OK("usage[0].comm", "\"\""),
	BAD("host.hostname", "\"\"", "bad_value", "host.hostname"),
	BAD("warnings[0].text", "\"\"", "bad_value", "warnings[0].text"),
	BAD("batch_id", "\"\"", "bad_value", "batch_id"),
	BAD("batch_id", "\"abc_def\"", "bad_value", "batch_id"),
	BAD("host.host_id", "\"ABCDEF\"", "bad_value", "host.host_id"),
	BAD("usage[0].boot_id", "\"2f6d7a1e 8a4b\"", "bad_value",
	    "usage[0].boot_id"),
	/* enums */
	OK("host.cgroup_mode", "\"v2\""),
	OK("host.cgroup_mode", "\"hybrid\""),
	BAD("host.cgroup_mode", "\"V1\"", "bad_value", "host.cgroup_mode"),
	OK("usage[0].op", "\"read\""),
	OK("usage[0].op", "\"register_event\""),
	BAD("usage[0].op", "\"write \"", "bad_value", "usage[0].op"),
	OK("warnings[0].origin", "\"unverified\""),
	BAD("unknown[0].origin", "\"journal\"", "bad_value",
	    "unknown[0].origin"),
	BAD("census.hierarchies[0].kind", "\"hybrid\"", "bad_value",
	    "census.hierarchies[0].kind"),
	OK("health.probes[0].state", "\"unavailable\""),
	BAD("health.probes[0].state", "\"\"", "bad_value",
	    "health.probes[0].state"),
	/* integer ranges */
	BAD("seq", "0", "out_of_range", "seq"),
	OK("seq", "9007199254740991"),
	BAD("seq", "9007199254740992", "out_of_range", "seq"),
	BAD("sent_time", "-1", "out_of_range", "sent_time"),
	OK("warnings[0].level", "0"),
	OK("warnings[0].level", "7"),
	BAD("warnings[0].level", "-1", "out_of_range", "warnings[0].level"),
	BAD("warnings[0].level", "8", "out_of_range", "warnings[0].level"),
	OK("usage[0].uid", "4294967295"),
	BAD("usage[0].uid", "4294967296", "out_of_range", "usage[0].uid"),
	BAD("usage[0].uid", "-1", "out_of_range", "usage[0].uid"),
	BAD("unknown[0].count", "0", "out_of_range", "unknown[0].count"),
	/* unknown[] holds distinct texts */
	OK("unknown[1]",
	   "{\"text\":\"bar is deprecated\",\"kmsg_seq\":12,\"mono_us\":102,"
	   "\"time\":1764732000,\"count\":2,\"origin\":\"kmsg\"}"),
	BAD("unknown[1]",
	    "{\"text\":\"foo is deprecated\",\"kmsg_seq\":12,\"mono_us\":102,"
	    "\"time\":1764732000,\"count\":2,\"origin\":\"kmsg\"}",
	    "bad_value", "unknown[1].text"),
	BAD("host.catalog_version", "0", "out_of_range",
	    "host.catalog_version"),
	BAD("health.rss_kb", "-5", "out_of_range", "health.rss_kb"),
	/* cross-member rules of usage counters */
	OK("usage[0].failed", "3"),
	BAD("usage[0].failed", "4", "out_of_range", "usage[0].failed"),
	OK("usage[0].condition_met", "0"),
	BAD("usage[0].condition_met", "4", "out_of_range",
	    "usage[0].condition_met"),
	OK("usage[0].last_seen", "1764732000"),
	BAD("usage[0].last_seen", "1764731999", "out_of_range",
	    "usage[0].first_seen"),
	/* versions: N accepted, newer refused as unsupported_version */
	OK("v", "1"),
	BAD("v", "2", "missing_field", "usage[0].use"),
	BAD("v", "3", "unsupported_version", "v"),
	BAD("v", "1000", "unsupported_version", "v"),
	BAD("v", "0", "out_of_range", "v"),
	BAD("v", "\"1\"", "wrong_type", "v"),
	DEL("v", "missing_field", "v"),
};

/*
 * Every member version 2 added, sent in a version 1 report, is a member
 * that version does not have; values version 2 added to an enumeration
 * are not values of version 1.
 */
static const struct mcase v1_cases[] = {
	BAD("host.labels", "{}", "unknown_field", "host.labels"),
	BAD("warnings[0].boot_id", "\"" BOOT "\"", "unknown_field",
	    "warnings[0].boot_id"),
	BAD("warnings[0].kernel", "\"6.1.0\"", "unknown_field",
	    "warnings[0].kernel"),
	BAD("warnings[0].source", "\"kmsg\"", "unknown_field",
	    "warnings[0].source"),
	BAD("unknown[0].boot_id", "\"" BOOT "\"", "unknown_field",
	    "unknown[0].boot_id"),
	BAD("unknown[0].kernel", "\"6.1.0\"", "unknown_field",
	    "unknown[0].kernel"),
	BAD("unknown[0].source", "\"dmesg\"", "unknown_field",
	    "unknown[0].source"),
	BAD("usage[0].use", "\"configures\"", "unknown_field", "usage[0].use"),
	BAD("usage[0].target_kind", "\"other\"", "unknown_field",
	    "usage[0].target_kind"),
	BAD("usage[0].image", "\"nginx\"", "unknown_field", "usage[0].image"),
	BAD("usage[0].value",
	    "{\"last\":-1,\"unlimited\":true,\"unit\":\"bytes\",\"source\":\"parsed\"}",
	    "unknown_field", "usage[0].value"),
	BAD("census.runtimes", "[]", "unknown_field", "census.runtimes"),
	BAD("census.knobs[0].target_kind", "\"root\"", "unknown_field",
	    "census.knobs[0].target_kind"),
	BAD("health.controllers", "[]", "unknown_field", "health.controllers"),
	BAD("health.boots", "[]", "unknown_field", "health.boots"),
	BAD("health.journal_missed", "0", "unknown_field",
	    "health.journal_missed"),
	BAD("health.journal_errors", "0", "unknown_field",
	    "health.journal_errors"),
	BAD("health.entries_dropped", "0", "unknown_field",
	    "health.entries_dropped"),
	BAD("warnings[0].origin", "\"journal\"", "bad_value",
	    "warnings[0].origin"),
	BAD("health.probes[0].state", "\"not_built\"", "bad_value",
	    "health.probes[0].state"),
};

/* Version 2's members on base2_text: each rule, at and past its bound. */
static const struct mcase v2_cases[] = {
	/* the base, optional members left out */
	OK("seq", "5"),
	DEL("host.labels", NULL, NULL),
	OK("host.labels", "{}"),
	DEL("warnings[0].boot_id", NULL, NULL),
	DEL("warnings[0].kernel", NULL, NULL),
	DEL("warnings[0].source", NULL, NULL),
	DEL("unknown[0].boot_id", NULL, NULL),
	DEL("usage[0].target_kind", NULL, NULL),
	DEL("usage[0].image", NULL, NULL),
	DEL("usage[0].value", NULL, NULL),
	DEL("census.runtimes", NULL, NULL),
	DEL("census.runtimes[0].version", NULL, NULL),
	DEL("census.runtimes[0].cgroup_driver", NULL, NULL),
	DEL("census.knobs[0].target_kind", NULL, NULL),
	DEL("health.controllers", NULL, NULL),
	DEL("health.controllers[0].reason", NULL, NULL),
	DEL("health.boots", NULL, NULL),
	DEL("health.boots[0].kernel", NULL, NULL),
	DEL("health.boots[0].first_kmsg_seq", NULL, NULL),
	DEL("health.boots[0].first_journal_us", NULL, NULL),
	DEL("health.journal_missed", NULL, NULL),
	/* required in version 2 */
	DEL("usage[0].use", "missing_field", "usage[0].use"),
	DEL("usage[0].value.last", "missing_field", "usage[0].value.last"),
	DEL("usage[0].value.unlimited", "missing_field",
	    "usage[0].value.unlimited"),
	DEL("usage[0].value.unit", "missing_field", "usage[0].value.unit"),
	DEL("usage[0].value.source", "missing_field", "usage[0].value.source"),
	DEL("census.runtimes[0].name", "missing_field",
	    "census.runtimes[0].name"),
	DEL("health.controllers[0].name", "missing_field",
	    "health.controllers[0].name"),
	DEL("health.controllers[0].state", "missing_field",
	    "health.controllers[0].state"),
	DEL("health.boots[0].boot_id", "missing_field",
	    "health.boots[0].boot_id"),
	DEL("health.boots[0].start_covered", "missing_field",
	    "health.boots[0].start_covered"),
	/* host.labels: names, values, caps */
	OK("host.labels.a", "\"x\""),
	OK("host.labels", "{\"0k8s.io-zone_b\":\"eu-west-1a\",\"9\":\"1\"}"),
	OK("host.labels.team", "\"A-Za_z.0:9/x@y+z\""),
	BAD("host.labels.Team", "\"x\"", "bad_value", "host.labels.Team"),
	BAD("host.labels._team", "\"x\"", "bad_value", "host.labels._team"),
	BAD("host.labels.-team", "\"x\"", "bad_value", "host.labels.-team"),
	BAD("host.labels.te am", "\"x\"", "bad_value", "host.labels.te am"),
	BAD("host.labels.t\u00e9am", "\"x\"", "bad_value", "host.labels.t??am"),
	BAD("host.labels.team", "\"\"", "bad_value", "host.labels.team"),
	BAD("host.labels.team", "\"pay ments\"", "bad_value",
	    "host.labels.team"),
	BAD("host.labels.team", "\"a,b\"", "bad_value", "host.labels.team"),
	BAD("host.labels.team", "\"a=b\"", "bad_value", "host.labels.team"),
	BAD("host.labels.team", "\"a\\\"b\"", "bad_value", "host.labels.team"),
	BAD("host.labels.team", "\"a\\\\b\"", "bad_value", "host.labels.team"),
	BAD("host.labels.team", "\"caf\u00e9\"", "bad_value",
	    "host.labels.team"),
	BAD("host.labels.team", "1", "wrong_type", "host.labels.team"),
	BAD("host.labels", "[]", "wrong_type", "host.labels"),
	BAD("host.labels", "{\"\":\"x\"}", "bad_value", "host.labels."),
	OK_LEN("host.labels.team", TWL_WIRE_MAX_LABEL_VALUE, "v"),
	BAD_LEN("host.labels.team", TWL_WIRE_MAX_LABEL_VALUE + 1, "v",
		"too_long"),
	OK("host.labels.abcdefghijklmnopqrstuvwxyz012345", "\"x\""),
	BAD("host.labels.abcdefghijklmnopqrstuvwxyz0123456", "\"x\"",
	    "too_long", "host.labels.abcdefghijklmnopqrstuvwxyz0123456"),
	/* records: boot, kernel, origin, source */
	BAD("warnings[0].boot_id", "\"2F6D\"", "bad_value",
	    "warnings[0].boot_id"),
	BAD("unknown[0].boot_id", "\"\"", "bad_value", "unknown[0].boot_id"),
	BAD("warnings[0].kernel", "\"\"", "bad_value", "warnings[0].kernel"),
	OK_LEN("unknown[0].kernel", TWL_WIRE_MAX_SHORT, "k"),
	BAD_LEN("unknown[0].kernel", TWL_WIRE_MAX_SHORT + 1, "k", "too_long"),
	OK("unknown[0].origin", "\"journal\""),
	OK("warnings[0].origin", "\"kmsg\""),
	BAD("warnings[0].origin", "\"journald\"", "bad_value",
	    "warnings[0].origin"),
	OK("warnings[0].source", "\"kmsg\""),
	OK("warnings[0].source", "\"journal\""),
	OK("warnings[0].source", "\"journal_json\""),
	OK("warnings[0].source", "\"dmesg\""),
	OK("warnings[0].source", "\"dmesg_raw\""),
	OK("unknown[0].source", "\"journalctl_short\""),
	OK("unknown[0].source", "\"journalctl_iso\""),
	OK("unknown[0].source", "\"journalctl_precise\""),
	OK("unknown[0].source", "\"journalctl_monotonic\""),
	OK("unknown[0].source", "\"syslog_rfc3164\""),
	OK("unknown[0].source", "\"syslog_rfc5424\""),
	BAD("unknown[0].source", "\"syslog\"", "bad_value",
	    "unknown[0].source"),
	BAD("warnings[0].source", "null", "wrong_type", "warnings[0].source"),
	/* usage[]: use and op agree */
	OK("usage[0].target_kind", "\"root\""),
	OK("usage[0].target_kind", "\"kubernetes\""),
	OK("usage[0].target_kind", "\"docker\""),
	OK("usage[0].target_kind", "\"container\""),
	OK("usage[0].target_kind", "\"systemd_unit\""),
	OK("usage[0].target_kind", "\"systemd_slice\""),
	BAD("usage[0].target_kind", "\"pod\"", "bad_value",
	    "usage[0].target_kind"),
	BAD("census.knobs[0].target_kind", "\"Docker\"", "bad_value",
	    "census.knobs[0].target_kind"),
	BAD("usage[0].use", "\"reads\"", "bad_value", "usage[0].use"),
	BAD("usage[0].use", "\"listens\"", "bad_value", "usage[0].use"),
	BAD("usage[0].use", "\"configure\"", "bad_value", "usage[0].use"),
	BAD2("usage[0].op", "\"read\"", "usage[0].value", NULL, "bad_value",
	     "usage[0].use"),
	BAD2("usage[0].op", "\"read\"", "usage[0].use", "\"reads\"",
	     "bad_value", "usage[0].value"),
	BAD2("usage[0].op", "\"register_event\"", "usage[0].use", "\"listens\"",
	     "bad_value", "usage[0].value"),
	/* usage[].image */
	BAD("usage[0].image", "\"\"", "bad_value", "usage[0].image"),
	OK_LEN("usage[0].image", TWL_WIRE_MAX_IMAGE, "i"),
	BAD_LEN("usage[0].image", TWL_WIRE_MAX_IMAGE + 1, "i", "too_long"),
	/* usage[].value: members */
	BAD("usage[0].value", "[]", "wrong_type", "usage[0].value"),
	BAD("usage[0].value", "null", "wrong_type", "usage[0].value"),
	BAD("usage[0].value.extra", "1", "unknown_field",
	    "usage[0].value.extra"),
	BAD("usage[0].value.unit", "\"pages\"", "bad_value",
	    "usage[0].value.unit"),
	OK("usage[0].value.unit", "\"number\""),
	OK("usage[0].value.unit", "\"bitmask\""),
	BAD("usage[0].value.source", "\"guessed\"", "bad_value",
	    "usage[0].value.source"),
	OK("usage[0].value.source", "\"parsed\""),
	BAD("usage[0].value.unlimited", "1", "wrong_type",
	    "usage[0].value.unlimited"),
	BAD("usage[0].value.last", "1.5", "wrong_type", "usage[0].value.last"),
	BAD("usage[0].value.last", "-2", "out_of_range", "usage[0].value.last"),
	BAD("usage[0].value.min", "-1", "out_of_range", "usage[0].value.min"),
	BAD("usage[0].value.max", "9007199254740992", "out_of_range",
	    "usage[0].value.max"),
	/* usage[].value: rules across its members */
	OK("usage[0].value.min", "1048576"),
	BAD("usage[0].value.min", "2097153", "out_of_range",
	    "usage[0].value.min"),
	OK("usage[0].value.last", "4096"),
	BAD("usage[0].value.last", "4095", "out_of_range",
	    "usage[0].value.last"),
	BAD("usage[0].value.last", "2097153", "out_of_range",
	    "usage[0].value.last"),
	OK("usage[0].value.last", "-1"),
	BAD2("usage[0].value.last", "-1", "usage[0].value.unlimited", "false",
	     "out_of_range", "usage[0].value.last"),
	OK("usage[0].value.unlimited", "false"),
	DEL("usage[0].value.min", "missing_field", "usage[0].value.min"),
	DEL("usage[0].value.max", "missing_field", "usage[0].value.max"),
	BAD2("usage[0].value.min", NULL, "usage[0].value.max", NULL,
	     "missing_field", "usage[0].value.min"),
	BAD2("usage[0].value.last", "-1", "usage[0].value.min", NULL,
	     "missing_field", "usage[0].value.min"),
	/* census.runtimes */
	OK("census.runtimes[0].name", "\"systemd\""),
	OK("census.runtimes[0].name", "\"other\""),
	BAD("census.runtimes[0].name", "\"rkt\"", "bad_value",
	    "census.runtimes[0].name"),
	OK("census.runtimes[0].version", "\"\""),
	BAD_LEN("census.runtimes[0].version", TWL_WIRE_MAX_SHORT + 1, "1",
		"too_long"),
	OK("census.runtimes[0].cgroup_driver", "\"cgroupfs\""),
	OK("census.runtimes[0].cgroup_driver", "\"\""),
	BAD("census.runtimes[0].cgroup_driver", "\"systemd \"", "bad_value",
	    "census.runtimes[0].cgroup_driver"),
	BAD("census.runtimes[0].port", "1", "unknown_field",
	    "census.runtimes[0].port"),
	/* health */
	OK("health.probes[0].state", "\"attached\""),
	BAD("health.controllers[0].name", "\"io\"", "bad_value",
	    "health.controllers[0].name"),
	OK("health.controllers[0].name", "\"cgroup\""),
	OK("health.controllers[0].state", "\"not_built\""),
	BAD("health.controllers[0].state", "\"detached\"", "bad_value",
	    "health.controllers[0].state"),
	BAD("health.boots[0].boot_id", "\"x\"", "bad_value",
	    "health.boots[0].boot_id"),
	BAD("health.boots[0].start_covered", "1", "wrong_type",
	    "health.boots[0].start_covered"),
	BAD("health.boots[0].first_kmsg_seq", "-1", "out_of_range",
	    "health.boots[0].first_kmsg_seq"),
	BAD("health.journal_errors", "-1", "out_of_range",
	    "health.journal_errors"),
	BAD("health.entries_dropped", "\"1\"", "wrong_type",
	    "health.entries_dropped"),
	/* a version 2 report that says it is version 1 */
	BAD("v", "1", "unknown_field", "host.labels"),
	BAD("v", "3", "unsupported_version", "v"),
};

static void run_cases(const struct mcase *cases, size_t n, json_t *(*mk)(void),
		      const char *table)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct mcase *c = &cases[i];
		json_t *doc = mk(), *v = NULL;
		char what[320];

		if (c->json) {
			v = json_loads(c->json, JSON_DECODE_ANY, NULL);
			if (!v)
				fail_msg("test bug: bad JSON %s", c->json);
		} else if (c->rep) {
			v = repeat(c->rep, c->unit);
		}
		set_at(doc, c->path, v);
		if (c->path2)
			set_at(doc, c->path2,
			       c->json2 ? json_loads(c->json2, JSON_DECODE_ANY,
						     NULL) :
					  NULL);
		snprintf(what, sizeof(what), "%s case %zu: %s = %s", table, i,
			 c->path,
			 c->json ? c->json :
			 c->rep	 ? "(repeated string)" :
				   "(deleted)");
		expect(doc, c->code, c->field, what);
		json_decref(doc);
	}
}

static void test_member_cases(void **state)
{
	(void)state;
	run_cases(member_cases, sizeof(member_cases) / sizeof(member_cases[0]),
		  base, "v1");
	run_cases(v1_cases, sizeof(v1_cases) / sizeof(v1_cases[0]), base,
		  "v1-only");
	run_cases(v2_cases, sizeof(v2_cases) / sizeof(v2_cases[0]), base2,
		  "v2");
}

/*
 * N-1: when the version is bumped the previous one must still pass, a
 * report of the previous version is still read, and a newer one is not.
 */
static void test_version_window(void **state)
{
	json_t *doc = base();
	char what[64];

	(void)state;
	assert_int_equal(TWL_WIRE_MIN_VERSION,
			 TWL_WIRE_VERSION > 1 ? TWL_WIRE_VERSION - 1 : 1);
	set_at(doc, "v", json_integer(TWL_WIRE_MIN_VERSION));
	snprintf(what, sizeof(what), "v = %d (N-1 or 1)", TWL_WIRE_MIN_VERSION);
	expect(doc, NULL, NULL, what);
	json_decref(doc);
	doc = base2();
	set_at(doc, "v", json_integer(TWL_WIRE_VERSION));
	expect(doc, NULL, NULL, "v = N");
	/* unknown members of a newer version do not mask the version error */
	set_at(doc, "v", json_integer(TWL_WIRE_VERSION + 1));
	set_at(doc, "member_of_v3", json_true());
	expect(doc, "unsupported_version", "v", "v = N+1");
	set_at(doc, "v", json_integer(TWL_WIRE_MIN_VERSION - 1));
	expect(doc,
	       TWL_WIRE_MIN_VERSION > 1 ? "unsupported_version" :
					  "out_of_range",
	       "v", "v = N-2");
	json_decref(doc);
}

struct cap_case {
	const char *
		array; /* path of an array or object whose [0] entry is copied */
	size_t cap;
	int version; /* of the base report: 1 or 2 */
};

static const struct cap_case caps[] = {
	{ "warnings", TWL_WIRE_MAX_WARNINGS, 1 },
	{ "unknown", TWL_WIRE_MAX_UNKNOWN, 1 },
	{ "usage", TWL_WIRE_MAX_USAGE, 1 },
	{ "census.hierarchies", TWL_WIRE_MAX_HIERARCHIES, 1 },
	{ "census.hierarchies[0].controllers", TWL_WIRE_MAX_CONTROLLERS, 1 },
	{ "census.knobs", TWL_WIRE_MAX_KNOBS, 1 },
	{ "health.probes", TWL_WIRE_MAX_PROBES, 1 },
	{ "health.probe_missing", TWL_WIRE_MAX_PROBES, 1 },
	{ "warnings[0].fields", TWL_WIRE_MAX_FIELDS, 1 },
	{ "usage", TWL_WIRE_MAX_USAGE, 2 },
	{ "host.labels", TWL_WIRE_MAX_LABELS, 2 },
	{ "census.runtimes", TWL_WIRE_MAX_RUNTIMES, 2 },
	{ "health.controllers", TWL_WIRE_MAX_CONTROLLERS_HEALTH, 2 },
	{ "health.boots", TWL_WIRE_MAX_BOOTS, 2 },
};

static void fill_to(json_t *doc, const char *path, size_t n)
{
	json_t *a = get_at(doc, path);
	size_t i;

	if (json_is_array(a)) {
		json_t *item = json_array_get(a, 0);

		assert_non_null(item);
		while (json_array_size(a) < n) {
			json_t *copy = json_deep_copy(item);
			char text[64];

			/* unknown[] texts must be distinct */
			if (json_object_get(copy, "text")) {
				snprintf(text, sizeof(text),
					 "entry %zu is deprecated",
					 json_array_size(a));
				json_object_set_new(copy, "text",
						    json_string(text));
			}
			assert_int_equal(json_array_append_new(a, copy), 0);
		}
		return;
	}
	assert_true(json_is_object(a));
	for (i = 0; json_object_size(a) < n; i++) {
		char key[16];

		snprintf(key, sizeof(key), "f%zu", i);
		assert_int_equal(json_object_set_new(a, key, json_string("v")),
				 0);
	}
}

static void test_array_caps(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		json_t *doc = caps[i].version == 2 ? base2() : base();
		char what[128];

		fill_to(doc, caps[i].array, caps[i].cap);
		snprintf(what, sizeof(what), "%s with %zu entries",
			 caps[i].array, caps[i].cap);
		expect(doc, NULL, NULL, what);
		fill_to(doc, caps[i].array, caps[i].cap + 1);
		snprintf(what, sizeof(what), "%s with %zu entries",
			 caps[i].array, caps[i].cap + 1);
		expect(doc, "too_many", caps[i].array, what);
		json_decref(doc);
	}
}

/* Strings built without jansson's UTF-8 check reach the validator's own. */
/*
 * The fast path's values: every member lands in its field, escapes are
 * decoded, absent optional members read "" and 0, whitespace is allowed
 * anywhere, and all agrees with twl_wire_from_doc() on the full parse.
 */
static void test_wire_values(void **state)
{
	static const char entry2[] =
		"{ \"boot_id\" : \"" BOOT
		"\", \"feature\":\"memcg_v1.soft_limit\","
		"\"file\":\"memory.soft_limit_in_bytes\",\"op\":\"read\","
		"\"cgroup\":\"/x\\u00e9\\n\\\"y\",\"comm\":\"c\\/d\",\n\t\"uid\":4294967295,"
		"\"writer_cgroup\":\"/w\",\"count\":9007199254740991,\"failed\":0,"
		"\"first_seen\":5,\"last_seen\":5 }";
	const char *at = strstr(base_text, "}],\"census\"");
	struct twl_wire_report fast, full;
	struct twl_verr err;
	json_t *doc;
	char *text;
	size_t n;

	(void)state;
	assert_non_null(at);
	n = (size_t)(at - base_text) + 1;
	text = malloc(sizeof(base_text) + sizeof(entry2) + 1);
	assert_non_null(text);
	memcpy(text, base_text, n);
	text[n] = ',';
	memcpy(text + n + 1, entry2, sizeof(entry2) - 1);
	strcpy(text + n + sizeof(entry2), base_text + n);

	assert_int_equal(twl_wire_decode(text, strlen(text), &fast, &err), 0);
	assert_null(json_object_get(fast.doc, "usage")); /* the fast path */
	doc = twl_report_parse(text, strlen(text), &err);
	assert_non_null(doc);
	assert_int_equal(twl_wire_from_doc(doc, &full), 0);
	assert_int_equal(fast.n_usage, 2);
	assert_int_equal(full.n_usage, 2);

	assert_string_equal(fast.usage[0].boot_id, BOOT);
	assert_string_equal(fast.usage[0].feature, "memcg_v1.soft_limit");
	assert_string_equal(fast.usage[0].file, "memory.soft_limit_in_bytes");
	assert_string_equal(fast.usage[0].op, "write");
	assert_string_equal(fast.usage[0].cgroup, "/a");
	assert_string_equal(fast.usage[0].comm, "bash");
	assert_string_equal(fast.usage[0].writer_cgroup, "/");
	assert_string_equal(fast.usage[0].container, "");
	assert_true(fast.usage[0].uid == 0 && fast.usage[0].last_pid == 1);
	assert_true(fast.usage[0].count == 3 && fast.usage[0].failed == 1 &&
		    fast.usage[0].condition_met == 3);
	assert_true(fast.usage[0].first_seen == 1764732000 &&
		    fast.usage[0].last_seen == 1764732001);

	assert_string_equal(fast.usage[1].op, "read");
	assert_string_equal(fast.usage[1].cgroup, "/x\xc3\xa9\n\"y");
	assert_string_equal(fast.usage[1].comm, "c/d");
	assert_string_equal(fast.usage[1].container, "");
	assert_true(fast.usage[1].uid == 4294967295LL);
	assert_true(fast.usage[1].last_pid == 0 &&
		    fast.usage[1].condition_met == 0);
	assert_true(fast.usage[1].count == 9007199254740991LL);

	/* version 1: use derived from op, the members of version 2 empty */
	assert_string_equal(fast.usage[0].use, "configures");
	assert_string_equal(fast.usage[1].use, "reads");
	assert_string_equal(fast.usage[0].target_kind, "");
	assert_string_equal(fast.usage[0].image, "");
	assert_false(fast.usage[0].value.present);
	assert_string_equal(fast.usage[0].value.unit, "");
	for (size_t i = 0; i < 2; i++)
		same_usage(&fast.usage[i], &full.usage[i]);
	twl_wire_release(&fast);
	twl_wire_release(&full);
	json_decref(doc);
	free(text);
}

/* Both decoders of @text: the fast path taken, the same values. */
static void decode_both(const char *text, struct twl_wire_report *fast,
			struct twl_wire_report *full, json_t **doc)
{
	struct twl_verr err;

	if (twl_wire_decode(text, strlen(text), fast, &err))
		fail_msg("rejected: %s at %s: %s", err.code, err.field,
			 err.reason);
	assert_null(json_object_get(fast->doc, "usage")); /* the fast path */
	*doc = twl_report_parse(text, strlen(text), &err);
	assert_non_null(*doc);
	assert_int_equal(twl_wire_from_doc(*doc, full), 0);
	assert_int_equal(fast->n_usage, full->n_usage);
	for (size_t i = 0; i < fast->n_usage; i++)
		same_usage(&fast->usage[i], &full->usage[i]);
}

/* Version 2's usage[] members in their fields, value's included. */
static void test_wire_values_v2(void **state)
{
	static const char entry2[] =
		",{\"boot_id\":\"" BOOT
		"\",\"feature\":\"memcg_v1.oom_control\","
		"\"file\":\"memory.oom_control\",\"op\":\"register_event\","
		"\"use\":\"listens\",\"cgroup\":\"/kubepods/pod1/x\",\"comm\":\"k\","
		"\"uid\":0,\"writer_cgroup\":\"/\",\"count\":1,\"failed\":0,"
		"\"first_seen\":5,\"last_seen\":5},"
		"{\"value\" : { \"source\":\"parsed\", \"unit\":\"number\","
		"\"unlimited\":false,\"last\":0,\"max\":100,\"min\":0 },"
		"\"boot_id\":\"" BOOT "\",\"feature\":\"memcg_v1.swappiness\","
		"\"file\":\"memory.swappiness\",\"use\":\"configures\",\"op\":\"write\","
		"\"cgroup\":\"/a\",\"comm\":\"k\",\"uid\":0,\"writer_cgroup\":\"/\","
		"\"count\":1,\"failed\":0,\"first_seen\":5,\"last_seen\":5}";
	const char *at = strstr(base2_text, "}}],\"census\"");
	struct twl_wire_report fast, full;
	const struct twl_wire_usage *u;
	json_t *doc;
	char *text;
	size_t n;

	(void)state;
	assert_non_null(at);
	n = (size_t)(at - base2_text) + 2;
	text = malloc(sizeof(base2_text) + sizeof(entry2));
	assert_non_null(text);
	snprintf(text, sizeof(base2_text) + sizeof(entry2), "%.*s%s%s", (int)n,
		 base2_text, entry2, base2_text + n);
	decode_both(text, &fast, &full, &doc);
	assert_int_equal(fast.n_usage, 3);
	u = &fast.usage[0];
	assert_string_equal(u->use, "configures");
	assert_string_equal(u->target_kind, "other");
	assert_string_equal(u->image, "registry.example.org/ops/tool:1.2");
	assert_true(u->value.present && u->value.has_min && u->value.has_max &&
		    u->value.unlimited);
	assert_true(u->value.last == 1048576 && u->value.min == 4096 &&
		    u->value.max == 2097152);
	assert_string_equal(u->value.unit, "bytes");
	assert_string_equal(u->value.source, "stored");
	u = &fast.usage[1];
	assert_string_equal(u->use, "listens");
	assert_string_equal(u->target_kind, "");
	assert_int_equal(twl_wire_usage_target_kind(u), TWL_CGROUP_KUBERNETES);
	assert_int_equal(twl_wire_usage_target_kind(&fast.usage[0]),
			 TWL_CGROUP_OTHER);
	assert_string_equal(u->image, "");
	assert_false(u->value.present || u->value.unlimited);
	assert_string_equal(u->value.source, "");
	u = &fast.usage[2];
	assert_true(u->value.present && !u->value.unlimited &&
		    u->value.last == 0 && u->value.max == 100);
	assert_string_equal(u->value.unit, "number");
	assert_string_equal(u->value.source, "parsed");
	twl_wire_release(&fast);
	twl_wire_release(&full);
	json_decref(doc);
	free(text);
}

/* @base with its first `from` replaced by `to` (caller frees). */
static char *edit(const char *base, const char *from, const char *to)
{
	const char *at = strstr(base, from);
	size_t n, len = strlen(base) + strlen(to) + 1;
	char *out = malloc(len);

	assert_non_null(at);
	assert_non_null(out);
	n = (size_t)(at - base);
	snprintf(out, len, "%.*s%s%s", (int)n, base, to, at + strlen(from));
	return out;
}

struct text_case {
	const char *from, *to;
};

/*
 * Texts no jansson tree can hold, or that the fast path must hand over:
 * twl_wire_decode() rejects each with twl_report_parse()'s error.
 */
static void text_rejects(const char *base, const struct text_case *t, size_t n)
{
	struct twl_verr err, werr;
	struct twl_wire_report r;

	for (size_t i = 0; i < n; i++) {
		char *text = edit(base, t[i].from, t[i].to);
		json_t *doc = twl_report_parse(text, strlen(text), &err);

		if (doc)
			fail_msg("case %s: twl_report_parse accepts it",
				 t[i].to);
		if (!twl_wire_decode(text, strlen(text), &r, &werr))
			fail_msg("case %s: twl_wire_decode accepts it",
				 t[i].to);
		if (memcmp(&err, &werr, sizeof(err)))
			fail_msg("case %s: %s at '%s', expected %s at '%s'",
				 t[i].to, werr.code, werr.field, err.code,
				 err.field);
		free(text);
	}
}

static void test_wire_text_rejects(void **state)
{
	static const struct text_case t[] = {
		{ "\"comm\":\"bash\",", "\"comm\":\"bash\",\"comm\":\"sh\"," },
		{ "\"usage\":[", "\"usage\":[],\"usage\":[" },
		{ "\"seq\":5,", "\"seq\":5,\"seq\":6," },
		{ "\"uid\":0,", "\"uid\":0.0," },
		{ "\"count\":3,", "\"count\":null," },
		{ "\"count\":3,", "\"count\":1e0," },
		{ "\"count\":3,", "\"count\":03," },
		{ "\"count\":3,", "\"count\":99999999999999999999," },
		{ "\"count\":3,", "\"count\":true," },
		{ "\"comm\":\"bash\"", "\"comm\":\"ba\\x\"" },
		{ "\"usage\":[{", "\"usage\":{\"a\":[{" },
		{ "\"usage\":[{", "\"usage\":[null,{" },
		{ "\"last_seen\":1764732001}", "\"last_seen\":1764732001,}" },
		{ "\"key_rejected\":false}}", "\"key_rejected\":false}} x" },
		{ "\"key_rejected\":false}}", "\"key_rejected\":false}" },
		{ "\"last_seen\":1764732001}",
		  "\"last_seen\":1764732001,\"value\":{}}" },
	};
	static const struct text_case t2[] = {
		{ "\"unit\":\"bytes\"",
		  "\"unit\":\"bytes\",\"unit\":\"number\"" },
		{ "\"unlimited\":true", "\"unlimited\":tru" },
		{ "\"unlimited\":true", "\"unlimited\":truex" },
		{ "\"unlimited\":true", "\"unlimited\":null" },
		{ "\"unlimited\":true", "\"unlimited\":\"true\"" },
		{ "\"unlimited\":true", "\"unlimited\":1" },
		{ "\"last\":1048576", "\"last\":true" },
		{ "\"last\":1048576", "\"last\":{}" },
		{ "\"use\":\"configures\"", "\"use\":{}" },
		{ "\"use\":\"configures\"", "\"use\":false" },
		{ "\"value\":{\"last\"", "\"value\":{\"value\":{},\"last\"" },
		{ "\"value\":{", "\"value\":[{" },
		{ "\"value\":{\"last\":1048576,",
		  "\"value\":{\"last\":1048576,," },
		{ "\"source\":\"stored\"}", "\"source\":\"stored\",}" },
		{ "\"source\":\"stored\"}", "\"source\":\"stored\"" },
		{ "\"source\":\"stored\"}}",
		  "\"source\":\"stored\"},\"value\":{}}" },
		{ "\"source\":\"stored\"}",
		  "\"source\":\"stored\",\"\\u0000\":1}" },
	};

	(void)state;
	text_rejects(base_text, t, sizeof(t) / sizeof(t[0]));
	text_rejects(base2_text, t2, sizeof(t2) / sizeof(t2[0]));
}

static void test_utf8_in_tree(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		bool ok;
	} t[] = {
		{ "caf\xc3\xa9", 5, true },
		{ "\xf4\x8f\xbf\xbf", 4, true }, /* U+10FFFF */
		{ "\xc0\xaf", 2, false }, /* overlong '/' */
		{ "\xe0\x80\xaf", 3, false }, /* overlong, 3 bytes */
		{ "\xed\xa0\x80", 3, false }, /* surrogate */
		{ "\xf4\x90\x80\x80", 4, false }, /* > U+10FFFF */
		{ "ab\xe2\x82", 4, false }, /* truncated */
		{ "a\0b", 3, false }, /* NUL */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *doc = base();
		char what[64];

		set_at(doc, "usage[0].cgroup",
		       json_stringn_nocheck(t[i].bytes, t[i].len));
		snprintf(what, sizeof(what), "utf8 case %zu", i);
		expect(doc, t[i].ok ? NULL : "invalid_utf8", "usage[0].cgroup",
		       what);
		json_decref(doc);
	}
}

/* Member names with a NUL or odd bytes are unknown, and the path stays printable. */
static void test_odd_member_names(void **state)
{
	json_t *doc = base();
	struct twl_verr err;
	char longname[300];

	assert_int_equal(json_object_setn_new_nocheck(get_at(doc, "usage[0]"),
						      "count\0x", 7,
						      json_integer(1)),
			 0);
	expect(doc, "unknown_field", "usage[0].count", "name with NUL");
	json_decref(doc);

	doc = base();
	set_at(doc, "host.caf\xc3\xa9", json_integer(1));
	expect(doc, "unknown_field", "host.caf??", "non-ASCII name shown as ?");
	json_decref(doc);

	doc = base();
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(json_object_set_new(doc, longname, json_integer(1)),
			 0);
	assert_int_equal(twl_report_validate(doc, &err), -EINVAL);
	assert_string_equal(err.code, "unknown_field");
	assert_int_equal(strlen(err.field), sizeof(err.field) - 1);
	assert_string_equal(err.field + sizeof(err.field) - 4, "...");
	json_decref(doc);

	/* a non-object document, and NULL */
	doc = json_array();
	expect(doc, "wrong_type", "", "array document");
	json_decref(doc);
	assert_int_equal(twl_report_validate(NULL, &err), -EINVAL);
	assert_string_equal(err.code, "wrong_type");
}

static char *dump(json_t *doc)
{
	char *s = json_dumps(doc, JSON_COMPACT);

	assert_non_null(s);
	return s;
}

static void parse_expect(const char *text, size_t len, const char *code,
			 const char *field, const char *what)
{
	struct twl_verr err;
	json_t *doc;

	errno = 0;
	doc = twl_report_parse(text, len, &err);
	if (!code) {
		if (!doc)
			fail_msg("%s: rejected with %s at '%s': %s", what,
				 err.code, err.field, err.reason);
		json_decref(doc);
		return;
	}
	if (doc)
		fail_msg("%s: accepted, expected %s at '%s'", what, code,
			 field);
	if (strcmp(err.code, code) || strcmp(err.field, field))
		fail_msg("%s: got %s at '%s' (%s), expected %s at '%s'", what,
			 err.code, err.field, err.reason, code, field);
	assert_int_equal(errno, strcmp(code, "unsupported_version") ?
					EINVAL :
					EPROTONOSUPPORT);
}

/*
 * Nesting, root object = level 1: n arrays in "warnings" or n objects in
 * "census" make n + 1 levels.
 */
static void test_depth(void **state)
{
	char path[128];
	int kind;

	for (kind = 0; kind < 2; kind++) {
		const char *top = kind ? "census" : "warnings";
		json_t *doc = base(), *inner = NULL, *outer;
		size_t n = TWL_WIRE_MAX_DEPTH - 1, i, plen;
		char *text;

		for (i = 0; i < n + 1; i++) {
			outer = kind ? json_object() : json_array();
			if (inner && kind)
				json_object_set_new(outer, "x", inner);
			else if (inner)
				json_array_append_new(outer, inner);
			inner = outer;
			if (i + 1 == n) {
				/* exactly at the cap: not too_deep, but still wrong */
				json_incref(inner);
				set_at(doc, top, inner);
				text = dump(doc);
				parse_expect(text, strlen(text),
					     kind ? "unknown_field" :
						    "wrong_type",
					     kind ? "census.x" : "warnings[0]",
					     "depth at cap");
				free(text);
			}
		}
		/* one level over: named where the 17th level opens */
		set_at(doc, top, inner);
		text = dump(doc);
		plen = (size_t)snprintf(path, sizeof(path), "%s", top);
		for (i = 0; i < TWL_WIRE_MAX_DEPTH - 1; i++)
			plen += (size_t)snprintf(path + plen,
						 sizeof(path) - plen, "%s",
						 kind ? ".x" : "[0]");
		parse_expect(text, strlen(text), "too_deep", path,
			     "depth over cap");
		free(text);
		json_decref(doc);
	}
}

/* A string literal and its length without the NUL. */
#define S(lit) lit, sizeof(lit) - 1

/* Brackets and quotes inside strings do not count as nesting. */
static void test_prescan_strings(void **state)
{
	json_t *doc = base();
	char *text;

	set_at(doc, "warnings[0].text",
	       json_string(
		       "a \"quoted\" [[[[[[[[[[[[[[[[[[[[ {{{{{{{{{{{{{{{{{{{{ \\ \\\" ]"));
	set_at(doc, "warnings[0].fields.comm", json_string("\\"));
	text = dump(doc);
	parse_expect(text, strlen(text), NULL, NULL, "brackets in strings");
	free(text);
	json_decref(doc);

	/* raw invalid UTF-8 after escaped quotes: still found in the right member */
	parse_expect(S("{\"v\":1,\"batch_id\":\"a\\\"\xff\"}"), "invalid_utf8",
		     "batch_id", "raw byte after an escape");
	parse_expect(S("{\"v\":1,\"host\":{\"x\":1,\"y\":[1,2,\"\xc0\x80\"]}}"),
		     "invalid_utf8", "host.y[2]", "path through arrays");
	parse_expect(S("{\"a\":1,\"b\xff\":2}"), "invalid_utf8", "",
		     "bad key at the root");
	parse_expect(S(""), "invalid_json", "", "empty input");
	parse_expect(S("{\"v\":1"), "invalid_json", "", "truncated");
	parse_expect(S("{\"v\":1}x"), "invalid_json", "", "trailing garbage");
	parse_expect(S("{\"v\":1,\"v\":1}"), "invalid_json", "",
		     "duplicate key");
	parse_expect(S("{\"v\":3}"), "unsupported_version", "v",
		     "newer version via parse");
	parse_expect(S("[1]"), "wrong_type", "", "array document via parse");
	assert_null(twl_report_parse(NULL, 5, NULL));
}

/* The whole-document size cap, exactly at and one byte over. */
static void test_size_cap(void **state)
{
	json_t *doc = base();
	char *text = dump(doc), *big;
	size_t len = strlen(text), cap = TWL_WIRE_MAX_DOC_BYTES;

	big = malloc(cap + 1);
	assert_non_null(big);
	memcpy(big, text, len);
	memset(big + len, ' ', cap + 1 - len); /* JSON allows trailing space */
	parse_expect(big, cap, NULL, NULL, "document of exactly the cap");
	parse_expect(big, cap + 1, "too_long", "",
		     "document one byte over the cap");
	free(big);
	free(text);
	json_decref(doc);
}

static void test_error_json(void **state)
{
	struct twl_verr err;
	json_t *doc = base(), *e;

	set_at(doc, "usage[0].comm",
	       json_string(
		       "a-process-name-longer-than-the-sixty-four-bytes-the-wire-format-allows"));
	assert_int_equal(twl_report_validate(doc, &err), -EINVAL);
	e = twl_verr_to_json(&err);
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "error")),
			    "too_long");
	assert_string_equal(json_string_value(json_object_get(e, "field")),
			    "usage[0].comm");
	assert_non_null(
		strstr(json_string_value(json_object_get(e, "reason")), "64"));
	json_decref(e);
	json_decref(doc);
	/* a NULL err is allowed */
	doc = base();
	assert_int_equal(twl_report_validate(doc, NULL), 0);
	set_at(doc, "seq", json_string("x"));
	assert_int_equal(twl_report_validate(doc, NULL), -EINVAL);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_cases),
		cmocka_unit_test(test_version_window),
		cmocka_unit_test(test_array_caps),
		cmocka_unit_test(test_utf8_in_tree),
		cmocka_unit_test(test_wire_values),
		cmocka_unit_test(test_wire_values_v2),
		cmocka_unit_test(test_wire_text_rejects),
		cmocka_unit_test(test_odd_member_names),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_prescan_strings),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_error_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
