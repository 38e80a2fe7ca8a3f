// SPDX-License-Identifier: GPL-2.0
/* A TLS client for hostile requests (raw_tls.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "raw_tls.h"

struct raw_tls {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static int tcp(uint16_t port, const char *src)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (src) {
		struct sockaddr_in s = { .sin_family = AF_INET };

		inet_pton(AF_INET, src, &s.sin_addr);
		if (bind(fd, (struct sockaddr *)&s, sizeof(s)) < 0)
			goto fail;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
fail:
	close(fd);
	return -1;
}

struct raw_tls *raw_tls_connect(uint16_t port, const char *src,
				const char *ca_file, const char *cipher_12)
{
	struct raw_tls *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	signal(SIGPIPE, SIG_IGN); /* a closed connection is an answer here */
	t->fd = tcp(port, src);
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (t->fd < 0 || !t->ctx)
		goto fail;
	if (ca_file) {
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
		if (SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL) != 1)
			goto fail;
	}
	if (cipher_12 &&
	    (!SSL_CTX_set_max_proto_version(t->ctx, TLS1_2_VERSION) ||
	     SSL_CTX_set_cipher_list(t->ctx, cipher_12) != 1))
		goto fail;
	t->ssl = SSL_new(t->ctx);
	if (!t->ssl || SSL_set_fd(t->ssl, t->fd) != 1 ||
	    SSL_set_tlsext_host_name(t->ssl, "localhost") != 1 ||
	    SSL_connect(t->ssl) != 1)
		goto fail;
	return t;
fail:
	ERR_clear_error();
	raw_tls_free(t);
	errno = ECONNREFUSED;
	return NULL;
}

int raw_tls_write(struct raw_tls *t, const void *p, size_t n)
{
	while (n) {
		int w = SSL_write(t->ssl, p, (int)n);

		if (w <= 0) {
			ERR_clear_error();
			return -EPIPE;
		}
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t raw_tls_read(struct raw_tls *t, char *buf, size_t cap, int timeout_ms)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	int r;

	buf[0] = '\0';
	if (!SSL_pending(t->ssl) && poll(&p, 1, timeout_ms) == 0)
		return -ETIMEDOUT;
	r = SSL_read(t->ssl, buf, (int)cap - 1);
	if (r <= 0) {
		int e = SSL_get_error(t->ssl, r);

		ERR_clear_error();
		/* a TLS record may come in pieces: nothing whole yet */
		if (e == SSL_ERROR_WANT_READ)
			return raw_tls_read(t, buf, cap, timeout_ms);
		return 0;
	}
	buf[r] = '\0';
	return r;
}

/* Whether @buf (NUL ended) holds the headers and the body they announce. */
static bool complete(const char *buf)
{
	const char *end = strstr(buf, "\r\n\r\n"), *cl;

	if (!end)
		return false;
	cl = strcasestr(buf, "\r\nContent-Length:");
	if (!cl || cl > end)
		return true;
	return strlen(end + 4) >= strtoul(cl + 17, NULL, 10);
}

int raw_tls_response(struct raw_tls *t, char *buf, size_t cap, int timeout_ms)
{
	size_t len = 0;

	buf[0] = '\0';
	while (len + 1 < cap && !complete(buf)) {
		ssize_t n = raw_tls_read(t, buf + len, cap - len, timeout_ms);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (strncmp(buf, "HTTP/1.", 7) || len < 12)
		return 0;
	return atoi(buf + 9);
}

bool raw_tls_closed(struct raw_tls *t, int timeout_ms)
{
	char buf[4096];

	for (;;) {
		ssize_t n = raw_tls_read(t, buf, sizeof(buf), timeout_ms);

		if (n == 0)
			return true;
		if (n < 0)
			return false;
	}
}

int raw_tls_fd(const struct raw_tls *t)
{
	return t->fd;
}

void raw_tls_free(struct raw_tls *t)
{
	if (!t)
		return;
	if (t->ssl)
		SSL_free(t->ssl);
	if (t->ctx)
		SSL_CTX_free(t->ctx);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}
