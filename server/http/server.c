// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTPS daemon: libmicrohttpd (GnuTLS) with limits set at start,
 * per-request state allocated on the first callback and freed in the
 * completion callback, bodies read into capped buffers, gzip inflated with
 * a cap, authentication and roles checked before any handler runs, and
 * security headers on every response this file builds. A handler may
 * defer its answer (http.h): the connection is then suspended until
 * another thread completes the handle, and answered on resume.
 *
 * Known gap: requests libmicrohttpd refuses before any callback here runs
 * (malformed HTTP, a header block over the connection memory limit, an
 * unsupported HTTP version) get libmicrohttpd's own short fixed error
 * page, without these headers; 0.9.75 offers no hook to add them. Those
 * pages carry no request data, so nothing in them can be injected.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <zlib.h>

#include <twilight/util.h>

#include "api/metrics.h"
#include "http/auth.h"
#include "http/ratelimit.h"
#include "http/server_internal.h"
#include "store/writer.h"

#define IP_SLOTS 4096

struct twl_server {
	struct twl_config cfg;
	struct twl_store *store;
	struct twl_metrics *metrics;
	struct twl_writer *writer;
	struct twl_ratelimit *host_rl, *ip_rl;
	const struct twl_route *const *routes;
	struct MHD_Daemon *d;
	uint16_t port;
	char *cert_pem, *key_pem, *client_ca_pem;
	pthread_mutex_t ip_lock;
	uint16_t ip_conns[IP_SLOTS];
};

enum conn_state { ST_READING, ST_DEFERRED, ST_DONE };

/* A deferred answer (http.h); part of its connection, so never allocated. */
struct twl_defer {
	const struct twl_defer_ops *ops; /* NULL: no handle handed out */
	void *state; /* from twl_defer_complete(), until ops->release() */
	int result;
	bool completed, suspended; /* under the connection's lock */
};

struct conn {
	struct twl_server *srv;
	struct MHD_Connection *mc;
	struct twl_buf body;
	bool too_big;
	size_t discarded;
	bool timed; /* twl_request_timed() */
	enum conn_state state;
	pthread_mutex_t lock;
	struct twl_defer defer;
	double t0;
	char peer[INET6_ADDRSTRLEN];
	bool loopback;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Contract: see server.h. */
uint16_t twl_server_port(const struct twl_server *srv)
{
	return srv->port;
}

/* Contract: see server.h. */
struct twl_store *twl_server_store(struct twl_server *srv)
{
	return srv->store;
}

/* Contract: see server.h. */
const struct twl_config *twl_server_config(const struct twl_server *srv)
{
	return &srv->cfg;
}

/* Contract: see server.h. */
struct twl_metrics *twl_server_metrics(struct twl_server *srv)
{
	return srv->metrics;
}

/* Contract: see server.h. */
struct twl_writer *twl_server_writer(struct twl_server *srv)
{
	return srv->writer;
}

/* Contract: see server_internal.h. */
unsigned twl_server_host_rate(struct twl_server *srv, const char *host_id)
{
	return twl_ratelimit_take(srv->host_rl, host_id, mono_now());
}

/* Contract: see http.h. */
void twl_request_timed(const struct twl_request *req)
{
	struct conn *c = req->priv;

	c->timed = true;
}

/* Contract: see http.h. */
const char *twl_request_query(const struct twl_request *req, const char *name)
{
	struct conn *c = req->priv;

	return MHD_lookup_connection_value(c->mc, MHD_GET_ARGUMENT_KIND, name);
}

/* Contract: see http.h. */
const char *twl_request_header(const struct twl_request *req, const char *name)
{
	struct conn *c = req->priv;

	return MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, name);
}

static void peer_of(struct MHD_Connection *mc, char *out, size_t cap,
		    bool *loopback)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(out, cap, "?");
	*loopback = false;
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, out, cap);
		*loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, out, cap);
		*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			    (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
			     in6->sin6_addr.s6_addr[12] == 127);
	}
}

static unsigned ip_slot(const char *ip)
{
	uint32_t h = 2166136261u;

	while (*ip)
		h = (h ^ (unsigned char)*ip++) * 16777619u;
	return h % IP_SLOTS;
}

static void add_security_headers(struct MHD_Response *r, bool html)
{
	MHD_add_response_header(
		r, "Content-Security-Policy",
		"default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy",
				"same-origin");
	MHD_add_response_header(r, "Strict-Transport-Security",
				"max-age=31536000");
	MHD_add_response_header(r, "Cache-Control",
				html ? "no-cache" : "no-store");
}

static enum MHD_Result send_response(struct conn *c, struct twl_response *resp)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	if (!resp->body)
		twl_response_error(resp, resp->status ? resp->status : 500,
				   "internal", NULL, "no response body");
	r = MHD_create_response_from_buffer(resp->len, resp->body,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		twl_response_fini(resp);
		return MHD_NO;
	}
	resp->body = NULL; /* owned by r */
	MHD_add_response_header(r, "Content-Type",
				resp->content_type ? resp->content_type :
						     "application/json");
	add_security_headers(r,
			     resp->content_type && !strncmp(resp->content_type,
							    "text/html", 9));
	for (size_t i = 0; i < resp->n_headers; i++)
		MHD_add_response_header(r, resp->headers[i].name,
					resp->headers[i].value);
	ok = MHD_queue_response(c->mc, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	twl_metrics_request(c->srv->metrics, resp->status, mono_now() - c->t0,
			    c->timed);
	twl_response_fini(resp);
	c->state = ST_DONE;
	return ok;
}

/* An error answer in resp, counted as a rejection; returns false (stop). */
static bool reject(struct conn *c, struct twl_response *resp, int status,
		   const char *code, const char *reason)
{
	twl_metrics_reject(c->srv->metrics, code);
	twl_response_error(resp, status, code, NULL, reason);
	if (status == 401)
		twl_response_header(resp, "WWW-Authenticate",
				    "Bearer realm=\"twilight\"");
	return false;
}

static enum MHD_Result send_error(struct conn *c, int status, const char *code,
				  const char *reason)
{
	struct twl_response resp = { 0 };

	reject(c, &resp, status, code, reason);
	return send_response(c, &resp);
}

/* Inflate gzip body into a new buffer of at most max bytes. */
static int gunzip(const char *in, size_t len, size_t max, struct twl_buf *out)
{
	z_stream z = { 0 };
	char chunk[16384];
	int zr, ret = 0;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	twl_buf_init(out, max);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	do {
		z.next_out = (Bytef *)chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			ret = -EBADMSG;
			break;
		}
		ret = twl_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
		if (ret)
			break;
		if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
			ret = -EBADMSG; /* truncated stream */
			break;
		}
	} while (zr != Z_STREAM_END);
	if (!ret && z.avail_in != 0)
		ret = -EBADMSG; /* trailing garbage */
	inflateEnd(&z);
	if (ret)
		twl_buf_fini(out);
	return ret;
}

static const struct twl_route *find_route(const struct twl_route *const *tables,
					  const char *method, const char *path,
					  const char **rest, bool *wrong_method)
{
	const struct twl_route *best = NULL;
	size_t best_len = 0;

	*wrong_method = false;
	for (size_t t = 0; tables[t]; t++) {
		for (const struct twl_route *r = tables[t]; r->method; r++) {
			size_t n = strlen(r->path);
			bool prefix = n && r->path[n - 1] == '*';
			bool match;

			if (prefix)
				match = !strncmp(path, r->path, n - 1);
			else
				match = !strcmp(path, r->path);
			if (!match)
				continue;
			if (strcmp(r->method, method)) {
				*wrong_method = true;
				continue;
			}
			if (!prefix) {
				*rest = "";
				return r;
			}
			if (n > best_len) {
				best = r;
				best_len = n;
				*rest = path + n - 1;
			}
		}
	}
	/* a prefix match that is only the static catch-all loses to a method mismatch */
	if (best && *wrong_method && best_len <= 2)
		return NULL;
	return best;
}

static bool client_cert_ok(struct conn *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		c->mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned status = 0;

	if (!ci || !ci->tls_session)
		return false;
	if (gnutls_certificate_type_get(ci->tls_session) != GNUTLS_CRT_X509)
		return false;
	if (gnutls_certificate_verify_peers2(ci->tls_session, &status) !=
	    GNUTLS_E_SUCCESS)
		return false;
	return status == 0 &&
	       gnutls_certificate_get_peers(ci->tls_session, &(unsigned){ 0 });
}

/*
 * Send what a handler (or a deferral's answer) made of method url: resp,
 * or on an error 500, logged here, the top of the request.
 */
static enum MHD_Result answer(struct conn *c, const char *method,
			      const char *url, int ret,
			      struct twl_response *resp)
{
	if (ret < 0) {
		twl_log(LOG_ERR, "%s %s failed: %s", method, url,
			strerror(-ret));
		twl_response_fini(resp); /* nothing of a failed answer */
		twl_response_error(resp, 500, "internal", NULL,
				   "internal error; see server log");
	}
	return send_response(c, resp);
}

/* Release what d holds if it was completed, and void the handle. */
static void defer_release(struct twl_defer *d, bool completed)
{
	if (completed && d->ops->release)
		d->ops->release(d->state);
	*d = (struct twl_defer){ 0 };
}

/*
 * A handle still there when the handler answered itself or the client
 * went away: released if it was completed (nothing else holds it then).
 */
static void defer_void(struct conn *c)
{
	bool completed;

	if (!c->defer.ops)
		return; /* the common case: no lock */
	pthread_mutex_lock(&c->lock);
	completed = c->defer.completed;
	pthread_mutex_unlock(&c->lock);
	defer_release(&c->defer, completed);
}

/* Answer a completed deferral on this HTTP thread. */
static enum MHD_Result defer_answer(struct conn *c, const char *method,
				    const char *url)
{
	struct twl_response resp = { .status = 500 };
	struct twl_defer *d = &c->defer;
	int ret;

	/* completed was seen under the lock on this thread: no lock here */
	ret = d->ops->answer(c->srv, d->state, d->result, &resp);
	defer_release(d, true);
	return answer(c, method, url, ret, &resp);
}

/*
 * After the handler deferred: answer now if the handle was completed
 * meanwhile, else suspend until twl_defer_complete() resumes us.
 */
static enum MHD_Result defer_wait(struct conn *c, const char *method,
				  const char *url)
{
	bool done;

	pthread_mutex_lock(&c->lock);
	c->state = ST_DEFERRED;
	done = c->defer.completed;
	if (!done) {
		MHD_suspend_connection(c->mc);
		c->defer.suspended = true;
	}
	pthread_mutex_unlock(&c->lock);
	return done ? defer_answer(c, method, url) : MHD_YES;
}

/* The per-address request rate (loopback exempt unless limit-loopback). */
static bool within_ip_rate(struct conn *c, struct twl_response *resp)
{
	unsigned wait;

	if (c->loopback && !c->srv->cfg.limit_loopback)
		return true;
	wait = twl_ratelimit_take(c->srv->ip_rl, c->peer, mono_now());
	if (!wait)
		return true;
	reject(c, resp, 429, "rate_limited",
	       "too many requests from this address; retry later");
	twl_response_header(resp, "Retry-After", "%u", wait);
	return false;
}

/* The route of req (setting its path_rest), or NULL with a 404/405. */
static const struct twl_route *route_of(struct conn *c, struct twl_request *req,
					struct twl_response *resp)
{
	const struct twl_route *route;
	bool wrong_method;

	route = find_route(c->srv->routes, req->method, req->path,
			   &req->path_rest, &wrong_method);
	if (route)
		return route;
	if (wrong_method)
		reject(c, resp, 405, "method_not_allowed",
		       "this path does not accept that method");
	else
		reject(c, resp, 404, "not_found", "no such endpoint");
	return NULL;
}

/* Who is asking (req->who), and whether route admits them. */
static bool authorize(struct conn *c, const struct twl_route *route,
		      struct twl_request *req, struct twl_response *resp)
{
	const char *auth;
	int ret;

	if (route->min_role == TWL_ROLE_PUBLIC)
		return true;
	auth = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
					   "Authorization");
	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return reject(c, resp, 401, "unauthorized",
			      "missing 'Authorization: Bearer <token>' header");
	ret = twl_auth_resolve(c->srv->store, auth + 7, &req->who);
	if (ret == -EKEYREVOKED)
		return reject(
			c, resp, 401, "unauthorized",
			"this host key was revoked; enrol again with an enrolment token");
	if (ret == -ENOENT || ret == -EINVAL)
		return reject(c, resp, 401, "unauthorized",
			      "unknown or revoked token");
	if (ret)
		return reject(c, resp, 503, "unavailable",
			      "token store unavailable; retry");
	if ((req->who.role == TWL_ROLE_AGENT &&
	     route->min_role != TWL_ROLE_AGENT) ||
	    req->who.role < route->min_role)
		return reject(c, resp, 403, "forbidden",
			      "this token's role may not use this endpoint");
	if (req->who.host_id[0] && c->srv->cfg.require_client_cert &&
	    !client_cert_ok(c))
		return reject(
			c, resp, 403, "forbidden",
			"a client certificate signed by client-ca is required");
	return true;
}

/* req's body as sent, or gzip inflated into *inflated (capped). */
static bool decode_body(struct conn *c, struct twl_request *req,
			struct twl_buf *inflated, struct twl_response *resp)
{
	const char *enc = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
						      "Content-Encoding");
	int ret;

	req->body = c->body.data ? c->body.data : "";
	req->body_len = c->body.len;
	if (!enc || !strcasecmp(enc, "identity"))
		return true;
	if (strcasecmp(enc, "gzip"))
		return reject(c, resp, 415, "bad_encoding",
			      "only gzip and identity are accepted");
	ret = gunzip(req->body, req->body_len, c->srv->cfg.max_inflated,
		     inflated);
	if (ret == -E2BIG)
		return reject(c, resp, 413, "too_large",
			      "inflated body exceeds max-inflated");
	if (ret)
		return reject(c, resp, 400, "bad_encoding",
			      "body is not valid gzip");
	req->body = inflated->data ? inflated->data : "";
	req->body_len = inflated->len;
	return true;
}

/* Run route's handler on req and answer, now or once it is completed. */
static enum MHD_Result call_handler(struct conn *c,
				    const struct twl_route *route,
				    struct twl_request *req,
				    struct twl_response *resp)
{
	int ret;

	req->now = time(NULL);
	ret = route->fn(c->srv, req, resp);
	if (ret == TWL_HANDLER_DEFERRED && c->defer.ops) {
		twl_response_fini(resp);
		return defer_wait(c, req->method, req->path);
	}
	if (ret == TWL_HANDLER_DEFERRED)
		ret = -EPROTO; /* deferred without a handle: a handler bug */
	defer_void(c); /* a handle taken but not used is void */
	return answer(c, req->method, req->path, ret, resp);
}

/* A request whose body is complete: limits, route, auth, body, handler. */
static enum MHD_Result dispatch(struct conn *c, const char *url,
				const char *method)
{
	struct twl_request req = {
		.method = method, .path = url, .peer = c->peer, .priv = c
	};
	struct twl_response resp = { .status = 500 };
	struct twl_buf inflated = { 0 };
	const struct twl_route *route;
	enum MHD_Result ok;

	if (c->too_big)
		return send_error(c, 413, "too_large",
				  "request body exceeds max-body");
	if (!within_ip_rate(c, &resp))
		return send_response(c, &resp);
	route = route_of(c, &req, &resp);
	if (!route || !authorize(c, route, &req, &resp) ||
	    !decode_body(c, &req, &inflated, &resp))
		return send_response(c, &resp);
	ok = call_handler(c, route, &req, &resp);
	twl_buf_fini(&inflated);
	return ok;
}

/* Contract: see http.h. */
struct twl_defer *twl_request_defer(const struct twl_request *req,
				    const struct twl_defer_ops *ops)
{
	struct conn *c = req->priv;

	if (c->defer.ops || !ops)
		return NULL;
	c->defer.ops = ops;
	return &c->defer;
}

/* Contract: see http.h. */
void twl_defer_complete(struct twl_defer *d, int result, void *state)
{
	struct conn *c = (void *)((char *)d - offsetof(struct conn, defer));

	pthread_mutex_lock(&c->lock);
	d->result = result;
	d->state = state;
	d->completed = true;
	if (d->suspended) {
		d->suspended = false;
		MHD_resume_connection(c->mc);
	}
	pthread_mutex_unlock(&c->lock);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	struct twl_server *srv = cls;
	struct conn *c = *con_cls;
	const char *cl;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		c->srv = srv;
		c->mc = mc;
		c->t0 = mono_now();
		pthread_mutex_init(&c->lock, NULL);
		twl_buf_init(&c->body, srv->cfg.max_body);
		peer_of(mc, c->peer, sizeof(c->peer), &c->loopback);
		*con_cls = c;
		cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						 "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > srv->cfg.max_body) {
			c->too_big = true;
			return send_error(c, 413, "too_large",
					  "request body exceeds max-body");
		}
		/*
		 * A sender's claim reserves at most 64 KiB before the bytes
		 * arrive; a failure only means the body grows as it comes.
		 */
		if (cl)
			twl_buf_reserve(&c->body, strtoull(cl, NULL, 10),
					65536);
		return MHD_YES;
	}
	if (c->state == ST_DONE) {
		*upload_size = 0; /* answered early (413): drop the rest */
		return MHD_YES;
	}
	if (c->state == ST_DEFERRED) {
		bool done;

		pthread_mutex_lock(&c->lock);
		done = c->defer.completed;
		pthread_mutex_unlock(&c->lock);
		return done ? defer_answer(c, method, url) : MHD_YES;
	}
	if (*upload_size) {
		/*
		 * libmicrohttpd cannot answer in the middle of a body: past the
		 * cap the rest is discarded and 413 sent at its end, and a
		 * client that keeps sending far past the cap is disconnected.
		 */
		if (c->too_big) {
			c->discarded += *upload_size;
			if (c->discarded > 4 * srv->cfg.max_body + (1u << 20)) {
				twl_metrics_reject(srv->metrics, "too_large");
				return MHD_NO;
			}
		} else if (twl_buf_append(&c->body, upload_data,
					  *upload_size)) {
			c->too_big = true;
			twl_buf_fini(&c->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return dispatch(c, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn *c = *con_cls;

	if (!c)
		return;
	twl_buf_fini(&c->body);
	defer_void(c); /* the client went away before the answer */
	pthread_mutex_destroy(&c->lock);
	free(c);
	*con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *mc,
			  void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct twl_server *srv = cls;
	char ip[INET6_ADDRSTRLEN];
	bool loopback;
	unsigned slot;

	peer_of(mc, ip, sizeof(ip), &loopback);
	slot = ip_slot(ip);
	pthread_mutex_lock(&srv->ip_lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		srv->ip_conns[slot]++;
	else if (srv->ip_conns[slot])
		srv->ip_conns[slot]--;
	pthread_mutex_unlock(&srv->ip_lock);
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
				 socklen_t addrlen)
{
	struct twl_server *srv = cls;
	char ip[INET6_ADDRSTRLEN] = "?";
	bool loopback = false;
	enum MHD_Result ok;

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)addr;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)addr;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			   (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
			    in6->sin6_addr.s6_addr[12] == 127);
	}
	if (loopback && !srv->cfg.limit_loopback)
		return MHD_YES;
	pthread_mutex_lock(&srv->ip_lock);
	ok = srv->ip_conns[ip_slot(ip)] < srv->cfg.max_per_ip ? MHD_YES :
								MHD_NO;
	pthread_mutex_unlock(&srv->ip_lock);
	if (!ok)
		twl_metrics_reject(srv->metrics, "rate_limited");
	return ok;
}

/* Contract: see server.h. */
struct twl_server *twl_server_new(const struct twl_config *cfg,
				  struct twl_store *store)
{
	return twl_server_new_routes(cfg, store, twl_api_routes);
}

/* The certificate, key and optional client CA into srv; 0 or -errno. */
static int read_tls_files(struct twl_server *srv)
{
	const struct twl_config *cfg = &srv->cfg;
	int ret;

	ret = twl_read_file(cfg->cert_file, 1 << 20, &srv->cert_pem, NULL);
	if (!ret)
		ret = twl_read_file(cfg->key_file, 1 << 20, &srv->key_pem,
				    NULL);
	if (!ret && cfg->client_ca_file[0])
		ret = twl_read_file(cfg->client_ca_file, 1 << 20,
				    &srv->client_ca_pem, NULL);
	return ret;
}

/* libmicrohttpd on ss with TLS and the limits of srv->cfg, or NULL. */
static struct MHD_Daemon *start_daemon(struct twl_server *srv,
				       const struct sockaddr_storage *ss)
{
	const struct twl_config *cfg = &srv->cfg;
	struct MHD_OptionItem opts[16];
	unsigned flags;
	int n = 0;

	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS |
		MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
#define OPT(o, v, p) \
	opts[n++] = (struct MHD_OptionItem){ (o), (intptr_t)(v), (void *)(p) }
	OPT(MHD_OPTION_SOCK_ADDR, 0, ss);
	OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, srv->cert_pem);
	OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, srv->key_pem);
	OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, cfg->tls_priorities);
	if (srv->client_ca_pem)
		OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, srv->client_ca_pem);
	OPT(MHD_OPTION_THREAD_POOL_SIZE, cfg->threads, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, cfg->conn_timeout_s, NULL);
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->conn_memory, NULL);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv);
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	return MHD_start_daemon(flags, 0, on_accept, srv, on_request, srv,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

/* Contract: see server.h. */
struct twl_server *twl_server_new_routes(const struct twl_config *cfg,
					 struct twl_store *store,
					 const struct twl_route *const *routes)
{
	struct twl_server *srv = calloc(1, sizeof(*srv));
	struct twl_writer_opts wo;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	int ret;

	if (!srv)
		return NULL;
	srv->cfg = *cfg;
	srv->store = store;
	srv->routes = routes;
	pthread_mutex_init(&srv->ip_lock, NULL);
	if (twl_parse_addr_port(cfg->listen, &ss, NULL)) {
		twl_log(LOG_ERR,
			"cannot parse --listen '%s': use 127.0.0.1:8443 or [::1]:8443",
			cfg->listen);
		errno = EINVAL;
		goto fail;
	}
	ret = read_tls_files(srv);
	if (ret) {
		twl_log(LOG_ERR, "cannot read TLS files (%s, %s%s%s): %s",
			cfg->cert_file, cfg->key_file,
			cfg->client_ca_file[0] ? ", " : "", cfg->client_ca_file,
			strerror(-ret));
		errno = -ret;
		goto fail;
	}
	srv->metrics = twl_metrics_new();
	srv->host_rl = twl_ratelimit_new(cfg->host_rate, cfg->host_burst);
	srv->ip_rl = twl_ratelimit_new(cfg->ip_rate, cfg->ip_burst);
	wo.commit_max = cfg->commit_max;
	wo.queue_max = cfg->queue_max;
	wo.batch_days = cfg->batch_days;
	wo.data_days = cfg->data_days;
	srv->writer = srv->metrics ? twl_writer_new(store, srv->metrics, &wo) :
				     NULL;
	if (!srv->metrics || !srv->host_rl || !srv->ip_rl || !srv->writer) {
		twl_log(LOG_ERR, "cannot set up the server: %s",
			strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	srv->d = start_daemon(srv, &ss);
	if (!srv->d) {
		twl_log(LOG_ERR,
			"cannot listen on %s with TLS (address in use? bad certificate or tls-priorities?)",
			cfg->listen);
		errno = EADDRINUSE;
		goto fail;
	}
	di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = di ? di->port : 0;
	return srv;
fail:
	twl_server_free(srv);
	return NULL;
}

/* Contract: see server.h. */
void twl_server_free(struct twl_server *srv)
{
	if (!srv)
		return;
	/*
	 * The writer first: it commits every queued batch and completes its
	 * deferred answer, so no connection is left suspended when the
	 * daemon stops (libmicrohttpd forbids that).
	 */
	twl_writer_stop(srv->writer);
	if (srv->d)
		MHD_stop_daemon(srv->d);
	twl_writer_free(srv->writer);
	twl_ratelimit_free(srv->host_rl);
	twl_ratelimit_free(srv->ip_rl);
	twl_metrics_free(srv->metrics);
	free(srv->cert_pem);
	free(srv->key_pem);
	free(srv->client_ca_pem);
	pthread_mutex_destroy(&srv->ip_lock);
	free(srv);
}
