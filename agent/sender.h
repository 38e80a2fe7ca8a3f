/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sender: durable delivery of report batches to the twilight server.
 *
 * The agent's main loop hands each finished report (wire format JSON) to
 * twl_sender_submit(), which writes it to the spool (fsync'd) before
 * returning. twl_sender_run_once() then delivers spooled batches oldest
 * first over HTTPS, enrolling first if no host key is stored yet, and
 * applies the retry rules:
 *
 *   2xx                         delivered, spool file deleted
 *   network/TLS error, timeout, retry with exponential backoff and full
 *   408, 429, 5xx, 1xx/3xx,     jitter: random(0, min(cap, base * 2^(n-1)))
 *   400 "unsupported_version",  for the n-th failure in a row, but never
 *   any 4xx not named here      sooner than Retry-After (seconds or HTTP
 *   (a proxy's 404 or 405, a    date, honoured up to an hour)
 *   400 without a validator
 *   code)
 *   401, 403                    batch kept, back off up to an hour
 *                               (d/2 + random(0, d/2), d doubling from base),
 *                               key_rejected = true, "key rejected" in
 *                               last_error; on 401 (key unknown or revoked;
 *                               the server asks hosts to enrol again) with an
 *                               enrolment token configured, the stored host
 *                               key is discarded and the agent re-enrols at
 *                               the next attempt; 403 (key known but not
 *                               allowed) keeps the key
 *   413                         batch split in two (new batch ids, see
 *                               twl_report_split() in report.h), halves
 *                               spooled before the original is deleted
 *   400 or 422 whose JSON body  batch moved to spool_dir/quarantine, the
 *   names a validator code      server's error body logged: the server
 *   ({"error": "too_long", ...}) judged its content, sending it again
 *                               cannot help
 *   409 "batch_conflict"        quarantined likewise: this host sent
 *                               another body under this batch id before
 *                               (only a changed spool file or a reused id
 *                               does that); a resend of the same body is a
 *                               2xx "duplicate". A 409 without that code
 *                               (a proxy's) is retried like any 4xx
 *
 * A batch whose answer was lost (timeout, connection closed mid-answer) is
 * sent again unchanged, same batch_id: the server drops the duplicate. A
 * failure always ends the current run_once(); the back-off is one per
 * sender (oldest batch first), so a backlog never floods a server that is
 * struggling. Each delivered batch resets the back-off.
 *
 * Single-threaded: one sender is used by one thread at a time.
 */
#ifndef TWL_AGENT_SENDER_H
#define TWL_AGENT_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults applied when a field of struct twl_sender_cfg is 0. */
#define TWL_SENDER_DEF_SPOOL_MAX_BYTES (64ULL << 20)
#define TWL_SENDER_DEF_SPOOL_MAX_AGE_S (30U * 24 * 3600)
#define TWL_SENDER_DEF_BACKOFF_BASE_MS 1000U
#define TWL_SENDER_DEF_BACKOFF_CAP_MS (15U * 60 * 1000)
#define TWL_SENDER_DEF_CONNECT_TIMEOUT_MS 10000U
#define TWL_SENDER_DEF_TIMEOUT_MS 30000U
/* Back-off after 401/403: doubles from backoff_base_ms up to this. */
#define TWL_SENDER_KEY_REJECT_CAP_MS (3600U * 1000)

struct twl_sender_cfg {
	const char *server_url; /* e.g. "https://twilight.example:8443" */
	const char *ca_file; /* PEM CA bundle; required, never disabled */
	const char *client_cert; /* optional PEM client certificate */
	const char *client_key; /* optional PEM key for client_cert */
	const char *enroll_token_file; /* file holding the enrolment token */
	const char *state_dir; /* host.key lives here (0600) */
	const char *spool_dir; /* batches; quarantine/ below it */
	uint64_t spool_max_bytes; /* 0 = default */
	unsigned spool_max_age_s; /* 0 = default (30 days) */
	unsigned backoff_base_ms, backoff_cap_ms; /* 0 = defaults */
	unsigned connect_timeout_ms, timeout_ms; /* 0 = defaults */
	const char *host_id; /* required: sent at enrolment */
	const char *hostname; /* optional: sent at enrolment (NULL = uname) */
	unsigned quarantine_max_files; /* 0 = default (64) */
	/*
	 * Test hooks (NULL in production): clock in ms (monotonic) used for
	 * back-off deadlines, wall clock in s used for spool age, and the
	 * random source for jitter (returns a value in [0, bound]).
	 */
	uint64_t (*now_ms)(void *ctx);
	int64_t (*wall_s)(void *ctx);
	uint64_t (*rand_upto)(void *ctx, uint64_t bound);
	void *hook_ctx;
};

struct twl_sender_stats {
	uint64_t spool_bytes; /* bytes in spool files now */
	uint64_t spool_files; /* batches waiting */
	uint64_t spool_dropped; /* batches dropped (cap, age) since start */
	uint64_t spool_quarantined; /* corrupt or rejected batches since start */
	uint64_t sent; /* batches delivered (2xx) since start */
	uint64_t send_failures; /* failed attempts since start */
	uint64_t entries_dropped; /* invalid entries dropped before spooling */
	uint64_t retry_in_ms; /* current back-off remaining, 0 = none */
	bool key_rejected; /* last attempt got 401/403 */
	bool enrolled; /* a host key is stored */
	char last_error[256]; /* "" if none since start */
};

struct twl_sender;

/*
 * twl_sender_new() - open the spool (cleaning temp files left by a crash,
 * quarantining corrupt batches) and set up libcurl. Strings in @cfg are
 * copied. Returns NULL and sets errno (EINVAL for a bad config, with a log
 * line naming the field).
 */
struct twl_sender *twl_sender_new(const struct twl_sender_cfg *cfg);

/*
 * twl_sender_submit() - store one report batch (@json, @len bytes, a wire
 * format v1 document) durably in the spool. Returns 0 only after the batch
 * file and its directory are fsync'd; negative errno otherwise. May drop the
 * oldest batches to respect spool_max_bytes (counted in spool_dropped).
 */
int twl_sender_submit(struct twl_sender *s, const char *json, size_t len);

/*
 * twl_sender_count_dropped() - add @n report entries dropped before
 * spooling because they were invalid (batch_check.h) to the count in
 * twl_sender_stats(), which the next batches carry in
 * health.entries_dropped.
 */
void twl_sender_count_dropped(struct twl_sender *s, unsigned n);

/*
 * twl_sender_run_once() - deliver spooled batches oldest first until the
 * spool is empty, a back-off is in force, or @budget_ms has elapsed (a
 * transfer already in progress is bounded by timeout_ms, not the budget).
 * Returns the number of ms until it wants to be called again (0 = more
 * work now, or an idle interval when the spool is empty) or a negative
 * errno on a local failure (spool I/O).
 */
int twl_sender_run_once(struct twl_sender *s, int budget_ms);

/*
 * twl_sender_fetch_catalog() - ask the server for a catalog newer than the
 * current one (GET /api/v1/agent/catalog?have=VERSION with the host key)
 * and, when it sends one, check, keep and install it
 * (twl_agent_catalog_accept()). Returns 1 installed (@err non-empty when
 * it could not be kept on disk), 0 nothing newer, -EAGAIN before the
 * first enrolment, or another negative errno with @err saying why.
 */
int twl_sender_fetch_catalog(struct twl_sender *s, char *err, size_t cap);

/* twl_sender_stats() - copy the current counters into @st. */
void twl_sender_stats(const struct twl_sender *s, struct twl_sender_stats *st);

/* twl_sender_free() - release everything; NULL-safe. Spool stays on disk. */
void twl_sender_free(struct twl_sender *s);

/* When the spool is empty, twl_sender_run_once() asks to be called again after this. */
#define TWL_SENDER_IDLE_MS 60000

#endif /* TWL_AGENT_SENDER_H */
