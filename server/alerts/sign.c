// SPDX-License-Identifier: GPL-2.0
/*
 * Webhook signatures (HMAC-SHA256 through OpenSSL's EVP_MAC) and the
 * retry schedule; pure, no I/O.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "alerts/sign.h"

/* Contract: see sign.h. */
int twl_webhook_sign(const char *secret, int64_t ts, const void *body,
		     size_t len, char out[TWL_WEBHOOK_SIG_CAP])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	char digest[] = "SHA256", tsbuf[32];
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *hmac = NULL;
	size_t maclen = 0, i;
	int rc = -EIO, n;

	if (!secret || !*secret || (!body && len))
		return -EINVAL;
	n = snprintf(tsbuf, sizeof(tsbuf), "%" PRId64 ".", ts);
	hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	if (!ctx) {
		rc = -ENOMEM;
		goto out;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     digest, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(ctx, (const unsigned char *)secret, strlen(secret),
			  params) ||
	    !EVP_MAC_update(ctx, (const unsigned char *)tsbuf, (size_t)n) ||
	    (len && !EVP_MAC_update(ctx, body, len)) ||
	    !EVP_MAC_final(ctx, mac, &maclen, sizeof(mac)) || maclen != 32)
		goto out;
	memcpy(out, "sha256=", 7);
	for (i = 0; i < maclen; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", mac[i]);
	rc = 0;
out:
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(hmac);
	return rc;
}

/* Contract: see sign.h. */
int64_t twl_webhook_backoff(unsigned base_s, unsigned attempt)
{
	int64_t d = base_s;
	unsigned i;

	if (!base_s || !attempt || attempt >= TWL_WEBHOOK_ATTEMPTS)
		return -1;
	for (i = 1; i < attempt && d < TWL_WEBHOOK_BACKOFF_MAX; i++)
		d *= 4;
	return d < TWL_WEBHOOK_BACKOFF_MAX ? d : TWL_WEBHOOK_BACKOFF_MAX;
}
