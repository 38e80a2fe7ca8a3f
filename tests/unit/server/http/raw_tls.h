/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A TLS client that sends exactly the bytes a test gives it, when the
 * test gives them: for requests no HTTP library would send (slow headers,
 * a body that never comes, a NUL in the path). OpenSSL, loopback only.
 */
#ifndef TWL_TEST_RAW_TLS_H
#define TWL_TEST_RAW_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct raw_tls;

/*
 * raw_tls_connect - TCP to 127.0.0.1:@port from the loopback address @src
 * (NULL: any), then a TLS handshake (@ca_file: verify the server with it;
 * NULL: no verification). @cipher_12, if not NULL, limits the client to
 * TLS 1.2 with that OpenSSL cipher list. NULL with errno on failure.
 * Ignores SIGPIPE from then on: writes to a closed connection fail.
 */
struct raw_tls *raw_tls_connect(uint16_t port, const char *src,
				const char *ca_file, const char *cipher_12);

/* Send @n bytes: 0, or -EPIPE when the server closed the connection. */
int raw_tls_write(struct raw_tls *t, const void *p, size_t n);

/*
 * Read what arrives within @timeout_ms into @buf (@cap bytes, NUL ended):
 * the byte count, 0 when the server closed the connection, -ETIMEDOUT.
 */
ssize_t raw_tls_read(struct raw_tls *t, char *buf, size_t cap, int timeout_ms);

/*
 * raw_tls_response - read until the server closes, or until the end of
 * the headers and the Content-Length they give, or @timeout_ms: the HTTP
 * status (0 when nothing arrived before the server closed or the time
 * ran out). @buf (@cap) gets what arrived.
 */
int raw_tls_response(struct raw_tls *t, char *buf, size_t cap, int timeout_ms);

/* Whether the server has closed the connection (waits up to @timeout_ms). */
bool raw_tls_closed(struct raw_tls *t, int timeout_ms);

/* The socket, e.g. to close it without a TLS goodbye. */
int raw_tls_fd(const struct raw_tls *t);

void raw_tls_free(struct raw_tls *t);

#endif
