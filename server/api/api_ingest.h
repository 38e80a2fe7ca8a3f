/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Report ingest, POST /api/v1/reports: a report is validated and
 * flattened on the HTTP thread, queued for the group-commit writer, and
 * answered after the COMMIT that made it durable, through a deferred
 * answer (http.h). Every reply to a report that reached the queue comes
 * from twl_api_ingest_reply().
 */
#ifndef TWL_SERVER_API_INGEST_H
#define TWL_SERVER_API_INGEST_H

#include "api/metrics.h"
#include "http/http.h"

struct twl_writer;

/*
 * The ingest side's state, which twl_api_app (api_core.c) hands to the
 * daemon's hooks (http/server.h, struct twl_app): the group-commit writer
 * (store/writer.h) on the server's store, counting into its metrics, with
 * the commit and retention settings of its configuration.
 *
 * twl_api_ingest_start - start the writer into *state: 0, or a negative
 * errno after logging what failed.
 * twl_api_ingest_drain - store every queued report and answer it, then
 * refuse new ones (-ESHUTDOWN, 503): before the daemon stops.
 * twl_api_ingest_free - free the writer (NULL-safe).
 */
int twl_api_ingest_start(struct twl_server *srv, void **state);
void twl_api_ingest_drain(void *state);
void twl_api_ingest_free(void *state);

/*
 * twl_api_writer - the writer of a server running twl_api_app, NULL for
 * one serving other routes (reports are then refused with 503).
 */
struct twl_writer *twl_api_writer(struct twl_server *srv);

/* The handler of POST /api/v1/reports (routed in api_core.c). */
int twl_api_reports(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp);

/*
 * twl_api_ingest_reply - fill resp with the answer to a report whose
 * queueing or storing ended with result (twl_writer_submit(), or the
 * writer's done callback): 0 or TWL_STORE_DUPLICATE is 200 {"status": "stored" or
 * "duplicate", "batch_id": batch_id}; -EAGAIN (queue full) and -EBUSY
 * (database busy) are 503 "overloaded" and -ESHUTDOWN 503
 * "shutting_down", each with Retry-After: 5 and counted in m as a
 * rejection of that name; any other negative errno is 500 "store_failed"
 * with Retry-After: 30 (not stored; the writer logged why);
 * TWL_STORE_CONFLICT (store.h) is 409 "batch_conflict", not retried by
 * agents, counted as a rejection of that name. batch_id may
 * be NULL for a failure. Returns 0, or -ENOMEM (resp then holds a 500).
 */
int twl_api_ingest_reply(struct twl_metrics *m, int result,
			 const char *batch_id, struct twl_response *resp);

#endif /* TWL_SERVER_API_INGEST_H */
