// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrade readiness (twl_read_readiness(), store_read.h), composed once
 * for both backends (read_readiness.h) from the queries TWL_RQ_READY_*
 * of read_answers.h: which hosts use a feature a target removes, seen by
 * BPF (usage), the census (knobs set, or the controller bound to a v1
 * hierarchy for a controller's whole v1 interface) or kernel warnings;
 * which are ready; which nobody measured. One snapshot on a read
 * context of its own: the evidence queries scan.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/read_answers.h"
#include "store/read_readiness.h"
#include "store/store_read.h"

/* Workloads listed per feature. */
#define WORKLOADS_TOP 10

/* TWL_RQ_READY_FEATURES: the feature, its kinds of use, its evidence */
static const struct twl_col feature_cols[] = {
	{ "id", 0, TWL_COL_TEXT },
	{ "hosts", 1, TWL_COL_INT },
	{ "migration", 10, TWL_COL_JSON },
};
static const struct twl_row feature_row = TWL_ROW(feature_cols);

static const struct twl_col kind_cols[] = {
	{ "configures", 2, TWL_COL_INT },
	{ "listens", 3, TWL_COL_INT },
	{ "reads", 4, TWL_COL_INT },
	{ "reading_only", 11, TWL_COL_INT },
};
static const struct twl_row kind_row = TWL_ROW(kind_cols);

static const struct twl_col evidence_cols[] = {
	{ "bpf_hosts", 5, TWL_COL_INT },
	{ "bpf_count", 6, TWL_COL_INT },
	{ "census_knob_hosts", 7, TWL_COL_INT },
	{ "v1_hierarchy_hosts", 8, TWL_COL_INT },
	{ "kernel_warning_hosts", 9, TWL_COL_INT },
};
static const struct twl_row evidence_row = TWL_ROW(evidence_cols);

/* TWL_RQ_READY_BREAK_HOSTS, and the first four of TWL_RQ_READY_UNMEASURED */
static const struct twl_col host_cols[] = {
	{ "host_id", 0, TWL_COL_TEXT },
	{ "hostname", 1, TWL_COL_TEXT },
	{ "kernel", 2, TWL_COL_TEXT },
	{ "cgroup_mode", 3, TWL_COL_TEXT },
	{ "features", 4, TWL_COL_JSON_ARRAY },
	{ "runtimes", 5, TWL_COL_JSON_ARRAY },
};
static const struct twl_row break_host_row = TWL_ROW(host_cols);
static const struct twl_row host_row = { host_cols, 4 };

/* TWL_RQ_READY_REST_COUNT */
static const struct twl_col rest_cols[] = {
	{ "ready", 0, TWL_COL_INT },
	{ "not_measured", 1, TWL_COL_INT },
};
static const struct twl_row rest_row = TWL_ROW(rest_cols);

static const struct twl_col group_cols[] = {
	{ "value", 0, TWL_COL_TEXT },	    { "hosts", 1, TWL_COL_INT },
	{ "breaks", 2, TWL_COL_INT },	    { "ready", 3, TWL_COL_INT },
	{ "not_measured", 4, TWL_COL_INT },
};
static const struct twl_row group_row = TWL_ROW(group_cols);

static const struct twl_col workload_cols[] = {
	{ "comm", 0, TWL_COL_TEXT },	    { "container", 1, TWL_COL_TEXT },
	{ "target_kind", 2, TWL_COL_TEXT }, { "ops", 3, TWL_COL_TEXT },
	{ "hosts", 4, TWL_COL_INT },	    { "count", 5, TWL_COL_INT },
	{ "migration", 6, TWL_COL_JSON },
};
static const struct twl_row workload_row = TWL_ROW(workload_cols);

/* The evidence queries' parameters (read_answers.h). */
static void ev_args(struct twl_rq_args *a, const struct twl_readiness_query *q)
{
	a->n = 0;
	twl_rq_text(a, q->removed_json);
	twl_rq_text(a, q->interfaces_json);
	twl_rq_i64(a, q->since);
	twl_rq_i64(a, q->limit);
	twl_rq_text(a, q->group_label);
	twl_rq_text(a, q->label_key);
	twl_rq_text(a, q->label_value);
}

/* A feature row appended to the array, "by_kind" and "evidence" in it. */
static int feature_of(void *arg, const struct twl_cells *row)
{
	json_t *f = twl_cells_json(row, &feature_row);
	int rc = twl_jpush(arg, f);

	if (!rc)
		rc = twl_jset(f, "by_kind", twl_cells_json(row, &kind_row));
	if (!rc)
		rc = twl_jset(f, "evidence",
			      twl_cells_json(row, &evidence_row));
	return rc;
}

/* Each feature of @features gains "workloads": its top processes. */
static int workloads(const struct twl_rq_on *on,
		     const struct twl_readiness_query *q, json_t *features)
{
	struct twl_rq_args a;
	json_t *f, *w;
	size_t i;
	int rc = 0;

	json_array_foreach(features, i, f)
	{
		a.n = 0;
		twl_rq_text(&a, json_string_value(json_object_get(f, "id")));
		twl_rq_i64(&a, q->since);
		twl_rq_i64(&a, WORKLOADS_TOP);
		twl_rq_text(&a, q->label_key);
		twl_rq_text(&a, q->label_value);
		rc = twl_jset(f, "workloads", w = json_array());
		if (!rc)
			rc = twl_rq_rows(on, TWL_RQ_READY_WORKLOADS, &a,
					 &workload_row, w, WORKLOADS_TOP, NULL);
		if (rc)
			break;
	}
	return rc;
}

/* "breaks": counts, features, one page of hosts. */
static int breaks(const struct twl_rq_on *on,
		  const struct twl_readiness_query *q, json_t *doc)
{
	struct twl_rq_args a;
	json_t *b, *arr;
	int64_t n = 0;
	int rc;

	ev_args(&a, q);
	rc = twl_jset(doc, "breaks", b = json_object());
	if (!rc)
		rc = twl_rq_int(on, TWL_RQ_READY_BREAK_COUNT, &a, &n);
	if (!rc)
		rc = twl_jset(b, "count", json_integer(n));
	if (!rc)
		rc = twl_jset(b, "features", arr = json_array());
	if (!rc)
		rc = on->io->run(on->ctx, TWL_RQ_READY_FEATURES, &a, feature_of,
				 arr);
	if (!rc)
		rc = workloads(on, q, arr);
	if (!rc)
		rc = twl_jset(b, "hosts", arr = json_array());
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_READY_BREAK_HOSTS, &a,
				&break_host_row, arr, q->limit, NULL);
}

/* "ready" and "not_measured". */
static int rest(const struct twl_rq_on *on, const struct twl_readiness_query *q,
		json_t *doc)
{
	struct twl_rq_args a;
	json_t *counts = json_object(), *o, *arr;
	int rc = counts ? 0 : -ENOMEM;

	ev_args(&a, q);
	if (!rc)
		rc = twl_rq_row(on, TWL_RQ_READY_REST_COUNT, &a, &rest_row,
				counts);
	if (!rc)
		rc = twl_jset(doc, "ready", o = json_object());
	if (!rc)
		rc = twl_jset(o, "count",
			      json_incref(json_object_get(counts, "ready")));
	if (!rc)
		rc = twl_jset(doc, "not_measured", o = json_object());
	if (!rc)
		rc = twl_jset(
			o, "count",
			json_incref(json_object_get(counts, "not_measured")));
	json_decref(counts);
	if (!rc)
		rc = twl_jset(o, "hosts", arr = json_array());
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_READY_UNMEASURED, &a, &host_row, arr,
				q->limit, NULL);
}

/* Each deadline of q gets "hosts": hosts running its runtime on its modes. */
static int deadlines(const struct twl_rq_on *on,
		     const struct twl_readiness_query *q)
{
	struct twl_rq_args a;
	json_t *d;
	int64_t n;
	size_t i;
	int rc = 0;

	json_array_foreach(q->deadlines, i, d)
	{
		char *modes = json_dumps(json_object_get(d, "cgroup_modes"),
					 JSON_COMPACT);

		a.n = 0;
		twl_rq_text(&a,
			    json_string_value(json_object_get(d, "runtime")));
		twl_rq_i64(&a, q->since);
		twl_rq_text(&a, modes);
		twl_rq_text(&a, q->label_key);
		twl_rq_text(&a, q->label_value);
		rc = modes ? twl_rq_int(on, TWL_RQ_READY_RUNTIME, &a, &n) :
			     -ENOMEM;
		free(modes);
		if (!rc)
			rc = twl_jset(d, "hosts", json_integer(n));
		if (rc)
			break;
	}
	return rc;
}

/* "groups": the hosts by the value of q->group_label. */
static int groups(const struct twl_rq_on *on,
		  const struct twl_readiness_query *q, json_t *doc)
{
	struct twl_rq_args a;
	json_t *g, *arr;
	int rc;

	ev_args(&a, q);
	rc = twl_jset(doc, "groups", g = json_object());
	if (!rc)
		rc = twl_jset(g, "label", json_string(q->group_label));
	if (!rc)
		rc = twl_jset(g, "values", arr = json_array());
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_READY_GROUPS, &a, &group_row, arr,
				q->limit, NULL);
}

/* The evidence steps return no rows. */
static int no_row(void *arg, const struct twl_cells *row)
{
	(void)arg;
	(void)row;
	return 0;
}

/*
 * The evidence into the context's temporary table, once: every query of
 * the answer reads it (six read all of the removed features' usage rows
 * each before: 2,000 hosts 11-12 s, bench/README.md).
 */
static int evidence(const struct twl_rq_on *on,
		    const struct twl_readiness_query *q)
{
	static const enum twl_rq_id steps[] = {
		TWL_RQ_READY_EV_TABLE,
		TWL_RQ_READY_EV_FILL,
		TWL_RQ_READY_EV_INDEX,
	};
	struct twl_rq_args a;
	int rc = 0;

	ev_args(&a, q);
	for (size_t i = 0; !rc && i < sizeof(steps) / sizeof(steps[0]); i++)
		rc = on->io->run(on->ctx, steps[i], &a, no_row, NULL);
	return rc;
}

/* The answer into @doc, in one read context. */
static int build(const struct twl_rq_on *on, const void *arg, json_t *doc)
{
	const struct twl_readiness_query *q = arg;
	int rc = evidence(on, q);

	if (!rc)
		rc = breaks(on, q, doc);
	if (!rc)
		rc = rest(on, q, doc);
	if (!rc)
		rc = deadlines(on, q);
	if (!rc && q->group_label)
		rc = groups(on, q, doc);
	return rc;
}

/* Contract: see read_readiness.h. */
int twl_answer_readiness(const struct twl_rq_io *io, struct twl_store *s,
			 const struct twl_readiness_query *q, json_t **out)
{
	*out = NULL;
	if (!q->removed_json || !q->interfaces_json || q->limit < 1 ||
	    q->limit > TWL_READ_LIMIT_MAX)
		return -EINVAL;
	return twl_answer_in(io, s, true, NULL, build, q, json_object(), out);
}
