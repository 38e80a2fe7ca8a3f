// SPDX-License-Identifier: GPL-2.0
/* Report ingest (api_ingest.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "api/api_ingest.h"
#include "http/server_internal.h"
#include "store/ingest.h"
#include "store/store.h"
#include "store/writer.h"

/* Contract: see api_ingest.h. */
int twl_api_ingest_start(struct twl_server *srv, void **state)
{
	const struct twl_config *cfg = twl_server_config(srv);
	struct twl_writer_opts o = { .commit_max = cfg->commit_max,
				     .commit_delay_ms = cfg->commit_delay_ms,
				     .queue_max = cfg->queue_max,
				     .batch_days = cfg->batch_days,
				     .data_days = cfg->data_days };
	struct twl_writer *w;

	w = twl_writer_new(twl_server_store(srv), twl_server_metrics(srv), &o);
	if (!w) {
		twl_log(LOG_ERR, "cannot start the ingest writer thread: %s",
			strerror(errno ? errno : ENOMEM));
		return -(errno ? errno : ENOMEM);
	}
	*state = w;
	return 0;
}

/* Contract: see api_ingest.h. */
void twl_api_ingest_drain(void *state)
{
	twl_writer_stop(state);
}

/* Contract: see api_ingest.h. */
void twl_api_ingest_free(void *state)
{
	twl_writer_free(state);
}

/* Why a report was not stored, and when to try again. */
static const struct {
	int result, status;
	const char *code, *reason;
	unsigned retry_after;
} failures[] = {
	{ -EAGAIN, 503, "overloaded",
	  "ingest queue full; retry after the given delay", 5 },
	{ -EBUSY, 503, "overloaded",
	  "database busy; retry after the given delay", 5 },
	{ -ESHUTDOWN, 503, "shutting_down",
	  "the server is shutting down; the batch was not stored, retry after the given delay",
	  5 },
	/* any other error: the last entry */
	{ 0, 500, "store_failed", "the batch was not stored; retry later", 30 },
};

/* Contract: see api_ingest.h. */
int twl_api_ingest_reply(struct twl_metrics *m, int result,
			 const char *batch_id, struct twl_response *resp)
{
	size_t i, last = sizeof(failures) / sizeof(failures[0]) - 1;
	int ret;

	if (result == 0 || result == TWL_STORE_DUPLICATE)
		return twl_response_json(
			resp, 200,
			json_pack("{ss ss}", "status",
				  result ? "duplicate" : "stored", "batch_id",
				  batch_id ? batch_id : ""));
	if (result == TWL_STORE_CONFLICT) {
		/* not a store failure, nothing to retry: the content differs */
		twl_metrics_reject(m, TWL_ERR_BATCH_CONFLICT);
		return twl_response_error(
			resp, 409, TWL_ERR_BATCH_CONFLICT, "batch_id",
			"this host sent another batch under this batch_id before; this one was not stored (an identical resend is answered 200 duplicate)");
	}
	for (i = 0; i < last; i++)
		if (failures[i].result == result)
			break;
	if (failures[i].status == 503)
		twl_metrics_reject(m, failures[i].code);
	ret = twl_response_error(resp, failures[i].status, failures[i].code,
				 NULL, failures[i].reason);
	if (!ret)
		twl_response_header(resp, "Retry-After", "%u",
				    failures[i].retry_after);
	return ret;
}

/* After the writer's COMMIT, on an HTTP thread: state is the report. */
static int ingest_answer(struct twl_server *srv, void *state, int result,
			 struct twl_response *resp)
{
	const struct twl_ingest *in = state;

	return twl_api_ingest_reply(twl_server_metrics(srv), result,
				    in ? in->batch_id : NULL, resp);
}

/* Freeing the parsed report is HTTP-thread work, not the writer's. */
static void ingest_release(void *state)
{
	twl_ingest_free(state);
}

static const struct twl_defer_ops ingest_ops = {
	.answer = ingest_answer,
	.release = ingest_release,
};

/* The writer's done callback (writer thread): hand the report back. */
static void ingest_done(void *arg, int result, struct twl_ingest *in)
{
	twl_defer_complete(arg, result, in);
}

/*
 * Flatten *report (consumed) on this HTTP thread (ingest.h) and queue it;
 * the answer waits for the writer's COMMIT.
 */
static int queue_report(struct twl_server *srv, const struct twl_request *req,
			struct twl_wire_report *report,
			struct twl_response *resp)
{
	struct twl_defer *d = twl_request_defer(req, &ingest_ops);
	struct twl_ingest *in;
	struct twl_writer *w;
	int ret;

	if (!d) {
		twl_wire_release(report);
		return -EALREADY;
	}
	ret = twl_ingest_prepare_report(report, req->who.host_id, &in);
	if (ret)
		return ret;
	/* which key posted: clones of one host id show there (health) */
	memcpy(in->key_hash, req->who.key_hash, sizeof(in->key_hash));
	/* no time from the future reaches the store (ingest.h) */
	twl_ingest_bound_times(in, req->now);
	/* a batch id's content: a resend or a conflict (store.h) */
	SHA256((const unsigned char *)req->body, req->body_len,
	       in->body_sha256);
	in->has_body_sha256 = true;
	w = twl_api_writer(srv);
	ret = w ? twl_writer_submit(w, req->who.host_id, in, req->now,
				    ingest_done, d) :
		  -ESHUTDOWN;
	if (!ret)
		return TWL_HANDLER_DEFERRED;
	twl_ingest_free(in);
	return twl_api_ingest_reply(twl_server_metrics(srv), ret, NULL, resp);
}

/* Contract: see api_ingest.h. */
int twl_api_reports(struct twl_server *srv, const struct twl_request *req,
		    struct twl_response *resp)
{
	struct twl_metrics *m = twl_server_metrics(srv);
	struct twl_verr err = { 0 };
	struct twl_wire_report report;
	const char *host_id;
	unsigned wait;
	int ret;

	twl_request_timed(req);
	if (!req->who.host_id[0]) {
		twl_metrics_reject(m, "forbidden");
		return twl_response_error(
			resp, 403, "forbidden", NULL,
			"reports need a per-host key from POST /api/v1/enroll");
	}
	wait = twl_server_host_rate(srv, req->who.host_id);
	if (wait) {
		twl_metrics_reject(m, "rate_limited");
		twl_response_error(
			resp, 429, "rate_limited", NULL,
			"too many reports from this host; retry after the given delay");
		twl_response_header(resp, "Retry-After", "%u", wait);
		return 0;
	}
	ret = twl_wire_decode(req->body, req->body_len, &report, &err);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		twl_metrics_reject(m, err.code[0] ? err.code : "other");
		return twl_response_json(resp, 400, twl_verr_to_json(&err));
	}
	host_id = json_string_value(json_object_get(
		json_object_get(report.doc, "host"), "host_id"));
	if (!host_id || strcmp(host_id, req->who.host_id)) {
		twl_wire_release(&report);
		twl_metrics_reject(m, "host_mismatch");
		return twl_response_error(
			resp, 403, "host_mismatch", "host.host_id",
			"host.host_id differs from the host this key was issued to");
	}
	/*
	 * A replayed batch id is found by the writer (its batches insert
	 * changes nothing), which answers "duplicate", or 409 when the body
	 * differs from the one stored under it. No look-up here: it
	 * cost every report a read under the reader lock, which the
	 * dashboard's queries also hold.
	 */
	return queue_report(srv, req, &report, resp);
}
