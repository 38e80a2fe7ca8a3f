/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal non-blocking HTTP/1.1-over-TLS client for the server load
 * benchmark: one keep-alive connection per simulated agent, one request in
 * flight on it, driven by the caller's edge-triggered epoll.
 *
 * Why not libcurl (which the agent uses, and which this benchmark used up
 * to 2026-12-03): the load generator shares the machine's two cores with
 * the server it measures, and libcurl's per-request work (header building,
 * its connection cache, socket callbacks) was ~60% of the load generator's
 * CPU, ~75 us of every report. This client does only what the benchmark
 * needs: POST a prepared request, read one answer framed by
 * Content-Length. TLS is OpenSSL with the server's certificate verified
 * against the given CA and the URL's host, as libcurl did.
 *
 * Limits, all answered with an error rather than guessed around: the URL
 * is https://HOST:PORT with a numeric host, as twl_parse_addr_port()
 * takes it (the server's --listen); answers are at most
 * TLC_IN_CAP - 1 bytes with headers and must carry Content-Length (no
 * chunked encoding: libmicrohttpd sends a length for every answer the
 * server makes).
 */
#ifndef TWL_BENCH_TLS_CLIENT_H
#define TWL_BENCH_TLS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <openssl/ssl.h>

#define TLC_IN_CAP 4096

struct tlc_ctx {
	SSL_CTX *ssl;
	int epfd; /* sockets are added here, EPOLLIN|EPOLLOUT|EPOLLET */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char host[64]; /* the URL's address as text, for verification */
	char authority[80]; /* Host: header value */
};

enum tlc_state {
	TLC_CLOSED, /* no connection */
	TLC_CONNECTING, /* TCP connect in progress */
	TLC_HANDSHAKE, /* TLS handshake in progress */
	TLC_SEND, /* request being written */
	TLC_RECV, /* answer being read */
	TLC_IDLE, /* connected, answer complete, ready for the next */
};

struct tlc_conn {
	int fd;
	SSL *ssl;
	enum tlc_state state;
	void *owner; /* the epoll event's data.ptr */
	const char *out; /* the request, owned by the caller */
	size_t out_len, out_off;
	bool reused; /* the request went out on a kept connection */
	bool peer_close; /* the answer said Connection: close */
	char in[TLC_IN_CAP];
	size_t in_len, hdr_len, body_len;
	int status;
	unsigned long connects; /* TCP connections opened so far */
	const char *why; /* on failure: what failed, for the caller's log */
};

/*
 * tlc_ctx_init - parse url ("https://HOST:PORT", numeric IPv4 or [IPv6]
 * host), load cafile as the only trust anchor and remember epfd. Returns 0
 * or -EINVAL (bad URL), -EIO (TLS set-up or CA file failed; OpenSSL's
 * error queue says why).
 */
int tlc_ctx_init(struct tlc_ctx *ctx, const char *url, const char *cafile,
		 int epfd);

/* tlc_ctx_fini - free what tlc_ctx_init made. */
void tlc_ctx_fini(struct tlc_ctx *ctx);

/* tlc_conn_init - an unconnected connection; owner becomes data.ptr. */
void tlc_conn_init(struct tlc_conn *c, void *owner);

/*
 * tlc_request - start sending req (len bytes, kept by the caller until the
 * answer is complete), connecting first when there is no connection, and
 * make as much progress as the sockets allow. Returns what tlc_progress
 * returns.
 */
int tlc_request(struct tlc_ctx *ctx, struct tlc_conn *c, const char *req,
		size_t len);

/*
 * tlc_progress - advance c after an epoll event (or a new request) until
 * it would block. Returns 1 when the answer is complete (c->status, and
 * tlc_body), 0 when waiting for the socket, or -errno when the exchange
 * failed (c->why says where); the connection is then closed.
 */
int tlc_progress(struct tlc_ctx *ctx, struct tlc_conn *c);

/* tlc_body - the complete answer's body, NUL-terminated; len may be NULL. */
const char *tlc_body(const struct tlc_conn *c, size_t *len);

/* tlc_close - close c's connection, if any. */
void tlc_close(struct tlc_conn *c);

#endif
