/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fleet gauges for GET /metrics, rendered from the read API's own answers
 * (the summary and the health document), so a scrape says what the
 * dashboard says. Every label value comes from a bounded set: the catalog's
 * feature ids, the kinds of use, the cgroup modes and the health parts;
 * never a host, a workload or a free text.
 */
#ifndef TWL_SERVER_METRICS_FLEET_H
#define TWL_SERVER_METRICS_FLEET_H

#include <jansson.h>

#include <twilight/util.h>

/*
 * twl_metrics_render_fleet - append the fleet gauges to @b: hosts by cgroup
 * mode, per catalog feature the hosts using it in 30 days by kind of use
 * (using, configures, listens, reads_only) and its kernel warnings, and
 * agents by health part. @summary is twl_read_summary()'s document,
 * @health twl_read_health()'s; either may be NULL (its gauges are left
 * out). Returns 0 or -ENOMEM / -E2BIG from the buffer.
 */
int twl_metrics_render_fleet(struct twl_buf *b, const json_t *summary,
			     const json_t *health);

#endif /* TWL_SERVER_METRICS_FLEET_H */
