/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server read API storage interface: the queries behind
 * GET /api/v1/{summary,features,hosts,health,annotations,export,
 * readiness}. Handlers (api_read.c, annotations.c, readiness.c) and the
 * export CLI call only these; a backend implements all of them (the
 * summary, host lists, one host, health and unknown texts composed for
 * both from each one's queries: store/read_answers.c; SQLite's others:
 * store/sqlite/store_sqlite_read.c, _export.c, _annotations.c,
 * _readiness.c). Annotation writes are in store.h.
 *
 * Every answer is one consistent snapshot of the store, taken while ingest
 * goes on; any thread may call these, concurrently with each other and
 * with the writer. Every function returns 0 or a negative errno (-ENOENT:
 * no such object, -EINVAL: bad filter) and logs nothing; on success *out
 * is a new reference the caller must json_decref(), on failure NULL.
 * Times are Unix seconds.
 */
#ifndef TWL_SERVER_STORE_READ_H
#define TWL_SERVER_STORE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

/* Page sizes: default and cap for every list. */
#define TWL_READ_LIMIT_DEFAULT 100
#define TWL_READ_LIMIT_MAX 1000
/* Top-N lists inside a feature or export (cgroups, processes, ...). */
#define TWL_READ_TOP_N 20
/* Longest filter string accepted (host pattern, kernel, host cursor). */
#define TWL_READ_MAX_FILTER 256
/* Longest cursor: an unknown deprecation text (wire format: 1024 bytes). */
#define TWL_READ_MAX_CURSOR 1024

/* List filters; zero / NULL members filter nothing. */
struct twl_read_filter {
	int64_t since, until; /* time range on last seen/used, inclusive */
	const char *feature; /* catalog id */
	const char *
		host_pattern; /* hostname glob (* ?), or a prefix if no wildcard */
	const char *kernel; /* kernel release; "6.1*" = prefix */
	const char *cgroup_mode; /* v1, v2, hybrid, or "" for unknown */
	const char *cursor; /* from the previous page's next_cursor */
	unsigned limit; /* 0 = TWL_READ_LIMIT_DEFAULT, capped at _MAX */
	/* with feature: hosts that only read it instead of hosts using it */
	bool reading_only;
	/*
	 * hosts whose operator label label_key has the value label_value;
	 * "" = no label filter (a host.labels key: TWL_WIRE_MAX_LABEL_KEY)
	 */
	char label_key[33];
	const char *label_value;
};

/*
 * twl_glob_to_like - for backends whose filters use SQL LIKE: convert glob
 * @glob (* and ? wildcards) to a LIKE pattern with escape character '\'
 * (% _ and \ in @glob are escaped).
 * Without a wildcard the pattern matches @glob as a prefix when @prefix,
 * else exactly. Returns 0 or -ENAMETOOLONG when @out (@cap bytes) is too
 * small.
 */
int twl_glob_to_like(const char *glob, bool prefix, char *out, size_t cap);

/*
 * twl_read_summary - fleet summary at @now: {"generated", "hosts":
 * {"total", "reporting_1d", "reporting_7d", "reporting_30d",
 * "by_cgroup_mode": {"v1","hybrid","v2","unknown"} (hosts reporting in the
 * last 30 days), "v1_or_hybrid_30d"}, "features": [per catalog feature:
 * {"id", "title", "status", "replacement", "hosts_1d", "hosts_7d",
 * "hosts_30d" (hosts using it: configuring or listening, by BPF, kernel
 * warnings or the census; never hosts that only read it), "uses" (BPF
 * counts of writes and registrations), the members per kind of use
 * (store/read_answers.c: hosts_configuring_30d,
 * hosts_listening_30d, hosts_reading_only_30d, reads, warnings,
 * workloads = processes configuring or listening, workloads_configuring,
 * workloads_listening, workloads_reading_only), "share_v1_30d"
 * (hosts_30d / v1+hybrid hosts reporting in 30 days, or null),
 * "first_seen", "last_seen" (null: never), "trend" (the last 30 days'
 * timeline)}], "coverage": {"hosts" (hosts with coverage facts, from the
 * latest report of each), "bpf_memory" (of them, BPF attached to the
 * memory controller), "boot_uncovered", "records_lost",
 * "probe_missing"}}: the export's fleet.coverage for the whole fleet.
 * Windows are counted in whole hours: from the start of the hour of @now
 * minus the window.
 */
int twl_read_summary(struct twl_store *s, int64_t now, json_t **out);

/*
 * twl_read_feature - detail of catalog feature @id over @f's since/until
 * (@f may be NULL; default: all retained data): its catalog entry, the
 * range, hosts using it (and hosts_configuring, hosts_listening,
 * hosts_reading_only), first/last seen, uses (BPF writes and
 * registrations), reads, kernel warnings (apart, never in uses),
 * workloads per kind, top cgroups, containers, processes (each with its
 * use, uses and reads), kernels, timeline by day, and "values": what was
 * written to its files, from BPF value summaries and census knobs, as
 * its catalog value_kind reads (docs/api.md; the read API adds their
 * "classes", api/value_class.h). With @f->label_key, every figure is of
 * the hosts whose label has the value @f->label_value only ("uses" and
 * "reads" then sum their usage rows last seen on the range's days, the
 * workloads their usage rows), and the timeline, kept for the whole
 * fleet only, is left out: "timeline_scope" is "fleet" with a timeline,
 * "none" without. -ENOENT if @id is not in the catalog.
 */
int twl_read_feature(struct twl_store *s, const char *id,
		     const struct twl_read_filter *f, json_t **out);

/*
 * twl_read_hosts - one page of hosts ordered by host_id, filtered by
 * @f (since/until on last_seen, feature used in that range, or only read
 * when @f->reading_only, hostname pattern, kernel, cgroup mode):
 * {"hosts": [...], "next_cursor": s|null}.
 * -EINVAL for a filter string longer than TWL_READ_MAX_FILTER, -ENOENT
 * for a feature not in the catalog.
 */
int twl_read_hosts(struct twl_store *s, const struct twl_read_filter *f,
		   json_t **out);

/*
 * twl_read_host - one host: its list entry (twl_read_hosts()), boot,
 * agent health, census summary, features used (from the rollup), unknown
 * deprecation messages and its keys. -ENOENT if the host never reported.
 */
int twl_read_host(struct twl_store *s, const char *host_id, json_t **out);

/*
 * twl_read_health - fleet health at @now: counts and one page (@f->limit;
 * @f may be NULL) each of agents silent for more than @silent_after
 * seconds, agents reporting lost kmsg records, agents whose key was
 * rejected, agents with missing probes, and host ids that machines cloned
 * from one image share ("cloned": within @silent_after, two live keys of
 * the host id reported different boots at the same time, or one key went
 * back to its previous boot). -EINVAL if @silent_after <= 0.
 */
int twl_read_health(struct twl_store *s, int64_t now, int64_t silent_after,
		    const struct twl_read_filter *f, json_t **out);

/*
 * twl_read_unknown - one page (@f->limit, after @f->cursor; @f may be
 * NULL) of the unknown deprecation texts of all hosts, grouped by their
 * normalised text in text order, whose last report is in @f's
 * since/until: {"texts": [{"text", "hosts", "count", "first_seen",
 * "last_seen", "matched_feature", "feature_id", "kernels": [{"kernel",
 * "hosts"}] (top 10)}], "next_cursor": s|null}. -EINVAL for a cursor
 * longer than TWL_READ_MAX_CURSOR.
 */
int twl_read_unknown(struct twl_store *s, const struct twl_read_filter *f,
		     json_t **out);

/*
 * twl_read_annotations - {"annotations": [...]} for @feature (NULL = all),
 * by feature, then time of creation.
 */
int twl_read_annotations(struct twl_store *s, const char *feature,
			 json_t **out);

/*
 * twl_read_migration_status - {"statuses": [{"feature", "workload" (null:
 * the feature as a whole), "status", "reason", "owner", "date", "author",
 * "updated", "seen_again"}]} for @feature (NULL = all), by feature and
 * workload. "seen_again" is null, or for a "migrated" status that
 * twl_read_migration_reuse() reports, its {"hosts", "last_seen", "ops"}.
 */
int twl_read_migration_status(struct twl_store *s, const char *feature,
			      json_t **out);

/*
 * twl_read_migration_reuse - the workloads marked "migrated" that were
 * seen using the feature again after the status's date: {"reused":
 * [{"feature", "workload" (null: the feature as a whole, any process),
 * "owner", "date", "hosts", "last_seen", "ops"}]}, by feature and
 * workload. Seen again = a BPF usage row of that feature (and process)
 * that configures or listens (op write or register_event; reads are not
 * uses) whose last use is later than the date. Only uses later than
 * @after (0: all) count, so a caller that remembers the last_seen it
 * already acted on asks only for news. Read-only and idempotent: meant to
 * be polled by whatever raises alerts.
 */
int twl_read_migration_reuse(struct twl_store *s, int64_t after, json_t **out);

/*
 * twl_read_export_data - the export data document (see export.h) at @now
 * over the last @window_days days, each feature with its "values" as
 * twl_read_feature() has them, for @feature (NULL = every catalog
 * feature). Workloads are grouped as docs/workloads.md defines them
 * (process, kind of the writer's place, kind of the target), with the
 * place's name when @opts->full_cgroups and the image when
 * @opts->show_images; "hosts" (names) are filled only when
 * @opts->show_hosts, "by_label" only when @opts->group_label names a label
 * key. With @opts->label_key, every count, list and value is of the hosts
 * carrying that label with the value @opts->label_value only (the fleet
 * too; "uses" then sums their usage rows). -EINVAL unless 1 <= @window_days <= 3660, -ENOENT if @feature is
 * not in the catalog.
 */
struct twl_export_opts;
int twl_read_export_data(struct twl_store *s, int64_t now, unsigned window_days,
			 const char *feature,
			 const struct twl_export_opts *opts, json_t **out);

/* What twl_read_readiness() asks about (built from a target's plan). */
struct twl_readiness_query {
	const char *removed_json; /* JSON array of the feature ids removed */
	/* JSON object {feature id: controller} of removed features that are a
	 * controller's whole v1 interface: a census showing the controller
	 * bound to a v1 hierarchy is use of it */
	const char *interfaces_json;
	json_t *deadlines; /* [{"runtime", "cgroup_modes": [...]}], or NULL */
	int64_t since; /* hosts and evidence seen since (Unix seconds) */
	unsigned limit; /* host list page size, 1..TWL_READ_LIMIT_MAX */
	const char *group_label; /* a host label key to group by, or NULL */
	/* only hosts whose label label_key has the value label_value; NULL
	 * key: all hosts */
	const char *label_key, *label_value;
};

/*
 * twl_read_readiness - which hosts seen since @q->since break when they
 * move to a kernel without @q's removed features: {"breaks": {"count",
 * "features": [{"id", "hosts", "migration", "by_kind": {"configures",
 * "listens", "reads"} (hosts per kind of use seen by BPF, census knobs as
 * configures), "evidence": {"bpf_hosts", "bpf_count",
 * "census_knob_hosts", "v1_hierarchy_hosts", "kernel_warning_hosts"},
 * "workloads": [top 10 {"comm", "container", "target_kind", "ops",
 * "hosts", "count", "migration"}]}], "hosts": [@q->limit of {"host_id", "hostname",
 * "kernel", "cgroup_mode", "features", "runtimes"}]}, "ready": {"count"}
 * (v2 hosts, and measured hosts with no such use), "not_measured":
 * {"count", "hosts"} (neither v2 nor measured: no census, no BPF attached
 * or counted)}; each of @q->deadlines gains "hosts", the hosts that run
 * its runtime on one of its cgroup modes. With @q->group_label, "groups":
 * {"label", "values": [@q->limit of {"value" (null: hosts without the
 * label), "hosts", "breaks", "ready", "not_measured"}]}, most breaking
 * first. Counts are exact whatever the page size. "migration" is the
 * status set for the feature as a whole, or for the workload's process,
 * as {"status", "reason", "owner", "date"}, or null. With @q->label_key,
 * every count and list covers only the hosts whose label has the value
 * @q->label_value. -EINVAL for a limit out of range or a missing list.
 */
int twl_read_readiness(struct twl_store *s, const struct twl_readiness_query *q,
		       json_t **out);

#endif /* TWL_SERVER_STORE_READ_H */
