// SPDX-License-Identifier: GPL-2.0
/*
 * The linux-mm export's data (twl_read_export_data(), store_read.h and
 * api/export.h), composed once for both backends (read_export.h): the
 * fleet over a window and, per catalog feature, its hosts, kernels,
 * workloads (read_export_workloads.c), evidence and annotations, from the
 * queries each backend gives by enum twl_rq_id, all in one read context:
 * one snapshot, and under a label filter every count of the labelled
 * hosts alone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>

#include "api/export.h"
#include "store/export_evidence.h"
#include "store/read_answers.h"
#include "store/read_export.h"
#include "store/store_read.h"

#define DAY 86400

/* What one export covers. */
struct export
{
	const struct twl_export_opts *opts;
	const struct twl_feature *only; /* NULL: every catalog feature */
	int64_t since;
};

/* of TWL_RQ_FH_RANGE: the counts of hosts only */
static const struct twl_col using_cols[] = {
	{ "hosts_using", 0, TWL_COL_INT },
	{ "hosts_configuring", 3, TWL_COL_INT },
	{ "hosts_listening", 4, TWL_COL_INT },
	{ "hosts_reading_only", 5, TWL_COL_INT },
};
static const struct twl_row using_row = TWL_ROW(using_cols);

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

/* The parameters feature @id, @since, then the top N when @top. */
static void feature_args(struct twl_rq_args *a, const char *id, int64_t since,
			 bool top)
{
	a->n = 0;
	twl_rq_text(a, id);
	twl_rq_i64(a, since);
	if (top)
		twl_rq_i64(a, TWL_READ_TOP_N);
}

/* Query @q's rows as @r into a new array @key of @o. */
static int list_into(const struct twl_rq_on *on, enum twl_rq_id q,
		     const struct twl_rq_args *a, const struct twl_row *r,
		     json_t *o, const char *key)
{
	json_t *arr;
	int rc = twl_jset(o, key, arr = json_array());

	return rc ? rc : twl_rq_rows(on, q, a, r, arr, SIZE_MAX, NULL);
}

/* ---- the fleet --------------------------------------------------------- */

/*
 * The hosts reporting since @since, by cgroup mode, and what the counts
 * could see, into @fleet.
 */
static int export_fleet(const struct twl_rq_on *on, int64_t since,
			json_t *fleet)
{
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	int64_t all = 0, v = 0, known = 0, v1 = 0;
	struct twl_rq_args a = { 0 };
	char key[32];
	int rc;

	twl_rq_i64(&a, since);
	rc = twl_rq_int(on, TWL_RQ_EXP_HOSTS, &a, &all);
	if (!rc)
		rc = twl_jset(fleet, "hosts", json_integer(all));
	for (size_t i = 0; !rc && i < 3; i++) {
		a.n = 0;
		twl_rq_text(&a, modes[i]);
		twl_rq_i64(&a, since);
		rc = twl_rq_int(on, TWL_RQ_EXP_HOSTS_MODE, &a, &v);
		snprintf(key, sizeof(key), "hosts_%s", modes[i]);
		if (!rc)
			rc = twl_jset(fleet, key, json_integer(v));
		known += v;
		if (i < 2)
			v1 += v;
	}
	if (!rc)
		rc = twl_jset(fleet, "hosts_unknown",
			      json_integer(all - known));
	if (!rc)
		rc = twl_jset(fleet, "v1_or_hybrid", json_integer(v1));
	return rc ? rc : twl_answer_coverage(on, fleet);
}

/* ---- one feature ------------------------------------------------------- */

/* Feature @id's first and last use (null: never) into @o. */
static int first_last(const struct twl_rq_on *on, const char *id, json_t *o)
{
	static const enum twl_rq_id q[] = { TWL_RQ_FH_FIRST, TWL_RQ_FH_LAST };
	static const char *const key[] = { "first_seen", "last_seen" };
	struct twl_rq_args a = { 0 };
	int64_t v = 0;
	int rc = 0;

	twl_rq_text(&a, id);
	for (size_t i = 0; !rc && i < 2; i++) {
		rc = twl_rq_int(on, q[i], &a, &v);
		if (!rc)
			rc = twl_jset(o, key[i],
				      v ? json_integer(v) : json_null());
	}
	return rc;
}

/*
 * The counts of @f since @since into @o: hosts per kind of use, of the
 * fleet's (@fleet), uses, first and last use, and the values written.
 */
static int export_counts(const struct twl_rq_on *on,
			 const struct twl_feature *f, int64_t since,
			 json_t *fleet, json_t *o)
{
	struct twl_rq_args a;
	int64_t uses = 0;
	int rc;

	feature_args(&a, f->id, since, false);
	twl_rq_i64(&a, INT64_MAX);
	rc = twl_rq_row(on, TWL_RQ_FH_RANGE, &a, &using_row, o);
	if (!rc)
		rc = twl_jset(
			o, "hosts_v1",
			json_copy(json_object_get(fleet, "v1_or_hybrid")));
	if (!rc)
		rc = twl_jset(o, "hosts_all",
			      json_copy(json_object_get(fleet, "hosts")));
	feature_args(&a, f->id, since / DAY, false);
	twl_rq_i64(&a, INT64_MAX / DAY);
	if (!rc)
		rc = twl_rq_int(on, TWL_RQ_DAY_USES, &a, &uses);
	if (!rc)
		rc = twl_jset(o, "uses", json_integer(uses));
	if (!rc)
		rc = first_last(on, f->id, o);
	return rc ? rc : twl_answer_values(on, f, NULL, since, INT64_MAX, o);
}

/*
 * The evidence of @f kept apart from its uses, into @o: whether BPF
 * could have counted it at all, the processes that only read it, the
 * kernel warnings and the kernels that printed them.
 */
static int export_evidence(const struct twl_rq_on *on,
			   const struct twl_feature *f, int64_t since,
			   json_t *o)
{
	struct twl_rq_args a;
	json_t *kw = NULL;
	int rc;

	feature_args(&a, f->id, since, true);
	rc = twl_jset(o, "bpf_measured",
		      json_boolean(twl_export_bpf_measurable(f)));
	if (!rc)
		rc = list_into(on, TWL_RQ_EXP_READERS, &a, &reader_row, o,
			       "readers");
	if (!rc)
		rc = twl_jset(o, "kernel_warnings", kw = json_object());
	if (!rc)
		rc = twl_rq_row(on, TWL_RQ_EXP_WARN_TOTAL, &a, &warn_total_row,
				kw);
	if (!rc)
		rc = list_into(on, TWL_RQ_EXP_WARN_KERNELS, &a,
			       &warn_kernel_row, kw, "kernels");
	return rc ? rc :
		    twl_export_warning_origins(f,
					       json_object_get(kw, "kernels"));
}

/* The hosts using @f by the value of label @key, into @o's "by_label". */
static int export_by_label(const struct twl_rq_on *on,
			   const struct twl_feature *f, int64_t since,
			   const char *key, json_t *o)
{
	json_t *g = json_pack("{s:s, s:[]}", "key", key, "groups");
	struct twl_rq_args a;
	int rc = twl_jset(o, "by_label", g);

	feature_args(&a, f->id, since, true);
	twl_rq_text(&a, key);
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_EXP_BY_LABEL, &a, &by_label_row,
				json_object_get(g, "groups"), SIZE_MAX, NULL);
}

/* The lists of @f into its export object @o. */
static int export_lists(const struct twl_rq_on *on, const struct twl_feature *f,
			const struct export *e, json_t *o)
{
	const struct twl_export_opts *opts = e->opts;
	struct twl_rq_args a;
	int rc;

	feature_args(&a, f->id, e->since, false);
	twl_rq_i64(&a, INT64_MAX);
	twl_rq_i64(&a, TWL_READ_TOP_N);
	rc = list_into(on, TWL_RQ_KERNELS, &a, &twl_kernel_row, o, "kernels");
	if (!rc)
		rc = twl_export_workloads(on, f, e->since, opts, o);
	if (!rc && opts->group_label && opts->group_label[0])
		rc = export_by_label(on, f, e->since, opts->group_label, o);
	feature_args(&a, f->id, e->since, true);
	if (!rc && opts->show_hosts)
		rc = list_into(on, TWL_RQ_EXP_HOSTNAMES, &a, &hostname_row, o,
			       "hosts");
	a.n = 0;
	twl_rq_text(&a, f->id);
	return rc ? rc :
		    list_into(on, TWL_RQ_EXP_ANNOTATIONS, &a,
			      &twl_annotation_row, o, "annotations");
}

/* Catalog feature @f's export object appended to @feats. */
static int export_feature(const struct twl_rq_on *on,
			  const struct twl_feature *f, const struct export *e,
			  json_t *fleet, json_t *feats)
{
	json_t *o;
	int rc;

	o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?}", "id", f->id,
		      "title", f->title, "status", f->status, "kernel_version",
		      f->kernel_version, "commit", f->commit, "replacement",
		      f->replacement, "replacement_note", f->replacement_note);
	rc = twl_jpush(feats, o);
	if (!rc)
		rc = export_counts(on, f, e->since, fleet, o);
	if (!rc)
		rc = export_evidence(on, f, e->since, o);
	return rc ? rc : export_lists(on, f, e, o);
}

static int build_export(const struct twl_rq_on *on, const void *arg,
			json_t *doc)
{
	const struct export *e = arg;
	json_t *fleet = json_object_get(doc, "fleet"),
	       *feats = json_object_get(doc, "features");
	int rc = export_fleet(on, e->since, fleet);

	for (size_t i = 0; !rc && i < twl_catalog_count(); i++) {
		const struct twl_feature *f = twl_catalog_at(i);

		if (!e->only || f == e->only)
			rc = export_feature(on, f, e, fleet, feats);
	}
	return rc;
}

/* The document's head; NULL: no memory. */
static json_t *export_doc(int64_t now, unsigned window_days,
			  const struct twl_read_filter *label)
{
	json_t *doc = json_pack("{s:I, s:I, s:I, s:{}, s:[]}", "generated",
				(json_int_t)now, "window_days",
				(json_int_t)window_days, "catalog_version",
				(json_int_t)twl_catalog_version(), "fleet",
				"features");

	if (doc && label->label_key[0] &&
	    twl_jset(doc, "label",
		     json_sprintf("%s=%s", label->label_key,
				  label->label_value))) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* Contract: see read_export.h. */
int twl_answer_export(const struct twl_rq_io *io, struct twl_store *s,
		      int64_t now, unsigned window_days, const char *feature,
		      const struct twl_export_opts *opts, json_t **out)
{
	static const struct twl_export_opts none = { 0 };
	struct export e = { opts ? opts : &none, NULL, 0 };
	struct twl_read_filter label = { 0 };

	*out = NULL;
	if (!window_days || window_days > 3660)
		return -EINVAL;
	if (feature) {
		e.only = twl_catalog_find(feature);
		if (!e.only)
			return -ENOENT;
	}
	if (e.opts->label_key && e.opts->label_key[0]) {
		if (strlen(e.opts->label_key) >= sizeof(label.label_key))
			return -EINVAL;
		strcpy(label.label_key, e.opts->label_key);
		label.label_value = e.opts->label_value ? e.opts->label_value :
							  "";
	}
	e.since = now - (int64_t)window_days * DAY;
	return twl_answer_in(io, s, true, &label, build_export, &e,
			     export_doc(now, window_days, &label), out);
}
