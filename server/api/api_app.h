/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight's application state (http/server.h, struct twl_app): the
 * ingest writer (api_ingest.h), the alerts (alerts/alerts.h) and the
 * slow answers kept (answer_cache.h), started
 * together before the first connection and stopped after the last.
 */
#ifndef TWL_SERVER_API_APP_H
#define TWL_SERVER_API_APP_H

#include "api/answer_cache.h"

struct twl_server;
struct twl_alerts;
struct twl_response;

/*
 * twl_api_app_start - start the writer, then the alerts, into *state: 0,
 * or a negative errno after logging what failed (nothing left running).
 * twl_api_app_drain - for a stop: the store's long reads ended
 * (twl_store_stop_reads()), then the writer's drain
 * (twl_api_ingest_drain()).
 * twl_api_app_free - stop the alerts, free the writer (NULL-safe).
 */
int twl_api_app_start(struct twl_server *srv, void **state);
void twl_api_app_drain(void *state);
void twl_api_app_free(void *state);

/*
 * twl_api_alerts - the alerts of a server running twl_api_app, where
 * any handler may raise an event (twl_alert_raise()); NULL for one
 * serving other routes.
 */
struct twl_alerts *twl_api_alerts(struct twl_server *srv);

/*
 * twl_api_answer - the answer of kind @k for @params
 * (twl_answer_cache_get()) from the server's kept answers, @k->fn's
 * context being @srv; computed each time on a server without them. A
 * kept answer sets @resp's Age header (whole seconds, RFC 9111) unless
 * @resp is NULL: an answer made of another, which does not count as
 * asking for it (twl_answer_cache_get_inner()). 0 or a negative errno.
 * twl_api_answers_touch - after an admin's change that a kept answer
 * shows (annotations, targets, migration status): compute them again
 * (twl_answer_cache_touch()); with slow-answer-ahead, a target added is
 * computed ahead from then on.
 */
int twl_api_answer(struct twl_server *srv, struct twl_response *resp,
		   const struct twl_answer_kind *k, const void *params,
		   size_t len, json_t **out);
void twl_api_answers_touch(struct twl_server *srv);

#endif /* TWL_SERVER_API_APP_H */
