// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal non-blocking HTTP/1.1-over-TLS client of the server load
 * benchmark. See tls_client.h for what it does and does not do.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <twilight/util.h>

#include "tls_client.h"

/* Contract: see tls_client.h. */
int tlc_ctx_init(struct tlc_ctx *ctx, const char *url, const char *cafile,
		 int epfd)
{
	in_port_t port;
	size_t n;
	void *ip;

	memset(ctx, 0, sizeof(*ctx));
	ctx->epfd = epfd;
	if (strncmp(url, "https://", 8))
		return -EINVAL;
	/* HOST:PORT, as the server's --listen takes it, then the Host: */
	n = strlen(url + 8);
	if (n && url[8 + n - 1] == '/')
		n--;
	if (!n || n >= sizeof(ctx->authority))
		return -EINVAL;
	memcpy(ctx->authority, url + 8, n);
	ctx->authority[n] = 0;
	if (twl_parse_addr_port(ctx->authority, &ctx->addr, &ctx->addrlen))
		return -EINVAL;
	if (ctx->addr.ss_family == AF_INET6) {
		ip = &((struct sockaddr_in6 *)&ctx->addr)->sin6_addr;
		port = ((struct sockaddr_in6 *)&ctx->addr)->sin6_port;
	} else {
		ip = &((struct sockaddr_in *)&ctx->addr)->sin_addr;
		port = ((struct sockaddr_in *)&ctx->addr)->sin_port;
	}
	/* the address as text, for the certificate check */
	if (!port ||
	    !inet_ntop(ctx->addr.ss_family, ip, ctx->host, sizeof(ctx->host)))
		return -EINVAL;

	ctx->ssl = SSL_CTX_new(TLS_client_method());
	if (!ctx->ssl)
		return -EIO;
	SSL_CTX_set_min_proto_version(ctx->ssl, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx->ssl, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ctx->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE |
					   SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/*
	 * One read() takes what the socket holds, not a record's 5-byte
	 * header and then its body: the server's answer is two records
	 * (head, body), which cost four reads without this. A connection
	 * waits on epoll only after SSL_read() said WANT_READ, so nothing is
	 * left in OpenSSL's buffer while it waits.
	 */
	SSL_CTX_set_read_ahead(ctx->ssl, 1);
	if (SSL_CTX_load_verify_locations(ctx->ssl, cafile, NULL) != 1) {
		tlc_ctx_fini(ctx);
		return -EIO;
	}
	return 0;
}

/* Contract: see tls_client.h. */
void tlc_ctx_fini(struct tlc_ctx *ctx)
{
	SSL_CTX_free(ctx->ssl);
	ctx->ssl = NULL;
}

/* Contract: see tls_client.h. */
void tlc_conn_init(struct tlc_conn *c, void *owner)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->owner = owner;
}

/* Contract: see tls_client.h. */
void tlc_close(struct tlc_conn *c)
{
	if (c->ssl)
		SSL_free(c->ssl);
	if (c->fd >= 0)
		close(c->fd); /* also leaves the epoll set */
	c->ssl = NULL;
	c->fd = -1;
	c->state = TLC_CLOSED;
}

static int fail(struct tlc_conn *c, int err, const char *why)
{
	c->why = why;
	tlc_close(c);
	return err;
}

static int open_socket(struct tlc_ctx *ctx, struct tlc_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET,
				  .data.ptr = c->owner };
	int one = 1;

	c->fd = socket(ctx->addr.ss_family,
		       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return fail(c, -errno, "socket");
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, c->fd, &ev))
		return fail(c, -errno, "epoll_ctl");
	c->connects++;
	c->state = TLC_HANDSHAKE;
	if (connect(c->fd, (struct sockaddr *)&ctx->addr, ctx->addrlen)) {
		if (errno != EINPROGRESS)
			return fail(c, -errno, "connect");
		c->state = TLC_CONNECTING; /* until epoll says writable */
	}
	c->ssl = SSL_new(ctx->ssl);
	if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1)
		return fail(c, -ENOMEM, "SSL_new");
	/* the URL's host is an address (tlc_ctx_init): check it as one */
	if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), ctx->host) !=
	    1)
		return fail(c, -EINVAL, "certificate address check set-up");
	return 0;
}

/* Contract: see tls_client.h. */
int tlc_request(struct tlc_ctx *ctx, struct tlc_conn *c, const char *req,
		size_t len)
{
	int ret;

	c->out = req;
	c->out_len = len;
	c->out_off = 0;
	c->in_len = c->hdr_len = c->body_len = 0;
	c->status = 0;
	c->peer_close = false;
	c->why = NULL;
	c->reused = c->state == TLC_IDLE;
	if (c->state == TLC_IDLE) {
		c->state = TLC_SEND;
	} else {
		tlc_close(c);
		ret = open_socket(ctx, c);
		if (ret)
			return ret;
	}
	return tlc_progress(ctx, c);
}

/*
 * Parse the header block of c->in (c->hdr_len bytes with the blank line):
 * status, Content-Length, Connection: close. Returns 0 or -EPROTO.
 */
static int parse_head(struct tlc_conn *c)
{
	const char *p = c->in, *end = c->in + c->hdr_len;
	bool have_len = false;

	if (strncmp(p, "HTTP/1.", 7) || c->hdr_len < 16 || p[8] != ' ')
		return -EPROTO;
	c->status = atoi(p + 9);
	if (c->status < 100 || c->status > 599)
		return -EPROTO;
	while ((p = memchr(p, '\n', (size_t)(end - p))) && ++p < end) {
		if (!strncasecmp(p, "content-length:", 15)) {
			char *e = NULL;
			unsigned long v = strtoul(p + 15, &e, 10);

			if (e == p + 15 || v >= TLC_IN_CAP)
				return -EPROTO;
			c->body_len = v;
			have_len = true;
		} else if (!strncasecmp(p, "transfer-encoding:", 18)) {
			return -EPROTO; /* not needed by the benchmark */
		} else if (!strncasecmp(p, "connection:", 11)) {
			const char *eol = memchr(p, '\n', (size_t)(end - p));

			for (const char *q = p + 11; eol && q + 5 <= eol; q++)
				if (!strncasecmp(q, "close", 5))
					c->peer_close = true;
		}
	}
	if (!have_len && c->status != 204 && c->status != 304)
		return -EPROTO;
	return 0;
}

/* Why an SSL call returned r: 0 = try again later, else -errno. */
static int ssl_wait(struct tlc_conn *c, int r)
{
	int e = SSL_get_error(c->ssl, r);

	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !errno))
		return -ECONNRESET;
	return e == SSL_ERROR_SYSCALL ? -errno : -EIO;
}

/* What one step of tlc_progress returns besides -errno: wait, done, go on. */
enum { STEP_WAIT = 0, STEP_ANSWERED = 1, STEP_NEXT = 2 };

/* The TCP connect finished (writable): on to the handshake, or why not. */
static int step_connect(struct tlc_conn *c)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	int err = 0;
	socklen_t el = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el))
		return fail(c, -errno, "connect");
	if (err)
		return fail(c, -err, "connect");
	if (getpeername(c->fd, (struct sockaddr *)&peer, &pl))
		return STEP_WAIT; /* still connecting */
	c->state = TLC_HANDSHAKE;
	return STEP_NEXT;
}

/* Advance the TLS handshake; a failed certificate check says why. */
static int step_handshake(struct tlc_conn *c)
{
	int r, ret;

	errno = 0;
	r = SSL_connect(c->ssl);
	if (r == 1) {
		c->state = TLC_SEND;
		return STEP_NEXT;
	}
	ret = ssl_wait(c, r);
	if (ret && SSL_get_verify_result(c->ssl) != X509_V_OK)
		return fail(c, -EPERM,
			    X509_verify_cert_error_string(
				    SSL_get_verify_result(c->ssl)));
	if (ret)
		return fail(c, ret, "TLS handshake");
	return STEP_WAIT;
}

/*
 * The server closed a kept connection before answering: send the request
 * again, from its start, on a new connection.
 */
static int resend(struct tlc_ctx *ctx, struct tlc_conn *c)
{
	int ret;

	tlc_close(c);
	c->reused = false;
	c->out_off = 0;
	ret = open_socket(ctx, c);
	return ret ? ret : STEP_NEXT;
}

/* Write what is left of the request. */
static int step_send(struct tlc_ctx *ctx, struct tlc_conn *c)
{
	int r, ret;

	errno = 0;
	r = SSL_write(c->ssl, c->out + c->out_off,
		      (int)(c->out_len - c->out_off));
	if (r > 0) {
		c->out_off += (size_t)r;
		if (c->out_off < c->out_len)
			return STEP_NEXT;
		/* no answer yet: epoll says when it comes (a read now would
		 * only say EAGAIN) */
		c->state = TLC_RECV;
		return STEP_WAIT;
	}
	ret = ssl_wait(c, r);
	if (ret == 0)
		return STEP_WAIT;
	if (c->reused && !c->out_off)
		return resend(ctx, c);
	return fail(c, ret, "sending the request");
}

/*
 * The answer's bytes so far are in c->in: parse the head once it is
 * complete, then see whether the body is. Closes the connection after the
 * answer if the server said Connection: close.
 */
static int answer_framed(struct tlc_conn *c)
{
	if (!c->hdr_len) {
		char *e = strstr(c->in, "\r\n\r\n");

		if (!e)
			return STEP_NEXT;
		c->hdr_len = (size_t)(e + 4 - c->in);
		if (parse_head(c))
			return fail(c, -EPROTO, "answer header");
	}
	if (c->in_len < c->hdr_len + c->body_len)
		return STEP_NEXT;
	if (c->in_len > c->hdr_len + c->body_len)
		return fail(c, -EPROTO, "bytes after the answer");
	c->state = TLC_IDLE;
	if (c->peer_close) {
		SSL_free(c->ssl);
		close(c->fd);
		c->ssl = NULL;
		c->fd = -1;
		c->state = TLC_CLOSED;
	}
	return STEP_ANSWERED;
}

/* Read more of the answer. */
static int step_recv(struct tlc_ctx *ctx, struct tlc_conn *c)
{
	int r, ret;

	if (c->in_len >= TLC_IN_CAP - 1)
		return fail(c, -EMSGSIZE, "answer too long");
	errno = 0;
	r = SSL_read(c->ssl, c->in + c->in_len,
		     (int)(TLC_IN_CAP - 1 - c->in_len));
	if (r <= 0) {
		ret = ssl_wait(c, r);
		if (ret == 0)
			return STEP_WAIT;
		if (c->reused && !c->in_len)
			return resend(ctx, c); /* closed before answering */
		return fail(c, ret, "reading the answer");
	}
	c->in_len += (size_t)r;
	c->in[c->in_len] = 0;
	return answer_framed(c);
}

/* Contract: see tls_client.h. */
int tlc_progress(struct tlc_ctx *ctx, struct tlc_conn *c)
{
	int ret = STEP_WAIT;

	for (;;) {
		switch (c->state) {
		case TLC_CONNECTING:
			ret = step_connect(c);
			break;
		case TLC_HANDSHAKE:
			ret = step_handshake(c);
			break;
		case TLC_SEND:
			ret = step_send(ctx, c);
			break;
		case TLC_RECV:
			ret = step_recv(ctx, c);
			break;
		case TLC_CLOSED:
		case TLC_IDLE:
			return 0; /* an event for a connection at rest */
		}
		if (ret != STEP_NEXT)
			return ret;
	}
}

/* Contract: see tls_client.h. */
const char *tlc_body(const struct tlc_conn *c, size_t *len)
{
	if (len)
		*len = c->body_len;
	return c->in + c->hdr_len;
}
