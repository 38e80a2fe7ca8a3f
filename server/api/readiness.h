/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Upgrade readiness handlers (readiness.c): GET and POST /api/v1/targets,
 * GET /api/v1/readiness; registered in api_read.c's route table and
 * documented in docs/api.md.
 */
#ifndef TWL_SERVER_API_READINESS_H
#define TWL_SERVER_API_READINESS_H

#include <stdint.h>

#include <jansson.h>

#include "http/http.h"

int twl_api_targets_get(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp);
int twl_api_targets_post(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp);
int twl_api_readiness_get(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp);

struct twl_store;

/*
 * twl_readiness_export - the linux-mm export's readiness facts: target
 * @name's breakage (twl_read_readiness() over hosts seen since @since)
 * into export data @data (export.h) as "readiness": {"target", "title",
 * "kernel", "hosts"} and, on each feature the target takes away that some
 * host uses, "readiness": {"hosts"}. Targets: the shipped ones and
 * @data_dir's (target_dir.h). @name NULL or "": nothing. With
 * @label_key, of the hosts whose label @label_key is @label_value only.
 * 0, -ENOENT (no such target) or another negative errno.
 */
int twl_readiness_export(struct twl_store *store, const char *data_dir,
			 const char *name, int64_t since, const char *label_key,
			 const char *label_value, json_t *data);

struct twl_answer_cache;
struct twl_label_bytes;

/*
 * twl_api_readiness_export - as twl_readiness_export(), for the server's
 * export: the facts of target @name for hosts seen in the last @days,
 * of those labelled @label if it is on, taken from the readiness answer
 * GET /api/v1/readiness?target=NAME gives (with &label=KEY=VALUE),
 * which is a kept one on a fleet where it is slow (answer_cache.h), so
 * the export and the readiness page compute it once between them.
 */
int twl_api_readiness_export(struct twl_server *srv, const char *name,
			     unsigned days, const struct twl_label_bytes *label,
			     json_t *data);

/*
 * twl_api_readiness_kept_breaks - the hosts that would break on target
 * @name, from the readiness answer of the target's page
 * (GET /api/v1/readiness?target=NAME) if @c keeps one
 * (twl_answer_cache_peek()): 0 with *@count, -ENOENT when none is kept
 * (nothing is computed), or -ENOMEM.
 */
int twl_api_readiness_kept_breaks(struct twl_answer_cache *c, const char *name,
				  int64_t *count);

/*
 * twl_api_readiness_ahead - have @c compute ahead (answer_cache.h) the
 * readiness page's default answer of every target of @srv's (the shipped
 * ones and its data directory's, as they are now): 0 or a negative errno.
 */
int twl_api_readiness_ahead(struct twl_server *srv, struct twl_answer_cache *c);

#endif /* TWL_SERVER_API_READINESS_H */
