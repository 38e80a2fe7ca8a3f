// SPDX-License-Identifier: GPL-2.0
/*
 * The request lifecycle. A request is judged on its headers alone: the
 * per-address rate, its route, its credentials, its declared size and
 * encoding, and the memory bodies may take (body-memory). libmicrohttpd
 * calls twl_on_request() first with the headers only, and an answer
 * queued then makes it discard the body and close the connection after
 * the answer: a refused request never has a byte of its body read into
 * memory. An admitted body is read into a capped buffer, gzip is inflated
 * with a cap, and the handler runs. A handler may defer its answer
 * (http.h): the connection is then suspended until another thread
 * completes the handle, and answered on resume. Every answer built here
 * carries the security headers.
 *
 * Known gap: requests libmicrohttpd refuses before any callback here runs
 * (malformed HTTP, a header block over the connection memory limit, an
 * unsupported HTTP version) get libmicrohttpd's own short fixed error
 * page, without these headers; 0.9.75 offers no hook to add them. Those
 * pages carry no request data, so nothing in them can be injected.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <zlib.h>

#include <twilight/util.h>

#include "api/metrics.h"
#include "http/auth.h"
#include "http/ratelimit.h"
#include "http/server_state.h"

enum conn_state { ST_READING, ST_DEFERRED, ST_DONE };

/* A deferred answer (http.h); part of its connection, so never allocated. */
struct twl_defer {
	const struct twl_defer_ops *ops; /* NULL: no handle handed out */
	void *state; /* from twl_defer_complete(), until ops->release() */
	int result;
	bool completed, suspended; /* under the connection's lock */
};

/* One request (libmicrohttpd's per-request context). */
struct conn {
	struct twl_server *srv;
	struct MHD_Connection *mc;
	struct twl_sock *sock; /* NULL if libmicrohttpd gave none */
	struct twl_request req; /* method, path, peer, caller: admit() */
	const struct twl_route *route;
	struct twl_buf body;
	size_t held; /* bytes of srv->body_bytes this request holds */
	bool too_big, no_room; /* body over max-body, or over body-memory */
	size_t discarded;
	bool timed; /* twl_request_timed() */
	enum conn_state state;
	pthread_mutex_t lock;
	struct twl_defer defer;
	double t0;
};

/* twl_on_uri()'s mark for a URL that holds an encoded NUL. */
static char nul_url;

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

static const char *header(struct conn *c, const char *name)
{
	return MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, name);
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
	twl_metrics_request(c->srv->metrics, resp->status,
			    twl_mono_now() - c->t0, c->timed);
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

/* reject() with a Retry-After of @after seconds. */
static bool reject_retry(struct conn *c, struct twl_response *resp, int status,
			 const char *code, const char *reason, unsigned after)
{
	reject(c, resp, status, code, reason);
	twl_response_header(resp, "Retry-After", "%u", after);
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
	if (c->sock)
		twl_watch_resume(c->srv->watch, &c->sock->w, twl_mono_now());
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
		if (c->sock) /* the server's own time: no deadline */
			twl_watch_body_done(c->srv->watch, &c->sock->w, true);
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

	if (!c->sock || !twl_server_limits(c->srv, &c->sock->peer))
		return true;
	wait = twl_ratelimit_take(c->srv->ip_rl, c->sock->peer.key,
				  twl_mono_now());
	if (!wait)
		return true;
	return reject_retry(c, resp, 429, "rate_limited",
			    "too many requests from this address; retry later",
			    wait);
}

/* The route of req (setting its path_rest), or NULL with a 404/405. */
static const struct twl_route *route_of(struct conn *c, struct twl_request *req,
					struct twl_response *resp)
{
	const struct twl_route *route;
	bool wrong_method;

	route = find_route(c->srv->app.routes, req->method, req->path,
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
	auth = header(c, "Authorization");
	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return reject(c, resp, 401, "unauthorized",
			      "missing 'Authorization: Bearer <token>' header");
	ret = twl_auth_resolve(c->srv->store, c->srv->keys, auth + 7, c->t0,
			       &req->who);
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
	if ((req->who.role == TWL_ROLE_AGENT) !=
		    (route->min_role == TWL_ROLE_AGENT) ||
	    req->who.role < route->min_role)
		return reject(c, resp, 403, "forbidden",
			      "this token's role may not use this endpoint");
	/* agent credentials: enrolment tokens as well as host keys */
	if (req->who.role == TWL_ROLE_AGENT &&
	    c->srv->cfg.require_client_cert && !client_cert_ok(c))
		return reject(
			c, resp, 403, "forbidden",
			"a client certificate signed by client-ca is required");
	return true;
}

/* Count @n more body bytes against body-memory; false when over it. */
static bool hold(struct conn *c, size_t n)
{
	atomic_size_t *total = &c->srv->body_bytes;

	if (atomic_fetch_add(total, n) + n > c->srv->cfg.body_memory) {
		atomic_fetch_sub(total, n);
		return false;
	}
	c->held += n;
	return true;
}

static void release(struct conn *c)
{
	atomic_fetch_sub(&c->srv->body_bytes, c->held);
	c->held = 0;
}

/*
 * What the headers say of the body: an accepted encoding, none at all for
 * a public route, a declared size within max-body, and room for it in
 * body-memory.
 */
static bool body_fits(struct conn *c, struct twl_response *resp)
{
	const char *enc = header(c, "Content-Encoding");
	const char *cl = header(c, "Content-Length");
	uint64_t n = 0;

	if (enc && strcasecmp(enc, "identity") && strcasecmp(enc, "gzip"))
		return reject(c, resp, 415, "bad_encoding",
			      "only gzip and identity are accepted");
	/* public routes (health, dashboard files) take no body from anybody */
	if (c->route->min_role == TWL_ROLE_PUBLIC &&
	    ((cl && strcmp(cl, "0")) || header(c, "Transfer-Encoding"))) {
		c->too_big = true;
		return reject(c, resp, 413, "too_large",
			      "this endpoint takes no request body");
	}
	if (cl &&
	    (twl_parse_u64(cl, UINT64_MAX, &n) || n > c->srv->cfg.max_body)) {
		c->too_big = true;
		return reject(c, resp, 413, "too_large",
			      "request body exceeds max-body");
	}
	if (n && !hold(c, n))
		return reject_retry(
			c, resp, 503, "overloaded",
			"request bodies fill body-memory; retry after the given delay",
			5);
	/*
	 * What a sender declared is held for it; the buffer reserves at
	 * most 64 KiB before the bytes arrive, and a failure there only
	 * means the body grows as it comes.
	 */
	if (n)
		twl_buf_reserve(&c->body, n, 65536);
	return true;
}

/* A request's headers: rate, route, credentials, body. false: resp says no. */
static bool admit(struct conn *c, struct twl_response *resp)
{
	if (!within_ip_rate(c, resp))
		return false;
	c->route = route_of(c, &c->req, resp);
	return c->route && authorize(c, c->route, &c->req, resp) &&
	       body_fits(c, resp);
}

/* The first call for a request, with its headers: admit it or answer. */
static enum MHD_Result start(struct twl_server *srv, struct MHD_Connection *mc,
			     const char *url, const char *method,
			     void **con_cls)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	bool nul = *con_cls == &nul_url;
	struct twl_response resp = { .status = 500 };
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return MHD_NO;
	c->srv = srv;
	c->mc = mc;
	c->t0 = twl_mono_now();
	c->sock = ci ? ci->socket_context : NULL;
	pthread_mutex_init(&c->lock, NULL);
	twl_buf_init(&c->body, srv->cfg.max_body);
	c->req = (struct twl_request){ .method = method,
				       .path = url,
				       .peer = c->sock ? c->sock->peer.text :
							 "?",
				       .priv = c };
	*con_cls = c;
	atomic_fetch_add(&srv->requests, 1); /* twl_on_completed() takes it */
	if (nul)
		return send_error(c, 400, "bad_request",
				  "the URL holds an encoded NUL byte (%00)");
	if (!admit(c, &resp))
		return send_response(c, &resp);
	if (c->sock)
		twl_watch_body(srv->watch, &c->sock->w, c->t0);
	return MHD_YES;
}

/* Body bytes of an admitted request, into its capped buffer. */
static enum MHD_Result take_body(struct conn *c, const char *data, size_t *size)
{
	size_t n = *size, want = c->body.len + n;

	*size = 0;
	if (c->sock)
		twl_watch_bytes(c->srv->watch, &c->sock->w, n);
	/*
	 * libmicrohttpd cannot answer in the middle of a body: past a cap
	 * the rest is discarded and the refusal sent at its end, and a
	 * client that keeps sending far past the cap is disconnected.
	 */
	if (c->too_big || c->no_room) {
		c->discarded += n;
		if (c->discarded > 4 * c->srv->cfg.max_body + (1u << 20)) {
			twl_metrics_reject(c->srv->metrics, "too_large");
			return MHD_NO;
		}
		return MHD_YES;
	}
	if (want > c->held && !hold(c, want - c->held))
		c->no_room = true;
	else if (twl_buf_append(&c->body, data, n))
		c->too_big = true;
	if (c->too_big || c->no_room) {
		twl_buf_fini(&c->body);
		release(c);
	}
	return MHD_YES;
}

/* req's body as sent, or gzip inflated into *inflated (capped). */
static bool decode_body(struct conn *c, struct twl_request *req,
			struct twl_buf *inflated, struct twl_response *resp)
{
	const char *enc = header(c, "Content-Encoding");
	int ret;

	req->body = c->body.data ? c->body.data : "";
	req->body_len = c->body.len;
	if (!enc || !strcasecmp(enc, "identity"))
		return true;
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
	/*
	 * The handler's time is the server's own (a read answer can take
	 * minutes on a large fleet): no deadline until it returns, then the
	 * answer has request_timeout to be sent.
	 */
	if (c->sock)
		twl_watch_body_done(c->srv->watch, &c->sock->w, true);
	ret = route->fn(c->srv, req, resp);
	if (c->sock)
		twl_watch_resume(c->srv->watch, &c->sock->w, twl_mono_now());
	if (ret == TWL_HANDLER_DEFERRED && c->defer.ops) {
		twl_response_fini(resp);
		return defer_wait(c, req->method, req->path);
	}
	if (ret == TWL_HANDLER_DEFERRED)
		ret = -EPROTO; /* deferred without a handle: a handler bug */
	defer_void(c); /* a handle taken but not used is void */
	return answer(c, req->method, req->path, ret, resp);
}

/* An admitted request whose body is complete: decode it, run the handler. */
static enum MHD_Result dispatch(struct conn *c)
{
	struct twl_response resp = { .status = 500 };
	struct twl_buf inflated = { 0 };
	enum MHD_Result ok;

	if (c->sock)
		twl_watch_body_done(c->srv->watch, &c->sock->w, false);
	if (c->too_big)
		return send_error(c, 413, "too_large",
				  "request body exceeds max-body");
	if (c->no_room) {
		reject_retry(
			c, &resp, 503, "overloaded",
			"request bodies fill body-memory; retry after the given delay",
			5);
		return send_response(c, &resp);
	}
	if (!decode_body(c, &c->req, &inflated, &resp))
		return send_response(c, &resp);
	ok = call_handler(c, c->route, &c->req, &resp);
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

/* Contract: see server_state.h. */
enum MHD_Result twl_on_request(void *cls, struct MHD_Connection *mc,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_size, void **con_cls)
{
	struct conn *c = *con_cls;

	if (!c || *con_cls == &nul_url)
		return start(cls, mc, url, method, con_cls);
	if (c->state == ST_DONE) {
		*upload_size = 0; /* answered early: drop the rest */
		return MHD_YES;
	}
	if (c->state == ST_DEFERRED) {
		bool done;

		pthread_mutex_lock(&c->lock);
		done = c->defer.completed;
		pthread_mutex_unlock(&c->lock);
		return done ? defer_answer(c, method, url) : MHD_YES;
	}
	if (*upload_size)
		return take_body(c, upload_data, upload_size);
	return dispatch(c);
}

/* Contract: see server_state.h. */
void twl_on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct conn *c = *con_cls;
	struct twl_sock *sock;

	*con_cls = NULL;
	if (!c || (void *)c == &nul_url)
		return;
	sock = c->sock;
	atomic_fetch_sub(&c->srv->requests, 1);
	twl_buf_fini(&c->body);
	release(c);
	defer_void(c); /* the client went away before the answer */
	pthread_mutex_destroy(&c->lock);
	if (sock) /* the next request on this connection */
		twl_watch_request(c->srv->watch, &sock->w, twl_mono_now());
	free(c);
}

/* Contract: see server_state.h. */
void *twl_on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
	/*
	 * libmicrohttpd decodes %00 into the path (or a query value), and
	 * every C string then ends there: "/index.html%00.js" would be
	 * served as "/index.html". Such a URL is refused whole.
	 */
	return strstr(uri, "%00") ? &nul_url : NULL;
}
