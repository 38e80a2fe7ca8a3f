// SPDX-License-Identifier: GPL-2.0
/* The daemon's pump callbacks into the sender and the BPF counters. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "batch_check.h"
#include "hooks.h"

/*
 * Spool a batch once the wire validator passed it: entries it refuses are
 * dropped (and counted) so they cannot get the rest quarantined.
 */
static int sender_sink(void *ctx, const char *json, size_t len)
{
	struct twl_agent *a = ctx;
	struct twl_sender_stats st;
	struct twl_batch_check bc;
	int ret;

	twl_sender_stats(a->sender, &st);
	ret = twl_batch_check(json, len, st.entries_dropped, &bc);
	if (ret)
		return ret;
	if (bc.dropped)
		twl_log(LOG_WARNING,
			"batch: dropped %u invalid entries before spooling, the rest is kept; "
			"the first, %s: %s at %s: %s",
			bc.dropped, bc.first_entry, bc.first.code,
			bc.first.field, bc.first.reason);
	if (bc.invalid)
		twl_log(LOG_ERR,
			"batch: invalid (%s at %s: %s) after dropping %u entries; spooled as "
			"it is, the server will quarantine it: please report this agent bug",
			bc.why.code, bc.why.field, bc.why.reason, bc.dropped);
	ret = twl_sender_submit(a->sender, bc.json ? bc.json : json,
				bc.json ? bc.len : len);
	if (!ret)
		twl_sender_count_dropped(a->sender, bc.dropped);
	twl_batch_check_fini(&bc);
	return ret;
}

static void sender_health(void *ctx, struct twl_health *h)
{
	struct twl_agent *a = ctx;
	struct twl_sender_stats st;

	twl_sender_stats(a->sender, &st);
	h->have_sender = true;
	h->spool_bytes = st.spool_bytes;
	h->spool_files = st.spool_files;
	h->spool_dropped = st.spool_dropped;
	h->send_failures = st.send_failures;
	h->key_rejected = st.key_rejected;
	snprintf(h->last_error, sizeof(h->last_error), "%s", st.last_error);
}

static int bpf_collect(void *ctx, json_t *usage)
{
	struct twl_agent *a = ctx;
	int ret = twl_bpf_collect(a->bpf, usage, a->id.boot_id,
				  TWL_BPF_COLLECT_CHANGED);

	return ret == -ENODEV ? 0 : ret; /* no map open: nothing to collect */
}

static void bpf_health(void *ctx, json_t *health)
{
	struct twl_agent *a = ctx;
	json_t *missing = json_array();
	size_t i;

	if (twl_bpf_health(a->bpf, health))
		twl_log(LOG_WARNING,
			"bpf: cannot add probe health (out of memory)");
	if (!missing)
		return;
	for (i = 0; i < a->n_missing; i++)
		json_array_append_new(missing, json_string(a->missing[i]));
	json_object_set_new(health, "probe_missing", missing);
}

static void bpf_warning(void *ctx, const char *feature, uint64_t mono_us)
{
	struct twl_agent *a = ctx;
	size_t i;

	if (!twl_bpf_probe_missing(a->bpf, feature, mono_us))
		return;
	for (i = 0; i < a->n_missing; i++)
		if (!strcmp(a->missing[i], feature))
			return;
	if (a->n_missing < sizeof(a->missing) / sizeof(a->missing[0])) {
		/* Catalog ids are static strings: keep the pointer. */
		a->missing[a->n_missing++] =
			twl_catalog_find(feature) ?
				twl_catalog_find(feature)->id :
				"";
		twl_log(LOG_WARNING,
			"bpf: the kernel warned about %s but the probes counted no use of it; "
			"usage for it is incomplete (see health.probe_missing)",
			feature);
	}
}

/* Contract: see hooks.h. */
void twl_agent_hooks(struct twl_agent *a, struct twl_pump_cfg *pc)
{
	pc->sink = sender_sink;
	pc->sink_ctx = a;
	pc->sender_health = sender_health;
	pc->sender_ctx = a;
	pc->collect_usage = bpf_collect;
	pc->health_extra = bpf_health;
	pc->on_warning = bpf_warning;
	pc->hook_ctx = a;
}
