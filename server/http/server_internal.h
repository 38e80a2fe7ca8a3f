/* SPDX-License-Identifier: GPL-2.0 */
/* Internals shared by server.c and the core handlers (api_core.c, static.c). */
#ifndef TWL_SERVER_SERVER_INTERNAL_H
#define TWL_SERVER_SERVER_INTERNAL_H

#include <jansson.h>

#include <twilight/wire.h>

#include "http/http.h"
#include "http/server.h"

/* Handler return value: the response will come later (deferred ingest). */
#define TWL_HANDLER_DEFERRED 1

/*
 * Queue a validated report for the group-commit writer and defer req's
 * response until its commit. Returns TWL_HANDLER_DEFERRED, or a negative
 * errno (-EAGAIN queue full, -ESHUTDOWN stopping) with nothing queued;
 * *report (from twl_wire_decode()) is consumed either way.
 */
int twl_server_defer_ingest(struct twl_server *srv,
			    const struct twl_request *req, const char *host_id,
			    struct twl_wire_report *report);

/* Per-host report rate limit: 0 allowed, else seconds to wait. */
unsigned twl_server_host_rate(struct twl_server *srv, const char *host_id);

/* Static files under cfg.web_dir (static.c). */
int twl_handle_static(struct twl_server *srv, const struct twl_request *req,
		      struct twl_response *resp);

#endif /* TWL_SERVER_SERVER_INTERNAL_H */
