/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dry_run: --dry-run, the one report the agent would send now, printed
 * and validated, with nothing sent or written (no config, server, token
 * or root needed).
 */
#ifndef TWL_AGENT_DRY_RUN_H
#define TWL_AGENT_DRY_RUN_H

#include "startup.h"

/*
 * twl_dry_run - load the config (o->load_config, not as the daemon), read
 * what the kernel log (or o->kmsg_file, to its end for a FIFO) holds now
 * into one batch and print its document, indented, on stdout. Returns the
 * exit status: 0, or 1 after logging what failed.
 */
int twl_dry_run(const struct twl_run_opts *o);

#endif /* TWL_AGENT_DRY_RUN_H */
