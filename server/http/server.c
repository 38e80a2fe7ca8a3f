// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTPS daemon: libmicrohttpd (GnuTLS) with limits set at start, its
 * connections (counted per peer key, watched for deadlines), and the
 * accessors handlers use. The request lifecycle is request.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <twilight/util.h>

#include "api/metrics.h"
#include "http/conntrack.h"
#include "http/key_cache.h"
#include "http/ratelimit.h"
#include "http/server_internal.h"
#include "http/server_state.h"
#include "http/tls.h"

/* Seconds a body may take before min-rate applies (watch.h). */
#define MIN_RATE_GRACE 5.0
/* How long a stop waits for the requests under way to be answered, ms. */
#define STOP_GRACE_MS 2000

/* Contract: see server_state.h. */
double twl_mono_now(void)
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
void *twl_server_app_state(struct twl_server *srv)
{
	return srv->app_state;
}

/* Contract: see server_internal.h. */
unsigned twl_server_host_rate(struct twl_server *srv, const char *host_id)
{
	return twl_ratelimit_take(srv->host_rl, host_id, twl_mono_now());
}

/* Contract: see server_internal.h. */
void twl_server_forget_host_keys(struct twl_server *srv, const char *host_id)
{
	if (srv->keys)
		twl_key_cache_forget_host(srv->keys, host_id);
}

/* Contract: see server_internal.h. */
unsigned twl_server_enroll_rate(struct twl_server *srv, int64_t token_id)
{
	char key[32];

	snprintf(key, sizeof(key), "token:%lld", (long long)token_id);
	return twl_ratelimit_take(srv->enroll_rl, key, twl_mono_now());
}

/* Contract: see server_internal.h. */
int64_t twl_server_cert_not_after(const struct twl_server *srv)
{
	return srv->cert_not_after;
}

/* What the operator should hear of the certificate's expiry, or "". */
static void cert_warning(const struct twl_server *srv, int64_t now, char *out,
			 size_t cap)
{
	static const char renew[] =
		"renew it (a generated one: remove it and its key and restart, the CA stays; your own: replace cert and key and restart)";
	int64_t left = srv->cert_not_after - now;

	out[0] = '\0';
	if (!srv->cert_not_after || left >= TWL_CERT_WARN_DAYS * 86400LL)
		return;
	if (left < 0)
		snprintf(
			out, cap,
			"the server certificate %.300s has expired: agents refuse it; %s",
			srv->cfg.cert_file, renew);
	else
		snprintf(
			out, cap,
			"the server certificate %.300s expires in %lld days: %s before then",
			srv->cfg.cert_file, (long long)(left / 86400), renew);
}

/* Contract: see server_internal.h. */
json_t *twl_server_cert_json(const struct twl_server *srv, int64_t now)
{
	char warn[640];

	cert_warning(srv, now, warn, sizeof(warn));
	if (!srv->cert_not_after)
		return json_pack("{ss so so so}", "file", srv->cfg.cert_file,
				 "not_after", json_null(), "days_left",
				 json_null(), "warning", json_null());
	return json_pack("{ss sI sI ss?}", "file", srv->cfg.cert_file,
			 "not_after", (json_int_t)srv->cert_not_after,
			 "days_left",
			 (json_int_t)((srv->cert_not_after - now) / 86400),
			 "warning", warn[0] ? warn : NULL);
}

static void sock_opened(struct twl_server *srv, struct MHD_Connection *mc,
			void **socket_ctx)
{
	const union MHD_ConnectionInfo *addr =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct twl_sock *s = calloc(1, sizeof(*s));

	if (!s || !fd) {
		/* unwatched and uncounted cannot stay: end it now */
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);
		free(s);
		return;
	}
	twl_peer_of(addr ? addr->client_addr : NULL, &s->peer);
	/*
	 * on_accept() checked the count without taking a place, so two
	 * threads may both have let one more in: the place is taken here,
	 * and a connection that finds none ends at once.
	 */
	if (twl_server_limits(srv, &s->peer)) {
		if (twl_conntrack_add(srv->conns, s->peer.key,
				      srv->cfg.max_per_ip)) {
			twl_metrics_reject(srv->metrics, "rate_limited");
			shutdown(fd->connect_fd, SHUT_RDWR);
		} else {
			s->counted = true;
		}
	}
	twl_watch_add(srv->watch, &s->w, fd->connect_fd, twl_mono_now());
	*socket_ctx = s;
}

static void on_connection(void *cls, struct MHD_Connection *mc,
			  void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct twl_server *srv = cls;
	struct twl_sock *s = *socket_ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		sock_opened(srv, mc, socket_ctx);
		return;
	}
	if (!s)
		return;
	/* before libmicrohttpd closes the socket (watch.c relies on it) */
	twl_watch_remove(srv->watch, &s->w);
	if (s->counted)
		twl_conntrack_del(srv->conns, s->peer.key);
	free(s);
	*socket_ctx = NULL;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
				 socklen_t addrlen)
{
	struct twl_server *srv = cls;
	struct twl_peer peer;

	twl_peer_of(addr, &peer);
	if (!twl_server_limits(srv, &peer) ||
	    twl_conntrack_count(srv->conns, peer.key) < srv->cfg.max_per_ip)
		return MHD_YES;
	twl_metrics_reject(srv->metrics, "rate_limited");
	return MHD_NO;
}

/* The watch closed a connection (its thread). */
static void on_watch_close(void *arg, enum twl_watch_why why)
{
	struct twl_server *srv = arg;

	twl_metrics_reject(srv->metrics, "too_slow");
}

/* Contract: see server.h. */
struct twl_server *twl_server_new(const struct twl_config *cfg,
				  struct twl_store *store)
{
	return twl_server_new_app(cfg, store, &twl_api_app);
}

/* Contract: see server.h. */
struct twl_server *twl_server_new_routes(const struct twl_config *cfg,
					 struct twl_store *store,
					 const struct twl_route *const *routes)
{
	const struct twl_app app = { .routes = routes };

	return twl_server_new_app(cfg, store, &app);
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
	OPT(MHD_OPTION_NOTIFY_COMPLETED, twl_on_completed, srv);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv);
	OPT(MHD_OPTION_URI_LOG_CALLBACK, twl_on_uri, srv);
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	return MHD_start_daemon(flags, 0, on_accept, srv, twl_on_request, srv,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

/*
 * Limits, metrics and the watch for srv, then the application's state;
 * 0 or -errno (logged).
 */
static int setup(struct twl_server *srv)
{
	const struct twl_config *cfg = &srv->cfg;
	struct twl_watch_opts wo = { .request_timeout = cfg->request_timeout_s,
				     .min_rate = (double)cfg->min_rate,
				     .grace = MIN_RATE_GRACE };

	srv->metrics = twl_metrics_new();
	srv->host_rl = twl_ratelimit_new(cfg->host_rate, cfg->host_burst);
	srv->ip_rl = twl_ratelimit_new(cfg->ip_rate, cfg->ip_burst);
	srv->enroll_rl = twl_ratelimit_new(cfg->enroll_rate, cfg->enroll_burst);
	if (cfg->key_cache_s)
		srv->keys = twl_key_cache_new(cfg->key_cache_s);
	/* a key holds a place only while it has a connection */
	srv->conns = twl_conntrack_new(cfg->max_connections + 64);
	srv->watch = twl_watch_new(&wo, on_watch_close, srv, true);
	if (!srv->metrics || !srv->host_rl || !srv->ip_rl || !srv->enroll_rl ||
	    !srv->conns || !srv->watch || (cfg->key_cache_s && !srv->keys)) {
		twl_log(LOG_ERR, "cannot set up the server: %s",
			strerror(errno ? errno : ENOMEM));
		return -(errno ? errno : ENOMEM);
	}
	return srv->app.start ? srv->app.start(srv, &srv->app_state) : 0;
}

/* Contract: see server.h. */
struct twl_server *twl_server_new_app(const struct twl_config *cfg,
				      struct twl_store *store,
				      const struct twl_app *app)
{
	struct twl_server *srv = calloc(1, sizeof(*srv));
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	int ret;

	if (!srv)
		return NULL;
	srv->cfg = *cfg;
	srv->store = store;
	srv->app = *app;
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
	if (!twl_tls_not_after(srv->cert_pem, &srv->cert_not_after)) {
		char warn[640];

		cert_warning(srv, time(NULL), warn, sizeof(warn));
		if (warn[0])
			twl_log(LOG_WARNING, "%s", warn);
	}
	ret = setup(srv);
	if (ret) {
		errno = -ret;
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
	if (!cfg->limit_loopback)
		twl_log(LOG_INFO,
			"loopback peers are exempt from the per-address limits (max-per-ip, ip-rate, ip-burst): limit-loopback = false");
	return srv;
fail:
	twl_server_free(srv);
	return NULL;
}

/*
 * Before the daemon stops (it closes every connection at once): give the
 * requests under way up to STOP_GRACE_MS to be answered. The drain ended
 * the application's long reads, so such a request answers quickly (503
 * "stopping") instead of losing its connection with no answer.
 */
static void finish_requests(struct twl_server *srv)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	uint64_t until = twl_mono_ms() + STOP_GRACE_MS;

	while (atomic_load(&srv->requests) && twl_mono_ms() < until)
		nanosleep(&tick, NULL);
}

/* Contract: see server.h. */
void twl_server_free(struct twl_server *srv)
{
	if (!srv)
		return;
	/*
	 * The application first: it completes every deferred answer it owes
	 * (twilight's writer commits every queued batch), so no connection
	 * is left suspended when the daemon stops (libmicrohttpd forbids
	 * that).
	 */
	if (srv->app.drain)
		srv->app.drain(srv->app_state);
	if (srv->d) {
		finish_requests(srv);
		MHD_stop_daemon(srv->d);
	}
	if (srv->app.free)
		srv->app.free(srv->app_state);
	twl_watch_free(srv->watch);
	twl_conntrack_free(srv->conns);
	twl_ratelimit_free(srv->host_rl);
	twl_ratelimit_free(srv->ip_rl);
	twl_ratelimit_free(srv->enroll_rl);
	twl_key_cache_free(srv->keys);
	twl_metrics_free(srv->metrics);
	free(srv->cert_pem);
	free(srv->key_pem);
	free(srv->client_ca_pem);
	free(srv);
}
