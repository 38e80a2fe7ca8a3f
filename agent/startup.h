/* SPDX-License-Identifier: GPL-2.0 */
/*
 * startup: what the daemon (daemon.h) and the dry run (dry_run.h) share
 * before the first kernel record is read: the host identity, the saved
 * state, the kernel log, the BPF counters and the sender (daemon only),
 * the pump and the first census. main.c parses the options and hands
 * them over as struct twl_run_opts.
 */
#ifndef TWL_AGENT_STARTUP_H
#define TWL_AGENT_STARTUP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "bpf/twl_bpf.h"
#include "config.h"
#include "container_image.h"
#include "identity.h"
#include "journal_source.h"
#include "kmsg_source.h"
#include "pump.h"
#include "sender.h"

/* Journal records per step of the daemon's journal job (journal_source.h). */
#define TWL_AGENT_JOURNAL_STEP 1000

/* What a run mode needs from the command line. */
struct twl_run_opts {
	const char *config_path; /* named in messages (reload) */
	const char *kmsg_file; /* --kmsg-file: read this, not cfg.kmsg_path */
	/*
	 * Load the configuration into @cfg, @daemon asking for the checks
	 * the daemon needs; 0, or nonzero once the errors are printed (the
	 * run mode gives up, or a reload keeps the running config). Called
	 * at start and on SIGHUP. @cfg is released with twl_config_fini()
	 * whatever it returns.
	 */
	int (*load_config)(void *ctx, struct twl_config *cfg, bool daemon);
	void *load_ctx;
};

/* A running agent: everything start-up made, released by twl_agent_stop(). */
struct twl_agent {
	const struct twl_run_opts *o;
	struct twl_config cfg; /* loaded by the caller before the start */
	struct twl_identity id;
	struct twl_sender *sender; /* daemon only */
	struct twl_pump *pump;
	struct twl_kmsg_source *src;
	struct twl_bpf *bpf; /* daemon only */
	/* container-images: the image names BPF records get; else NULL */
	struct twl_image_cache *images;
	/* Daemon reading the live kernel log with journal = true; else NULL. */
	struct twl_jsource *journal;
	/* Features the kernel warned about that BPF never counted (this boot). */
	size_t n_missing;
	const char *missing[64];
};

/*
 * twl_agent_start - make @a ready to read: host identity (read-only for
 * a dry run: nothing is written), the state saved for this boot or this
 * dump file (daemon), the kernel log (o->kmsg_file or cfg.kmsg_path), the
 * BPF counters with capabilities dropped after them and the sender
 * (daemon), the journal source (daemon on the live kernel log with
 * journal = true), the pump (the dry run's sink refuses every batch: it
 * prints the one document), and the first census unless the input is a
 * dump file. a->o and a->cfg must be set. Logs what failed and what to do;
 * returns 0 or -1. Release @a with twl_agent_stop() either way.
 */
int twl_agent_start(struct twl_agent *a, bool dry_run);

/* twl_agent_stop - release everything in @a, the config included. */
void twl_agent_stop(struct twl_agent *a);

/* twl_agent_kmsg_path - the kernel log @a reads (for messages). */
const char *twl_agent_kmsg_path(const struct twl_agent *a);

/*
 * twl_agent_census - a census of this machine as @cfg says (logged when
 * it cannot be taken or was cut short); NULL when it cannot be taken.
 */
json_t *twl_agent_census(const struct twl_config *cfg);

/*
 * twl_agent_sender - a sender for @cfg and @id; NULL (logged, naming the
 * server and what to check) when it cannot be set up.
 */
struct twl_sender *twl_agent_sender(const struct twl_config *cfg,
				    const struct twl_identity *id);

#endif /* TWL_AGENT_STARTUP_H */
