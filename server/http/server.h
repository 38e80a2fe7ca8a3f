/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server: the HTTPS daemon (libmicrohttpd + GnuTLS), request
 * lifecycle, routing, auth and limits. Handlers reach the store and the
 * configuration through the accessors below.
 */
#ifndef TWL_SERVER_SERVER_H
#define TWL_SERVER_SERVER_H

#include <stdint.h>

#include "config.h"
#include "store/store.h"

struct twl_server;
struct twl_route;
struct twl_metrics;
struct twl_writer;

/*
 * Start serving with cfg (copied) on an open store (borrowed: the caller
 * closes it after twl_server_free()). TLS files must exist (see tls.h).
 * Returns NULL with errno set and a logged reason on failure.
 */
struct twl_server *twl_server_new(const struct twl_config *cfg,
				  struct twl_store *store);

/*
 * twl_server_new_routes - the same, serving routes (a NULL-terminated
 * list of route tables, http.h; borrowed until twl_server_free()) instead
 * of twl_api_routes.
 */
struct twl_server *twl_server_new_routes(const struct twl_config *cfg,
					 struct twl_store *store,
					 const struct twl_route *const *routes);

/* Stop accepting, finish queued batches, free. NULL-safe. */
void twl_server_free(struct twl_server *srv);

/* The port actually bound (useful with port 0). */
uint16_t twl_server_port(const struct twl_server *srv);

struct twl_store *twl_server_store(struct twl_server *srv);
const struct twl_config *twl_server_config(const struct twl_server *srv);
struct twl_metrics *twl_server_metrics(struct twl_server *srv);
struct twl_writer *twl_server_writer(struct twl_server *srv);

#endif /* TWL_SERVER_SERVER_H */
