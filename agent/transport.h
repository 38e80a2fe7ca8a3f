/* SPDX-License-Identifier: GPL-2.0 */
/*
 * transport: one HTTPS POST (or GET) to the twilight server with libcurl, and the
 * pure helpers around it (gzip, Retry-After, classifying the answer).
 *
 * TLS: the server certificate is always verified against ca_file and
 * nothing else (no system CA store, no compiled-in CA path; peer and host
 * name), TLS 1.2 or newer, https only, no redirects followed, optional
 * client certificate; proxies come from the usual environment variables
 * (https_proxy, no_proxy: libcurl's default).
 */
#ifndef TWL_AGENT_TRANSPORT_H
#define TWL_AGENT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a response body kept (the rest is discarded). */
#define TWL_HTTP_MAX_BODY 8192

struct twl_transport_cfg {
	const char *server_url; /* "https://host[:port]" (no trailing path) */
	const char *ca_file;
	const char *client_cert, *client_key; /* both or neither */
	unsigned connect_timeout_ms, timeout_ms;
};

struct twl_http_result {
	long status; /* 0 = no HTTP answer (network error) */
	int curl_code; /* CURLcode, 0 = OK */
	char error[256]; /* curl's message for a network error */
	char body[TWL_HTTP_MAX_BODY + 1]; /* NUL-terminated, capped */
	size_t body_len;
	bool body_truncated;
	char retry_after[64]; /* raw Retry-After value, "" if absent */
};

enum twl_verdict {
	TWL_V_DELIVERED, /* 2xx */
	TWL_V_RETRY, /* any answer not below, network errors */
	TWL_V_KEY_REJECTED, /* 401, 403 */
	TWL_V_SPLIT, /* 413 */
	/* 400 or 422 whose JSON body's "error" is a validator code judging
	 * the content (wire.h's TWL_VERR_*, not unsupported_version), or 409
	 * "batch_conflict" (TWL_ERR_BATCH_CONFLICT) */
	TWL_V_QUARANTINE,
};

struct twl_transport;

/*
 * twl_transport_new() - set up a libcurl handle (reused across requests so
 * TLS sessions and connections are kept). Returns NULL and sets errno
 * (EINVAL: missing url/ca_file, non-https url, cert without key).
 */
struct twl_transport *twl_transport_new(const struct twl_transport_cfg *cfg);

/* twl_transport_free() - NULL-safe. */
void twl_transport_free(struct twl_transport *t);

/*
 * twl_transport_post() - POST @len bytes of @body to server_url + @path with
 * "Authorization: Bearer @bearer" (if not NULL), Content-Type
 * application/json and, if @gzip, Content-Encoding: gzip (@body is already
 * compressed). Fills @res. Returns 0 when an HTTP answer arrived (any
 * status), -EIO for a network/TLS error or timeout (res->error says which),
 * -ENOMEM.
 */
int twl_transport_post(struct twl_transport *t, const char *path,
		       const char *bearer, const void *body, size_t len,
		       bool gzip, struct twl_http_result *res);

struct twl_buf;

/*
 * twl_transport_get() - GET server_url + @path with "Authorization: Bearer
 * @bearer" (if not NULL); the answer's body goes to @body (emptied first;
 * its max caps it: a larger answer aborts the transfer). Fills @res (its
 * own body stays empty). Returns as twl_transport_post(); an answer over
 * the cap is -EIO with res->body_truncated set.
 */
int twl_transport_get(struct twl_transport *t, const char *path,
		      const char *bearer, struct twl_buf *body,
		      struct twl_http_result *res);

/*
 * twl_gzip() - compress @len bytes of @in into a new gzip stream (*@out,
 * free() it, length *@out_len). Returns 0, -ENOMEM or -EIO.
 */
int twl_gzip(const void *in, size_t len, unsigned char **out, size_t *out_len);

/*
 * twl_retry_after_ms() - parse a Retry-After value (delta seconds or an
 * HTTP date, compared with @now_s) into milliseconds, capped at @cap_ms. A
 * date in the past gives 0. Returns 0 or -EINVAL for an unparseable value.
 */
int twl_retry_after_ms(const char *value, int64_t now_s, uint64_t cap_ms,
		       uint64_t *ms);

/*
 * twl_classify() - decide what a result means for the batch (the rules in
 * sender.h). @res->status 0 means a network error.
 */
enum twl_verdict twl_classify(const struct twl_http_result *res);

/*
 * twl_error_code() - the "error" member of a JSON error body into @out
 * ("" if the body is not such a JSON object). Returns @out.
 */
const char *twl_error_code(const char *body, size_t len, char *out, size_t cap);

#endif /* TWL_AGENT_TRANSPORT_H */
