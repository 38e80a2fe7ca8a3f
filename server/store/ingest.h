/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A validated report flattened into the values the storage layer binds.
 *
 * Why: the group-commit writer is one thread and the server's bottleneck
 * (bench/server-load). Everything that does not need the database (JSON
 * member lookups, serialising health and census, re-matching unknown
 * deprecations against the server's catalog, and finally freeing the
 * parsed document) is done by the HTTP thread that received the report,
 * in parallel with the writer, which then only binds and steps.
 *
 * Strings point into the decoded report (struct twl_wire_report), which the
 * struct owns; they are never NULL ("" when absent). Pure: no I/O.
 */
#ifndef TWL_SERVER_INGEST_H
#define TWL_SERVER_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <twilight/wire.h>

/*
 * A kernel record's boot: boot_id and kernel as sent, or (wire v1, or
 * absent) the report's host.boot_id and host.kernel; source NULL when not
 * sent. A record of another boot never changes the host's current boot
 * or kernel: those come from host alone.
 */
struct twl_ingest_warning {
	const char *feature, *text, *origin, *boot_id, *kernel, *source;
	int64_t kmsg_seq, mono_us, time, level;
	char *fields_json; /* NULL: no fields */
	/*
	 * Not NULL when the server's catalog lacks feature (catalog skew):
	 * the text with its digits replaced by '#', which the store keeps
	 * as an unknown text with the feature id instead of a warning.
	 */
	char *unknown_text;
};

struct twl_ingest_unknown {
	const char *text, *origin, *boot_id, *kernel, *source;
	const char *matched; /* feature id from the server's catalog or NULL */
	int64_t kmsg_seq, time, count;
};

struct twl_ingest_knob {
	/* target_kind as sent, else classified from cgroup */
	const char *feature, *file, *cgroup, *value, *target_kind;
};

struct twl_ingest_label {
	const char *key, *value;
};

struct twl_ingest_runtime {
	const char *name, *version, *cgroup_driver; /* "" when absent */
};

/*
 * Coverage facts of a host (schema/migrations/014_host_coverage.sql), bit
 * numbers of struct twl_ingest_coverage.facts. The controllers' bits are
 * TWL_FACT_BPF_* + the controller's index in twl_fact_controllers[].
 */
enum {
	TWL_FACT_BPF_ATTACHED = 0,
	TWL_FACT_BPF_UNAVAILABLE = 5,
	TWL_FACT_BPF_NOT_BUILT = 10,
	TWL_FACT_CONTROLLERS = 15, /* health.controllers reported */
	TWL_FACT_BOOTS = 16, /* health.boots reported */
	TWL_FACT_BOOT_COVERED = 17, /* the current boot's start is */
	TWL_FACT_BOOT_UNCOVERED = 18, /* the current boot's start is not */
	TWL_FACT_SOME_BOOT_UNCOVERED = 19,
	TWL_FACT_RECORDS_LOST = 20,
	TWL_FACT_JOURNAL_MISSED = 21,
	TWL_FACT_JOURNAL_ERRORS = 22,
	TWL_FACT_ENTRIES_DROPPED = 23,
	TWL_FACT_PROBE_NOT_BUILT = 24,
	TWL_FACT_KEY_REJECTED = 25,
	TWL_FACT_PROBE_MISSING = 26,
	/* the current boot is reported with neither a kmsg nor a journal start */
	TWL_FACT_NO_LOG_SOURCE = 27,
	TWL_FACT_MAP_OVERFLOW = 28, /* health.map_overflows > 0 */
	TWL_FACT_N = 29
};

/* health.controllers[].name values, in bit order; NULL-terminated. */
extern const char *const twl_fact_controllers[];
#define TWL_FACT_N_CONTROLLERS 5

struct twl_ingest_coverage {
	int64_t catalog_version; /* host.catalog_version */
	int64_t facts; /* bits TWL_FACT_* */
	int64_t records_lost, journal_missed, journal_errors, entries_dropped;
	int64_t probes_not_built, boots, boots_uncovered;
};

/*
 * Seconds a report's times may lie ahead of the time it was received (an
 * agent's clock a little fast); a later time is stored as the receive
 * time plus this (twl_ingest_bound_times()).
 */
#define TWL_INGEST_SKEW_S 300

struct twl_ingest {
	struct twl_wire_report report; /* released by twl_ingest_free() */
	/*
	 * Times twl_ingest_bound_times() clamped, and the latest of them as
	 * sent (0: none); the host row keeps both (hosts.times_clamped,
	 * hosts.time_sent_max).
	 */
	int64_t times_clamped, time_sent_max;
	/* SHA-256 of the host key that posted it; "": not known */
	char key_hash[65];
	const char *batch_id;
	int64_t seq;
	/*
	 * SHA-256 of the body as received (after gzip), set by the caller
	 * when has_body_sha256: the same batch id with another hash is a
	 * conflict, not a duplicate (store.h).
	 */
	bool has_body_sha256;
	unsigned char body_sha256[32];
	/* host */
	const char *hostname, *kernel, *cgroup_mode, *agent_version, *boot_id;
	int64_t catalog_version;
	/* host.labels: replace the host's labels when has_labels */
	bool has_labels;
	size_t n_labels;
	struct twl_ingest_label labels[TWL_WIRE_MAX_LABELS];
	/* health */
	char *health_json; /* NULL when absent */
	char *probe_missing_json; /* NULL when absent */
	int64_t records_lost;
	bool key_rejected;
	struct twl_ingest_coverage coverage;
	/* census: knobs and runtimes replace the host's when has_census */
	bool has_census;
	char *census_json;
	int64_t census_time;
	size_t n_runtimes;
	struct twl_ingest_runtime runtimes[TWL_WIRE_MAX_RUNTIMES];
	size_t n_warnings, n_unknown, n_usage, n_knobs;
	struct twl_ingest_warning *warnings;
	struct twl_ingest_unknown *unknown;
	/*
	 * The report's own entries; an absent target_kind is set to the
	 * kind twl_cgroup_classify() gives cgroup (never "").
	 */
	const struct twl_wire_usage *usage;
	int64_t *usage_id; /* per entry: twl_usage_key_hash() for host_id */
	int64_t *usage_check; /* per entry: twl_usage_key_check() */
	struct twl_ingest_knob *knobs;
};

/*
 * twl_ingest_prepare_report - flatten *report (from twl_wire_decode())
 * into *out, with each usage entry's key hashed for host_id, the host the
 * report is stored for. *out takes over what *report holds, which is left
 * empty, also on failure. Returns 0 or -ENOMEM. Free with
 * twl_ingest_free().
 */
int twl_ingest_prepare_report(struct twl_wire_report *report,
			      const char *host_id, struct twl_ingest **out);

/*
 * twl_ingest_prepare - the same for a document validated by
 * twl_report_parse() (a reference is taken, the caller keeps its own).
 */
int twl_ingest_prepare(json_t *report, const char *host_id,
		       struct twl_ingest **out);

/*
 * twl_usage_key_hash - the id under which the storage layer first looks
 * for the usage row of (host_id, u's nine-field key): see
 * schema/migrations/004_usage_id.sql. FNV-1a (64 bit) runs over host_id,
 * boot id, feature, file, op, cgroup, comm, writer cgroup, each followed
 * by a 0 byte (no field holds one), then uid's 8 bytes, least significant
 * first. The id's high 40 bits are the hash of host_id alone (so a host's
 * rows sit together in the table), its low 24 bits those of the whole
 * key (of twl_usage_key_check()). Pure. Only speed depends on it: a row
 * stored under another id is still found through the unique key.
 */
int64_t twl_usage_key_hash(const char *host_id, const struct twl_wire_usage *u);

/*
 * twl_usage_key_check - the whole 64-bit FNV-1a state of the hash above,
 * stored with the row (usage.key_check, schema/migrations/
 * 009_usage_key_check.sql). The writer's common update matches a row by
 * its id, host_id and this value instead of comparing the eight other
 * key fields. Pure.
 */
int64_t twl_usage_key_check(const char *host_id,
			    const struct twl_wire_usage *u);

/*
 * twl_ingest_bound_times - clamp every time of the report's rows
 * (warnings[].time, unknown[].time, usage[].first_seen and last_seen,
 * census.time) to @now, when it was received, + TWL_INGEST_SKEW_S: a
 * time from the future (a wrong clock, a hostile agent's 2^53 - 1) would
 * keep a host or feature "active" for ever and break every reader's date
 * arithmetic. Counts them into in->times_clamped and keeps the latest
 * original in in->time_sent_max; the documents stored as sent (health,
 * census) keep theirs. Returns how many were clamped. Pure.
 */
int64_t twl_ingest_bound_times(struct twl_ingest *in, int64_t now);

/* Rows the report carries (warnings + unknown + usage + census knobs). */
uint64_t twl_ingest_rows(const struct twl_ingest *in);

/* Drop the document reference and free everything. NULL-safe. */
void twl_ingest_free(struct twl_ingest *in);

/* twl_ingest_has_label - whether label @key = @value is one of @in's. */
bool twl_ingest_has_label(const struct twl_ingest *in, const char *key,
			  const char *value);

#endif /* TWL_SERVER_INGEST_H */
