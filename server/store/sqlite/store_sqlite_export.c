// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's data on SQLite (twl_read_export_data(), see
 * store_read.h and api/export.h): the fleet over a window and, per catalog
 * feature, its hosts, kernels and workloads. Workloads are grouped in SQL
 * as docs/workloads.md defines them, through a function registered on
 * every connection.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include <twilight/catalog.h>
#include <twilight/cgroup_class.h>
#include <twilight/wire.h>
#include <twilight/workload.h>

#include "api/export.h"
#include "store/export_evidence.h"
#include "store/ingest.h"
#include "store/store_read.h"
#include "store/read_answers.h"
#include "store/sqlite/store_sqlite_internal.h"

#define DAY 86400

/* ---- the workload SQL function, on every connection ---------------- */

static const char *text_arg(sqlite3_value *v)
{
	const char *s = (const char *)sqlite3_value_text(v);

	return s ? s : "";
}

/*
 * twl_workload_part(part, comm, writer_cgroup, container, target_kind,
 * cgroup): part 0 of a usage row's workload (workload.h) is the kind of
 * the writer's place, 1 its name, 2 the kind of the target; each as the
 * one definition gives it, so SQL groups by exactly that.
 */
static void sql_workload_part(sqlite3_context *ctx, int argc,
			      sqlite3_value **argv)
{
	struct twl_wire_usage u = { 0 };
	struct twl_workload w;
	int part = sqlite3_value_int(argv[0]);

	u.comm = text_arg(argv[1]);
	u.writer_cgroup = text_arg(argv[2]);
	u.container = text_arg(argv[3]);
	u.target_kind = text_arg(argv[4]);
	u.cgroup = text_arg(argv[5]);
	u.image = "";
	/* a name too long leaves the name "": the kinds are right */
	twl_workload_of(&u, TWL_WORKLOAD_PLACE_NAME, &w);
	if (part == 1)
		sqlite3_result_text(ctx, w.place_name, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_text(ctx,
				    twl_cgroup_kind_name(part ? w.target_kind :
								w.place_kind),
				    -1, SQLITE_STATIC);
}

static int register_functions(sqlite3 *db, char **err,
			      const struct sqlite3_api_routines *api)
{
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;

	return sqlite3_create_function(db, "twl_workload_part", 6, flags, NULL,
				       sql_workload_part, NULL, NULL);
}

/*
 * Registered before main() so that every connection opened afterwards
 * (the store's reader included) has the functions.
 */
__attribute__((constructor)) static void register_auto_extension(void)
{
	sqlite3_auto_extension((void (*)(void))register_functions);
}

/* ---- queries ------------------------------------------------------ */

/*
 * The hosts' indexes hold last_hour, not last_seen (migration 008).
 * A count "last_seen >= T" is the whole hours after T's from the
 * index alone, plus T's own hour filtered exactly in the rows: a
 * look-up per host of that hour only. INDEXED BY, as for
 * feature_host (q_fh_range, store_sqlite_read.c).
 */
static const char q_hosts_since[] =
	"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
	" WHERE last_hour > ?1 / 3600" TWL_SQL_LABELED(
		"host_id") ") +"
			   " (SELECT count(*) FROM hosts INDEXED BY hosts_last_hour"
			   " WHERE last_hour = ?1 / 3600 AND last_seen >= ?1" TWL_SQL_LABELED(
				   "host_id") ")";

static const char q_hosts_mode[] =
	"SELECT (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
	" WHERE cgroup_mode = ?1 AND last_hour > ?2 / 3600" TWL_SQL_LABELED(
		"host_id") ") +"
			   " (SELECT count(*) FROM hosts INDEXED BY hosts_cgroup_mode"
			   " WHERE cgroup_mode = ?1 AND last_hour = ?2 / 3600"
			   " AND last_seen >= ?2" TWL_SQL_LABELED(
				   "host_id") ")";

/*
 * The workloads that use the feature (docs/workloads.md: process, kind of
 * the writer's place, kind of the target; the place's name with ?4, the
 * image with ?5): writes and event registrations (configures, listens); a
 * read is monitoring, not a use, and never makes a workload row
 * (docs/api.md, "Kinds of use"). Whether a row had an image at all is
 * kept, so a withheld one can be said to be withheld. Sorted by hosts,
 * then uses.
 */
static const char q_exp_workloads[] =
	"SELECT comm,"
	" twl_workload_part(0, comm, writer_cgroup, container, target_kind,"
	"  cgroup) AS pk,"
	" CASE WHEN ?4 THEN twl_workload_part(1, comm, writer_cgroup,"
	"  container, target_kind, cgroup) ELSE '' END AS pn,"
	" twl_workload_part(2, comm, writer_cgroup, container, target_kind,"
	"  cgroup) AS tk,"
	" CASE WHEN ?5 THEN coalesce(image, '') ELSE '' END AS im,"
	" max(coalesce(image, '') != ''),"
	" count(DISTINCT host_id), sum(count) FROM usage"
	" WHERE feature_id = ?1 AND last_seen >= ?2 AND op != 'read'" TWL_SQL_LABELED(
		"host_id") " GROUP BY comm, pk, pn, tk, im"
			   " ORDER BY 7 DESC, 8 DESC, 1, 2, 3, 4, 5 LIMIT ?3";

/*
 * The hosts using the feature (as hosts_using counts them, q_fh_range)
 * by the value of host label ?4 (NULL: hosts without it).
 */
static const char q_exp_by_label[] =
	"SELECT l.value, count(*) FROM feature_host fh"
	" INDEXED BY feature_host_last_hour"
	" LEFT JOIN host_labels l ON l.host_id = fh.host_id AND l.key = ?4"
	" WHERE fh.feature_id = ?1 AND fh.last_hour >= ?2 / 3600"
	" AND fh.last_used >= ?2 AND fh.kinds & 27" TWL_SQL_LABELED(
		"fh.host_id") " GROUP BY l.value ORDER BY 2 DESC, l.value IS NULL, 1 LIMIT ?3";

/* the hosts using it, as hosts_using counts them: no read-only host */
static const char q_exp_hostnames[] =
	"SELECT h.hostname FROM feature_host fh"
	" INDEXED BY feature_host_last_hour"
	" JOIN hosts h ON h.host_id = fh.host_id"
	" WHERE fh.feature_id = ?1 AND fh.last_hour >= ?2 / 3600"
	" AND fh.last_used >= ?2 AND fh.kinds & 27" TWL_SQL_LABELED(
		"fh.host_id") " ORDER BY fh.uses DESC, h.hostname LIMIT ?3";

/*
 * The processes that only read the feature on a host (monitoring): per
 * process, the hosts where it read and never wrote or registered, and
 * its reads there. A process that configures or listens on a host is
 * not a reader on that host.
 */
static const char q_exp_readers[] =
	"SELECT comm, count(*), sum(r) FROM (SELECT host_id, comm,"
	"  sum(count) FILTER (WHERE op = 'read') AS r FROM usage"
	"  WHERE feature_id = ?1 AND last_seen >= ?2" TWL_SQL_LABELED(
		"host_id") "  GROUP BY host_id, comm HAVING max(op != 'read') = 0)"
			   " GROUP BY comm ORDER BY 2 DESC, 3 DESC, 1 LIMIT ?3";

/*
 * The kernel warnings of the feature since ?2 (and the unknown texts the
 * catalog matched to it since), each with the kernel that printed it: the
 * record's own (wire version 2), else the host's.
 */
#define WARN_ROWS                                                                   \
	"SELECT w.host_id AS host_id, coalesce(w.kernel, h.kernel, '')"             \
	"  AS kernel, 1 AS n FROM warnings w INDEXED BY warnings_feature_time"      \
	"  LEFT JOIN hosts h ON h.host_id = w.host_id"                              \
	"  WHERE w.feature_id = ?1 AND w.time >= ?2" TWL_SQL_LABELED(               \
		"w.host_id") " UNION ALL SELECT u.host_id, coalesce(h.kernel, '')," \
			     " u.count FROM unknown_deprecations u"                 \
			     "  LEFT JOIN hosts h ON h.host_id = u.host_id"         \
			     "  WHERE u.matched_feature_id = ?1"                    \
			     "  AND u.first_time >= ?2" TWL_SQL_LABELED(            \
				     "u.host_id")

static const char q_exp_warn_total[] =
	"SELECT count(DISTINCT host_id), coalesce(sum(n), 0)"
	" FROM (" WARN_ROWS ")";
static const char q_exp_warn_kernels[] =
	"SELECT kernel, count(DISTINCT host_id), sum(n) FROM (" WARN_ROWS ")"
	" GROUP BY kernel ORDER BY 2 DESC, 3 DESC, 1 LIMIT ?3";

/*
 * The hosts with coverage facts, and the fleet counts of some facts
 * (kept by migration 014's triggers: a few rows, nothing summed); under
 * a label filter, counted in the labelled hosts' rows instead.
 */
static const char q_cov_hosts[] =
	"SELECT count(*) FROM host_coverage WHERE 1" TWL_SQL_LABELED("host_id");
static const char q_cov_bit[] =
	"SELECT CASE WHEN ?20 IS NULL"
	" THEN (SELECT hosts FROM coverage_count WHERE bit = ?1)"
	" ELSE (SELECT count(*) FROM host_coverage WHERE facts & (1 << ?1)" TWL_SQL_LABELED(
		"host_id") ") END";
/*
 * Hosts without BPF on the memory controller whose current boot's kernel
 * log the agent did not read (TWL_FACT_NO_LOG_SOURCE): all of them
 * (?1 0), or those of them that sent a census and have BPF on no
 * controller at all (?1 1): the census is their only evidence.
 */
static const char q_cov_blind[] =
	"SELECT count(*) FROM host_coverage c"
	" WHERE (c.facts & 1) = 0 AND (c.facts >> 27) & 1"
	" AND (?1 = 0 OR ((c.facts & 31) = 0 AND EXISTS (SELECT 1 FROM hosts h"
	"  WHERE h.host_id = c.host_id AND h.census_json IS NOT NULL)))" TWL_SQL_LABELED(
		"c.host_id");

/* ---- export data ---------------------------------------------------- */

/* Contract: see store_sqlite_internal.h. */
const char *const twl_sqlite_coverage_sql[TWL_RQ_N] = {
	[TWL_RQ_COV_HOSTS] = q_cov_hosts,
	[TWL_RQ_COV_BIT] = q_cov_bit,
	[TWL_RQ_COV_BLIND] = q_cov_blind,
};

/* of twl_rq_range_into(): the count of hosts only */
static const struct twl_col using_cols[] = {
	{ "hosts_using", 0, TWL_COL_INT },
	{ "hosts_configuring", 3, TWL_COL_INT },
	{ "hosts_listening", 4, TWL_COL_INT },
	{ "hosts_reading_only", 5, TWL_COL_INT },
};
static const struct twl_row using_row = TWL_ROW(using_cols);

static const struct twl_col workload_cols[] = {
	{ "process", 0, TWL_COL_TEXT },	   { "place", 1, TWL_COL_TEXT },
	{ "place_name", 2, TWL_COL_TEXT }, { "target", 3, TWL_COL_TEXT },
	{ "image", 4, TWL_COL_TEXT },	   { "has_image", 5, TWL_COL_BOOL },
	{ "hosts", 6, TWL_COL_INT },	   { "uses", 7, TWL_COL_INT },
};
static const struct twl_row workload_row = TWL_ROW(workload_cols);

static const struct twl_col by_label_cols[] = {
	{ "value", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
};
static const struct twl_row by_label_row = TWL_ROW(by_label_cols);

static const struct twl_col reader_cols[] = {
	{ "process", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "reads", 2, TWL_COL_INT },
};
static const struct twl_row reader_row = TWL_ROW(reader_cols);

static const struct twl_col warn_total_cols[] = {
	{ "hosts", 0, TWL_COL_INT },
	{ "warnings", 1, TWL_COL_INT },
};
static const struct twl_row warn_total_row = TWL_ROW(warn_total_cols);

static const struct twl_col warn_kernel_cols[] = {
	{ "kernel", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "warnings", 2, TWL_COL_INT },
};
static const struct twl_row warn_kernel_row = TWL_ROW(warn_kernel_cols);

static const struct twl_col hostname_cols[] = { { NULL, 0, TWL_COL_TEXT } };
static const struct twl_row hostname_row = TWL_ROW(hostname_cols);

/* The workloads of feature @f since @since into @o's "workloads". */
static int export_workloads(struct twl_rctx *c, const struct twl_feature *f,
			    int64_t since, const struct twl_export_opts *opts,
			    json_t *o)
{
	sqlite3_stmt *st;
	json_t *arr;
	int rc = 0;

	TRY(twl_jset(o, "workloads", arr = json_array()));
	st = twl_rctx_stmt(c, q_exp_workloads, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
	sqlite3_bind_int(st, 4, opts->full_cgroups);
	sqlite3_bind_int(st, 5, opts->show_images);
	rc = twl_rows_into(st, &workload_row, arr, SIZE_MAX, NULL);
out:
	return rc;
}

/* @sql of feature @f since @since (?1, ?2; ?3 the top N) as rows @r. */
static int feature_rows(struct twl_rctx *c, const char *sql,
			const struct twl_feature *f, int64_t since,
			const struct twl_row *r, json_t *arr)
{
	sqlite3_stmt *st;
	int rc = 0;

	st = twl_rctx_stmt(c, sql, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
	return twl_rows_into(st, r, arr, SIZE_MAX, NULL);
}

/*
 * The evidence of @f kept apart from its uses, into @o: the processes
 * that only read it, the kernel warnings and their kernels, and whether
 * BPF could have counted it at all.
 */
static int export_evidence(struct twl_rctx *c, const struct twl_feature *f,
			   int64_t since, json_t *o)
{
	sqlite3_stmt *st;
	json_t *arr, *kw;
	int rc = 0;

	TRY(twl_jset(o, "bpf_measured",
		     json_boolean(twl_export_bpf_measurable(f))));
	TRY(twl_jset(o, "readers", arr = json_array()));
	TRY(feature_rows(c, q_exp_readers, f, since, &reader_row, arr));
	TRY(twl_jset(o, "kernel_warnings", kw = json_object()));
	st = twl_rctx_stmt(c, q_exp_warn_total, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	TRY(twl_row_into(st, &warn_total_row, kw));
	TRY(twl_jset(kw, "kernels", arr = json_array()));
	TRY(feature_rows(c, q_exp_warn_kernels, f, since, &warn_kernel_row,
			 arr));
	rc = twl_export_warning_origins(f, arr);
out:
	return rc;
}

/* The hosts using @f by the value of opts->group_label, into @o. */
static int export_by_label(struct twl_rctx *c, const struct twl_feature *f,
			   int64_t since, const char *key, json_t *o)
{
	sqlite3_stmt *st;
	json_t *arr;
	int rc = 0;

	TRY(twl_jset(o, "by_label",
		     json_pack("{s:s, s:[]}", "key", key, "groups")));
	arr = json_object_get(json_object_get(o, "by_label"), "groups");
	st = twl_rctx_stmt(c, q_exp_by_label, &rc);
	if (!st)
		return rc;
	sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
	sqlite3_bind_text(st, 4, key, -1, SQLITE_STATIC);
	rc = twl_rows_into(st, &by_label_row, arr, SIZE_MAX, NULL);
out:
	return rc;
}

/* The lists of feature @f since @since into its export object @o. */
static int export_lists(struct twl_rctx *c, const struct twl_feature *f,
			int64_t since, const struct twl_export_opts *opts,
			json_t *o)
{
	sqlite3_stmt *st;
	json_t *arr;
	int rc = 0;

	TRY(twl_jset(o, "kernels", arr = json_array()));
	TRY(twl_rq_kernels_into(c, f->id, since, INT64_MAX, arr));
	TRY(export_workloads(c, f, since, opts, o));
	if (opts->group_label && opts->group_label[0])
		TRY(export_by_label(c, f, since, opts->group_label, o));
	if (opts->show_hosts) {
		TRY(twl_jset(o, "hosts", arr = json_array()));
		st = twl_rctx_stmt(c, q_exp_hostnames, &rc);
		if (!st)
			return rc;
		sqlite3_bind_text(st, 1, f->id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, since);
		sqlite3_bind_int(st, 3, TWL_READ_TOP_N);
		TRY(twl_rows_into(st, &hostname_row, arr, SIZE_MAX, NULL));
	}
	TRY(twl_jset(o, "annotations", arr = json_array()));
	rc = twl_rq_annotations_into(c, f->id, arr);
out:
	return rc;
}

static int export_feature(struct twl_rctx *c, const struct twl_feature *f,
			  int64_t since, const struct twl_export_opts *opts,
			  json_t *fleet, json_t *feats)
{
	json_t *o;
	int64_t uses;
	int rc = 0;

	o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "id", f->id,
		      "title", f->title, "status", f->status, "kernel_version",
		      f->kernel_version, "commit", f->commit, "replacement",
		      f->replacement, "replacement_note", f->replacement_note);
	TRY(twl_jpush(feats, o));
	TRY(twl_rq_range_into(c, f->id, since, INT64_MAX, &using_row, o));
	TRY(twl_jset(o, "hosts_v1",
		     json_copy(json_object_get(fleet, "v1_or_hybrid"))));
	TRY(twl_jset(o, "hosts_all",
		     json_copy(json_object_get(fleet, "hosts"))));
	TRY(twl_rq_day_uses(c, f->id, since / DAY, INT64_MAX / DAY, &uses));
	TRY(twl_jset(o, "uses", json_integer(uses)));
	TRY(twl_rq_first_last(c, f->id, o));
	TRY(twl_rq_values_into(c, f, since, INT64_MAX, o));
	TRY(export_evidence(c, f, since, o));
	rc = export_lists(c, f, since, opts, o);
out:
	return rc;
}

/* Contract: see store_read.h. */
int twl_read_export_data(struct twl_store *s, int64_t now, unsigned window_days,
			 const char *feature,
			 const struct twl_export_opts *opts, json_t **out)
{
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	static const struct twl_export_opts none = { 0 };
	const struct twl_feature *only = NULL;
	int64_t since, all, v, known = 0, v1 = 0;
	struct twl_rctx c;
	sqlite3_stmt *st;
	json_t *doc = NULL, *fleet, *feats;
	size_t i;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (!window_days || window_days > 3660)
		return -EINVAL;
	if (feature) {
		only = twl_catalog_find(feature);
		if (!only)
			return -ENOENT;
	}
	since = now - (int64_t)window_days * DAY;
	rc = twl_rctx_begin(&c, s, true);
	if (rc)
		return rc;
	if (opts->label_key && opts->label_key[0]) {
		c.label_key = opts->label_key;
		c.label_value = opts->label_value ? opts->label_value : "";
	}
	doc = json_pack("{s:I, s:I, s:I, s:{}, s:[]}", "generated",
			(json_int_t)now, "window_days", (json_int_t)window_days,
			"catalog_version", (json_int_t)twl_catalog_version(),
			"fleet", "features");
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	if (c.label_key)
		TRY(twl_jset(doc, "label",
			     json_sprintf("%s=%s", c.label_key,
					  c.label_value)));
	fleet = json_object_get(doc, "fleet");
	feats = json_object_get(doc, "features");
	STMT(st, q_hosts_since);
	sqlite3_bind_int64(st, 1, since);
	TRY(twl_one_int(st, &all));
	TRY(twl_jset(fleet, "hosts", json_integer(all)));
	STMT(st, q_hosts_mode);
	for (i = 0; i < 3; i++) {
		char key[32];

		sqlite3_bind_text(st, 1, modes[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, since);
		TRY(twl_one_int(st, &v));
		snprintf(key, sizeof(key), "hosts_%s", modes[i]);
		TRY(twl_jset(fleet, key, json_integer(v)));
		known += v;
		if (i < 2)
			v1 += v;
	}
	TRY(twl_jset(fleet, "hosts_unknown", json_integer(all - known)));
	TRY(twl_jset(fleet, "v1_or_hybrid", json_integer(v1)));
	TRY(twl_answer_coverage(&(struct twl_rq_on){ &twl_sqlite_rq_io, &c },
				fleet));
	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		if (only && f != only)
			continue;
		TRY(export_feature(&c, f, since, opts, fleet, feats));
	}
out:
	twl_rctx_end(&c);
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}
