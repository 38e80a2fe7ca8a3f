/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Upgrade readiness handlers (readiness.c): GET and POST /api/v1/targets,
 * GET /api/v1/readiness; registered in api_read.c's route table and
 * documented in docs/api.md.
 */
#ifndef TWL_SERVER_API_READINESS_H
#define TWL_SERVER_API_READINESS_H

#include "http/http.h"

int twl_api_targets_get(struct twl_server *srv, const struct twl_request *req,
			struct twl_response *resp);
int twl_api_targets_post(struct twl_server *srv, const struct twl_request *req,
			 struct twl_response *resp);
int twl_api_readiness_get(struct twl_server *srv, const struct twl_request *req,
			  struct twl_response *resp);

#endif /* TWL_SERVER_API_READINESS_H */
