// SPDX-License-Identifier: GPL-2.0
/*
 * Wire format v1, declaratively: one table per object, walked by the
 * generic checker in wire_validate.c and, for usage[], by the fast path
 * in wire_decode.c. schema/wire-format.md says the same for people.
 *
 * Every entry names the wire version that introduced it: a member new in
 * version 2 is one more line, SINCE(2, ...) (or USAGE(2, field, ...) in
 * usage[] with its field in struct twl_wire_usage), and a version-1
 * report that carries it is told the member is unknown.
 */
#include <stddef.h>
#include <stdint.h>

#include <twilight/wire.h>

#include "wire_internal.h"

/* A member of an object, first sent in wire version @ver. */
#define SINCE(ver, ...)                   \
	{                                 \
		.since = ver, __VA_ARGS__ \
	}
/* A usage[] member, also saying which twl_wire_usage @field holds it. */
#define USAGE(ver, field, ...)                                                \
	{                                                                     \
		.since = ver, .flat = offsetof(struct twl_wire_usage, field), \
		__VA_ARGS__                                                   \
	}
/* The items of an array or values of a map: versioned by their member. */
#define ITEM(...)                       \
	{                               \
		.since = 1, __VA_ARGS__ \
	}

/* What a member is: the rest of SINCE(), USAGE() or ITEM(). */
#define INT(n, fl, lo, hi) \
	.name = n, .kind = K_INT, .flags = fl, .min = lo, .max = hi
#define COUNT(n, fl) INT(n, fl, 0, TWL_WIRE_MAX_INT)
#define BOOL(n, fl) .name = n, .kind = K_BOOL, .flags = fl
#define STR(n, fl, len, sf) \
	.name = n, .kind = K_STR, .flags = fl, .max_len = len, .str_flags = sf
#define ENUM(n, fl, list)                                                   \
	.name = n, .kind = K_STR, .flags = fl, .max_len = TWL_WIRE_MAX_STR, \
	.enums = list
#define OBJ(n, fl, spec) .name = n, .kind = K_OBJ, .flags = fl, .obj = spec
#define ARR(n, fl, cap, it) \
	.name = n, .kind = K_ARR, .flags = fl, .max_items = cap, .item = it
/* An object of free member names (at most @keylen bytes) to @it values. */
#define MAP(n, fl, cap, keylen, it)                              \
	.name = n, .kind = K_MAP, .flags = fl, .max_items = cap, \
	.max_len = keylen, .item = it
#define FEATURE(n, fl) STR(n, fl, TWL_WIRE_MAX_FEATURE, S_NONEMPTY | S_FEATURE)
#define SPEC(w, m, chk)                                             \
	{                                                           \
		.what = w, .members = m,                            \
		.n_members = sizeof(m) / sizeof(m[0]), .check = chk \
	}

static const char *const origin_enum[] = { "kmsg", "unverified", NULL };
static const char *const cgroup_mode_enum[] = { "v1", "v2", "hybrid", NULL };
static const char *const op_enum[] = { "read", "write", "register_event",
				       NULL };
static const char *const kind_enum[] = { "v1", "v2", NULL };
static const char *const state_enum[] = { "attached", "unavailable", NULL };

/* host */
static const struct member host_members[] = {
	SINCE(1, STR("host_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(1, STR("hostname", M_REQ, TWL_WIRE_MAX_NAME, S_NONEMPTY)),
	SINCE(1, STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(1, STR("kernel", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, ENUM("cgroup_mode", M_REQ, cgroup_mode_enum)),
	SINCE(1, STR("agent_version", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, INT("catalog_version", M_REQ, 1, INT32_MAX)),
};
static const struct objspec host_spec = SPEC("the host", host_members, NULL);

/* warnings[] */
static const struct member field_value =
	ITEM(STR(NULL, 0, TWL_WIRE_MAX_FIELD_VALUE, 0));
static const struct member warning_members[] = {
	SINCE(1, FEATURE("feature", M_REQ)),
	SINCE(1, STR("text", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY)),
	SINCE(1, COUNT("kmsg_seq", M_REQ)),
	SINCE(1, COUNT("mono_us", M_REQ)),
	SINCE(1, COUNT("time", M_REQ)),
	SINCE(1, INT("level", M_REQ, 0, 7)),
	SINCE(1, MAP("fields", 0, TWL_WIRE_MAX_FIELDS, TWL_WIRE_MAX_FIELD_NAME,
		     &field_value)),
	SINCE(1, ENUM("origin", M_REQ, origin_enum)),
};
static const struct objspec warning_spec =
	SPEC("a warning", warning_members, NULL);
static const struct member warning_item = ITEM(OBJ(NULL, 0, &warning_spec));

/* unknown[] */
static const struct member unknown_members[] = {
	SINCE(1, STR("text", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY)),
	SINCE(1, COUNT("kmsg_seq", M_REQ)),
	SINCE(1, COUNT("mono_us", M_REQ)),
	SINCE(1, COUNT("time", M_REQ)),
	SINCE(1, INT("count", M_REQ, 1, TWL_WIRE_MAX_INT)),
	SINCE(1, ENUM("origin", M_REQ, origin_enum)),
};
static const struct objspec unknown_spec =
	SPEC("an unknown deprecation", unknown_members, NULL);
static const struct member unknown_item = ITEM(OBJ(NULL, 0, &unknown_spec));

/* usage[]: twl_wire_decode() reads these straight from the text. */
const struct member wire_usage_members[] = {
	USAGE(1, boot_id, STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	USAGE(1, feature, FEATURE("feature", M_REQ)),
	USAGE(1, file, STR("file", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	USAGE(1, op, ENUM("op", M_REQ, op_enum)),
	USAGE(1, cgroup, STR("cgroup", M_REQ, TWL_WIRE_MAX_STR, 0)),
	USAGE(1, comm, STR("comm", M_REQ, TWL_WIRE_MAX_COMM, 0)),
	USAGE(1, uid, INT("uid", M_REQ, 0, UINT32_MAX)),
	USAGE(1, writer_cgroup,
	      STR("writer_cgroup", M_REQ, TWL_WIRE_MAX_STR, 0)),
	USAGE(1, container, STR("container", 0, TWL_WIRE_MAX_STR, 0)),
	USAGE(1, last_pid, INT("last_pid", 0, 0, INT32_MAX)),
	USAGE(1, count, COUNT("count", M_REQ)),
	USAGE(1, failed, COUNT("failed", M_REQ)),
	USAGE(1, condition_met, COUNT("condition_met", 0)),
	USAGE(1, first_seen, COUNT("first_seen", M_REQ)),
	USAGE(1, last_seen, COUNT("last_seen", M_REQ)),
};
_Static_assert(sizeof(wire_usage_members) / sizeof(wire_usage_members[0]) ==
		       WIRE_N_USAGE,
	       "WIRE_N_USAGE must count wire_usage_members[]");
static const struct objspec usage_spec = {
	.what = "a usage counter",
	.members = wire_usage_members,
	.n_members = WIRE_N_USAGE,
	.check = wire_check_usage,
};
static const struct member usage_item = ITEM(OBJ(NULL, 0, &usage_spec));

/* census */
static const struct member controller_item =
	ITEM(STR(NULL, 0, TWL_WIRE_MAX_SHORT, S_NONEMPTY));
static const struct member hierarchy_members[] = {
	SINCE(1, ENUM("kind", M_REQ, kind_enum)),
	SINCE(1, STR("mount", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY)),
	SINCE(1, ARR("controllers", M_REQ, TWL_WIRE_MAX_CONTROLLERS,
		     &controller_item)),
};
static const struct objspec hierarchy_spec =
	SPEC("a hierarchy", hierarchy_members, NULL);
static const struct member hierarchy_item = ITEM(OBJ(NULL, 0, &hierarchy_spec));
static const struct member knob_members[] = {
	SINCE(1, FEATURE("feature", M_REQ)),
	SINCE(1, STR("file", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, STR("cgroup", M_REQ, TWL_WIRE_MAX_STR, 0)),
	SINCE(1, STR("value", M_REQ, TWL_WIRE_MAX_STR, 0)),
};
static const struct objspec knob_spec = SPEC("a knob", knob_members, NULL);
static const struct member knob_item = ITEM(OBJ(NULL, 0, &knob_spec));
static const struct member census_members[] = {
	SINCE(1, COUNT("time", M_REQ)),
	SINCE(1, ARR("hierarchies", M_REQ, TWL_WIRE_MAX_HIERARCHIES,
		     &hierarchy_item)),
	SINCE(1, ARR("knobs", M_REQ, TWL_WIRE_MAX_KNOBS, &knob_item)),
	SINCE(1, COUNT("cgroups_walked", M_REQ)),
	SINCE(1, BOOL("truncated", M_REQ)),
};
static const struct objspec census_spec =
	SPEC("the census", census_members, NULL);

/* health */
static const struct member probe_members[] = {
	SINCE(1, STR("name", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, ENUM("state", M_REQ, state_enum)),
	SINCE(1, STR("reason", 0, TWL_WIRE_MAX_STR, 0)),
};
static const struct objspec probe_spec = SPEC("a probe", probe_members, NULL);
static const struct member probe_item = ITEM(OBJ(NULL, 0, &probe_spec));
static const struct member feature_item = ITEM(FEATURE(NULL, 0));
static const struct member health_members[] = {
	SINCE(1, COUNT("records_lost", 0)),
	SINCE(1, COUNT("parse_failures", 0)),
	SINCE(1, ARR("probes", 0, TWL_WIRE_MAX_PROBES, &probe_item)),
	SINCE(1, ARR("probe_missing", 0, TWL_WIRE_MAX_PROBES, &feature_item)),
	SINCE(1, COUNT("map_overflows", 0)),
	SINCE(1, COUNT("spool_bytes", 0)),
	SINCE(1, COUNT("spool_files", 0)),
	SINCE(1, COUNT("spool_dropped", 0)),
	SINCE(1, COUNT("send_failures", 0)),
	SINCE(1, STR("last_error", 0, TWL_WIRE_MAX_STR, 0)),
	SINCE(1, BOOL("key_rejected", 0)),
	SINCE(1, COUNT("rss_kb", 0)),
	SINCE(1, COUNT("rss_anon_kb", 0)),
	SINCE(1, COUNT("cpu_ms", 0)),
};
static const struct objspec health_spec =
	SPEC("the health", health_members, NULL);

/* the document */
static const struct member report_members[] = {
	SINCE(1, INT("v", M_REQ, 1, TWL_WIRE_VERSION)),
	SINCE(1, STR("batch_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(1, INT("seq", M_REQ, 1, TWL_WIRE_MAX_INT)),
	SINCE(1, COUNT("sent_time", M_REQ)),
	SINCE(1, OBJ("host", M_REQ, &host_spec)),
	SINCE(1, ARR("warnings", 0, TWL_WIRE_MAX_WARNINGS, &warning_item)),
	SINCE(1, ARR("unknown", 0, TWL_WIRE_MAX_UNKNOWN, &unknown_item)),
	SINCE(1, ARR("usage", 0, TWL_WIRE_MAX_USAGE, &usage_item)),
	SINCE(1, OBJ("census", M_NULL, &census_spec)),
	SINCE(1, OBJ("health", M_REQ, &health_spec)),
};
const struct objspec wire_report_spec =
	SPEC("the report", report_members, wire_check_report);
