/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The read API's answers as both backends build them (read_rows.c):
 * result rows to JSON through tables of columns, whatever the backend
 * (a backend reads its rows through struct twl_cells), the layouts of
 * the rows the answers share, and the small steps around the queries
 * (filters, pages, a host's census) that do not depend on a database.
 * store/sqlite/ and store/postgresql/ write the SQL; the JSON is this
 * file's, so the two stores answer alike.
 */
#ifndef TWL_SERVER_STORE_READ_ROWS_H
#define TWL_SERVER_STORE_READ_ROWS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_read_filter;
struct twl_feature;

/* How a result column becomes a JSON value. */
enum twl_col_type {
	TWL_COL_TEXT, /* a string; SQL NULL: null */
	TWL_COL_INT, /* an integer; SQL NULL: 0 */
	TWL_COL_INT_NULL, /* an integer; SQL NULL: null */
	TWL_COL_BOOL, /* false for 0 and SQL NULL, else true */
	TWL_COL_DAY, /* a day number, as the Unix time the day starts */
	TWL_COL_JSON, /* JSON text (object or array); else null */
	TWL_COL_JSON_ARRAY, /* JSON text of an array; anything else: [] */
	TWL_COL_TITLE, /* a catalog feature id, as the feature's title or null */
};

/* One member of a row's JSON object: @name from result column @col. */
struct twl_col {
	const char *name; /* NULL (alone in its row): the row is the value */
	int col;
	enum twl_col_type type;
};

/* A row's JSON: its members, in order. */
struct twl_row {
	const struct twl_col *cols;
	size_t n;
};

#define TWL_ROW(cols)                                    \
	{                                                \
		(cols), sizeof(cols) / sizeof((cols)[0]) \
	}

/*
 * A backend's current result row, read a cell at a time: @null tells an
 * SQL NULL, @i64 a cell as an integer (0 for NULL; a boolean's true is
 * 1), @text as text (NULL for SQL NULL), each of column @col of row @row
 * of @src (a statement, a result).
 */
struct twl_cells {
	bool (*null)(const void *src, int row, int col);
	int64_t (*i64)(const void *src, int row, int col);
	const char *(*text)(const void *src, int row, int col);
	const void *src;
	int row;
};

/*
 * twl_cells_set - set @r's members into @obj from row @c, or when @c is
 * NULL as if every column were SQL NULL (a count of no row: 0). 0 or
 * -ENOMEM.
 */
int twl_cells_set(const struct twl_cells *c, const struct twl_row *r,
		  json_t *obj);

/* twl_cells_json - row @c as a new JSON value; NULL: no memory. */
json_t *twl_cells_json(const struct twl_cells *c, const struct twl_row *r);

/* Append @v to @arr (taking it); -ENOMEM when @v is NULL or that fails. */
static inline int twl_jpush(json_t *arr, json_t *v)
{
	return (v && !json_array_append_new(arr, v)) ? 0 : -ENOMEM;
}

/* Set @obj's member @k to @v (taking it); -ENOMEM as twl_jpush(). */
static inline int twl_jset(json_t *obj, const char *k, json_t *v)
{
	return (v && !json_object_set_new(obj, k, v)) ? 0 : -ENOMEM;
}

/* ---- the rows of the answers, in their result columns' order ------- */

/* Columns shown for a host in lists (twl_host_row turns them to JSON). */
#define HOST_COLS                                                             \
	"host_id, hostname, kernel, cgroup_mode, agent_version, first_seen, " \
	"last_seen, records_lost, key_rejected, probe_missing"

/*
 * twl_host_row - a host in lists: HOST_COLS. twl_host_one_row - one
 * host: HOST_COLS, boot_id, catalog_version, last_seq, health_json,
 * census_json, times_clamped, time_sent_max.
 */
extern const struct twl_row twl_host_row, twl_host_one_row;

/*
 * A host's features: feature_id, first_used, last_used, uses, reads,
 * warnings, then as 0/1 configures, listens, reads only, warned.
 */
extern const struct twl_row twl_host_feature_row;
/* A host's unknown texts: text, count, first_time, matched_feature_id. */
extern const struct twl_row twl_host_unknown_row;
/* A host's labels: one JSON object (column 0) as "labels". */
extern const struct twl_row twl_host_labels_row;
/* A host's keys: total, revoked, last enrolled (NULL: none). */
extern const struct twl_row twl_host_keys_row;

/* A feature's day: day number, hosts, uses. */
extern const struct twl_row twl_timeline_row;
/* The kernel releases of a feature's hosts: kernel, hosts. */
extern const struct twl_row twl_kernel_row;

/*
 * An annotation: id, feature_id, workload, text, fits, author, created,
 * intent, set_by, v2_tried, shortfall, team.
 */
extern const struct twl_row twl_annotation_row;

/*
 * Unknown texts fleet-wide: text, hosts, count, first_seen, last_seen,
 * matched_feature_id, feature_id, kernels (a JSON array).
 */
extern const struct twl_row twl_unknown_row;

/*
 * The values of a feature's files (twl_rq_values_into()): one row of
 * "written" (cgroups, hosts, processes; the same of the finite values
 * set; min, max; the same reset to unlimited: columns 0..10 as the
 * three rows below take them), written values (value, cgroups, hosts,
 * processes, names), "configured" (cgroups, hosts, min, max), its values
 * (value, cgroups, hosts) and "listeners" (processes, hosts, cgroups).
 */
extern const struct twl_row twl_written_row, twl_written_set_row,
	twl_written_unlimited_row, twl_written_value_row, twl_configured_row,
	twl_configured_value_row, twl_listener_row;

/* Distinct values listed per source; one more is read to tell "more". */
#define TWL_VALUES_MAX 16

/* ---- steps around the queries -------------------------------------- */

/*
 * twl_rq_limit - the number of hosts a list may show for filter @f (its
 * limit, else TWL_READ_LIMIT_DEFAULT, at most TWL_READ_LIMIT_MAX).
 */
unsigned twl_rq_limit(const struct twl_read_filter *f);

/*
 * twl_hosts_filter - check host list filter @f and make its LIKE patterns
 * (twl_glob_to_like()): the host pattern into @pat, the kernel into
 * @kpat (each @cap bytes, 2 * TWL_READ_MAX_FILTER + 2 fit). 0, -EINVAL
 * for a string too long, -ENOENT for a feature the catalog lacks.
 */
int twl_hosts_filter(const struct twl_read_filter *f, char *pat, char *kpat,
		     size_t cap);

/*
 * twl_page_end - a page of @arr's objects that @more says is followed by
 * another: @doc's "next_cursor" set to member @key of its last. 0 or
 * -ENOMEM.
 */
int twl_page_end(json_t *doc, json_t *arr, const char *key, bool more);

/*
 * twl_host_census_trim - drop the knobs and hierarchies of host answer
 * @doc's census: thousands of them; the summary stays.
 */
void twl_host_census_trim(json_t *doc);

#endif /* TWL_SERVER_STORE_READ_ROWS_H */
