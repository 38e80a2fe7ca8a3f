/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read API handlers (GET /api/v1/catalog, summary, features/{id}, hosts,
 * hosts/{id}, health, export/linux-mm), annotations (annotations.c) and
 * migration status (migration_status.c).
 * The route table twl_read_routes[] is declared in http.h; docs/api.md
 * documents every endpoint.
 */
#ifndef TWL_SERVER_API_READ_H
#define TWL_SERVER_API_READ_H

#include <stdint.h>

#include <twilight/wire.h>

#include "http/http.h"
#include "store/store_read.h"

/* Annotation handlers (annotations.c). */
int twl_api_annotations_get(struct twl_server *srv,
			    const struct twl_request *req,
			    struct twl_response *resp);
int twl_api_annotations_post(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp);
int twl_api_annotations_delete(struct twl_server *srv,
			       const struct twl_request *req,
			       struct twl_response *resp);

/*
 * twl_api_feature_list - answer a GET with an optional ?feature= (a
 * catalog id, else 400) with @read's document for it; store errors as
 * twl_api_store_error() with @what (annotations.c).
 */
int twl_api_feature_list(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp,
			 int (*read)(struct twl_store *, const char *,
				     json_t **),
			 const char *what);

/* Migration status handlers (migration_status.c). */
int twl_api_migration_get(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp);
int twl_api_migration_reuse_get(struct twl_server *srv,
				const struct twl_request *req,
				struct twl_response *resp);
int twl_api_migration_post(struct twl_server *srv,
			   const struct twl_request *req,
			   struct twl_response *resp);
int twl_api_migration_delete(struct twl_server *srv,
			     const struct twl_request *req,
			     struct twl_response *resp);

/*
 * twl_parse_time - parse a time parameter: Unix seconds, or a UTC date
 * "YYYY-MM-DD" (its start; @end_of_day for its last second). Returns 0
 * and *@out, or -EINVAL.
 */
int twl_parse_time(const char *s, bool end_of_day, int64_t *out);

/*
 * twl_api_filter_from_query - fill @f from query parameters since, until,
 * feature, host, kernel, cgroup_mode, cursor, limit. On a bad value
 * answers 400 in @resp and returns 1; returns 0 when @f is filled.
 */
int twl_api_filter_from_query(const struct twl_request *req,
			      struct twl_read_filter *f,
			      struct twl_response *resp);

/*
 * twl_api_export_data - the linux-mm export's data for a request: the
 * server's export settings, then the query's hosts, cgroups, processes,
 * days and feature, read from the store (or a kept answer, whose Age is
 * set in @resp: api/answer_cache.h) and redacted into *@red (the caller
 * json_decref()s it). Returns 0, 1 when @resp was answered (400, or a
 * store error with its status), or a negative errno.
 */
int twl_api_export_data(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp, json_t **red);

struct twl_answer_cache;

/*
 * twl_api_feature_ahead - have @c compute ahead (answer_cache.h) what the
 * dashboard's feature page asks for first: GET /api/v1/features/ID of
 * every catalog feature, with no range or label. 0 or a negative errno.
 * twl_api_export_ahead - the same for GET /api/v1/export/linux-mm (the
 * data of every message, the configuration's redaction) and each
 * feature's preview on that page (&feature=ID).
 */
int twl_api_feature_ahead(struct twl_answer_cache *c);
int twl_api_export_ahead(struct twl_server *srv, struct twl_answer_cache *c);

/*
 * A label filter as plain bytes, for the parameters of kept answers
 * (api/answer_cache.h): compared and copied as they are.
 */
struct twl_label_bytes {
	bool on; /* a label filter is set */
	char key[TWL_WIRE_MAX_LABEL_KEY + 1];
	char value[TWL_WIRE_MAX_LABEL_VALUE + 1];
};

/*
 * twl_label_bytes_of - @lf's label filter (none when its key is "") into
 * @b. 0, or -EINVAL if one does not fit (the wire's rules, which
 * twl_api_label_parse() applies, make them fit).
 */
int twl_label_bytes_of(struct twl_label_bytes *b,
		       const struct twl_read_filter *lf);

/*
 * twl_api_group_label - the query's group=label:KEY: *@key the KEY (into
 * the query), NULL without group. 0; 1 after answering 400 for anything
 * but a host.labels key; or a negative errno from answering.
 */
int twl_api_group_label(const struct twl_request *req,
			struct twl_response *resp, const char **key);

/*
 * twl_api_label_parse - "KEY=VALUE" into @f's label filter, both by the
 * wire's rules for host.labels (label_value points into @v). 0, or
 * -EINVAL when @v is not one (@f's label then unspecified).
 */
int twl_api_label_parse(const char *v, struct twl_read_filter *f);

/*
 * twl_api_label_param - the query's label=KEY=VALUE into @f's label filter
 * (the same rules as the list filters'; none: label_key ""). 0; 1 after
 * answering 400 for anything but a host.labels key and value; or a
 * negative errno from answering.
 */
int twl_api_label_param(const struct twl_request *req,
			struct twl_response *resp, struct twl_read_filter *f);

/*
 * twl_api_store_error - answer @resp for a store error @err: -ENOENT 404
 * "not_found", -EINVAL 400 "bad_parameter", -EDQUOT 409 "too_many",
 * -EBUSY 503, else returns @err
 * (server.c answers 500). @what names the object for the reason text.
 */
int twl_api_store_error(struct twl_response *resp, int err, const char *what);

#endif /* TWL_SERVER_API_READ_H */
