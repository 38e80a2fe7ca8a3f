/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a webhook delivery carries besides its body, pure: the signature
 * a receiver checks, and when a failed delivery is tried again.
 *
 * Signature: X-Twilight-Signature: sha256=HEX, HEX the lower-case
 * HMAC-SHA256 under the webhook's secret of "TIMESTAMP.BODY", TIMESTAMP
 * the decimal Unix seconds sent as X-Twilight-Timestamp. A receiver
 * recomputes it over the bytes it received, compares in constant time,
 * and refuses a timestamp far from its clock (a replay).
 */
#ifndef TWL_SERVER_ALERTS_SIGN_H
#define TWL_SERVER_ALERTS_SIGN_H

#include <stddef.h>
#include <stdint.h>

/* "sha256=" + 64 hex digits + NUL */
#define TWL_WEBHOOK_SIG_CAP 72

/*
 * twl_webhook_sign - the X-Twilight-Signature value of @body (@len bytes)
 * sent at @ts under @secret into @out: 0, or -EINVAL (no secret) or
 * -ENOMEM/-EIO from OpenSSL.
 */
int twl_webhook_sign(const char *secret, int64_t ts, const void *body,
		     size_t len, char out[TWL_WEBHOOK_SIG_CAP]);

/* Attempts of one delivery at most: the first and its retries. */
#define TWL_WEBHOOK_ATTEMPTS 6
/* The longest wait between two attempts, in seconds. */
#define TWL_WEBHOOK_BACKOFF_MAX 3600

/*
 * twl_webhook_backoff - seconds to wait after failed attempt @attempt
 * (1 = the first) before the next: @base_s times 4^(attempt - 1), at most
 * TWL_WEBHOOK_BACKOFF_MAX; -1 when @attempt was the last
 * (TWL_WEBHOOK_ATTEMPTS) or @base_s is 0. With base 5: 5 s, 20 s, 80 s,
 * 320 s, 1280 s, then give up.
 */
int64_t twl_webhook_backoff(unsigned base_s, unsigned attempt);

#endif /* TWL_SERVER_ALERTS_SIGN_H */
