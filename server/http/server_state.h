/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's state, shared by server.c (the daemon, its connections)
 * and request.c (the request lifecycle) only: handlers reach it through
 * the accessors of server.h and server_internal.h.
 */
#ifndef TWL_SERVER_SERVER_STATE_H
#define TWL_SERVER_SERVER_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include <microhttpd.h>

#include "http/http.h"
#include "http/peer.h"
#include "http/server.h"
#include "http/watch.h"

struct twl_server {
	struct twl_config cfg;
	struct twl_store *store;
	struct twl_metrics *metrics;
	struct twl_app app;
	void *app_state; /* made by app.start */
	struct twl_ratelimit *host_rl, *ip_rl, *enroll_rl;
	struct twl_key_cache *keys; /* NULL when key-cache is 0 */
	struct twl_conntrack *conns; /* open connections per peer key */
	struct twl_watch *watch; /* slow-client deadlines */
	struct MHD_Daemon *d;
	uint16_t port;
	char *cert_pem, *key_pem, *client_ca_pem;
	int64_t cert_not_after; /* the server certificate's; 0: unknown */
	atomic_size_t body_bytes; /* request bodies held, all connections */
	atomic_size_t requests; /* begun and not yet completed (answered) */
};

/* One connection (libmicrohttpd's socket context). */
struct twl_sock {
	struct twl_watched w;
	struct twl_peer peer;
	bool counted; /* in srv->conns */
};

/* Whether the per-address limits apply to @peer (limit-loopback). */
static inline bool twl_server_limits(const struct twl_server *srv,
				     const struct twl_peer *peer)
{
	return !peer->loopback || srv->cfg.limit_loopback;
}

/* Monotonic seconds. */
double twl_mono_now(void);

/* libmicrohttpd's callbacks of the request lifecycle (request.c). */
enum MHD_Result twl_on_request(void *cls, struct MHD_Connection *mc,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_size, void **con_cls);
void twl_on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
		      enum MHD_RequestTerminationCode toe);
void *twl_on_uri(void *cls, const char *uri, struct MHD_Connection *mc);

#endif /* TWL_SERVER_SERVER_STATE_H */
