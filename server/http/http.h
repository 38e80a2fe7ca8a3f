/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server: the handler interface. Handlers never see
 * libmicrohttpd or SQLite; they get a parsed request (body complete,
 * inflated, capped; caller authenticated) and fill a response.
 *
 * Routing: server.c matches method + path against the route tables
 * (twl_core_routes in this component, twl_read_routes from api_read.c),
 * checks the caller's role against route->min_role, then calls fn.
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
 * >= R, except that TWL_ROLE_AGENT principals (enrolment token or per-host
 * key) are admitted only to routes whose min_role is exactly
 * TWL_ROLE_AGENT: agents enrol and post, nothing else.
 * TWL_ROLE_PUBLIC routes (only /healthz) need no token.
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

/*
 * A route. path is matched exactly, or as a prefix when it ends in '*'
 * (the rest is in req->path_rest). method NULL ends a table.
 * The handler returns 0 when resp is filled (any status), or a negative
 * errno, which server.c answers with 500 "internal".
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
