/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The alert detector: what changed in the store since its last scan,
 * raised as events (alerts.h). Runs off the ingest path, on the alerts'
 * detector thread, reading snapshots and writing its own state
 * (alert_state, store/store_alerts.h) so a restart announces nothing
 * twice. The first scan of a database records what it finds without
 * announcing it.
 *
 * Events (docs/api.md "Webhooks"):
 * - "new_use": a host, or a process name (a workload), uses a feature
 *   (configures, listens, a census value, a kernel warning; never reads
 *   alone) and did not in the @new_days days before;
 * - "host_silent": a host's last report is older than @silent_after;
 * - "records_lost": a host's agent reports more lost records than before;
 * - "probe_lost": a host's list of missing probes changed to a non-empty one;
 * - "readiness_worse": more hosts (seen in the last 30 days) would break
 *   on an upgrade target than at the last scan;
 * - "migrated_used_again": a workload (or a feature as a whole) whose
 *   migration status is "migrated" was seen configuring or listening
 *   after the status's date (twl_read_migration_reuse()); once per status.
 * Hosts are examined in pages of 1,000 by the time their report arrived;
 * each health part lists at most 1,000 hosts per scan.
 */
#ifndef TWL_SERVER_ALERTS_DETECT_H
#define TWL_SERVER_ALERTS_DETECT_H

#include <stdbool.h>
#include <stdint.h>

struct twl_store;
struct twl_alerts;

struct twl_detect_opts {
	unsigned new_days;
	int64_t silent_after;
	const char *data_dir; /* operators' targets; NULL: shipped ones only */
	bool skip_readiness; /* leave the readiness step out of this scan */
	/* as struct twl_alerts_opts's; NULL: every count is the step's own */
	int (*kept_breaks)(void *ctx, const char *target, int64_t *count);
	void *kept_ctx;
};

/*
 * A scan with the readiness step costs what readiness costs for every
 * target: minutes on a fleet of 100,000 hosts, where one scan a minute
 * would keep a core busy with it. After a scan with one that took
 * TWL_DETECT_READY_SLOW_MS or longer, the next readiness step waits
 * TWL_DETECT_READY_PACE times what it took (at most a tenth of the
 * detector's time); the rest of the scan runs every interval. A quicker
 * scan runs it every interval, as on any fleet of modest size.
 */
#define TWL_DETECT_READY_PACE 10
#define TWL_DETECT_READY_SLOW_MS 10000

/*
 * twl_detect_ready_next - when (ms, any monotonic clock) a scan may run
 * the readiness step again after one that ran from @start to @end.
 */
uint64_t twl_detect_ready_next(uint64_t start, uint64_t end);

/*
 * twl_alert_detect_scan - one scan at @now: compare the store with the
 * state of the last scan, raise what is new on @a, record it; the
 * readiness step unless @o->skip_readiness. 0 or a
 * negative errno (the scan stops at the first store error; what it
 * recorded before stays, the rest is seen again at the next scan).
 */
int twl_alert_detect_scan(struct twl_store *s, struct twl_alerts *a,
			  const struct twl_detect_opts *o, int64_t now);

/*
 * twl_alert_detect_readiness - the readiness step of a scan (part of
 * twl_alert_detect_scan()): per target of @o->data_dir (NULL: the
 * shipped ones), the hosts that would break (@o->kept_breaks' count when
 * it has one, else counted in @s), recorded; unless @quiet_scan, more
 * than last time is raised. 0 or a negative errno.
 */
int twl_alert_detect_readiness(struct twl_store *s, struct twl_alerts *a,
			       const struct twl_detect_opts *o, int64_t now,
			       bool quiet_scan);

#endif /* TWL_SERVER_ALERTS_DETECT_H */
