/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Webhook administration routes (admin): POST, GET /api/v1/webhooks,
 * DELETE /api/v1/webhooks/ID, GET /api/v1/webhooks/deliveries
 * (docs/api.md "Webhooks").
 */
#ifndef TWL_SERVER_API_WEBHOOKS_H
#define TWL_SERVER_API_WEBHOOKS_H

#include "http/http.h"

extern const struct twl_route twl_webhook_routes[];

#endif /* TWL_SERVER_API_WEBHOOKS_H */
