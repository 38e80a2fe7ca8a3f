/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daemon: the agent as a service. After start-up (startup.h) the main
 * loop sleeps in poll() on the kmsg fd, a signalfd and one timeout, the
 * earliest due of a small table of periodic jobs (census, batch, send):
 * no busy polling, at most one wake-up per job interval when idle.
 */
#ifndef TWL_AGENT_DAEMON_H
#define TWL_AGENT_DAEMON_H

#include "startup.h"

/*
 * twl_daemon_main - block SIGTERM/SIGINT/SIGHUP (into a signalfd), load
 * and check the config (o->load_config as the daemon), start, then read
 * the kernel log, spool batches and deliver them until SIGTERM/SIGINT
 * (pending records are flushed to the spool first) or the end of a dump
 * file or FIFO given as o->kmsg_file. SIGHUP reloads the config (kept
 * when the new one has errors) and retakes the census. Returns the exit
 * status: 0, or 1 after logging what failed.
 */
int twl_daemon_main(const struct twl_run_opts *o);

#endif /* TWL_AGENT_DAEMON_H */
