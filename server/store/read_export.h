/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The linux-mm export's data composed once for both backends
 * (read_export.c, read_export_workloads.c) from the queries of
 * read_answers.h's export block, which each backend gives in its dialect
 * (store/sqlite/store_sqlite_export.c, store/postgresql/store_pg_export.c).
 */
#ifndef TWL_SERVER_STORE_READ_EXPORT_H
#define TWL_SERVER_STORE_READ_EXPORT_H

#include <stdint.h>

#include <jansson.h>

struct twl_store;
struct twl_feature;
struct twl_export_opts;
struct twl_rq_io;
struct twl_rq_on;

/*
 * twl_answer_export - twl_read_export_data() of store_read.h, with its
 * contract, on backend @io: one read context for the whole document.
 */
int twl_answer_export(const struct twl_rq_io *io, struct twl_store *s,
		      int64_t now, unsigned window_days, const char *feature,
		      const struct twl_export_opts *opts, json_t **out);

/*
 * twl_export_workloads - set @o's "workloads" to the top workloads using
 * feature @f since @since (TWL_RQ_EXP_USES on @on): each {"process",
 * "place", "place_name", "target", "image", "has_image", "hosts",
 * "uses"}, a workload as twl_workload_of() (docs/workloads.md) makes it
 * with the place's name only with @opts->full_cgroups and the image only
 * with @opts->show_images; by hosts, then uses, then the workload's text
 * in byte order; at most TWL_READ_TOP_N. 0 or a negative errno.
 */
int twl_export_workloads(const struct twl_rq_on *on,
			 const struct twl_feature *f, int64_t since,
			 const struct twl_export_opts *opts, json_t *o);

#endif /* TWL_SERVER_STORE_READ_EXPORT_H */
