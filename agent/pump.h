/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pump: the agent's processing core, free of sockets and timers so that
 * tests drive it directly. It reads records from a kmsg source, skips what
 * an earlier run on this boot already handled, classifies kernel records
 * (catalog match = warning, other "deprecat" text = unknown, user-space
 * lines never count), collects them into batches, hands each finished
 * batch to a durable sink (the sender's spool) and only then saves the
 * state (last kmsg seq for this boot, batch sequence).
 */
#ifndef TWL_AGENT_PUMP_H
#define TWL_AGENT_PUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "health.h"
#include "identity.h"
#include "kmsg_source.h"
#include "report.h"
#include "state.h"

struct twl_pump_cfg {
	const struct twl_identity *id; /* borrowed, must outlive the pump */
	const char *state_dir; /* NULL: read-only run, state never saved */
	/*
	 * Store one finished batch durably (@json, @len bytes); 0 only once
	 * it is safe on disk. Negative errno keeps the batch for a retry.
	 */
	int (*sink)(void *ctx, const char *json, size_t len);
	void *sink_ctx;
	/* Optional: fill the sender's members of @h (have_sender etc.). */
	void (*sender_health)(void *ctx, struct twl_health *h);
	void *sender_ctx;
	/* Only one batch (dry run): a full batch ends draining with -ENOSPC. */
	bool single_batch;
	/*
	 * Optional BPF hooks (agent/bpf), all with @hook_ctx:
	 * collect_usage appends usage[] entries to @usage at each flush (they
	 * are spread over as many batches as the cap needs); health_extra adds
	 * members (probes, map_overflows, probe_missing) to each batch's
	 * health; on_warning sees every catalog warning as it is collected.
	 */
	int (*collect_usage)(void *ctx, json_t *usage);
	void (*health_extra)(void *ctx, json_t *health);
	void (*on_warning)(void *ctx, const char *feature_id, uint64_t mono_us);
	void *hook_ctx;
};

struct twl_pump_stats {
	uint64_t batches; /* handed to the sink */
	uint64_t warnings, unknown, ignored; /* records by class */
	uint64_t records_lost, parse_failures;
	uint64_t state_save_failures; /* batches spooled whose state save failed */
	uint64_t usage_failures; /* collect_usage calls that failed */
	int last_state_error; /* negative errno of the last failed save */
};

struct twl_pump;

/*
 * twl_pump_new - a pump with saved state @st (copied; adapt it to the
 * current boot first with twl_state_for_boot()). NULL + errno.
 */
struct twl_pump *twl_pump_new(const struct twl_pump_cfg *cfg,
			      const struct twl_state *st);

/* twl_pump_free - NULL-safe; does not free the source. */
void twl_pump_free(struct twl_pump *p);

/*
 * twl_pump_set_source - read from @src (borrowed) from now on and make it
 * skip records up to the saved last seq when the state is for this boot.
 */
void twl_pump_set_source(struct twl_pump *p, struct twl_kmsg_source *src);

/*
 * twl_pump_drain - read every record available now. Full batches are
 * flushed on the way. Returns 0 when the source would block, -ENODATA at
 * end of input, -ENOSPC (single_batch only) when the batch is full, or a
 * negative errno (read error; sink failure: reading stops so that the
 * kernel keeps the records).
 */
int twl_pump_drain(struct twl_pump *p);

/*
 * twl_pump_flush - finish the current batch: when it holds records, usage
 * or a census, or @force is set (heartbeat, shutdown with lost records),
 * build the document, give it to the sink and, after the sink succeeded,
 * save the state. Usage beyond one batch's cap goes out in further
 * batches. With nothing to send only the state is saved (if it moved).
 * Returns the number of batches that went to the sink, or a negative
 * errno (the batch is kept for the next try). A failed state save after a
 * successful sink is counted in the stats (state_save_failures), not
 * returned: the batch is gone, and a restart can at worst resend.
 */
int twl_pump_flush(struct twl_pump *p, bool force);

/*
 * twl_pump_document - build (but do not send) the current batch's
 * document, as twl_pump_flush() would. For --dry-run. NULL on ENOMEM.
 */
json_t *twl_pump_document(struct twl_pump *p);

/* twl_pump_set_census - attach @census (stolen) to the current batch. */
void twl_pump_set_census(struct twl_pump *p, json_t *census);

/* twl_pump_stats - counters since the pump was made. */
void twl_pump_stats(const struct twl_pump *p, struct twl_pump_stats *st);

/* twl_pump_state - the state as last saved (or as given, if never). */
const struct twl_state *twl_pump_state(const struct twl_pump *p);

/*
 * twl_pump_time_of - Unix seconds estimate for kernel time @mono_us:
 * boot time (realtime - monotonic clock now) + @mono_us, at most now.
 */
int64_t twl_pump_time_of(uint64_t mono_us);

#endif /* TWL_AGENT_PUMP_H */
