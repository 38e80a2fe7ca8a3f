/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pump: the agent's processing core, free of sockets and timers so that
 * tests drive it directly. It reads records from a kmsg source (and takes
 * records other sources hand it, the journal's), skips what an earlier
 * run on this boot already handled, classifies kernel records (catalog
 * match = warning, other "deprecat" text = unknown, user-space lines never
 * count), drops a record sent already (the same boot, kernel stamp and
 * text seen on /dev/kmsg and in the journal: record_dedup.h), collects
 * them into batches, hands each finished batch to a durable sink (the
 * sender's spool) and only then saves the state (last kmsg seq for this
 * boot, batch sequence) and tells the other sources (on_spooled), which
 * save their own positions then.
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
	/*
	 * The source is this boot's live kernel log: health.boots says
	 * where the agent's view of this boot starts (its first kmsg seq).
	 */
	bool live;
	/*
	 * Optional, with @source_ctx: on_spooled runs after each batch went
	 * to the sink and the state was saved (the records handed in with
	 * twl_pump_add() before it are durable now); source_health adds the
	 * other sources' members to each batch's health (boots, journal).
	 */
	void (*on_spooled)(void *ctx);
	void (*source_health)(void *ctx, struct twl_health *h);
	void *source_ctx;
};

/* Record identities remembered to send each record once (record_dedup.h). */
#define TWL_PUMP_DEDUP_CAP 4096

struct twl_pump_stats {
	uint64_t batches; /* handed to the sink */
	uint64_t warnings, unknown, ignored; /* records by class */
	uint64_t duplicates; /* warnings and unknown texts sent already */
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
 * twl_pump_add - take one record from another source (the journal):
 * @rec->boot_id names its boot ("" or this boot's id: this boot; its
 * warnings reach on_warning), @kernel that boot's release (NULL: not
 * known), @place its place in that source (twl_dedup_place() of its
 * journal cursor; 0: not known, then repeats of a record with the same
 * stamp and text count once: record_dedup.h). Classified, deduplicated
 * and added like a kmsg record; a full batch is flushed first. Returns 1 when the record went into the batch,
 * 0 when it is not one to send (ignored, sent already), -ENOSPC
 * (single_batch: full), or the flush's or the report's -errno (the record
 * was not taken: hand it again later).
 */
int twl_pump_add(struct twl_pump *p, const struct twl_log_record *rec,
		 const char *kernel, uint64_t place);

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

/*
 * twl_pump_health - the health the next batch would carry (the source's
 * counters, boots, the hooks' members), without this process's memory.
 */
void twl_pump_health(struct twl_pump *p, struct twl_health *h);

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
