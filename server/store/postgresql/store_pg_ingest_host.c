// SPDX-License-Identifier: GPL-2.0
/*
 * The host part of the ingest write path on PostgreSQL (store_pg_ingest.h;
 * SQLite's is store/sqlite/store_sqlite_ingest_host.c, the same rules):
 * the host row, its labels, its coverage facts and the runtimes of its
 * census, each written only when it changed where that can be told
 * cheaply. The hosts row's update also holds the row's lock until
 * COMMIT. The statements go on the report's pipe (store_pg_ingest.h):
 * the common update of the host row, the labels' look-up, the coverage
 * facts and the runtimes with its first round trip; the host row's
 * upsert (when the update found it changed or missing), the times
 * clamped and new labels, which depend on those answers, with its last.
 */
#include <errno.h>
#include <string.h>

#include "store/ingest.h"
#include "store/postgresql/store_pg_ingest.h"
#include "store/postgresql/store_pg_internal.h"

static const struct twl_pg_stmt hsql[] = {
	/*
	 * The common case of h_host_upsert: the host exists, its name,
	 * kernel and cgroup mode did not change and its last report is in
	 * this one's hour; the same values stored, no index entry of those
	 * columns rewritten, no host_hour trigger. boot_id and kernel are
	 * host.boot_id and host.kernel.
	 */
	{ "h_host_touch",
	  "UPDATE hosts SET agent_version = $5, catalog_version = $6::bigint,"
	  " boot_id = $7, last_seen = greatest(last_seen, $8::bigint),"
	  " last_seq = greatest(last_seq, $9::bigint), health_json = $10,"
	  " records_lost = $11::bigint, key_rejected = $12::bigint,"
	  " probe_missing = $13, census_json = coalesce($14, census_json)"
	  " WHERE host_id = $1 AND hostname = $2 AND kernel = $3"
	  " AND cgroup_mode = $4 AND last_hour = $8::bigint / 3600" },
	{ "h_host_upsert",
	  "INSERT INTO hosts(host_id, hostname, kernel, cgroup_mode,"
	  " agent_version, catalog_version, boot_id, first_seen, last_seen,"
	  " last_seq, health_json, records_lost, key_rejected, probe_missing,"
	  " census_json, last_hour)"
	  " VALUES($1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint, $8::bigint,"
	  " $9::bigint, $10, $11::bigint, $12::bigint, $13, $14,"
	  " $8::bigint / 3600)"
	  " ON CONFLICT (host_id) DO UPDATE SET"
	  " hostname = excluded.hostname, kernel = excluded.kernel,"
	  " cgroup_mode = excluded.cgroup_mode,"
	  " agent_version = excluded.agent_version,"
	  " catalog_version = excluded.catalog_version,"
	  " boot_id = excluded.boot_id,"
	  " last_seen = greatest(hosts.last_seen, excluded.last_seen),"
	  " last_hour = greatest(hosts.last_hour, excluded.last_hour),"
	  " last_seq = greatest(hosts.last_seq, excluded.last_seq),"
	  " health_json = excluded.health_json,"
	  " records_lost = excluded.records_lost,"
	  " key_rejected = excluded.key_rejected,"
	  " probe_missing = excluded.probe_missing,"
	  " census_json = coalesce(excluded.census_json, hosts.census_json)" },
	{ "h_labels_get",
	  "SELECT key, value FROM host_labels WHERE host_id = $1" },
	{ "h_labels_del", "DELETE FROM host_labels WHERE host_id = $1" },
	{ "h_labels_ins",
	  "INSERT INTO host_labels(host_id, key, value) VALUES($1, $2, $3)" },
	/* written only when a fact changed (SQLite 014) */
	{ "h_coverage",
	  "INSERT INTO host_coverage(host_id, catalog_version, facts,"
	  " records_lost, journal_missed, journal_errors, entries_dropped,"
	  " probes_not_built, boots, boots_uncovered)"
	  " VALUES($1, $2::bigint, $3::bigint, $4::bigint, $5::bigint,"
	  " $6::bigint, $7::bigint, $8::bigint, $9::bigint, $10::bigint)"
	  " ON CONFLICT (host_id) DO UPDATE SET"
	  " catalog_version = excluded.catalog_version,"
	  " facts = excluded.facts, records_lost = excluded.records_lost,"
	  " journal_missed = excluded.journal_missed,"
	  " journal_errors = excluded.journal_errors,"
	  " entries_dropped = excluded.entries_dropped,"
	  " probes_not_built = excluded.probes_not_built,"
	  " boots = excluded.boots, boots_uncovered = excluded.boots_uncovered"
	  " WHERE (host_coverage.catalog_version, host_coverage.facts,"
	  " host_coverage.records_lost, host_coverage.journal_missed,"
	  " host_coverage.journal_errors, host_coverage.entries_dropped,"
	  " host_coverage.probes_not_built, host_coverage.boots,"
	  " host_coverage.boots_uncovered) IS DISTINCT FROM"
	  " (excluded.catalog_version, excluded.facts, excluded.records_lost,"
	  " excluded.journal_missed, excluded.journal_errors,"
	  " excluded.entries_dropped, excluded.probes_not_built,"
	  " excluded.boots, excluded.boots_uncovered)" },
	{ "h_runtime_del", "DELETE FROM host_runtimes WHERE host_id = $1" },
	{ "h_runtime_ins",
	  "INSERT INTO host_runtimes(host_id, name, version, cgroup_driver)"
	  " VALUES($1, $2, $3, $4) ON CONFLICT (host_id, name, version)"
	  " DO UPDATE SET cgroup_driver = excluded.cgroup_driver" },
};

/* Contract: see store_pg_internal.h. */
int twl_pg_ingest_host_prepare(struct twl_pg *p)
{
	return twl_pg_prepare(p->wconn, p->where, hsql,
			      sizeof(hsql) / sizeof(*hsql));
}

/* Send h_host_touch or h_host_upsert, its result into *@res. */
static int host_send(struct twl_pg_report *r, const char *name, PGresult **res)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_text(&a, in->hostname);
	twl_pg_arg_text(&a, in->kernel);
	twl_pg_arg_text(&a, in->cgroup_mode);
	twl_pg_arg_text(&a, in->agent_version);
	twl_pg_arg_i64(&a, in->catalog_version);
	twl_pg_arg_text(&a, in->boot_id);
	twl_pg_arg_i64(&a, r->now);
	twl_pg_arg_i64(&a, in->seq);
	twl_pg_arg_text(&a, in->health_json);
	twl_pg_arg_i64(&a, in->records_lost);
	twl_pg_arg_i64(&a, in->key_rejected);
	twl_pg_arg_text(&a, in->probe_missing_json);
	twl_pg_arg_text(&a, in->census_json);
	return twl_pg_pipe_send(&r->pipe, name, &a, res);
}

/* 1 when the host's stored labels (r->labels) are the report's, or 0. */
static int labels_same(const struct twl_pg_report *r)
{
	int n = PQntuples(r->labels);
	int same = (size_t)n == r->in->n_labels;

	for (int i = 0; same && i < n; i++)
		same = twl_ingest_has_label(r->in, PQgetvalue(r->labels, i, 0),
					    PQgetvalue(r->labels, i, 1));
	return same;
}

/* host.labels replace the host's when the report has them and they differ. */
static int labels_send(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };
	int ret;

	if (!in->has_labels || labels_same(r))
		return 0;
	twl_pg_arg_text(&a, r->host_id);
	ret = twl_pg_pipe_send(&r->pipe, "h_labels_del", &a, NULL);
	for (size_t i = 0; !ret && i < in->n_labels; i++) {
		a.n = 1;
		twl_pg_arg_text(&a, in->labels[i].key);
		twl_pg_arg_text(&a, in->labels[i].value);
		ret = twl_pg_pipe_send(&r->pipe, "h_labels_ins", &a, NULL);
	}
	return ret;
}

static int coverage_send(struct twl_pg_report *r)
{
	const struct twl_ingest_coverage *c = &r->in->coverage;
	struct twl_pg_args a = { 0 };

	twl_pg_arg_text(&a, r->host_id);
	twl_pg_arg_i64(&a, c->catalog_version);
	twl_pg_arg_i64(&a, c->facts);
	twl_pg_arg_i64(&a, c->records_lost);
	twl_pg_arg_i64(&a, c->journal_missed);
	twl_pg_arg_i64(&a, c->journal_errors);
	twl_pg_arg_i64(&a, c->entries_dropped);
	twl_pg_arg_i64(&a, c->probes_not_built);
	twl_pg_arg_i64(&a, c->boots);
	twl_pg_arg_i64(&a, c->boots_uncovered);
	return twl_pg_pipe_send(&r->pipe, "h_coverage", &a, NULL);
}

/* census.runtimes replace the host's with every census. */
static int runtimes_send(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };
	int ret;

	if (!in->has_census)
		return 0;
	twl_pg_arg_text(&a, r->host_id);
	ret = twl_pg_pipe_send(&r->pipe, "h_runtime_del", &a, NULL);
	for (size_t i = 0; !ret && i < in->n_runtimes; i++) {
		const struct twl_ingest_runtime *rt = &in->runtimes[i];

		a.n = 1;
		twl_pg_arg_text(&a, rt->name);
		twl_pg_arg_text(&a, rt->version);
		twl_pg_arg_text(&a, rt->cgroup_driver);
		ret = twl_pg_pipe_send(&r->pipe, "h_runtime_ins", &a, NULL);
	}
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_ingest_host_send(struct twl_pg_report *r)
{
	struct twl_pg_args a = { 0 };
	int ret = host_send(r, "h_host_touch", &r->touch);

	if (!ret && r->in->has_labels) {
		twl_pg_arg_text(&a, r->host_id);
		ret = twl_pg_pipe_send(&r->pipe, "h_labels_get", &a,
				       &r->labels);
	}
	if (!ret)
		ret = coverage_send(r);
	if (!ret)
		ret = runtimes_send(r);
	return ret;
}

/* Contract: see store_pg_ingest.h. */
int twl_pg_ingest_host_finish(struct twl_pg_report *r)
{
	const struct twl_ingest *in = r->in;
	struct twl_pg_args a = { 0 };
	int ret = 0;

	if (!twl_pg_changed(r->touch))
		ret = host_send(r, "h_host_upsert", NULL);
	/* the host sent times from the future: after its row is there */
	if (!ret && in->times_clamped) {
		twl_pg_arg_text(&a, r->host_id);
		twl_pg_arg_i64(&a, in->times_clamped);
		twl_pg_arg_i64(&a, in->time_sent_max);
		ret = twl_pg_pipe_send(&r->pipe, "w_host_clamped", &a, NULL);
	}
	if (!ret)
		ret = labels_send(r);
	return ret;
}
