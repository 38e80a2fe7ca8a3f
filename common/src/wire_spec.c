// SPDX-License-Identifier: GPL-2.0
/*
 * Wire format v1 and v2, declaratively: one table per object, walked by
 * the generic checker in wire_validate.c and, for usage[], by the fast
 * path in wire_decode.c. schema/wire-format.md says the same for people.
 *
 * Every entry names the wire version that introduced it: a member new in
 * version 2 is SINCE(2, ...) (or USAGE(2, field, ...) in usage[] with its
 * field in struct twl_wire_usage), and a version-1 report that carries it
 * is told the member is unknown. An enumeration that gained a value says
 * so with ENUM_V(): the value is bad_value in an older report.
 */
#include <stddef.h>
#include <stdint.h>

#include <twilight/cgroup_class.h>
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
/* An optional usage[] member's presence flag: USAGE(..., .flat_has = HAS(f)). */
#define HAS(field) (1 + offsetof(struct twl_wire_usage, field))
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
/* An enumeration whose values came with the versions in @since[]. */
#define ENUM_V(n, fl, list, since) ENUM(n, fl, list), .enum_since = since
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

static const char *const origin_enum[] = { "kmsg", "unverified", "journal",
					   NULL };
static const unsigned char origin_since[] = { 1, 1, 2 };
static const char *const source_enum[] = { "kmsg",
					   "journal",
					   "journal_json",
					   "journal_export",
					   "dmesg",
					   "dmesg_raw",
					   "dmesg_x",
					   "journalctl_short",
					   "journalctl_iso",
					   "journalctl_precise",
					   "journalctl_monotonic",
					   "syslog_rfc3164",
					   "syslog_rfc5424",
					   NULL };
static const char *const cgroup_mode_enum[] = { "v1", "v2", "hybrid", NULL };
static const char *const op_enum[] = { "read", "write", "register_event",
				       NULL };
static const char *const use_enum[] = { "reads", "configures", "listens",
					NULL };
static const char *const unit_enum[] = { "bytes", "number", "bitmask", NULL };
static const char *const value_source_enum[] = { "stored", "parsed", NULL };
static const char *const kind_enum[] = { "v1", "v2", NULL };
static const char *const state_enum[] = { "attached", "unavailable",
					  "not_built", NULL };
static const unsigned char state_since[] = { 1, 1, 2 };
static const char *const runtime_enum[] = { "systemd", "docker",  "containerd",
					    "crio",    "kubelet", "podman",
					    "lxc",     "other",	  NULL };
static const char *const driver_enum[] = { "systemd", "cgroupfs", "", NULL };
static const char *const controller_enum[] = { "memory", "cpuset", "freezer",
					       "blkio",	 "cgroup", NULL };

/* The boot a kernel record belongs to (warnings[], unknown[]). */
#define RECORD_V2_MEMBERS                                                   \
	SINCE(2, STR("boot_id", 0, TWL_WIRE_MAX_ID, S_ID)),                 \
		SINCE(2, STR("kernel", 0, TWL_WIRE_MAX_SHORT, S_NONEMPTY)), \
		SINCE(2, ENUM("source", 0, source_enum))

/* host */
static const struct member label_value = ITEM(
	STR(NULL, 0, TWL_WIRE_MAX_LABEL_VALUE, S_NONEMPTY | S_LABEL_VALUE));
static const struct member host_members[] = {
	SINCE(1, STR("host_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(1, STR("hostname", M_REQ, TWL_WIRE_MAX_NAME, S_NONEMPTY)),
	SINCE(1, STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(1, STR("kernel", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, ENUM("cgroup_mode", M_REQ, cgroup_mode_enum)),
	SINCE(1, STR("agent_version", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, INT("catalog_version", M_REQ, 1, INT32_MAX)),
	SINCE(2,
	      MAP("labels", 0, TWL_WIRE_MAX_LABELS, TWL_WIRE_MAX_LABEL_KEY,
		  &label_value),
	      .str_flags = S_NONEMPTY | S_LABEL_KEY),
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
	SINCE(1, ENUM_V("origin", M_REQ, origin_enum, origin_since)),
	RECORD_V2_MEMBERS,
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
	SINCE(1, ENUM_V("origin", M_REQ, origin_enum, origin_since)),
	RECORD_V2_MEMBERS,
};
static const struct objspec unknown_spec =
	SPEC("an unknown deprecation", unknown_members, NULL);
static const struct member unknown_item = ITEM(OBJ(NULL, 0, &unknown_spec));

/* usage[].value: a summary of what the kernel accepted for the key. */
const struct member wire_value_members[] = {
	USAGE(2, value.last, INT("last", M_REQ, -1, TWL_WIRE_MAX_INT)),
	USAGE(2, value.min, COUNT("min", 0), .flat_has = HAS(value.has_min)),
	USAGE(2, value.max, COUNT("max", 0), .flat_has = HAS(value.has_max)),
	USAGE(2, value.unlimited, BOOL("unlimited", M_REQ)),
	USAGE(2, value.unit, ENUM("unit", M_REQ, unit_enum)),
	USAGE(2, value.source, ENUM("source", M_REQ, value_source_enum)),
};
_Static_assert(sizeof(wire_value_members) / sizeof(wire_value_members[0]) ==
		       WIRE_N_VALUE,
	       "WIRE_N_VALUE must count wire_value_members[]");
static const struct objspec value_spec = {
	.what = "a value summary",
	.members = wire_value_members,
	.n_members = WIRE_N_VALUE,
};

/* usage[]: twl_wire_decode() reads these straight from the text. */
const struct member wire_usage_members[] = {
	USAGE(1, boot_id, STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	USAGE(1, feature, FEATURE("feature", M_REQ)),
	USAGE(1, file, STR("file", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	USAGE(1, op, ENUM("op", M_REQ, op_enum)),
	USAGE(2, use, ENUM("use", M_REQ, use_enum)),
	USAGE(1, cgroup, STR("cgroup", M_REQ, TWL_WIRE_MAX_STR, 0)),
	USAGE(2, target_kind, ENUM("target_kind", 0, twl_cgroup_kind_names)),
	USAGE(1, comm, STR("comm", M_REQ, TWL_WIRE_MAX_COMM, 0)),
	USAGE(1, uid, INT("uid", M_REQ, 0, UINT32_MAX)),
	USAGE(1, writer_cgroup,
	      STR("writer_cgroup", M_REQ, TWL_WIRE_MAX_STR, 0)),
	USAGE(1, container, STR("container", 0, TWL_WIRE_MAX_STR, 0)),
	USAGE(2, image, STR("image", 0, TWL_WIRE_MAX_IMAGE, S_NONEMPTY)),
	USAGE(1, last_pid, INT("last_pid", 0, 0, INT32_MAX)),
	USAGE(1, count, COUNT("count", M_REQ)),
	USAGE(1, failed, COUNT("failed", M_REQ)),
	USAGE(1, condition_met, COUNT("condition_met", 0)),
	USAGE(1, first_seen, COUNT("first_seen", M_REQ)),
	USAGE(1, last_seen, COUNT("last_seen", M_REQ)),
	USAGE(2, value.present, OBJ("value", 0, &value_spec)),
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
	SINCE(2, ENUM("target_kind", 0, twl_cgroup_kind_names)),
};
static const struct objspec knob_spec = SPEC("a knob", knob_members, NULL);
static const struct member knob_item = ITEM(OBJ(NULL, 0, &knob_spec));
static const struct member runtime_members[] = {
	SINCE(2, ENUM("name", M_REQ, runtime_enum)),
	SINCE(2, STR("version", 0, TWL_WIRE_MAX_SHORT, 0)),
	SINCE(2, ENUM("cgroup_driver", 0, driver_enum)),
};
static const struct objspec runtime_spec =
	SPEC("a runtime", runtime_members, NULL);
static const struct member runtime_item = ITEM(OBJ(NULL, 0, &runtime_spec));
static const struct member census_members[] = {
	SINCE(1, COUNT("time", M_REQ)),
	SINCE(1, ARR("hierarchies", M_REQ, TWL_WIRE_MAX_HIERARCHIES,
		     &hierarchy_item)),
	SINCE(1, ARR("knobs", M_REQ, TWL_WIRE_MAX_KNOBS, &knob_item)),
	SINCE(1, COUNT("cgroups_walked", M_REQ)),
	SINCE(1, BOOL("truncated", M_REQ)),
	SINCE(2, ARR("runtimes", 0, TWL_WIRE_MAX_RUNTIMES, &runtime_item)),
};
static const struct objspec census_spec =
	SPEC("the census", census_members, NULL);

/* health */
static const struct member probe_members[] = {
	SINCE(1, STR("name", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(1, ENUM_V("state", M_REQ, state_enum, state_since)),
	SINCE(1, STR("reason", 0, TWL_WIRE_MAX_STR, 0)),
};
static const struct objspec probe_spec = SPEC("a probe", probe_members, NULL);
static const struct member controller_state_members[] = {
	SINCE(2, ENUM("name", M_REQ, controller_enum)),
	SINCE(2, ENUM("state", M_REQ, state_enum)),
	SINCE(2, STR("reason", 0, TWL_WIRE_MAX_STR, 0)),
};
static const struct objspec controller_state_spec =
	SPEC("a controller", controller_state_members, NULL);
static const struct member controller_state_item =
	ITEM(OBJ(NULL, 0, &controller_state_spec));
static const struct member boot_members[] = {
	SINCE(2, STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID)),
	SINCE(2, STR("kernel", 0, TWL_WIRE_MAX_SHORT, S_NONEMPTY)),
	SINCE(2, COUNT("first_kmsg_seq", 0)),
	SINCE(2, COUNT("first_journal_us", 0)),
	SINCE(2, BOOL("start_covered", M_REQ)),
};
static const struct objspec boot_spec = SPEC("a boot", boot_members, NULL);
static const struct member boot_item = ITEM(OBJ(NULL, 0, &boot_spec));
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
	SINCE(2, ARR("controllers", 0, TWL_WIRE_MAX_CONTROLLERS_HEALTH,
		     &controller_state_item)),
	SINCE(2, ARR("boots", 0, TWL_WIRE_MAX_BOOTS, &boot_item)),
	SINCE(2, COUNT("journal_missed", 0)),
	SINCE(2, COUNT("journal_errors", 0)),
	SINCE(2, COUNT("entries_dropped", 0)),
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
