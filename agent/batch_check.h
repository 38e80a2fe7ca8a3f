/* SPDX-License-Identifier: GPL-2.0 */
/*
 * batch_check: a batch checked with the wire validator before it is
 * spooled, so one entry the server would refuse (an over-long or
 * non-UTF-8 cgroup path, say) does not get the whole batch, warnings
 * included, quarantined. The entry the validator's error path names
 * ("usage[3].cgroup" -> usage[3], "census.knobs[0]" -> that knob) is
 * dropped and the batch checked again; the drops are counted in
 * health.entries_dropped. Pure: no I/O, no logging.
 */
#ifndef TWL_AGENT_BATCH_CHECK_H
#define TWL_AGENT_BATCH_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <twilight/wire.h>

/*
 * Entries dropped from one batch at most: each drop costs a validation of
 * the whole batch, and a batch that needs more has a fault no drop mends.
 */
#define TWL_BATCH_CHECK_MAX_DROPS 64

struct twl_batch_check {
	/*
	 * The batch to spool when it changed (entries dropped or
	 * health.entries_dropped set; free() it), else NULL: spool the
	 * input as it is.
	 */
	char *json;
	size_t len;
	unsigned dropped; /* entries dropped from this batch */
	char first_entry[64]; /* the first dropped: "usage[3]" */
	struct twl_verr first; /* why it was dropped */
	/*
	 * Still invalid after the drops (an error outside an array entry,
	 * or TWL_BATCH_CHECK_MAX_DROPS reached): @why says why. The batch
	 * is spooled all the same, so nothing already accepted is lost;
	 * the server's answer quarantines it.
	 */
	bool invalid;
	struct twl_verr why;
};

/*
 * twl_batch_check - validate @len bytes of @json (a report as the pump
 * wrote it) and drop each array entry the validator names, as above,
 * into *@out (zeroed first). In a version 2 batch, health.entries_dropped
 * is set to @dropped_before (the agent's count so far) plus this batch's
 * drops when that is not 0. Returns 0 or -ENOMEM; release *@out with
 * twl_batch_check_fini().
 */
int twl_batch_check(const char *json, size_t len, uint64_t dropped_before,
		    struct twl_batch_check *out);

/* twl_batch_check_fini - free what *@c holds; NULL-safe. */
void twl_batch_check_fini(struct twl_batch_check *c);

#endif /* TWL_AGENT_BATCH_CHECK_H */
