/* SPDX-License-Identifier: GPL-2.0 */
/*
 * journal_source: the systemd journal as a source of the daemon, next to
 * the live /dev/kmsg. The kernel prints most deprecation warnings once per
 * boot; on a long-running host /dev/kmsg overwrote them long ago, the
 * journal kept them.
 *
 * Backfill only, never followed record by record: a pass (journal.h)
 * reads the current boot from where the last pass left it and, on the
 * first pass ever, the earlier boots the journal still holds (at most
 * max_earlier_boots, newest first). The daemon runs a pass at start, then
 * on its journal timer; a pass goes in steps of at most @step records so
 * that the main loop keeps reading /dev/kmsg and signals meanwhile.
 *
 * Records go into the pump (twl_pump_add()), which sends the same warning
 * seen on /dev/kmsg once. Cursors are committed as records are taken but
 * journal.json is saved only when no record taken since is still waiting
 * in an unspooled batch (the pump's on_spooled hook says when one was
 * spooled): the same rule as the kmsg sequence, so a restart neither
 * repeats nor skips. Records of earlier boots carry their boot id and that
 * boot's kernel release.
 */
#ifndef TWL_AGENT_JOURNAL_SOURCE_H
#define TWL_AGENT_JOURNAL_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "health.h"
#include "journal.h"
#include "pump.h"

struct twl_jsource_cfg {
	const char *state_dir; /* journal.json lives here */
	/* A directory holding <machine-id>/system*.journal*; NULL: the system's. */
	const char *dir;
	const char *machine_id_path; /* which <machine-id> subdirectory */
	const char *boot_id; /* this boot's (identity) */
	unsigned max_earlier_boots;
	unsigned step; /* records per step, >= 1 */
};

struct twl_jsource_stats {
	uint64_t passes; /* completed */
	uint64_t records; /* kernel records read */
	uint64_t missed; /* journald's "Missed N kernel messages", summed */
	uint64_t file_errors,
		read_errors; /* of the last pass (or the open one) */
	uint64_t state_save_failures;
	int last_state_error, state_load_error; /* -errno, or 0 */
	int open_error; /* the last pass's open: -errno, or 0 */
};

struct twl_jsource;

/*
 * twl_jsource_new - a journal source with @cfg (copied, state_dir and dir
 * too; boot_id must outlive it; the machine id is read now) and
 * the state saved in @cfg->state_dir. A journal.json that
 * cannot be read leaves an empty state (stats' state_load_error says why:
 * log it). NULL + errno (ENOMEM, EINVAL for step 0).
 */
struct twl_jsource *twl_jsource_new(const struct twl_jsource_cfg *cfg);

/* twl_jsource_free - NULL-safe; an open pass is dropped (not committed). */
void twl_jsource_free(struct twl_jsource *s);

/*
 * twl_jsource_step - take up to cfg->step records of the pass (opening
 * one when none is open) into @p. Returns 1 when the pass goes on (call
 * again soon), 0 when it is done, or -errno: the journal cannot be
 * opened (twl_journal_open()'s errors; stats' open_error says so), or the
 * pump refused a record (its sink failed): the pass ends and the next one
 * reads from the last commit.
 */
int twl_jsource_step(struct twl_jsource *s, struct twl_pump *p);

/*
 * twl_jsource_spooled - the pump's on_spooled hook (@ctx is the source):
 * every record taken so far is durable; save journal.json if it moved.
 */
void twl_jsource_spooled(void *ctx);

/*
 * twl_jsource_health - the pump's source_health hook: boots[] (where the
 * journal's view of each boot of the last pass starts, merged with the
 * entries already there), journal_missed and journal_errors.
 */
void twl_jsource_health(void *ctx, struct twl_health *h);

/* twl_jsource_stats - the counters so far. */
void twl_jsource_stats(const struct twl_jsource *s,
		       struct twl_jsource_stats *st);

#endif /* TWL_AGENT_JOURNAL_SOURCE_H */
