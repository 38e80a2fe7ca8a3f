/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report: one batch being collected, and its wire-format document
 * (schema/wire-format.md, version TWL_WIRE_VERSION). A batch is "full" at the wire caps (256
 * warnings, 32 distinct unknown texts): adding then returns -ENOSPC and
 * the caller sends this batch and starts a new one, so nothing is
 * truncated or dropped.
 */
#ifndef TWL_AGENT_REPORT_H
#define TWL_AGENT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <twilight/match.h>

#include "identity.h"
#include "kmsg_parse.h"

/* The agent's version, PROJECT_VERSION: agent/CMakeLists.txt defines it. */
#ifndef TWL_AGENT_VERSION
#error "TWL_AGENT_VERSION is defined by agent/CMakeLists.txt (twl_agent_version)"
#endif

struct twl_report;

/* twl_report_new - an empty batch. NULL + errno ENOMEM. */
struct twl_report *twl_report_new(void);

/* twl_report_free - NULL-safe. */
void twl_report_free(struct twl_report *r);

/* twl_report_reset - empty @r for the next batch (census dropped too). */
void twl_report_reset(struct twl_report *r);

/*
 * Where a kernel record comes from, for its wire members: its boot (NULL:
 * the boot the agent runs in, host.boot_id and host.kernel), the input
 * form (wire `source`, NULL: not said), how its kernel origin is known
 * (wire `origin`) and its Unix time estimate. The strings are borrowed
 * for the call, but for @source and @origin, which must be static.
 */
struct twl_report_rec {
	const char *boot_id; /* NULL or "": this boot */
	const char
		*kernel; /* that boot's release (with boot_id); NULL: unknown */
	const char *source;
	const char *origin;
	int64_t time;
};

/*
 * twl_report_add_warning - add kernel record @rec that matched @m, from
 * @at. Text and field values are made valid UTF-8 (invalid bytes become
 * '?') and capped at the wire limits. Input without a priority (plain
 * dmesg) gets the level the catalog says the kernel prints the message
 * at. Returns 0, -ENOSPC when the batch already holds
 * TWL_WIRE_MAX_WARNINGS, -ENOMEM.
 */
int twl_report_add_warning(struct twl_report *r,
			   const struct twl_kmsg_record *rec,
			   const struct twl_match *m,
			   const struct twl_report_rec *at);

/*
 * twl_report_add_unknown - count kernel record @rec (from @at) that
 * mentions a deprecation but matched nothing. Digits are normalised to
 * '#'; equal normalised texts of one boot are counted once with the first
 * seq/time. Returns 0, -ENOSPC when the text is new and the batch holds
 * TWL_WIRE_MAX_UNKNOWN distinct texts already, or holds the same text of
 * another boot (the wire allows each text once per batch), -ENOMEM.
 */
int twl_report_add_unknown(struct twl_report *r,
			   const struct twl_kmsg_record *rec,
			   const struct twl_report_rec *at);

/*
 * twl_report_add_usage - append one usage[] entry (a wire-format object
 * built by agent/bpf; reference taken, not stolen). Returns 0, -ENOSPC at
 * TWL_WIRE_MAX_USAGE entries, -ENOMEM.
 */
int twl_report_add_usage(struct twl_report *r, json_t *entry);

/* twl_report_set_census - attach @census (reference stolen; NULL clears). */
void twl_report_set_census(struct twl_report *r, json_t *census);

/* twl_report_has_census - a census is attached. */
bool twl_report_has_census(const struct twl_report *r);

/* twl_report_count - warnings + distinct unknown texts + usage entries. */
size_t twl_report_count(const struct twl_report *r);

struct twl_report_meta {
	const struct twl_identity *id;
	uint64_t seq; /* per-host batch sequence, >= 1 */
	const char *batch_id; /* 32 hex */
	int64_t sent_time;
};

/*
 * twl_report_to_json - the wire document for @r with @meta and @health
 * (borrowed; may be NULL = {}): host.labels from meta->id's labels when
 * there are any; every warning and unknown text carries its boot_id and
 * kernel (meta->id's for this boot's records) and its source when known.
 * Returns a new reference or NULL (ENOMEM).
 */
json_t *twl_report_to_json(const struct twl_report *r,
			   const struct twl_report_meta *meta, json_t *health);

/*
 * twl_text_sanitize - copy @len bytes of @in to @out (@cap bytes with
 * NUL) replacing bytes that are not part of valid UTF-8 (and NUL) with
 * '?', cut at a character boundary so the result is at most @cap - 1
 * bytes. Returns the length written.
 */
size_t twl_text_sanitize(const char *in, size_t len, char *out, size_t cap);

/*
 * twl_report_split() - split a wire-format report in two for a 413: the
 * elements of warnings[], unknown[], usage[] and census.knobs[] (or the
 * census as a whole when it has no knobs) are divided in order, first half
 * to *@a, the rest to *@b (new strings, free() them); host and health are
 * copied to both; each half's batch_id is derived from the original's
 * (sha256(batch_id + "/a" or "/b"), 32 hex), so splitting the same batch
 * again after a crash yields the same ids and resends stay idempotent.
 * Returns 0, -E2BIG when there are fewer than two elements to divide,
 * -EINVAL for a document that is not a report object, or -ENOMEM.
 */
int twl_report_split(const char *json, size_t len, char **a, char **b);

#endif /* TWL_AGENT_REPORT_H */
