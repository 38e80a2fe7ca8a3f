// SPDX-License-Identifier: GPL-2.0
/* HTTPS POST and GET with libcurl, gzip bodies, Retry-After and answer classification. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <zlib.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "transport.h"

struct twl_transport {
	CURL *curl;
	char *url_base;
	char *ca_file, *client_cert, *client_key;
	unsigned connect_timeout_ms, timeout_ms;
};

static bool starts_with_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* Contract: see transport.h. */
struct twl_transport *twl_transport_new(const struct twl_transport_cfg *cfg)
{
	struct twl_transport *t;
	size_t ul;

	if (!cfg || !cfg->server_url || !cfg->ca_file || !cfg->ca_file[0] ||
	    !starts_with_ci(cfg->server_url, "https://") ||
	    !cfg->client_cert != !cfg->client_key) {
		errno = EINVAL;
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errno = ENOMEM;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	t->url_base = strdup(cfg->server_url);
	t->ca_file = strdup(cfg->ca_file);
	t->client_cert = cfg->client_cert ? strdup(cfg->client_cert) : NULL;
	t->client_key = cfg->client_key ? strdup(cfg->client_key) : NULL;
	t->curl = curl_easy_init();
	if (!t->url_base || !t->ca_file || !t->curl ||
	    (cfg->client_cert && !t->client_cert) ||
	    (cfg->client_key && !t->client_key))
		goto nomem;
	ul = strlen(t->url_base);
	while (ul && t->url_base[ul - 1] == '/')
		t->url_base[--ul] = 0;
	t->connect_timeout_ms =
		cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 10000;
	t->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 30000;
	return t;
nomem:
	twl_transport_free(t);
	curl_global_cleanup();
	errno = ENOMEM;
	return NULL;
}

/* Contract: see transport.h. */
void twl_transport_free(struct twl_transport *t)
{
	if (!t)
		return;
	if (t->curl) {
		curl_easy_cleanup(t->curl);
		curl_global_cleanup();
	}
	free(t->url_base);
	free(t->ca_file);
	free(t->client_cert);
	free(t->client_key);
	free(t);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct twl_http_result *res = ud;
	size_t n = size * nmemb, room = TWL_HTTP_MAX_BODY - res->body_len;

	if (n > room) {
		res->body_truncated = true;
		n = room;
	}
	memcpy(res->body + res->body_len, ptr, n);
	res->body_len += n;
	res->body[res->body_len] = 0;
	return size * nmemb;
}

static size_t on_header(char *ptr, size_t size, size_t nitems, void *ud)
{
	struct twl_http_result *res = ud;
	size_t n = size * nitems;
	const char *name = "retry-after:";
	size_t nl = strlen(name), vl;
	const char *v;

	/* A new status line (e.g. after "100 Continue") resets headers. */
	if (n >= 5 && !strncmp(ptr, "HTTP/", 5))
		res->retry_after[0] = 0;
	if (n <= nl || strncasecmp(ptr, name, nl))
		return n;
	v = ptr + nl;
	vl = n - nl;
	while (vl && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl && isspace((unsigned char)v[vl - 1]))
		vl--;
	if (vl >= sizeof(res->retry_after))
		vl = sizeof(res->retry_after) - 1;
	memcpy(res->retry_after, v, vl);
	res->retry_after[vl] = 0;
	return n;
}

/* The request's headers into *@out (free with curl_slist_free_all). */
static int make_headers(bool gzip, const char *auth, struct curl_slist **out)
{
	struct curl_slist *hdrs = NULL, *h;

	h = curl_slist_append(hdrs, "Content-Type: application/json");
	if (h)
		hdrs = h;
	if (h && gzip) {
		h = curl_slist_append(hdrs, "Content-Encoding: gzip");
		if (h)
			hdrs = h;
	}
	if (h && auth) {
		h = curl_slist_append(hdrs, auth);
		if (h)
			hdrs = h;
	}
	if (h) /* no "Expect: 100-continue" round trip */
		h = curl_slist_append(hdrs, "Expect:");
	if (!h) {
		curl_slist_free_all(hdrs);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

/*
 * A GET's body goes to a capped buffer: past its cap the transfer is
 * aborted (a short write makes curl fail it), so nothing partial is
 * taken for an answer.
 */
struct get_sink {
	struct twl_buf *body;
	struct twl_http_result *res;
};

static size_t on_get_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct get_sink *g = ud;

	if (twl_buf_append(g->body, ptr, size * nmemb)) {
		g->res->body_truncated = true;
		return 0;
	}
	return size * nmemb;
}

/*
 * Every option of one request to @url: a POST of @len bytes at @body, or
 * with @body NULL a GET whose answer goes to @get.
 */
static void set_options(struct twl_transport *t, const char *url,
			const void *body, size_t len, struct curl_slist *hdrs,
			struct twl_http_result *res, char *errbuf,
			struct get_sink *get)
{
	CURL *c = t->curl;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	/*
	 * Trust ca_file and nothing else: libcurl also searches its
	 * compiled-in CA directory (Debian's: /etc/ssl/certs, every system
	 * CA, a TLS-inspection proxy's included) unless CURLOPT_CAPATH is
	 * NULL, and CURLSSLOPT_NATIVE_CA would add the OS store; 0 keeps
	 * it off.
	 */
	curl_easy_setopt(c, CURLOPT_CAINFO, t->ca_file);
	curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	curl_easy_setopt(c, CURLOPT_SSL_OPTIONS, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (t->client_cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, t->client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, t->client_key);
	}
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)t->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)t->timeout_ms);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)len);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, res);
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_get_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, get);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT,
			 "twilight-agent/" TWL_AGENT_VERSION);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, res);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
}

/* One request (see set_options()); fills @res. */
static int perform(struct twl_transport *t, const char *path,
		   const char *bearer, const void *body, size_t len, bool gzip,
		   struct twl_http_result *res, struct get_sink *get)
{
	struct curl_slist *hdrs = NULL;
	char *url = NULL, *auth = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode cc;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (asprintf(&url, "%s%s", t->url_base, path) < 0) {
		url = NULL;
		return -ENOMEM;
	}
	if (bearer && asprintf(&auth, "Authorization: Bearer %s", bearer) < 0) {
		auth = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = make_headers(gzip, auth, &hdrs);
	if (ret)
		goto out;
	set_options(t, url, body, len, hdrs, res, errbuf, get);
	cc = curl_easy_perform(t->curl);
	res->curl_code = (int)cc;
	if (cc != CURLE_OK) {
		/* A truncated answer is not an answer: the batch is retried. */
		res->status = 0;
		snprintf(res->error, sizeof(res->error), "%s: %.200s",
			 curl_easy_strerror(cc),
			 errbuf[0] ? errbuf : "no detail");
		ret = -EIO;
	} else {
		curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE,
				  &res->status);
	}
	curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, NULL);
out:
	curl_slist_free_all(hdrs);
	free(url);
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	return ret;
}

/* Contract: see transport.h. */
int twl_transport_post(struct twl_transport *t, const char *path,
		       const char *bearer, const void *body, size_t len,
		       bool gzip, struct twl_http_result *res)
{
	return perform(t, path, bearer, body, len, gzip, res, NULL);
}

/* Contract: see transport.h. */
int twl_transport_get(struct twl_transport *t, const char *path,
		      const char *bearer, struct twl_buf *body,
		      struct twl_http_result *res)
{
	struct get_sink g = { .body = body, .res = res };
	int ret;

	twl_buf_reset(body);
	ret = perform(t, path, bearer, NULL, 0, false, res, &g);
	if (ret == -EIO && res->body_truncated)
		snprintf(res->error, sizeof(res->error),
			 "the answer is larger than %zu bytes", body->max);
	return ret;
}

/* Contract: see transport.h. */
int twl_gzip(const void *in, size_t len, unsigned char **out, size_t *out_len)
{
	z_stream zs = { 0 };
	unsigned char *buf;
	uLong bound;
	int zr;

	*out = NULL;
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len) + 32;
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	zr = deflate(&zs, Z_FINISH);
	deflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = zs.total_out;
	return 0;
}

/* Contract: see transport.h. */
int twl_retry_after_ms(const char *value, int64_t now_s, uint64_t cap_ms,
		       uint64_t *ms)
{
	uint64_t v = 0;
	const char *p = value;

	if (!value || !*value)
		return -EINVAL;
	if (isdigit((unsigned char)*p)) {
		for (; isdigit((unsigned char)*p); p++) {
			if (v > cap_ms / 1000 + 1)
				v = cap_ms / 1000 +
				    1; /* saturate, no overflow */
			else
				v = v * 10 + (uint64_t)(*p - '0');
		}
		if (*p)
			return -EINVAL;
		v *= 1000;
	} else {
		time_t when = curl_getdate(value, NULL);

		if (when == (time_t)-1)
			return -EINVAL;
		v = (int64_t)when > now_s ?
			    (uint64_t)((int64_t)when - now_s) * 1000 :
			    0;
	}
	*ms = v > cap_ms ? cap_ms : v;
	return 0;
}

/* Contract: see transport.h. */
const char *twl_error_code(const char *body, size_t len, char *out, size_t cap)
{
	json_t *doc;
	const char *code;

	if (!cap)
		return out;
	out[0] = 0;
	doc = json_loadb(body, len, JSON_DISABLE_EOF_CHECK, NULL);
	if (!doc)
		return out;
	code = json_is_object(doc) ?
		       json_string_value(json_object_get(doc, "error")) :
		       NULL;
	if (code)
		snprintf(out, cap, "%s", code);
	json_decref(doc);
	return out;
}

/*
 * The wire validator's codes that judge a document's content (wire.h);
 * unsupported_version is not one: a newer agent waits for the server.
 */
static const char *const content_codes[] = {
	TWL_VERR_INVALID_JSON,	  TWL_VERR_WRONG_TYPE,
	TWL_VERR_MISSING_FIELD,	  TWL_VERR_UNKNOWN_FIELD,
	TWL_VERR_UNKNOWN_FEATURE, TWL_VERR_TOO_LONG,
	TWL_VERR_INVALID_UTF8,	  TWL_VERR_TOO_MANY,
	TWL_VERR_OUT_OF_RANGE,	  TWL_VERR_BAD_VALUE,
	TWL_VERR_TOO_DEEP,
};

/* Is @res's JSON body's "error" @code? */
static bool error_is(const struct twl_http_result *res, const char *code)
{
	char got[64];

	twl_error_code(res->body, res->body_len, got, sizeof(got));
	return !strcmp(got, code);
}

/* Does @res's JSON body name a validator code judging the content? */
static bool content_rejected(const struct twl_http_result *res)
{
	for (size_t i = 0; i < sizeof(content_codes) / sizeof(content_codes[0]);
	     i++)
		if (error_is(res, content_codes[i]))
			return true;
	return false;
}

/* Contract: see transport.h. */
enum twl_verdict twl_classify(const struct twl_http_result *res)
{
	long st = res->status;

	if (st >= 200 && st <= 299)
		return TWL_V_DELIVERED;
	if (st == 401 || st == 403)
		return TWL_V_KEY_REJECTED;
	if (st == 413)
		return TWL_V_SPLIT;
	if ((st == 400 || st == 422) && content_rejected(res))
		return TWL_V_QUARANTINE;
	/* another body under this batch id before: judged by content too */
	if (st == 409 && error_is(res, TWL_ERR_BATCH_CONFLICT))
		return TWL_V_QUARANTINE;
	/*
	 * Anything else is no verdict on the batch: network errors, 408,
	 * 429, 5xx, unsupported_version, 1xx/3xx (no redirects are
	 * followed), and the 4xx of a proxy or a wrong server-url (404,
	 * 405, a 400 without the validator's answer). Keep the batch.
	 */
	return TWL_V_RETRY;
}
