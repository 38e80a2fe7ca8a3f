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

#endif /* TWL_SERVER_API_READINESS_H */
