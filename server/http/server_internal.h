/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals shared by server.c and the core handlers (api_core.c,
 * api_ingest.c, static.c).
 */
#ifndef TWL_SERVER_SERVER_INTERNAL_H
#define TWL_SERVER_SERVER_INTERNAL_H

#include "http/http.h"
#include "http/server.h"

#include <stdint.h>

/* Per-host-key rate limit (host-rate, host-burst): 0 allowed, else seconds to wait. */
unsigned twl_server_host_rate(struct twl_server *srv, const char *host_id);

/*
 * Per-enrolment-token rate limit (enroll-rate, enroll-burst): 0 allowed,
 * else seconds to wait.
 */
unsigned twl_server_enroll_rate(struct twl_server *srv, int64_t token_id);

/*
 * twl_server_forget_host_keys - drop @host_id's keys from the key cache
 * (key_cache.h), after they were revoked in the store: the next request
 * with one of them is looked up there and refused.
 */
void twl_server_forget_host_keys(struct twl_server *srv, const char *host_id);

/*
 * The server certificate's expiry at @now: {"file", "not_after" (Unix s,
 * null if unknown), "days_left", "warning": a sentence for the operator
 * from TWL_CERT_WARN_DAYS days before, else null}. NULL on ENOMEM.
 */
json_t *twl_server_cert_json(const struct twl_server *srv, int64_t now);

/* When the server certificate expires (Unix s), 0 if unknown. */
int64_t twl_server_cert_not_after(const struct twl_server *srv);

/* Static files under cfg.web_dir (static.c). */
int twl_handle_static(struct twl_server *srv, const struct twl_request *req,
		      struct twl_response *resp);

#endif /* TWL_SERVER_SERVER_INTERNAL_H */
