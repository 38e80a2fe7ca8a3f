// SPDX-License-Identifier: GPL-2.0
/*
 * The values written to a feature's control files, summed up for the
 * read API and the export, for both backends (twl_answer_values(),
 * read_answers.h): from the BPF usage rows' value summaries (migration
 * 013: value_last, value_min, value_max, value_unlimited) and from the
 * census's knobs (their value as the file reads). What the values mean
 * comes from the catalog (value_kind, value_name); the words a
 * maintainer reads are made from this by api/value_class.c.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <twilight/catalog.h>

#include "store/read_answers.h"

/* The queries of a scope, after TWL_RQ_VALUES_FLEET or _HOST. */
enum { WRITTEN, WRITTEN_VALUES, CONFIGURED, CONFIGURED_VALUES, LISTENERS };

/* What one values document covers: a feature, a range, a host or all. */
struct scope {
	const struct twl_rq_on *on;
	enum twl_rq_id base; /* TWL_RQ_VALUES_FLEET, or _HOST with host */
	struct twl_rq_args a; /* feature, since, until, limit[, host] */
};

/* One row of query @q as @r's members into a new member @key of @obj. */
static int one_row(const struct scope *sc, int q, const struct twl_row *r,
		   json_t *obj, const char *key)
{
	json_t *o;
	int rc = twl_jset(obj, key, o = json_object());

	return rc ? rc : twl_rq_row(sc->on, sc->base + q, &sc->a, r, o);
}

/* The distinct values of query @q into @obj's "values", "values_more". */
static int value_list(const struct scope *sc, int q, const struct twl_row *r,
		      json_t *obj)
{
	json_t *arr;
	bool more = false;
	int rc;

	rc = twl_jset(obj, "values", arr = json_array());
	if (!rc)
		rc = twl_rq_rows(sc->on, sc->base + q, &sc->a, r, arr,
				 TWL_VALUES_MAX, &more);
	return rc ? rc : twl_jset(obj, "values_more", json_boolean(more));
}

/* "written"'s one row: its members, "set"'s and "unlimited"'s. */
static int written_row(void *arg, const struct twl_cells *row)
{
	json_t *w = arg;
	int rc;

	rc = twl_cells_set(row, &twl_written_row, w);
	if (!rc)
		rc = twl_cells_set(row, &twl_written_set_row,
				   json_object_get(w, "set"));
	if (!rc)
		rc = twl_cells_set(row, &twl_written_unlimited_row,
				   json_object_get(w, "unlimited"));
	return rc ? rc : 1;
}

/* "written": what BPF saw written; the value list unless bytes. */
static int written_into(const struct scope *sc, const struct twl_feature *f,
			json_t *vals)
{
	json_t *w = json_object();
	int rc = twl_jset(vals, "written", w);

	if (!rc)
		rc = twl_jset(w, "set", json_object());
	if (!rc)
		rc = twl_jset(w, "unlimited", json_object());
	if (!rc)
		rc = sc->on->io->run(sc->on->ctx, sc->base + WRITTEN, &sc->a,
				     written_row, w);
	/* no row: as SQL NULLs, the counts 0 */
	if (!rc && !json_object_get(w, "cgroups"))
		rc = written_row(w, NULL) < 0 ? -ENOMEM : 0;
	if (!rc && strcmp(f->value_kind, "bytes"))
		rc = value_list(sc, WRITTEN_VALUES, &twl_written_value_row, w);
	return rc;
}

/* "written" and "configured" of a feature whose files take values. */
static int values_of(const struct scope *sc, const struct twl_feature *f,
		     json_t *vals)
{
	int rc = written_into(sc, f, vals);

	if (!rc)
		rc = one_row(sc, CONFIGURED, &twl_configured_row, vals,
			     "configured");
	if (!rc && strcmp(f->value_kind, "bytes"))
		rc = value_list(sc, CONFIGURED_VALUES,
				&twl_configured_value_row,
				json_object_get(vals, "configured"));
	return rc;
}

/* Contract: see read_answers.h. */
int twl_answer_values(const struct twl_rq_on *on, const struct twl_feature *f,
		      const char *host, int64_t since, int64_t until,
		      json_t *obj)
{
	struct scope sc = { on,
			    host ? TWL_RQ_VALUES_HOST : TWL_RQ_VALUES_FLEET,
			    { 0 } };
	json_t *vals = json_object();
	int rc;

	twl_rq_text(&sc.a, f->id);
	twl_rq_i64(&sc.a, since);
	twl_rq_i64(&sc.a, until);
	twl_rq_i64(&sc.a, TWL_VALUES_MAX + 1);
	if (host)
		twl_rq_text(&sc.a, host);
	rc = twl_jset(obj, "values", vals);
	if (!rc)
		rc = twl_jset(vals, "kind", json_string(f->value_kind));
	if (!rc)
		rc = twl_jset(vals, "name",
			      f->value_name ? json_string(f->value_name) :
					      json_null());
	if (!rc && strcmp(f->value_kind, "none"))
		rc = values_of(&sc, f, vals);
	if (!rc && f->event_files[0])
		rc = one_row(&sc, LISTENERS, &twl_listener_row, vals,
			     "listeners");
	return rc;
}
