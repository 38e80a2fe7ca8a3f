// SPDX-License-Identifier: GPL-2.0
/*
 * Webhook deliveries with libcurl: one easy handle per attempt (attempts
 * are rare; a handle kept would keep a connection to a receiver open).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "alerts/deliver.h"
#include "alerts/sign.h"

#define URL_MAX 2000

/* Contract: see deliver.h. */
bool twl_webhook_url_ok(const char *url)
{
	size_t n = url ? strlen(url) : 0, i;

	if (n <= 8 || n > URL_MAX || strncmp(url, "https://", 8) ||
	    url[8] == '/')
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)url[i];

		if (c <= 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

/* The answer's body is not read: a receiver's text is not kept. */
static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* Append "@name: @value" to @h; NULL (and @h freed) when out of memory. */
static struct curl_slist *header(struct curl_slist *h, const char *name,
				 const char *value)
{
	struct curl_slist *t;
	char line[160];

	snprintf(line, sizeof(line), "%s: %s", name, value);
	t = curl_slist_append(h, line);
	if (!t)
		curl_slist_free_all(h);
	return t;
}

/* libcurl's progress callback: nonzero cuts the transfer off. */
static int cancelled(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		     curl_off_t un)
{
	const atomic_int *cancel = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return cancel && atomic_load(cancel);
}

static struct curl_slist *headers(const char *secret,
				  const struct twl_alert_event *ev, int64_t now)
{
	char sig[TWL_WEBHOOK_SIG_CAP], ts[24];
	struct curl_slist *h;

	if (twl_webhook_sign(secret, now, ev->body, ev->len, sig))
		return NULL;
	snprintf(ts, sizeof(ts), "%" PRId64, now);
	h = header(NULL, "Content-Type", "application/json");
	if (h)
		h = header(h, "X-Twilight-Event", ev->kind);
	if (h)
		h = header(h, "X-Twilight-Delivery", ev->id);
	if (h)
		h = header(h, "X-Twilight-Timestamp", ts);
	if (h)
		h = header(h, "X-Twilight-Signature", sig);
	return h;
}

/* Contract: see deliver.h. */
int twl_webhook_post(const char *url, const char *secret,
		     const struct twl_alert_event *ev,
		     const struct twl_deliver_opts *o, int64_t now,
		     long *http_status, char *err, size_t cap)
{
	char cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *h;
	CURLcode cc;
	CURL *c;
	int rc;

	*http_status = 0;
	h = headers(secret, ev, now);
	c = h ? curl_easy_init() : NULL;
	if (!c) {
		curl_slist_free_all(h);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)o->timeout_s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)o->timeout_s);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, ev->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)ev->len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "twilight-server");
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, cancelled);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)o->cancel);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (o->ca_file && *o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http_status);
		rc = *http_status >= 200 && *http_status < 300 ? 0 : -EPROTO;
		if (rc)
			snprintf(err, cap, "HTTP status %ld", *http_status);
		else if (cap)
			err[0] = 0;
	} else {
		snprintf(err, cap, "%s",
			 cerr[0] ? cerr : curl_easy_strerror(cc));
		rc = -EIO;
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return rc;
}
