/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a feature's zero counts mean "not seen" or "not measured": the
 * one rule, from the catalog and the fleet's coverage counts, that the
 * summary answers (GET /api/v1/summary, docs/api.md) and the dashboard
 * shows. Pure: no I/O, no store.
 */
#ifndef TWL_SERVER_MEASURED_H
#define TWL_SERVER_MEASURED_H

#include <stdbool.h>

#include <jansson.h>

#include <twilight/catalog.h>

/*
 * twl_feature_measured - a feature with no counts was not seen, rather
 * than not measured: true when @seen (a use or a kernel warning of it
 * was stored), or when the BPF counters count @f
 * (twl_export_bpf_measurable(): memory controller files only) and @bpf_memory hosts have
 * BPF attached to the memory controller. @f NULL (a feature the current
 * catalog lacks): @seen.
 */
bool twl_feature_measured(const struct twl_feature *f, bool seen,
			  json_int_t bpf_memory);

/*
 * twl_summary_measured - complete twl_read_summary()'s @doc for the API:
 * coverage.kmsg_only (the hosts with coverage facts whose BPF is not
 * attached to the memory controller, less the "unmeasured" ones that
 * have no log source either: the export's "kernel log only") and each feature's "measured"
 * (twl_feature_measured(); seen: its "first_seen" is not null). A
 * missing "coverage" counts as no host covered. 0, -EINVAL when @doc is
 * not a summary, -ENOMEM.
 */
int twl_summary_measured(json_t *doc);

#endif
