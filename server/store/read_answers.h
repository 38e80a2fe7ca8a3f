/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read API answers written once for both backends (read_answers.c,
 * read_values.c): the fleet summary, host lists, one host, fleet health,
 * unknown texts and the values of a feature's files are composed here
 * from queries named by enum twl_rq_id; each backend gives the SQL of
 * each name in its dialect and runs it (struct twl_rq_io). The queries
 * bind positional parameters, ?1.. on SQLite, $1.. on PostgreSQL, in the
 * order each name's comment gives; a read context's label filter is
 * bound by the backend (?20/$20 and ?21/$21, TWL_SQL_LABELED).
 */
#ifndef TWL_SERVER_STORE_READ_ANSWERS_H
#define TWL_SERVER_STORE_READ_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/read_rows.h"

struct twl_store;
struct twl_read_filter;
struct twl_feature;
struct twl_alert_page;

/* The queries; each comment gives its parameters, then its columns. */
enum twl_rq_id {
	TWL_RQ_HOSTHOUR_SUM, /* hour: hosts reporting since */
	TWL_RQ_HOSTHOUR_MODE_SUM, /* cgroup mode, hour: the same of a mode */
	/*
	 * feature, hours of 1, 7 and 30 days ago, day from, day to: the
	 * fleet summary's figures of a feature, one row: hosts using it
	 * since each hour, uses in the days, hosts configuring, listening,
	 * reading only since the third hour, reads and warnings in the
	 * days, its processes using, configuring, listening, reading only
	 * (feature_comm), first and last use (NULL: none)
	 */
	TWL_RQ_FEATURE_SUMMARY,
	TWL_RQ_DAY_USES, /* feature, day from, day to: its uses */
	TWL_RQ_COMM_KINDS, /* feature: processes using, configuring, listening, reading only */
	TWL_RQ_FH_FIRST, /* feature: its first use (a host using it) */
	TWL_RQ_FH_LAST, /* feature: its last use */
	TWL_RQ_TIMELINE, /* feature, day from, day to: twl_timeline_row */
	/*
	 * host list: cursor, since, until, hostname LIKE, kernel LIKE,
	 * cgroup mode, feature, limit, reading only (0/1), label key, label
	 * value (NULL: no filter): twl_host_row
	 */
	TWL_RQ_HOST_LIST,
	TWL_RQ_HOST_ONE, /* host: twl_host_one_row */
	TWL_RQ_HOST_FEATURES, /* host: twl_host_feature_row */
	TWL_RQ_HOST_UNKNOWN, /* host, limit: twl_host_unknown_row */
	TWL_RQ_HOST_LABELS, /* host: twl_host_labels_row */
	TWL_RQ_HOST_KEYS, /* host: twl_host_keys_row */
	/*
	 * values of a feature's files (read_values.c): feature, since,
	 * until, limit, host (the host scope only); written (its three
	 * rows), written values, configured, configured values, listeners:
	 * over the fleet, then over one host
	 */
	TWL_RQ_VALUES_FLEET,
	TWL_RQ_VALUES_HOST = TWL_RQ_VALUES_FLEET + 5,
	/*
	 * health: per part a count, then its hosts (twl_host_row); the
	 * parts' parameters: silent (time, [limit]), records lost, key
	 * rejected, probe missing ([limit]), cloned (time, [limit]), boot
	 * uncovered (fact bit, [limit]), catalog older, newer (version,
	 * [limit])
	 */
	TWL_RQ_HEALTH = TWL_RQ_VALUES_HOST + 5,
	/*
	 * unknown texts: cursor, since, until, limit, kernels per text:
	 * twl_unknown_row
	 */
	TWL_RQ_UNKNOWN = TWL_RQ_HEALTH + 16,
	/*
	 * coverage (twl_answer_coverage()), each one count: the hosts with
	 * coverage facts; of them, those with fact bit (bit); those without
	 * BPF on the memory controller whose boot no log source read, all of
	 * them (0) or only those whose census is their only evidence (1)
	 */
	TWL_RQ_COV_HOSTS,
	TWL_RQ_COV_BIT,
	TWL_RQ_COV_BLIND,
	/*
	 * feature detail (read_feature.c): feature, since, until (days where
	 * said), limit; each of the hosts of the context's label filter
	 */
	/*
	 * feature, since, until: hosts using it, their first and last use,
	 * hosts configuring, listening, reading only
	 */
	TWL_RQ_FH_RANGE,
	TWL_RQ_DAY_READS, /* feature, day from, day to: its reads */
	TWL_RQ_COMM_KINDS_LABELED, /* feature: as COMM_KINDS, of the labelled */
	TWL_RQ_WARNINGS, /* feature, since, until: warnings, their hosts */
	/* feature, since, until, limit: name, hosts, uses, reads, use */
	TWL_RQ_TOP_CGROUPS,
	TWL_RQ_TOP_CONTAINERS,
	TWL_RQ_TOP_PROCESSES,
	TWL_RQ_KERNELS, /* feature, since, until, limit: twl_kernel_row */
	/*
	 * the alert detector's page (read_alert_uses.c): since, the cursor's
	 * last seen and host id, page size; the page of hosts, their
	 * features used, their processes using
	 */
	TWL_RQ_ALERT_PAGE,
	TWL_RQ_ALERT_HOSTS,
	TWL_RQ_ALERT_COMMS,
	/*
	 * upgrade readiness (read_readiness.c). The evidence queries, from
	 * READY_FEATURES to READY_GROUPS: removed feature ids (a JSON
	 * array), {interface feature id: controller} (a JSON object), since,
	 * limit, group label key, label key, label value (the last two
	 * NULL: every host); hosts of cgroup mode v2 break on nothing.
	 * READY_FEATURES: per feature used, feature id, hosts, hosts
	 * configuring, listening, reading, hosts seen by BPF, BPF
	 * count, hosts with census knobs, on a v1 hierarchy, with kernel
	 * warnings, its migration status (JSON object or NULL), hosts whose
	 * only evidence is BPF reads; most hosts first, then feature id
	 * (census knobs count as configuring).
	 * READY_EV_TABLE, READY_EV_FILL, READY_EV_INDEX, run in this order
	 * first, no rows: the answer's evidence, computed once into the
	 * read context's temporary table ready_ev (host, feature, source,
	 * op, count), which the queries after them read.
	 * READY_BREAK_COUNT: the hosts that break.
	 * READY_BREAK_HOSTS: limit of them by host id: host id, hostname,
	 * kernel, cgroup mode, feature ids (JSON array, sorted), runtimes
	 * (JSON array of {name, version, cgroup_driver}, by name, version).
	 * READY_REST_COUNT: of the rest, ready (v2 or measured), not
	 * measured.
	 * READY_UNMEASURED: limit of those not measured by host id: host id,
	 * hostname, kernel, cgroup mode.
	 * READY_GROUPS: limit of the hosts' values of the group label (NULL:
	 * without it): value, hosts, breaking, ready, not measured; most
	 * breaking first.
	 */
	TWL_RQ_READY_EV_TABLE,
	TWL_RQ_READY_EV_FILL,
	TWL_RQ_READY_EV_INDEX,
	TWL_RQ_READY_FEATURES,
	TWL_RQ_READY_BREAK_COUNT,
	TWL_RQ_READY_BREAK_HOSTS,
	TWL_RQ_READY_REST_COUNT,
	TWL_RQ_READY_UNMEASURED,
	TWL_RQ_READY_GROUPS,
	/*
	 * feature id, since, limit, label key, label value: the top
	 * processes using it on hosts not v2: comm, container, target kind
	 * ('' for none), ops (distinct, comma-separated, in byte order),
	 * hosts, count, migration status of the process (JSON or NULL)
	 */
	TWL_RQ_READY_WORKLOADS,
	/*
	 * runtime name, since, cgroup modes (a JSON array), label key,
	 * label value: the hosts running it on one of the modes
	 */
	TWL_RQ_READY_RUNTIME,
	/*
	 * the linux-mm export (read_export.c); since is a Unix time, limit
	 * the top N, and every count of the context's label filter's hosts
	 */
	TWL_RQ_EXP_HOSTS, /* since: hosts reporting since */
	TWL_RQ_EXP_HOSTS_MODE, /* cgroup mode, since: the same of a mode */
	/*
	 * feature, since: per host and usage key of its writes and event
	 * registrations since (reads never), host by host: host id, comm,
	 * writer_cgroup, container, target_kind, cgroup, image ('' for
	 * none), uses; read_export_workloads.c groups them into workloads
	 */
	TWL_RQ_EXP_USES,
	/* feature, since, limit, label key: the label's value, hosts using */
	TWL_RQ_EXP_BY_LABEL,
	TWL_RQ_EXP_HOSTNAMES, /* feature, since, limit: hostname */
	/* feature, since, limit: process, hosts where it only reads, reads */
	TWL_RQ_EXP_READERS,
	TWL_RQ_EXP_WARN_TOTAL, /* feature, since: hosts, kernel warnings */
	/* feature, since, limit: kernel, hosts, warnings */
	TWL_RQ_EXP_WARN_KERNELS,
	TWL_RQ_EXP_ANNOTATIONS, /* feature: twl_annotation_row */
	TWL_RQ_N
};

/* A query's parameters, in order: integers, text, SQL NULL (text NULL). */
#define TWL_RQ_ARGS_MAX 12

struct twl_rq_args {
	int n;
	struct {
		bool text;
		const char *s;
		int64_t i;
	} v[TWL_RQ_ARGS_MAX];
};

static inline void twl_rq_i64(struct twl_rq_args *a, int64_t i)
{
	a->v[a->n].text = false;
	a->v[a->n++].i = i;
}

static inline void twl_rq_text(struct twl_rq_args *a, const char *s)
{
	a->v[a->n].text = true;
	a->v[a->n++].s = s;
}

/* Called per result row: 0 for the next, 1 to stop, or a negative errno. */
typedef int (*twl_rq_row_fn)(void *arg, const struct twl_cells *row);

/*
 * A backend's read contexts and queries.
 * begin - a read context on @s in *@ctx: one snapshot (a transaction)
 * until end; @priv as twl_rctx_begin() (a connection of its own, where
 * the backend has that); @label: the filter whose label (label_key "":
 * none) every query of the context keeps to. 0 or a negative errno.
 * run - query @q with @a on @ctx, @fn called for each row until it stops:
 * 0, @fn's error, the query's (-ENOTSUP: the backend lacks it).
 */
struct twl_rq_io {
	int (*begin)(struct twl_store *s, bool priv,
		     const struct twl_read_filter *label, void **ctx);
	void (*end)(void *ctx);
	int (*run)(void *ctx, enum twl_rq_id q, const struct twl_rq_args *a,
		   twl_rq_row_fn fn, void *arg);
};

/* One query on a context: its backend and the context. */
struct twl_rq_on {
	const struct twl_rq_io *io;
	void *ctx;
};

/*
 * twl_rq_rows - query @q's rows as @r appended to @arr, at most @max;
 * *@more (may be NULL) tells whether another followed.
 * twl_rq_row - its first row as @r into @obj (no row: as SQL NULLs).
 * twl_rq_int - its first row's column 0 into *@v (0: no row or NULL).
 * Each 0 or a negative errno.
 */
int twl_rq_rows(const struct twl_rq_on *on, enum twl_rq_id q,
		const struct twl_rq_args *a, const struct twl_row *r,
		json_t *arr, size_t max, bool *more);
int twl_rq_row(const struct twl_rq_on *on, enum twl_rq_id q,
	       const struct twl_rq_args *a, const struct twl_row *r,
	       json_t *obj);
int twl_rq_int(const struct twl_rq_on *on, enum twl_rq_id q,
	       const struct twl_rq_args *a, int64_t *v);

/*
 * The read functions of store_read.h, with their contracts, on backend
 * @io: twl_answer_summary() is twl_read_summary(), and so on.
 */
int twl_answer_summary(const struct twl_rq_io *io, struct twl_store *s,
		       int64_t now, json_t **out);
int twl_answer_hosts(const struct twl_rq_io *io, struct twl_store *s,
		     const struct twl_read_filter *f, json_t **out);
int twl_answer_host(const struct twl_rq_io *io, struct twl_store *s,
		    const char *host_id, json_t **out);
int twl_answer_health(const struct twl_rq_io *io, struct twl_store *s,
		      int64_t now, int64_t silent_after,
		      const struct twl_read_filter *f, json_t **out);
int twl_answer_unknown(const struct twl_rq_io *io, struct twl_store *s,
		       const struct twl_read_filter *f, json_t **out);
/* read_feature.c: twl_read_feature(), store_read.h */
int twl_answer_feature(const struct twl_rq_io *io, struct twl_store *s,
		       const char *id, const struct twl_read_filter *f,
		       json_t **out);
/* read_alert_uses.c: twl_read_alert_uses(), store_alerts.h */
int twl_answer_alert_uses(const struct twl_rq_io *io, struct twl_store *s,
			  const struct twl_alert_page *p, json_t **out);

/*
 * twl_answer_in - @build(@on, @arg, @doc) in one read context of @io on
 * @s (@priv, @label as its begin): *@out @doc (taken; NULL: no memory),
 * or NULL on failure. 0 or a negative errno.
 */
typedef int (*twl_answer_fn)(const struct twl_rq_on *on, const void *arg,
			     json_t *doc);
int twl_answer_in(const struct twl_rq_io *io, struct twl_store *s, bool priv,
		  const struct twl_read_filter *label, twl_answer_fn build,
		  const void *arg, json_t *doc, json_t **out);

/*
 * twl_answer_coverage - set @obj's "coverage" to what the counts could
 * see, from the latest report of each host that sent coverage facts
 * (under the context's label filter when it has one): {"hosts",
 * "bpf_memory" (BPF attached to the memory controller), "boot_uncovered"
 * (the current boot's start not covered by a log source),
 * "records_lost", "probe_missing", "no_log_source", "map_overflow",
 * "unmeasured" (neither BPF nor a log source), "census_only" (of those,
 * the census is all they sent)}. Serves the export's fleet.coverage and
 * the summary's coverage. 0 or a negative errno.
 */
int twl_answer_coverage(const struct twl_rq_on *on, json_t *obj);

/*
 * twl_answer_values - set @obj's "values" to what was written to feature
 * @f's files (twl_rq_values_into(), store_sqlite_internal.h): in
 * [@since, @until] over the fleet (@host NULL), or over every row of
 * host @host. 0 or a negative errno.
 */
int twl_answer_values(const struct twl_rq_on *on, const struct twl_feature *f,
		      const char *host, int64_t since, int64_t until,
		      json_t *obj);

/*
 * TWL_ANSWER_READS - define a backend's read functions of store_read.h
 * @pfx##summary, ##hosts, ##host, ##health, ##unknown, ##feature and
 * ##alert_uses (store_alerts.h; the backend declares them) as the
 * answers composed here over its runner @io.
 */
#define TWL_ANSWER_READS(pfx, io)                                              \
	int pfx##summary(struct twl_store *s, int64_t now, json_t **out)       \
	{                                                                      \
		return twl_answer_summary((io), s, now, out);                  \
	}                                                                      \
	int pfx##hosts(struct twl_store *s, const struct twl_read_filter *f,   \
		       json_t **out)                                           \
	{                                                                      \
		return twl_answer_hosts((io), s, f, out);                      \
	}                                                                      \
	int pfx##host(struct twl_store *s, const char *host_id, json_t **out)  \
	{                                                                      \
		return twl_answer_host((io), s, host_id, out);                 \
	}                                                                      \
	int pfx##health(struct twl_store *s, int64_t now,                      \
			int64_t silent_after, const struct twl_read_filter *f, \
			json_t **out)                                          \
	{                                                                      \
		return twl_answer_health((io), s, now, silent_after, f, out);  \
	}                                                                      \
	int pfx##unknown(struct twl_store *s, const struct twl_read_filter *f, \
			 json_t **out)                                         \
	{                                                                      \
		return twl_answer_unknown((io), s, f, out);                    \
	}                                                                      \
	int pfx##feature(struct twl_store *s, const char *id,                  \
			 const struct twl_read_filter *f, json_t **out)        \
	{                                                                      \
		return twl_answer_feature((io), s, id, f, out);                \
	}                                                                      \
	int pfx##alert_uses(struct twl_store *s,                               \
			    const struct twl_alert_page *p, json_t **out)      \
	{                                                                      \
		return twl_answer_alert_uses((io), s, p, out);                 \
	}

/*
 * TWL_RQ_VALUES_TABLE - the initializers of a backend's table of the
 * values queries (read_values.c) from its macros Q_WRITTEN,
 * Q_WRITTEN_VALUES, Q_CONFIGURED, Q_CONFIGURED_VALUES and Q_LISTENERS of
 * a scope: @all the fleet's, @one a host's.
 */
#define TWL_RQ_VALUES_TABLE(all, one)                                       \
	[TWL_RQ_VALUES_FLEET] = Q_WRITTEN(all), Q_WRITTEN_VALUES(all),      \
	Q_CONFIGURED(all), Q_CONFIGURED_VALUES(all),                        \
	Q_LISTENERS(all), [TWL_RQ_VALUES_HOST] = Q_WRITTEN(one),            \
	Q_WRITTEN_VALUES(one), Q_CONFIGURED(one), Q_CONFIGURED_VALUES(one), \
	Q_LISTENERS(one)

#endif /* TWL_SERVER_STORE_READ_ANSWERS_H */
