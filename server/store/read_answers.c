// SPDX-License-Identifier: GPL-2.0
/*
 * The read API's summary, host lists, one host, fleet health and unknown
 * texts, composed once for both backends (read_answers.h) from the
 * queries each backend runs in its dialect. Each answer is one read
 * context of the backend's, so one consistent snapshot while the writer
 * keeps writing; its rows become JSON through the layouts of
 * read_rows.h.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <twilight/catalog.h>

#include "store/ingest.h"
#include "store/read_answers.h"
#include "store/store_read.h"

#define HOUR 3600
#define DAY 86400

/* Kernels shown per unknown text, by hosts. */
#define UNKNOWN_KERNELS 10

/* ---- queries to JSON --------------------------------------------------- */

struct rows_into {
	const struct twl_row *r;
	json_t *dst;
	size_t n, max;
	bool more, found;
};

/* A row appended to the array, until max; then "more" and stop. */
static int row_push(void *arg, const struct twl_cells *row)
{
	struct rows_into *ri = arg;

	if (ri->n++ == ri->max) {
		ri->more = true;
		return 1;
	}
	return twl_jpush(ri->dst, twl_cells_json(row, ri->r));
}

/* The first row's members set into the object; then stop. */
static int row_set(void *arg, const struct twl_cells *row)
{
	struct rows_into *ri = arg;
	int rc = twl_cells_set(row, ri->r, ri->dst);

	ri->found = true;
	return rc ? rc : 1;
}

/* Contract: see read_answers.h. */
int twl_rq_rows(const struct twl_rq_on *on, enum twl_rq_id q,
		const struct twl_rq_args *a, const struct twl_row *r,
		json_t *arr, size_t max, bool *more)
{
	struct rows_into ri = { .r = r, .dst = arr, .max = max };
	int rc = on->io->run(on->ctx, q, a, row_push, &ri);

	if (more)
		*more = ri.more;
	return rc;
}

/* twl_rq_row(), and *@found whether a row came. */
static int row_found(const struct twl_rq_on *on, enum twl_rq_id q,
		     const struct twl_rq_args *a, const struct twl_row *r,
		     json_t *obj, bool *found)
{
	struct rows_into ri = { .r = r, .dst = obj };
	int rc = on->io->run(on->ctx, q, a, row_set, &ri);

	*found = ri.found;
	if (!rc && !ri.found)
		rc = twl_cells_set(NULL, r, obj);
	return rc;
}

/* Contract: see read_answers.h. */
int twl_rq_row(const struct twl_rq_on *on, enum twl_rq_id q,
	       const struct twl_rq_args *a, const struct twl_row *r,
	       json_t *obj)
{
	bool found;

	return row_found(on, q, a, r, obj, &found);
}

static int int_of(void *arg, const struct twl_cells *row)
{
	*(int64_t *)arg = row->i64(row->src, row->row, 0);
	return 1;
}

/* Contract: see read_answers.h. */
int twl_rq_int(const struct twl_rq_on *on, enum twl_rq_id q,
	       const struct twl_rq_args *a, int64_t *v)
{
	*v = 0;
	return on->io->run(on->ctx, q, a, int_of, v);
}

/* Contract: see read_answers.h. */
int twl_answer_in(const struct twl_rq_io *io, struct twl_store *s, bool priv,
		  const struct twl_read_filter *label, twl_answer_fn build,
		  const void *arg, json_t *doc, json_t **out)
{
	struct twl_rq_on on = { io, NULL };
	int rc = doc ? io->begin(s, priv, label, &on.ctx) : -ENOMEM;

	*out = NULL;
	if (!rc) {
		rc = build(&on, arg, doc);
		io->end(on.ctx);
	}
	if (rc)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

/* ---- summary ----------------------------------------------------------- */

/*
 * Hosts whose report (hosts) is at or after the start of @since's hour:
 * all (@mode NULL), or of cgroup mode @mode. From the hour bucket tables
 * alone: the summary counts whole hours (docs/api.md).
 */
static int window_count(const struct twl_rq_on *on, const char *mode,
			int64_t since, int64_t *out)
{
	struct twl_rq_args a = { 0 };

	if (mode)
		twl_rq_text(&a, mode);
	twl_rq_i64(&a, since / HOUR);
	return twl_rq_int(on,
			  mode ? TWL_RQ_HOSTHOUR_MODE_SUM : TWL_RQ_HOSTHOUR_SUM,
			  &a, out);
}

/*
 * The hosts reporting in windows and by cgroup mode into @hosts; *@v1hosts:
 * the v1 and hybrid hosts reporting in 30 days.
 */
static int summary_hosts(const struct twl_rq_on *on, int64_t now, json_t *hosts,
			 int64_t *v1hosts)
{
	static const char *const win[] = { "total", "reporting_1d",
					   "reporting_7d", "reporting_30d" };
	static const int64_t days[] = { 0, 1, 7, 30 };
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	int64_t n[4] = { 0 }, known = 0, v = 0;
	json_t *bymode = NULL;
	int rc = 0;

	for (size_t i = 0; !rc && i < 4; i++) {
		rc = window_count(on, NULL, i ? now - days[i] * DAY : INT64_MIN,
				  &n[i]);
		if (!rc)
			rc = twl_jset(hosts, win[i], json_integer(n[i]));
	}
	if (!rc)
		rc = twl_jset(hosts, "by_cgroup_mode", bymode = json_object());
	*v1hosts = 0;
	for (size_t i = 0; !rc && i < 3; i++) {
		rc = window_count(on, modes[i], now - 30 * DAY, &v);
		if (!rc)
			rc = twl_jset(bymode, modes[i], json_integer(v));
		known += v;
		if (i < 2)
			*v1hosts += v;
	}
	return rc ? rc :
		    twl_jset(bymode, "unknown", json_integer(n[3] - known));
}

/*
 * TWL_RQ_FEATURE_SUMMARY's columns, in the order a feature's object has
 * them: share_v1_30d goes between the two parts. One query a feature: on
 * PostgreSQL every query is a round trip, and the summary was ten a
 * feature (bench/README.md).
 */
static const struct twl_col fsum_head_cols[] = {
	{ "hosts_1d", 0, TWL_COL_INT },
	{ "hosts_7d", 1, TWL_COL_INT },
	{ "hosts_30d", 2, TWL_COL_INT },
	{ "uses", 3, TWL_COL_INT },
	{ "hosts_configuring_30d", 4, TWL_COL_INT },
	{ "hosts_listening_30d", 5, TWL_COL_INT },
	{ "hosts_reading_only_30d", 6, TWL_COL_INT },
	{ "reads", 7, TWL_COL_INT },
	{ "warnings", 8, TWL_COL_INT },
	{ "workloads", 9, TWL_COL_INT },
	{ "workloads_configuring", 10, TWL_COL_INT },
	{ "workloads_listening", 11, TWL_COL_INT },
	{ "workloads_reading_only", 12, TWL_COL_INT },
};
static const struct twl_row fsum_head = TWL_ROW(fsum_head_cols);

static const struct twl_col fsum_end_cols[] = {
	{ "first_seen", 13, TWL_COL_INT_NULL },
	{ "last_seen", 14, TWL_COL_INT_NULL },
};
static const struct twl_row fsum_end = TWL_ROW(fsum_end_cols);

/* A feature's object and the v1 and hybrid hosts of 30 days. */
struct fsum {
	json_t *o;
	int64_t v1hosts;
};

/* TWL_RQ_FEATURE_SUMMARY's row into the feature's object; 1: the only. */
static int fsum_of(void *arg, const struct twl_cells *row)
{
	const struct fsum *f = arg;
	int64_t h30 = row->i64(row->src, row->row, 2);
	int rc = twl_cells_set(row, &fsum_head, f->o);

	if (!rc)
		rc = twl_jset(f->o, "share_v1_30d",
			      f->v1hosts ? json_real((double)h30 /
						     (double)f->v1hosts) :
					   json_null());
	if (!rc)
		rc = twl_cells_set(row, &fsum_end, f->o);
	return rc ? rc : 1;
}

/* Catalog feature @f's summary appended to @feats. */
static int summary_feature(const struct twl_rq_on *on,
			   const struct twl_feature *f, int64_t now,
			   int64_t v1hosts, json_t *feats)
{
	struct twl_rq_args a = { 0 };
	struct fsum fs = { NULL, v1hosts };
	json_t *arr = NULL;
	int rc;

	fs.o = json_pack("{s:s, s:s, s:s, s:s?}", "id", f->id, "title",
			 f->title, "status", f->status, "replacement",
			 f->replacement);
	rc = twl_jpush(feats, fs.o);
	twl_rq_text(&a, f->id);
	twl_rq_i64(&a, (now - DAY) / HOUR);
	twl_rq_i64(&a, (now - 7 * DAY) / HOUR);
	twl_rq_i64(&a, (now - 30 * DAY) / HOUR);
	twl_rq_i64(&a, 0);
	twl_rq_i64(&a, INT64_MAX / DAY);
	if (!rc)
		rc = on->io->run(on->ctx, TWL_RQ_FEATURE_SUMMARY, &a, fsum_of,
				 &fs);
	if (!rc)
		rc = twl_jset(fs.o, "trend", arr = json_array());
	a.n = 1;
	twl_rq_i64(&a, now / DAY - 29);
	twl_rq_i64(&a, now / DAY);
	return rc ? rc :
		    twl_rq_rows(on, TWL_RQ_TIMELINE, &a, &twl_timeline_row, arr,
				SIZE_MAX, NULL);
}

/* Contract: see read_answers.h. */
int twl_answer_coverage(const struct twl_rq_on *on, json_t *obj)
{
	static const struct {
		const char *key;
		int bit;
	} facts[] = {
		{ "bpf_memory", TWL_FACT_BPF_ATTACHED },
		{ "boot_uncovered", TWL_FACT_BOOT_UNCOVERED },
		{ "records_lost", TWL_FACT_RECORDS_LOST },
		{ "probe_missing", TWL_FACT_PROBE_MISSING },
		{ "no_log_source", TWL_FACT_NO_LOG_SOURCE },
		{ "map_overflow", TWL_FACT_MAP_OVERFLOW },
	};
	static const char *const blind[] = { "unmeasured", "census_only" };
	struct twl_rq_args a = { 0 };
	json_t *cov = json_object();
	int64_t v;
	size_t i;
	int rc = twl_jset(obj, "coverage", cov);

	if (!rc)
		rc = twl_rq_int(on, TWL_RQ_COV_HOSTS, &a, &v);
	if (!rc)
		rc = twl_jset(cov, "hosts", json_integer(v));
	for (i = 0; !rc && i < sizeof(facts) / sizeof(facts[0]); i++) {
		a.n = 0;
		twl_rq_i64(&a, facts[i].bit);
		rc = twl_rq_int(on, TWL_RQ_COV_BIT, &a, &v);
		if (!rc)
			rc = twl_jset(cov, facts[i].key, json_integer(v));
	}
	for (i = 0; !rc && i < 2; i++) {
		a.n = 0;
		twl_rq_i64(&a, (int64_t)i);
		rc = twl_rq_int(on, TWL_RQ_COV_BLIND, &a, &v);
		if (!rc)
			rc = twl_jset(cov, blind[i], json_integer(v));
	}
	return rc;
}

static int build_summary(const struct twl_rq_on *on, const void *arg,
			 json_t *doc)
{
	int64_t now = *(const int64_t *)arg, v1hosts = 0;
	json_t *hosts = json_object_get(doc, "hosts"),
	       *feats = json_object_get(doc, "features");
	int rc = summary_hosts(on, now, hosts, &v1hosts);

	for (size_t i = 0; !rc && i < twl_catalog_count(); i++)
		rc = summary_feature(on, twl_catalog_at(i), now, v1hosts,
				     feats);
	if (!rc)
		rc = twl_jset(hosts, "v1_or_hybrid_30d", json_integer(v1hosts));
	return rc ? rc : twl_answer_coverage(on, doc);
}

/* Contract: see read_answers.h. */
int twl_answer_summary(const struct twl_rq_io *io, struct twl_store *s,
		       int64_t now, json_t **out)
{
	return twl_answer_in(io, s, false, NULL, build_summary, &now,
			     json_pack("{s:I, s:{}, s:[]}", "generated",
				       (json_int_t)now, "hosts", "features"),
			     out);
}

/* ---- hosts ------------------------------------------------------------- */

/* A host list's filter with its LIKE patterns (twl_hosts_filter()). */
struct host_list {
	const struct twl_read_filter *f;
	char pat[2 * TWL_READ_MAX_FILTER + 2],
		kpat[2 * TWL_READ_MAX_FILTER + 2];
};

/* @t as a parameter when @set, else SQL NULL. */
static void text_if(struct twl_rq_args *a, bool set, const char *t)
{
	twl_rq_text(a, set ? t : NULL);
}

/* @v as a parameter when positive, else SQL NULL (no bound). */
static void time_if(struct twl_rq_args *a, int64_t v)
{
	if (v > 0)
		twl_rq_i64(a, v);
	else
		twl_rq_text(a, NULL);
}

static int build_hosts(const struct twl_rq_on *on, const void *arg, json_t *doc)
{
	const struct host_list *hl = arg;
	const struct twl_read_filter *f = hl->f;
	unsigned limit = twl_rq_limit(f);
	json_t *arr = json_object_get(doc, "hosts");
	struct twl_rq_args a = { 0 };
	bool more, label = f->label_key[0];
	int rc;

	twl_rq_text(&a, f->cursor ? f->cursor : "");
	time_if(&a, f->since);
	time_if(&a, f->until);
	text_if(&a, f->host_pattern, hl->pat);
	text_if(&a, f->kernel, hl->kpat);
	twl_rq_text(&a, f->cgroup_mode);
	twl_rq_text(&a, f->feature);
	twl_rq_i64(&a, (int64_t)limit + 1);
	twl_rq_i64(&a, f->reading_only);
	text_if(&a, label, f->label_key);
	text_if(&a, label, f->label_value);
	rc = twl_rq_rows(on, TWL_RQ_HOST_LIST, &a, &twl_host_row, arr, limit,
			 &more);
	/* One more row exists: the page ends at the last one kept. */
	return rc ? rc : twl_page_end(doc, arr, "host_id", more);
}

/* Contract: see read_answers.h. */
int twl_answer_hosts(const struct twl_rq_io *io, struct twl_store *s,
		     const struct twl_read_filter *f, json_t **out)
{
	struct host_list hl = { .f = f };
	int rc = twl_hosts_filter(f, hl.pat, hl.kpat, sizeof(hl.pat));

	*out = NULL;
	if (rc)
		return rc;
	return twl_answer_in(io, s, true, NULL, build_hosts, &hl,
			     json_pack("{s:[], s:n}", "hosts", "next_cursor"),
			     out);
}

/* ---- one host ---------------------------------------------------------- */

/*
 * The values of each feature of @features (objects with the catalog "id";
 * one the catalog lacks has no value kind and is left without "values"):
 * every retained row of host @host.
 */
static int host_values(const struct twl_rq_on *on, const char *host,
		       json_t *features)
{
	const struct twl_feature *f;
	json_t *x;
	size_t i;
	int rc = 0;

	json_array_foreach(features, i, x)
	{
		f = twl_catalog_find(
			json_string_value(json_object_get(x, "id")));
		if (f)
			rc = twl_answer_values(on, f, host, INT64_MIN,
					       INT64_MAX, x);
		if (rc)
			break;
	}
	return rc;
}

/* Host @host's unknown texts, labels and keys into @doc. */
static int host_lists(const struct twl_rq_on *on, const char *host, json_t *doc)
{
	struct twl_rq_args a = { 0 };
	json_t *arr = NULL;
	int rc;

	twl_rq_text(&a, host);
	twl_rq_i64(&a, TWL_READ_TOP_N); /* the texts' limit, the others none */
	rc = twl_jset(doc, "unknown_deprecations", arr = json_array());
	if (!rc)
		rc = twl_rq_rows(on, TWL_RQ_HOST_UNKNOWN, &a,
				 &twl_host_unknown_row, arr, SIZE_MAX, NULL);
	if (!rc)
		rc = twl_rq_row(on, TWL_RQ_HOST_LABELS, &a,
				&twl_host_labels_row, doc);
	if (!rc)
		rc = twl_jset(doc, "keys", arr = json_object());
	return rc ? rc :
		    twl_rq_row(on, TWL_RQ_HOST_KEYS, &a, &twl_host_keys_row,
			       arr);
}

static int build_host(const struct twl_rq_on *on, const void *arg, json_t *doc)
{
	struct twl_rq_args a = { 0 };
	const char *host = arg;
	json_t *arr = NULL;
	bool found;
	int rc;

	twl_rq_text(&a, host);
	rc = row_found(on, TWL_RQ_HOST_ONE, &a, &twl_host_one_row, doc, &found);
	if (!rc && !found)
		rc = -ENOENT;
	if (rc)
		return rc;
	twl_host_census_trim(doc);
	rc = twl_jset(doc, "features", arr = json_array());
	if (!rc)
		rc = twl_rq_rows(on, TWL_RQ_HOST_FEATURES, &a,
				 &twl_host_feature_row, arr, SIZE_MAX, NULL);
	if (!rc)
		rc = host_values(on, host, arr);
	return rc ? rc : host_lists(on, host, doc);
}

/* Contract: see read_answers.h. */
int twl_answer_host(const struct twl_rq_io *io, struct twl_store *s,
		    const char *host_id, json_t **out)
{
	*out = NULL;
	if (!host_id || strlen(host_id) > 64)
		return -ENOENT;
	return twl_answer_in(io, s, false, NULL, build_host, host_id,
			     json_object(), out);
}

/* ---- fleet health ------------------------------------------------------ */

/* The parts of the health page, in the order of TWL_RQ_HEALTH's queries. */
enum health_arg { NO_ARG, SILENT_SINCE, FACT_BIT, CATALOG };

static const struct {
	const char *key;
	enum health_arg arg;
} health_parts[] = {
	{ "silent", SILENT_SINCE }, { "records_lost", NO_ARG },
	{ "key_rejected", NO_ARG }, { "probe_missing", NO_ARG },
	{ "cloned", SILENT_SINCE }, { "boot_uncovered", FACT_BIT },
	{ "older", CATALOG },	    { "newer", CATALOG },
};

struct health {
	int64_t now, silent_after;
	unsigned limit;
};

/* Part @i into @doc: {"count", "hosts": at most the limit of them}. */
static int health_part(const struct twl_rq_on *on, const struct health *h,
		       size_t i, json_t *doc)
{
	enum twl_rq_id q = TWL_RQ_HEALTH + 2 * i;
	struct twl_rq_args a = { 0 };
	json_t *part;
	int64_t n;
	int rc;

	if (health_parts[i].arg == SILENT_SINCE)
		twl_rq_i64(&a, h->now - h->silent_after);
	else if (health_parts[i].arg == FACT_BIT)
		twl_rq_i64(&a, TWL_FACT_BOOT_UNCOVERED);
	else if (health_parts[i].arg == CATALOG)
		twl_rq_i64(&a, twl_catalog_version());
	rc = twl_rq_int(on, q, &a, &n);
	if (rc)
		return rc;
	part = json_pack("{s:I, s:[]}", "count", (json_int_t)n, "hosts");
	rc = twl_jset(doc, health_parts[i].key, part);
	if (rc)
		return rc;
	twl_rq_i64(&a, h->limit);
	return twl_rq_rows(on, q + 1, &a, &twl_host_row,
			   json_object_get(part, "hosts"), SIZE_MAX, NULL);
}

/*
 * The parts of the hosts whose silence, losses or blindness would
 * otherwise read as "no usage", then "catalog": agents whose catalog is
 * older or newer than the server's.
 */
static int build_health(const struct twl_rq_on *on, const void *arg,
			json_t *doc)
{
	json_t *cat = json_pack("{s:I}", "version",
				(json_int_t)twl_catalog_version());
	size_t i;
	int rc = 0;

	for (i = 0; !rc && health_parts[i].arg != CATALOG; i++)
		rc = health_part(on, arg, i, doc);
	if (!rc)
		rc = twl_jset(doc, "catalog", cat);
	else
		json_decref(cat);
	for (; !rc && i < sizeof(health_parts) / sizeof(health_parts[0]); i++)
		rc = health_part(on, arg, i, cat);
	return rc;
}

/* Contract: see read_answers.h. */
int twl_answer_health(const struct twl_rq_io *io, struct twl_store *s,
		      int64_t now, int64_t silent_after,
		      const struct twl_read_filter *f, json_t **out)
{
	struct health h = { now, silent_after, twl_rq_limit(f) };

	*out = NULL;
	if (silent_after <= 0)
		return -EINVAL;
	return twl_answer_in(io, s, true, f, build_health, &h,
			     json_pack("{s:I, s:I}", "generated",
				       (json_int_t)now, "silent_after",
				       (json_int_t)silent_after),
			     out);
}

/* ---- unknown texts ----------------------------------------------------- */

static int build_unknown(const struct twl_rq_on *on, const void *arg,
			 json_t *doc)
{
	const struct twl_read_filter *f = arg;
	unsigned limit = twl_rq_limit(f);
	json_t *arr = json_object_get(doc, "texts");
	struct twl_rq_args a = { 0 };
	bool more;
	int rc;

	twl_rq_text(&a, f && f->cursor ? f->cursor : "");
	twl_rq_i64(&a, f && f->since > 0 ? f->since : 0);
	twl_rq_i64(&a, f && f->until > 0 ? f->until : INT64_MAX);
	twl_rq_i64(&a, (int64_t)limit + 1);
	twl_rq_i64(&a, UNKNOWN_KERNELS);
	rc = twl_rq_rows(on, TWL_RQ_UNKNOWN, &a, &twl_unknown_row, arr, limit,
			 &more);
	/* One more group exists: the page ends at the last one kept. */
	return rc ? rc : twl_page_end(doc, arr, "text", more);
}

/* Contract: see read_answers.h. */
int twl_answer_unknown(const struct twl_rq_io *io, struct twl_store *s,
		       const struct twl_read_filter *f, json_t **out)
{
	*out = NULL;
	if (f && f->cursor && strlen(f->cursor) > TWL_READ_MAX_CURSOR)
		return -EINVAL;
	return twl_answer_in(io, s, true, f, build_unknown, f,
			     json_pack("{s:[], s:n}", "texts", "next_cursor"),
			     out);
}
