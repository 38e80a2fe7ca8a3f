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

/*
 * What an application adds to the daemon: its routes and the state its
 * handlers share, with that state's life cycle. The daemon knows nothing
 * of what the state is (twilight's: the ingest writer, api_ingest.h).
 * Every hook may be NULL.
 */
struct twl_app {
	/* the route tables served, NULL-terminated (http.h) */
	const struct twl_route *const *routes;
	/*
	 * Make the state (*state, NULL before) once the server's limits and
	 * metrics exist and before the first connection is accepted: 0, or
	 * a negative errno after logging what failed (the server then does
	 * not start).
	 */
	int (*start)(struct twl_server *srv, void **state);
	/*
	 * After the last request was accepted, before the daemon stops:
	 * complete every deferred answer the state owes (http.h: a suspended
	 * connection cannot be closed). Called once, also after a failed
	 * start (state may then be NULL).
	 */
	void (*drain)(void *state);
	/* Free the state (NULL-safe), after the daemon stopped. */
	void (*free)(void *state);
};

/* twilight's application: twl_api_routes and the ingest writer (api/). */
extern const struct twl_app twl_api_app;

/*
 * Start serving with cfg (copied) on an open store (borrowed: the caller
 * closes it after twl_server_free()). TLS files must exist (see tls.h).
 * Returns NULL with errno set and a logged reason on failure.
 */
struct twl_server *twl_server_new(const struct twl_config *cfg,
				  struct twl_store *store);

/*
 * twl_server_new_app - the same, serving app (copied; its routes are
 * borrowed until twl_server_free()) instead of twl_api_app.
 */
struct twl_server *twl_server_new_app(const struct twl_config *cfg,
				      struct twl_store *store,
				      const struct twl_app *app);

/*
 * twl_server_new_routes - twl_server_new_app() of an application that is
 * only routes (a NULL-terminated list of route tables, http.h).
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
/* The state the application's start hook made (NULL without one). */
void *twl_server_app_state(struct twl_server *srv);

#endif /* TWL_SERVER_SERVER_H */
