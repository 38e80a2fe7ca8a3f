// SPDX-License-Identifier: GPL-2.0
/*
 * The host part of the ingest write path on SQLite (store_sqlite_ingest.c
 * stores the records): the host row, its labels, its coverage facts and
 * the runtimes of its census. Each is written only when it changed where
 * that can be told cheaply, since most reports change none of them and
 * the writer thread is the server's bottleneck (bench/server-load).
 */
#include <errno.h>
#include <string.h>

#include "store/ingest.h"
#include "store/sqlite/store_sqlite_internal.h"

enum {
	H_HOST_TOUCH,
	H_HOST_UPSERT,
	H_LABELS_GET,
	H_LABELS_DEL,
	H_LABELS_INS,
	H_COVERAGE,
	H_RUNTIME_DEL,
	H_RUNTIME_INS,
	H_REF_GET,
	H_REF_INS,
	H_N,
};
_Static_assert(H_N <= sizeof(((struct twl_store *)0)->hs) / sizeof(void *),
	       "struct twl_store.hs[] has a slot per host statement");

static const char *const hsql[H_N] = {
	/*
	 * The common case of H_HOST_UPSERT: the host exists, its name,
	 * kernel and cgroup mode did not change and its last report is in
	 * this one's hour. Not naming them (nor last_hour) spares the
	 * rewrite of their index entries (hosts_hostname, hosts_kernel,
	 * hosts_cgroup_mode, hosts_last_hour) that any SET of a column
	 * costs, even to the same value, and the host_hour trigger:
	 * max(last_seen, ?8) stays in the row's last_hour (schema/
	 * migrations/008_hosts_hour.sql). Same parameters and the same
	 * values stored. boot_id and kernel are host.boot_id and
	 * host.kernel: a record of another boot never changes them.
	 */
	[H_HOST_TOUCH] =
		"UPDATE hosts SET agent_version = ?5, catalog_version = ?6,"
		" boot_id = ?7, last_seen = max(last_seen, ?8),"
		" last_seq = max(last_seq, ?9), health_json = ?10,"
		" records_lost = ?11, key_rejected = ?12, probe_missing = ?13,"
		" census_json = coalesce(?14, census_json)"
		" WHERE host_id = ?1 AND hostname = ?2 AND kernel = ?3"
		" AND cgroup_mode = ?4 AND last_hour = ?8 / 3600",
	[H_HOST_UPSERT] =
		"INSERT INTO hosts(host_id, hostname, kernel, cgroup_mode, agent_version,"
		" catalog_version, boot_id, first_seen, last_seen, last_seq, health_json,"
		" records_lost, key_rejected, probe_missing, census_json, last_hour)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?8 / 3600)"
		" ON CONFLICT(host_id) DO UPDATE SET"
		" hostname = excluded.hostname, kernel = excluded.kernel,"
		" cgroup_mode = excluded.cgroup_mode, agent_version = excluded.agent_version,"
		" catalog_version = excluded.catalog_version, boot_id = excluded.boot_id,"
		" last_seen = max(last_seen, excluded.last_seen),"
		" last_hour = max(last_hour, excluded.last_hour),"
		" last_seq = max(last_seq, excluded.last_seq),"
		" health_json = excluded.health_json, records_lost = excluded.records_lost,"
		" key_rejected = excluded.key_rejected, probe_missing = excluded.probe_missing,"
		" census_json = coalesce(excluded.census_json, census_json)",
	[H_LABELS_GET] =
		"SELECT key, value FROM host_labels WHERE host_id = ?1",
	[H_LABELS_DEL] = "DELETE FROM host_labels WHERE host_id = ?1",
	[H_LABELS_INS] = "INSERT INTO host_labels(host_id, key, value)"
			 " VALUES(?1, ?2, ?3)",
	/*
	 * Written only when a fact changed (schema/migrations/
	 * 014_host_coverage.sql): for an unchanged host the WHERE is false
	 * and the statement reads the row and writes nothing.
	 */
	[H_COVERAGE] =
		"INSERT INTO host_coverage(host_id, catalog_version, facts,"
		" records_lost, journal_missed, journal_errors, entries_dropped,"
		" probes_not_built, boots, boots_uncovered)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		" ON CONFLICT(host_id) DO UPDATE SET"
		" catalog_version = ?2, facts = ?3, records_lost = ?4,"
		" journal_missed = ?5, journal_errors = ?6, entries_dropped = ?7,"
		" probes_not_built = ?8, boots = ?9, boots_uncovered = ?10"
		" WHERE catalog_version != ?2 OR facts != ?3 OR records_lost != ?4"
		" OR journal_missed != ?5 OR journal_errors != ?6"
		" OR entries_dropped != ?7 OR probes_not_built != ?8"
		" OR boots != ?9 OR boots_uncovered != ?10",
	[H_RUNTIME_DEL] = "DELETE FROM host_runtimes WHERE host_id = ?1",
	[H_RUNTIME_INS] =
		"INSERT INTO host_runtimes(host_id, name, version, cgroup_driver)"
		" VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO UPDATE SET"
		" cgroup_driver = excluded.cgroup_driver",
	/* A host's number (schema/migrations/022_host_refs.sql). */
	[H_REF_GET] = "SELECT ref FROM host_refs WHERE host_id = ?1",
	[H_REF_INS] = "INSERT INTO host_refs(host_id) VALUES(?1)",
};

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_ingest_host_prepare(struct twl_store *s)
{
	return twl_sqlite_prepare_all(s->path, s->wdb, hsql, H_N, s->hs,
				      "host writer");
}

static int host_step(sqlite3_stmt *st, const char *host_id,
		     const struct twl_ingest *in, int64_t now)
{
	twl_bind_static(st, 1, host_id);
	twl_bind_static(st, 2, in->hostname);
	twl_bind_static(st, 3, in->kernel);
	twl_bind_static(st, 4, in->cgroup_mode);
	twl_bind_static(st, 5, in->agent_version);
	sqlite3_bind_int64(st, 6, in->catalog_version);
	twl_bind_static(st, 7, in->boot_id);
	sqlite3_bind_int64(st, 8, now);
	sqlite3_bind_int64(st, 9, in->seq);
	twl_bind_static(st, 10, in->health_json);
	sqlite3_bind_int64(st, 11, in->records_lost);
	sqlite3_bind_int(st, 12, in->key_rejected);
	twl_bind_static(st, 13, in->probe_missing_json);
	twl_bind_static(st, 14, in->census_json);
	return twl_step_done(st);
}

/* 1 when the host's stored labels are in's, 0 when not, or -errno. */
static int labels_same(struct twl_store *s, const char *host_id,
		       const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->hs[H_LABELS_GET];
	size_t n = 0;
	int rc, same = 1;

	twl_bind_static(st, 1, host_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		n++;
		if (!k || !v || !twl_ingest_has_label(in, k, v))
			same = 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	return same && n == in->n_labels;
}

/* host.labels replace the host's when the report has them and they differ. */
static int ingest_labels(struct twl_store *s, const char *host_id,
			 const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->hs[H_LABELS_INS];
	int ret;

	if (!in->has_labels)
		return 0;
	ret = labels_same(s, host_id, in);
	if (ret)
		return ret < 0 ? ret : 0;
	twl_bind_static(s->hs[H_LABELS_DEL], 1, host_id);
	ret = twl_step_done(s->hs[H_LABELS_DEL]);
	for (size_t i = 0; !ret && i < in->n_labels; i++) {
		twl_bind_static(st, 1, host_id);
		twl_bind_static(st, 2, in->labels[i].key);
		twl_bind_static(st, 3, in->labels[i].value);
		ret = twl_step_done(st);
	}
	return ret;
}

static int ingest_coverage(struct twl_store *s, const char *host_id,
			   const struct twl_ingest_coverage *c)
{
	sqlite3_stmt *st = s->hs[H_COVERAGE];

	twl_bind_static(st, 1, host_id);
	sqlite3_bind_int64(st, 2, c->catalog_version);
	sqlite3_bind_int64(st, 3, c->facts);
	sqlite3_bind_int64(st, 4, c->records_lost);
	sqlite3_bind_int64(st, 5, c->journal_missed);
	sqlite3_bind_int64(st, 6, c->journal_errors);
	sqlite3_bind_int64(st, 7, c->entries_dropped);
	sqlite3_bind_int64(st, 8, c->probes_not_built);
	sqlite3_bind_int64(st, 9, c->boots);
	sqlite3_bind_int64(st, 10, c->boots_uncovered);
	return twl_step_done(st);
}

/* census.runtimes replace the host's with every census. */
static int ingest_runtimes(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in)
{
	sqlite3_stmt *st = s->hs[H_RUNTIME_INS];
	int ret;

	if (!in->has_census)
		return 0;
	twl_bind_static(s->hs[H_RUNTIME_DEL], 1, host_id);
	ret = twl_step_done(s->hs[H_RUNTIME_DEL]);
	for (size_t i = 0; !ret && i < in->n_runtimes; i++) {
		const struct twl_ingest_runtime *r = &in->runtimes[i];

		twl_bind_static(st, 1, host_id);
		twl_bind_static(st, 2, r->name);
		twl_bind_static(st, 3, r->version);
		twl_bind_static(st, 4, r->cgroup_driver);
		ret = twl_step_done(st);
	}
	return ret;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_ingest_host(struct twl_store *s, const char *host_id,
			   const struct twl_ingest *in, int64_t now)
{
	int ret = host_step(s->hs[H_HOST_TOUCH], host_id, in, now);

	if (!ret && sqlite3_changes(s->wdb) == 0)
		ret = host_step(s->hs[H_HOST_UPSERT], host_id, in, now);
	if (!ret)
		ret = ingest_labels(s, host_id, in);
	if (!ret)
		ret = ingest_coverage(s, host_id, &in->coverage);
	if (!ret)
		ret = ingest_runtimes(s, host_id, in);
	return ret;
}

/* Contract: see store_sqlite_internal.h. */
int twl_sqlite_host_ref(struct twl_store *s, const char *host_id, int64_t *ref)
{
	sqlite3_stmt *st = s->hs[H_REF_GET];
	int rc, ret;

	twl_bind_static(st, 1, host_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ref = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return twl_sqlite_errno(rc);
	/* the host's first report: rolled back with it if it fails */
	twl_bind_static(s->hs[H_REF_INS], 1, host_id);
	ret = twl_step_done(s->hs[H_REF_INS]);
	if (!ret)
		*ref = sqlite3_last_insert_rowid(s->wdb);
	return ret;
}
