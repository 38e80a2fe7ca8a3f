// SPDX-License-Identifier: GPL-2.0
/*
 * The values written to a feature's control files, summed up for the
 * read API and the export: from the BPF usage rows' value summaries
 * (migration 013: value_last, value_min, value_max, value_unlimited) and
 * from the census's knobs (their value as the file reads). What the
 * values mean comes from the catalog (value_kind, value_name); the words a
 * maintainer reads are made from this by api/value_class.c.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <twilight/catalog.h>

#include "store/sqlite/store_sqlite_internal.h"
#include "store/store_read.h"

/* Distinct values listed per source; one more is read to tell "more". */
#define VALUES_MAX 16

/* A cgroup is counted per host: the path alone is not unique. */
#define CG " host_id || char(31) || cgroup"

/*
 * Every query comes twice: over the fleet (H is ALL) and over one host
 * (ONE: host_id ?5, for the host page), so each keeps a plan of its own.
 */
#define ALL ""
#define ONE " AND host_id = ?5"

/* Usage rows of the feature in the range that carry a value summary. */
#define WRITES(H)                                                             \
	" FROM usage WHERE feature_id = ?1 AND last_seen BETWEEN ?2 AND ?3" H \
	" AND op = 'write' AND value_unit IS NOT NULL" TWL_SQL_LABELED(       \
		"host_id")

/*
 * What was written: every cgroup with a value, those set to a finite
 * value (min and max of those), those reset to unlimited.
 */
#define Q_WRITTEN(H)                                                     \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id),"         \
	" count(DISTINCT comm),"                                         \
	" count(DISTINCT" CG ") FILTER (WHERE value_min IS NOT NULL),"   \
	" count(DISTINCT host_id) FILTER (WHERE value_min IS NOT NULL)," \
	" count(DISTINCT comm) FILTER (WHERE value_min IS NOT NULL),"    \
	" min(value_min), max(value_max),"                               \
	" count(DISTINCT" CG ") FILTER (WHERE value_unlimited),"         \
	" count(DISTINCT host_id) FILTER (WHERE value_unlimited),"       \
	" count(DISTINCT comm) FILTER (WHERE value_unlimited)" WRITES(H)

/*
 * The distinct finite values written: a key's summary holds its min, max
 * and last, so those are the values known (others between min and max
 * may have been written too). Per value its cgroups, hosts, processes and
 * the first three process names.
 */
/* clang-format off */
#define Q_WRITTEN_VALUES(H)                                                  \
	"WITH v(x, host_id, cgroup, comm) AS ("                              \
	" SELECT value_min, host_id, cgroup, comm" WRITES(H)                 \
	" AND value_min IS NOT NULL"                                         \
	" UNION ALL SELECT value_max, host_id, cgroup, comm" WRITES(H)       \
	" AND value_max IS NOT NULL"                                         \
	" UNION ALL SELECT value_last, host_id, cgroup, comm" WRITES(H)      \
	" AND value_last >= 0)"                                              \
	" SELECT x, count(DISTINCT" CG "), count(DISTINCT host_id),"         \
	" count(DISTINCT comm), (SELECT json_group_array(comm) FROM"         \
	" (SELECT DISTINCT comm FROM v w WHERE w.x = v.x ORDER BY comm"      \
	" LIMIT 3))"                                                         \
	" FROM v GROUP BY x ORDER BY x LIMIT ?4"
/* clang-format on */

/* Census knobs of the feature seen in the range whose value is a number. */
#define KNOBS(H)                                                                \
	" FROM census_knobs WHERE feature_id = ?1 AND time BETWEEN ?2 AND ?3" H \
	" AND value != '' AND value NOT GLOB '*[^0-9]*'" TWL_SQL_LABELED(       \
		"host_id")

#define Q_CONFIGURED(H)                                          \
	"SELECT count(DISTINCT" CG "), count(DISTINCT host_id)," \
	" min(CAST(value AS INTEGER)), max(CAST(value AS INTEGER))" KNOBS(H)

#define Q_CONFIGURED_VALUES(H)                                    \
	"SELECT CAST(value AS INTEGER) x, count(DISTINCT" CG ")," \
	" count(DISTINCT host_id)" KNOBS(H) " GROUP BY x ORDER BY x LIMIT ?4"

/* Processes that registered for the feature's notifications. */
#define Q_LISTENERS(H)                                            \
	"SELECT count(DISTINCT comm), count(DISTINCT host_id),"   \
	" count(DISTINCT" CG ") FROM usage WHERE feature_id = ?1" \
	" AND last_seen BETWEEN ?2 AND ?3" H                      \
	" AND op = 'register_event'" TWL_SQL_LABELED("host_id")

/* The queries of one scope, fleet or host. */
struct values_sql {
	const char *written, *written_values, *configured, *configured_values,
		*listeners;
};

#define VALUES_SQL(H)                                               \
	{                                                           \
		Q_WRITTEN(H), Q_WRITTEN_VALUES(H), Q_CONFIGURED(H), \
			Q_CONFIGURED_VALUES(H), Q_LISTENERS(H)      \
	}

static const struct values_sql fleet_sql = VALUES_SQL(ALL);
static const struct values_sql host_sql = VALUES_SQL(ONE);

static const struct twl_col written_cols[] = {
	{ "cgroups", 0, TWL_COL_INT },	 { "hosts", 1, TWL_COL_INT },
	{ "processes", 2, TWL_COL_INT }, { "min", 6, TWL_COL_INT_NULL },
	{ "max", 7, TWL_COL_INT_NULL },
};
static const struct twl_row written_row = TWL_ROW(written_cols);

static const struct twl_col set_cols[] = {
	{ "cgroups", 3, TWL_COL_INT },
	{ "hosts", 4, TWL_COL_INT },
	{ "processes", 5, TWL_COL_INT },
};
static const struct twl_row set_row = TWL_ROW(set_cols);

static const struct twl_col unlimited_cols[] = {
	{ "cgroups", 8, TWL_COL_INT },
	{ "hosts", 9, TWL_COL_INT },
	{ "processes", 10, TWL_COL_INT },
};
static const struct twl_row unlimited_row = TWL_ROW(unlimited_cols);

static const struct twl_col written_value_cols[] = {
	{ "value", 0, TWL_COL_INT },	    { "cgroups", 1, TWL_COL_INT },
	{ "hosts", 2, TWL_COL_INT },	    { "processes", 3, TWL_COL_INT },
	{ "names", 4, TWL_COL_JSON_ARRAY },
};
static const struct twl_row written_value_row = TWL_ROW(written_value_cols);

static const struct twl_col configured_cols[] = {
	{ "cgroups", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
	{ "min", 2, TWL_COL_INT_NULL },
	{ "max", 3, TWL_COL_INT_NULL },
};
static const struct twl_row configured_row = TWL_ROW(configured_cols);

static const struct twl_col configured_value_cols[] = {
	{ "value", 0, TWL_COL_INT },
	{ "cgroups", 1, TWL_COL_INT },
	{ "hosts", 2, TWL_COL_INT },
};
static const struct twl_row configured_value_row =
	TWL_ROW(configured_value_cols);

static const struct twl_col listener_cols[] = {
	{ "processes", 0, TWL_COL_INT },
	{ "hosts", 1, TWL_COL_INT },
	{ "cgroups", 2, TWL_COL_INT },
};
static const struct twl_row listener_row = TWL_ROW(listener_cols);

/* What one values document covers: a feature, a range, a host or all. */
struct scope {
	struct twl_rctx *c;
	const struct values_sql *q; /* fleet_sql, or host_sql with host */
	const char *id; /* the feature */
	const char *host; /* NULL: every host */
	int64_t since, until;
};

/* @sql with the scope's feature, range, host and the list's limit bound. */
static sqlite3_stmt *bound(const struct scope *sc, const char *sql, int *rc)
{
	sqlite3_stmt *st = twl_rctx_stmt(sc->c, sql, rc);
	int n;

	if (!st)
		return NULL;
	sqlite3_bind_text(st, 1, sc->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, sc->since);
	sqlite3_bind_int64(st, 3, sc->until);
	n = sqlite3_bind_parameter_index(st, "?4");
	if (n)
		sqlite3_bind_int(st, n, VALUES_MAX + 1);
	n = sqlite3_bind_parameter_index(st, "?5");
	if (n)
		sqlite3_bind_text(st, n, sc->host, -1, SQLITE_STATIC);
	return st;
}

/* One row of @sql as @r's members into a new member @key of @obj. */
static int one_row(const struct scope *sc, const char *sql,
		   const struct twl_row *r, json_t *obj, const char *key)
{
	sqlite3_stmt *st;
	json_t *o;
	int rc = 0;

	st = bound(sc, sql, &rc);
	if (!st)
		return rc;
	rc = twl_jset(obj, key, o = json_object());
	return rc ? rc : twl_row_into(st, r, o);
}

/* The distinct values of @sql into @obj's "values" and "values_more". */
static int value_list(const struct scope *sc, const char *sql,
		      const struct twl_row *r, json_t *obj)
{
	sqlite3_stmt *st;
	json_t *arr;
	bool more = false;
	int rc = 0;

	st = bound(sc, sql, &rc);
	if (!st)
		return rc;
	rc = twl_jset(obj, "values", arr = json_array());
	if (!rc)
		rc = twl_rows_into(st, r, arr, VALUES_MAX, &more);
	return rc ? rc : twl_jset(obj, "values_more", json_boolean(more));
}

/* "written": what BPF saw written; the value list unless bytes. */
static int written_into(const struct scope *sc, const struct twl_feature *f,
			json_t *vals)
{
	sqlite3_stmt *st;
	json_t *w, *set, *unl;
	bool row = false;
	int rc = 0;

	st = bound(sc, sc->q->written, &rc);
	if (!st)
		return rc;
	TRY(twl_jset(vals, "written", w = json_object()));
	TRY(twl_jset(w, "set", set = json_object()));
	TRY(twl_jset(w, "unlimited", unl = json_object()));
	TRY(twl_step(st, &row));
	TRY(twl_row_set(st, row, &written_row, w));
	TRY(twl_row_set(st, row, &set_row, set));
	TRY(twl_row_set(st, row, &unlimited_row, unl));
	sqlite3_reset(st);
	if (strcmp(f->value_kind, "bytes"))
		rc = value_list(sc, sc->q->written_values, &written_value_row,
				w);
out:
	sqlite3_reset(st);
	return rc;
}

/* "values" of @f over @sc into @obj (twl_rq_values_into()). */
static int values_into(const struct scope *sc, const struct twl_feature *f,
		       json_t *obj)
{
	json_t *vals;
	int rc = 0;

	TRY(twl_jset(obj, "values", vals = json_object()));
	TRY(twl_jset(vals, "kind", json_string(f->value_kind)));
	TRY(twl_jset(vals, "name",
		     f->value_name ? json_string(f->value_name) : json_null()));
	if (strcmp(f->value_kind, "none")) {
		TRY(written_into(sc, f, vals));
		TRY(one_row(sc, sc->q->configured, &configured_row, vals,
			    "configured"));
		if (strcmp(f->value_kind, "bytes"))
			TRY(value_list(sc, sc->q->configured_values,
				       &configured_value_row,
				       json_object_get(vals, "configured")));
	}
	if (f->event_files[0])
		rc = one_row(sc, sc->q->listeners, &listener_row, vals,
			     "listeners");
out:
	return rc;
}

/* Contract: see store_sqlite_internal.h. */
int twl_rq_values_into(struct twl_rctx *c, const struct twl_feature *f,
		       int64_t since, int64_t until, json_t *obj)
{
	struct scope sc = { c, &fleet_sql, f->id, NULL, since, until };

	return values_into(&sc, f, obj);
}

/* Contract: see store_sqlite_internal.h. */
int twl_rq_host_values_into(struct twl_rctx *c, const struct twl_feature *f,
			    const char *host_id, json_t *obj)
{
	struct scope sc = { c, &host_sql, f->id, host_id, INT64_MIN, INT64_MAX };

	return values_into(&sc, f, obj);
}

/* Contract: see store_sqlite_internal.h. */
int twl_rq_host_features_values(struct twl_rctx *c, const char *host_id,
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
		if (!f)
			continue; /* a feature the catalog dropped: no value kind */
		rc = twl_rq_host_values_into(c, f, host_id, x);
		if (rc)
			break;
	}
	return rc;
}
