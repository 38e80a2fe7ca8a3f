/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server: the handler interface. Handlers never see
 * libmicrohttpd or SQLite; they get a parsed request (body complete,
 * inflated, capped; caller authenticated) and fill a response.
 *
 * Routing: server.c matches method + path against the route tables it
 * serves (twl_api_routes unless told otherwise), checks the caller's role
 * against route->min_role, then calls fn.
 */
#ifndef TWL_SERVER_HTTP_H
#define TWL_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_server;

/*
 * Roles, ordered: a route with min_role R admits principals whose role is
 * >= R, except that routes whose min_role is exactly TWL_ROLE_AGENT admit
 * only TWL_ROLE_AGENT principals (enrolment token or per-host key), and
 * those no other route: agents enrol and post, nothing else, and nobody
 * else does. TWL_ROLE_PUBLIC routes (/healthz, dashboard files) need no
 * token and take no request body.
 */
enum twl_role {
	TWL_ROLE_PUBLIC = 0,
	TWL_ROLE_AGENT = 1,
	TWL_ROLE_VIEWER = 2,
	TWL_ROLE_ADMIN = 3,
};

/* Who made the request, filled by auth.c before the handler runs. */
struct twl_principal {
	int role; /* enum twl_role; TWL_ROLE_PUBLIC = no token */
	int64_t token_id; /* tokens.id, or 0 for a per-host key */
	char name[64]; /* token name, or "host:<host_id>" */
	char host_id[65]; /* set (non-empty) only for per-host keys */
	char key_hash[65]; /* the per-host key's SHA-256 (hex), or "" */
};

struct twl_request {
	const char *method; /* "GET", "POST", ... */
	const char *path; /* URL path without query string */
	const char *path_rest; /* for prefix routes: the part after the prefix */
	const char *body; /* NUL-terminated copy; gzip already inflated */
	size_t body_len;
	const char *peer; /* peer address as text */
	struct twl_principal who;
	int64_t now; /* Unix seconds at request start */
	void *priv; /* server.c only (the MHD connection) */
};

#define TWL_RESP_MAX_HEADERS 4

struct twl_response {
	int status;
	char *body; /* malloc'd, freed by server.c; may be NULL */
	size_t len;
	const char *content_type; /* static string; default application/json */
	size_t n_headers;
	struct {
		char name[40];
		char value[216];
	} headers[TWL_RESP_MAX_HEADERS];
};

typedef int (*twl_handler_fn)(struct twl_server *srv,
			      const struct twl_request *req,
			      struct twl_response *resp);

/* A handler's return value: the answer comes later (twl_request_defer()). */
#define TWL_HANDLER_DEFERRED 1

/*
 * A route. path is matched exactly, or as a prefix when it ends in '*'
 * (the rest is in req->path_rest). method NULL ends a table.
 * The handler returns 0 when resp is filled (any status),
 * TWL_HANDLER_DEFERRED, or a negative errno, which server.c logs and
 * answers with 500 "internal".
 */
struct twl_route {
	const char *method;
	const char *path;
	int min_role;
	twl_handler_fn fn;
};

/* Route tables; each ends with an entry whose method is NULL. */
extern const struct twl_route twl_core_routes[];
extern const struct twl_route twl_read_routes[];
extern const struct twl_route twl_export_routes[];
extern const struct twl_route twl_catalog_routes[];

/*
 * The tables twl_server_new() serves, NULL-terminated (api_core.c). An
 * exact path beats a prefix, a longer prefix a shorter one, and among
 * equals the earlier table wins.
 */
extern const struct twl_route *const twl_api_routes[];

/*
 * Deferred answers, for work another thread finishes (report ingest waits
 * for the writer's COMMIT). The handler takes a handle, gives it to that
 * thread and returns TWL_HANDLER_DEFERRED; the connection is then
 * suspended (it holds no HTTP thread) until twl_defer_complete(). Both
 * callbacks run on an HTTP thread.
 */
struct twl_defer;

struct twl_defer_ops {
	/*
	 * Fill resp from what twl_defer_complete() passed, as a handler
	 * would (0, or a negative errno for a 500). May be skipped when the
	 * client went away first.
	 */
	int (*answer)(struct twl_server *srv, void *state, int result,
		      struct twl_response *resp);
	/*
	 * Free state (also NULL). Called exactly once for every completed
	 * handle: after answer, or instead of it when the client went away
	 * or the handler did not return TWL_HANDLER_DEFERRED after all.
	 */
	void (*release)(void *state);
};

/*
 * twl_request_defer - a handle to answer req later with ops (static
 * storage), or NULL when req already has one. No allocation: the handle
 * lives with the connection. It is valid only if the handler then returns
 * TWL_HANDLER_DEFERRED; exactly one twl_defer_complete() must follow
 * before the daemon stops (a suspended connection cannot be closed:
 * twl_server_free() first calls the application's drain hook, server.h,
 * which completes its own). With
 * any other return the handle is void: it must not be completed later.
 */
struct twl_defer *twl_request_defer(const struct twl_request *req,
				    const struct twl_defer_ops *ops);

/*
 * twl_defer_complete - finish d with result and state (which passes to
 * ops->release): its answer is sent from an HTTP thread, at once if the
 * handler has returned, else when it does. Any thread, once per handle;
 * d must not be used afterwards. Takes only the connection's lock.
 */
void twl_defer_complete(struct twl_defer *d, int result, void *state);

/*
 * twl_request_timed - count req's latency, from its first byte to its
 * answer (deferred or not), in the /metrics latency histogram
 * (twilight_ingest_seconds: report ingest asks for it).
 */
void twl_request_timed(const struct twl_request *req);

/* Value of query parameter name (URL-decoded), or NULL if absent. */
const char *twl_request_query(const struct twl_request *req, const char *name);

/* Value of request header name (case-insensitive), or NULL if absent. */
const char *twl_request_header(const struct twl_request *req, const char *name);

/*
 * Serialise json (reference stolen: it is decref'd on every path) into
 * resp with status. Returns 0, or -ENOMEM (resp then holds a 500).
 */
int twl_response_json(struct twl_response *resp, int status, json_t *json);

/*
 * JSON error {"error": code, "field": field, "reason": reason}; field may
 * be NULL or "" (then omitted). Returns 0 or -ENOMEM.
 */
int twl_response_error(struct twl_response *resp, int status, const char *code,
		       const char *field, const char *reason);

/*
 * Copy len bytes of body into resp with status and content_type (a static
 * string). Returns 0 or -ENOMEM.
 */
int twl_response_data(struct twl_response *resp, int status,
		      const char *content_type, const void *body, size_t len);

/*
 * Add a response header (printf-style value, truncated to fit).
 * Returns 0, or -ENOSPC past TWL_RESP_MAX_HEADERS.
 */
__attribute__((format(printf, 3, 4))) int
twl_response_header(struct twl_response *resp, const char *name,
		    const char *fmt, ...);

/* Free resp->body and reset resp to an empty 500. NULL-safe. */
void twl_response_fini(struct twl_response *resp);

#endif /* TWL_SERVER_HTTP_H */
