// SPDX-License-Identifier: GPL-2.0
/*
 * The feature detail of the read API (twl_read_feature(), store_read.h),
 * composed once for both backends (twl_answer_feature(), read_answers.h)
 * from the queries each backend gives by enum twl_rq_id. Every figure is
 * of the hosts of the filter's label when it has one; the daily timeline
 * is kept for the whole fleet only, so it is left out then and
 * "timeline_scope" says so.
 */
#include <errno.h>
#include <stdint.h>

#include <twilight/catalog.h>

#include "store/read_answers.h"
#include "store/store_read.h"

#define DAY 86400

/* TWL_RQ_FH_RANGE: hosts using the feature in a range, and per kind */
static const struct twl_col range_cols[] = {
	{ "hosts", 0, TWL_COL_INT },
	{ "first_seen", 1, TWL_COL_INT_NULL },
	{ "last_seen", 2, TWL_COL_INT_NULL },
	{ "hosts_configuring", 3, TWL_COL_INT },
	{ "hosts_listening", 4, TWL_COL_INT },
	{ "hosts_reading_only", 5, TWL_COL_INT },
};
static const struct twl_row range_row = TWL_ROW(range_cols);

static const struct twl_col reads_cols[] = { { "reads", 0, TWL_COL_INT } };
static const struct twl_row reads_row = TWL_ROW(reads_cols);

/* TWL_RQ_COMM_KINDS and _LABELED as the "workloads" object */
static const struct twl_col comm_cols[] = {
	{ "using", 0, TWL_COL_INT },
	{ "configuring", 1, TWL_COL_INT },
	{ "listening", 2, TWL_COL_INT },
	{ "reading_only", 3, TWL_COL_INT },
};
static const struct twl_row comm_row = TWL_ROW(comm_cols);

static const struct twl_col warn_cols[] = {
	{ "count", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
};
static const struct twl_row warn_row = TWL_ROW(warn_cols);

/* the top-N lists: (name, hosts, uses, reads, use) rows, named by their list */
#define TOP_COLS(name)                                                   \
	{ name, 0, TWL_COL_TEXT }, { "hosts", 1, TWL_COL_INT },          \
		{ "uses", 2, TWL_COL_INT }, { "reads", 3, TWL_COL_INT }, \
	{                                                                \
		"use", 4, TWL_COL_TEXT                                   \
	}
static const struct twl_col top_cgroup_cols[] = { TOP_COLS("cgroup") };
static const struct twl_col top_container_cols[] = { TOP_COLS("container") };
static const struct twl_col top_process_cols[] = { TOP_COLS("process") };

/* The lists of the detail, in the answer's order. */
static const struct {
	const char *key;
	enum twl_rq_id q;
	struct twl_row row;
} lists[] = {
	{ "top_cgroups", TWL_RQ_TOP_CGROUPS, TWL_ROW(top_cgroup_cols) },
	{ "containers", TWL_RQ_TOP_CONTAINERS, TWL_ROW(top_container_cols) },
	{ "processes", TWL_RQ_TOP_PROCESSES, TWL_ROW(top_process_cols) },
};

/* What one detail covers. */
struct detail {
	const struct twl_feature *f;
	int64_t since, until;
	bool labeled;
};

/* The queries' parameters: feature, @a, @b, then the top lists' limit. */
static void args_of(struct twl_rq_args *a, const char *id, int64_t x, int64_t y)
{
	a->n = 0;
	twl_rq_text(a, id);
	twl_rq_i64(a, x);
	twl_rq_i64(a, y);
	twl_rq_i64(a, TWL_READ_TOP_N);
}

/* The counts after the head: range, uses, reads, workloads, values, warnings. */
static int counts(const struct twl_rq_on *on, const struct detail *d,
		  json_t *doc)
{
	struct twl_rq_args t, days;
	int64_t uses = 0;
	json_t *o;
	int rc;

	args_of(&t, d->f->id, d->since, d->until);
	args_of(&days, d->f->id, d->since / DAY, d->until / DAY);
	rc = twl_rq_row(on, TWL_RQ_FH_RANGE, &t, &range_row, doc);
	if (!rc)
		rc = twl_rq_int(on, TWL_RQ_DAY_USES, &days, &uses);
	if (!rc)
		rc = twl_jset(doc, "uses", json_integer(uses));
	if (!rc)
		rc = twl_rq_row(on, TWL_RQ_DAY_READS, &days, &reads_row, doc);
	if (!rc)
		rc = twl_jset(doc, "workloads", o = json_object());
	if (!rc)
		rc = twl_rq_row(on,
				d->labeled ? TWL_RQ_COMM_KINDS_LABELED :
					     TWL_RQ_COMM_KINDS,
				&t, &comm_row, o);
	if (!rc)
		rc = twl_answer_values(on, d->f, NULL, d->since, d->until, doc);
	if (!rc)
		rc = twl_jset(doc, "warnings", o = json_object());
	return rc ? rc : twl_rq_row(on, TWL_RQ_WARNINGS, &t, &warn_row, o);
}

/* The top-N lists, kernels and (for the fleet) the timeline. */
static int detail_lists(const struct twl_rq_on *on, const struct detail *d,
			json_t *doc)
{
	struct twl_rq_args t;
	json_t *arr;
	int rc = 0;

	args_of(&t, d->f->id, d->since, d->until);
	for (size_t i = 0; !rc && i < sizeof(lists) / sizeof(lists[0]); i++) {
		rc = twl_jset(doc, lists[i].key, arr = json_array());
		if (!rc)
			rc = twl_rq_rows(on, lists[i].q, &t, &lists[i].row, arr,
					 SIZE_MAX, NULL);
	}
	if (!rc)
		rc = twl_jset(doc, "kernels", arr = json_array());
	if (!rc)
		rc = twl_rq_rows(on, TWL_RQ_KERNELS, &t, &twl_kernel_row, arr,
				 SIZE_MAX, NULL);
	if (!rc)
		rc = twl_jset(doc, "timeline_scope",
			      json_string(d->labeled ? "none" : "fleet"));
	if (rc || d->labeled)
		return rc;
	args_of(&t, d->f->id, d->since / DAY, d->until / DAY);
	rc = twl_jset(doc, "timeline", arr = json_array());
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_TIMELINE, &t, &twl_timeline_row, arr,
				SIZE_MAX, NULL);
}

static int build_feature(const struct twl_rq_on *on, const void *arg,
			 json_t *doc)
{
	int rc = counts(on, arg, doc);

	return rc ? rc : detail_lists(on, arg, doc);
}

/* Contract: see read_answers.h. */
int twl_answer_feature(const struct twl_rq_io *io, struct twl_store *s,
		       const char *id, const struct twl_read_filter *flt,
		       json_t **out)
{
	struct detail d = { twl_catalog_find(id), 0, INT64_MAX, false };
	const struct twl_feature *f = d.f;

	*out = NULL;
	if (!f)
		return -ENOENT;
	if (flt && flt->since > 0)
		d.since = flt->since;
	if (flt && flt->until > 0)
		d.until = flt->until;
	d.labeled = flt && flt->label_key[0];
	return twl_answer_in(
		io, s, true, flt, build_feature, &d,
		json_pack(
			"{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:{s:o, s:o}}",
			"id", f->id, "title", f->title, "status", f->status,
			"kernel_version", f->kernel_version, "commit",
			f->commit, "replacement", f->replacement,
			"replacement_note", f->replacement_note, "range",
			"since", d.since ? json_integer(d.since) : json_null(),
			"until",
			d.until != INT64_MAX ? json_integer(d.until) :
					       json_null()),
		out);
}
