/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The export's "where and who" (export_where.c), private to the export:
 * workload rows (process, where the writer runs, the kind of cgroup it
 * used), hosts by label, the readiness line, and what the redaction
 * withheld. export.c calls these while redacting and rendering.
 */
#ifndef TWL_SERVER_API_EXPORT_WHERE_H
#define TWL_SERVER_API_EXPORT_WHERE_H

#include <jansson.h>

#include <twilight/util.h>

#include "api/export.h"

/*
 * twl_export_redact_where - apply @opts to feature @feat of a copy of the
 * export data (export.h): workloads lose what @opts withholds, are merged
 * when that made them equal and sorted by hosts, then uses; "by_label"
 * goes without show_labels, each annotation's "team" without show_teams.
 * 0, -EINVAL (a malformed workload) or -ENOMEM.
 */
int twl_export_redact_where(json_t *feat, const struct twl_export_opts *opts);

/*
 * twl_export_redaction - the "redaction" object of a document redacted
 * with @opts: each setting, true when shown. A new reference or NULL.
 */
json_t *twl_export_redaction(const struct twl_export_opts *opts);

/*
 * twl_export_text_workloads - append feature @f's workload rows, its hosts
 * by label and its readiness line to the text body. 0 or a negative errno
 * from twl_buf.
 */
int twl_export_text_workloads(struct twl_buf *b, const json_t *f);

/*
 * twl_export_text_fleet_readiness - append the fleet's readiness line
 * ("N of our hosts will lose ...") when @data has "readiness". 0 or a
 * negative errno from twl_buf.
 */
int twl_export_text_fleet_readiness(struct twl_buf *b, const json_t *data);

/*
 * twl_export_text_withheld - append the closing note: what the redaction
 * withheld and what it shows, each with its setting (@data's
 * "redaction"; absent: everything withheld). 0 or a negative errno.
 */
int twl_export_text_withheld(struct twl_buf *b, const json_t *data);

/*
 * twl_export_workload_text - workload @w as one phrase, "java in a docker
 * container (image withheld), on docker container cgroups", into @out
 * (@cap bytes, truncated). Returns @out.
 */
char *twl_export_workload_text(const json_t *w, char *out, size_t cap);

/*
 * twl_export_wrapf - twl_export_wrap() of a printf-formatted line (at
 * most 2047 bytes), at TWL_EXPORT_WIDTH.
 */
int twl_export_wrapf(struct twl_buf *b, const char *first, const char *rest,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* TWL_SERVER_API_EXPORT_WHERE_H */
