/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One delivery attempt of an alert event to a webhook: an HTTPS POST
 * with libcurl (no redirects followed, a deadline), signed (sign.h).
 */
#ifndef TWL_SERVER_ALERTS_DELIVER_H
#define TWL_SERVER_ALERTS_DELIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alerts/queue.h"

/* How every delivery is made. */
struct twl_deliver_opts {
	const char *ca_file; /* trusted CAs of receivers; "" or NULL: system's */
	unsigned timeout_s; /* the whole attempt's deadline */
	const atomic_int *cancel; /* NULL, or nonzero: cut the attempt off */
};

/*
 * twl_webhook_post - POST @ev's body to @url signed with @secret at @now:
 * 0 when the receiver answered 2xx; else -EPROTO (another status, in
 * *@http_status) or -EIO (no answer: *@http_status 0), with why in @err
 * (@cap bytes). Blocks up to @o->timeout_s; call it from no thread that
 * anything waits on.
 */
int twl_webhook_post(const char *url, const char *secret,
		     const struct twl_alert_event *ev,
		     const struct twl_deliver_opts *o, int64_t now,
		     long *http_status, char *err, size_t cap);

/*
 * twl_webhook_url_ok - whether @url may be a webhook: "https://" then a
 * host, at most 2,000 bytes, no spaces or control characters.
 */
bool twl_webhook_url_ok(const char *url);

#endif /* TWL_SERVER_ALERTS_DELIVER_H */
