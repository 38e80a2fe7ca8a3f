/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The twilight report wire format (schema/wire-format.md is its
 * documentation) and its one validator, used by agent tests and the server.
 */
#ifndef TWILIGHT_WIRE_H
#define TWILIGHT_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The version this code writes; receivers accept it and the one before. */
#define TWL_WIRE_VERSION 2
/* Oldest accepted version: TWL_WIRE_VERSION - 1, but never below 1. */
#define TWL_WIRE_MIN_VERSION (TWL_WIRE_VERSION > 1 ? TWL_WIRE_VERSION - 1 : 1)

/* Limits. A batch over any of them is invalid: the agent splits batches. */
#define TWL_WIRE_MAX_DOC_BYTES (16u << 20) /* encoded document, uncompressed */
#define TWL_WIRE_MAX_DEPTH 16 /* nesting of [ and {, root object = 1 */
#define TWL_WIRE_MAX_STR 1024 /* bytes, any string unless said below */
#define TWL_WIRE_MAX_ID 64 /* host_id, boot_id, batch_id: [0-9a-f-] */
#define TWL_WIRE_MAX_NAME 255 /* hostname */
#define TWL_WIRE_MAX_SHORT 64 /* kernel, agent_version, file, probe name */
/* usage[].comm: a kernel comm is at most 15 bytes; 64 leaves room for
 * privacy-hashed names and for other reporters */
#define TWL_WIRE_MAX_COMM 64
#define TWL_WIRE_MAX_FEATURE 64 /* catalog ids */
#define TWL_WIRE_MAX_WARNINGS 256
#define TWL_WIRE_MAX_UNKNOWN 32
#define TWL_WIRE_MAX_USAGE 4096
#define TWL_WIRE_MAX_FIELDS 8 /* warnings[].fields members */
#define TWL_WIRE_MAX_FIELD_NAME 15 /* fits struct twl_match name[16] */
#define TWL_WIRE_MAX_FIELD_VALUE 127 /* fits struct twl_match value[128] */
#define TWL_WIRE_MAX_HIERARCHIES 64
#define TWL_WIRE_MAX_CONTROLLERS 32
#define TWL_WIRE_MAX_KNOBS 4096
#define TWL_WIRE_MAX_PROBES 64
/* since version 2 */
#define TWL_WIRE_MAX_LABELS 16 /* host.labels members */
#define TWL_WIRE_MAX_LABEL_KEY 32 /* [a-z0-9] then [a-z0-9_.-] */
#define TWL_WIRE_MAX_LABEL_VALUE 64 /* [A-Za-z0-9_.:/@+-] */
#define TWL_WIRE_MAX_IMAGE 256 /* usage[].image */
#define TWL_WIRE_MAX_RUNTIMES 16 /* census.runtimes */
#define TWL_WIRE_MAX_BOOTS 16 /* health.boots */
#define TWL_WIRE_MAX_CONTROLLERS_HEALTH 16 /* health.controllers */
#define TWL_WIRE_MAX_INT 9007199254740991LL /* 2^53 - 1: exact in JS */

/*
 * Days a batch may wait in an agent's spool and still be sent (the agent
 * refuses a spool-max-age above it), and the fewest days a receiver keeps
 * batch ids (the server refuses a batch-days below it): every resend of a
 * batch meets its id. One number for both sides.
 */
#define TWL_WIRE_RESEND_DAYS 35

/* Error codes (struct twl_verr.code); the server sends them as "error". */
#define TWL_VERR_INVALID_JSON "invalid_json"
#define TWL_VERR_WRONG_TYPE "wrong_type"
#define TWL_VERR_MISSING_FIELD "missing_field"
#define TWL_VERR_UNKNOWN_FIELD "unknown_field"
/*
 * No longer produced: a well-formed feature id the receiver's catalog does
 * not hold is accepted (catalog skew, schema/wire-format.md); kept so that
 * code naming it (an older peer's answer) still builds.
 */
#define TWL_VERR_UNKNOWN_FEATURE "unknown_feature"
#define TWL_VERR_TOO_LONG "too_long"
#define TWL_VERR_INVALID_UTF8 "invalid_utf8"
#define TWL_VERR_TOO_MANY "too_many"
#define TWL_VERR_OUT_OF_RANGE "out_of_range"
#define TWL_VERR_BAD_VALUE "bad_value"
#define TWL_VERR_TOO_DEEP "too_deep"
#define TWL_VERR_UNSUPPORTED_VERSION "unsupported_version"

/*
 * Not the validator's: 409 from a receiver to which this host sent another
 * body under the same batch_id before. The batch was judged by its
 * content; the agent quarantines it (sending it again cannot help).
 */
#define TWL_ERR_BATCH_CONFLICT "batch_conflict"

/*
 * Why a document was rejected: @code is one of TWL_VERR_*, @field the JSON
 * path of the offending member ("usage[3].comm", "" for the whole
 * document), @reason a sentence a person can act on. Always NUL-terminated;
 * overlong paths are cut with "...".
 */
struct twl_verr {
	char code[32];
	char field[128];
	char reason[192];
};

/*
 * twl_report_validate - check that @doc is a valid report of a version this
 * code accepts (see schema/wire-format.md): types, required and unknown
 * members, string lengths and UTF-8, array caps, integer ranges, enums,
 * cross-member rules and the form of feature ids (an id the compiled
 * catalog lacks is accepted: catalog skew).
 * Returns 0; -EINVAL with @err filled; or -EPROTONOSUPPORT with code
 * "unsupported_version" for a version other than TWL_WIRE_MIN_VERSION ..
 * TWL_WIRE_VERSION. @err may be NULL. Walks only the known schema, so
 * depth is bounded whatever @doc holds. Does not modify @doc.
 */
int twl_report_validate(const json_t *doc, struct twl_verr *err);

/*
 * twl_report_parse - decode @len bytes at @buf (UTF-8 JSON, need not be
 * NUL-terminated) and validate the result. Before jansson sees the text it
 * checks the size cap (TWL_WIRE_MAX_DOC_BYTES), the nesting depth
 * (TWL_WIRE_MAX_DEPTH) and the UTF-8 of every string, so those errors name
 * the member they are in. Duplicate member names are rejected. Returns the
 * document (caller json_decref()s it) or NULL with @err filled (@err may be
 * NULL); errno is set to EINVAL or EPROTONOSUPPORT.
 */
json_t *twl_report_parse(const char *buf, size_t len, struct twl_verr *err);

/*
 * usage[].value (version 2), flattened: what the kernel accepted for the
 * key since boot. Absent (present false): every other field is 0/false
 * and the strings are "".
 */
struct twl_wire_value {
	bool present, has_min, has_max, unlimited;
	long long last, min, max; /* -1: unlimited (last only) */
	const char *unit, *source;
};

/*
 * One usage[] entry, flattened: strings are never NULL ("" for an absent
 * container, target_kind or image), absent integers are 0. use is always
 * set: as sent, or (version 1) derived from op, which it must agree with.
 * target_kind "" means the receiver derives it from cgroup:
 * twl_wire_usage_target_kind().
 */
struct twl_wire_usage {
	const char *boot_id, *feature, *file, *op, *cgroup, *comm,
		*writer_cgroup, *container;
	const char *use, *target_kind, *image; /* version 2 */
	long long uid, last_pid, count, failed, condition_met, first_seen,
		last_seen;
	struct twl_wire_value value; /* version 2 */
};

/* twl_wire_use_of_op - the use an op means ("write" -> "configures",
 * "register_event" -> "listens", "read" -> "reads"), or NULL. */
const char *twl_wire_use_of_op(const char *op);

/*
 * twl_wire_usage_target_kind - the kind of @u's target cgroup (enum
 * twl_cgroup_kind, cgroup_class.h): target_kind as sent, or, when absent,
 * twl_cgroup_classify() of its cgroup (the v1 meaning).
 */
int twl_wire_usage_target_kind(const struct twl_wire_usage *u);

/*
 * twl_wire_label_key_ok, twl_wire_label_value_ok - @len bytes at @s are a
 * valid host.labels key (1..32 bytes, [a-z0-9] then [a-z0-9_.-]) or value
 * (1..64 bytes of [A-Za-z0-9_.:/@+-]). The validator and the agent's
 * configuration check both use these.
 */
bool twl_wire_label_key_ok(const char *s, size_t len);
bool twl_wire_label_value_ok(const char *s, size_t len);

/*
 * A valid report with its usage[] flattened. Why: usage[] is nearly all of
 * a report (20 of 20 entries in the benchmark's, 15 members each in v1), and
 * building, validating, reading and freeing a jansson object per entry
 * was most of the server's per-report parse cost (bench/README.md).
 */
struct twl_wire_report {
	json_t *doc; /* one reference: the report, usage[] possibly left out */
	size_t n_usage;
	struct twl_wire_usage *usage; /* n_usage entries */
	char *strings; /* owns what usage[] points to, when not in doc */
};

/*
 * twl_wire_decode - twl_report_parse() into *out: accepts and rejects
 * exactly the same documents with the same *err, and *out holds the same
 * values. Well-formed reports take a fast path that decodes usage[]
 * straight into structs and checks them against the same member rules;
 * anything it does not accept is handed to twl_report_parse(), so errors
 * are always the full path's. Returns 0, -EINVAL, -EPROTONOSUPPORT or
 * -ENOMEM. Release *out with twl_wire_release().
 */
int twl_wire_decode(const char *buf, size_t len, struct twl_wire_report *out,
		    struct twl_verr *err);

/*
 * twl_wire_from_doc - *out for a report already validated by
 * twl_report_parse() or twl_report_validate(); takes a reference to doc,
 * and the strings point into it. Returns 0 or -ENOMEM.
 */
int twl_wire_from_doc(json_t *doc, struct twl_wire_report *out);

/* Drop what *out holds and zero it. */
void twl_wire_release(struct twl_wire_report *r);

/*
 * twl_verr_to_json - the server's error body for @err:
 * {"error": code, "field": path, "reason": sentence}. NULL on ENOMEM.
 */
json_t *twl_verr_to_json(const struct twl_verr *err);

#endif /* TWILIGHT_WIRE_H */
