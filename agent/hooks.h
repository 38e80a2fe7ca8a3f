/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hooks: the daemon's pump callbacks, which tie the pump to the sender
 * (spooling batches, health of the delivery) and to the BPF counters
 * (usage[], probe health, and the kmsg/BPF cross-check that lists
 * features the kernel warned about but no probe counted).
 */
#ifndef TWL_AGENT_HOOKS_H
#define TWL_AGENT_HOOKS_H

#include "pump.h"
#include "startup.h"

/*
 * twl_agent_hooks - point @pc's sink, sender health and BPF hooks at @a.
 * They read a->sender and a->bpf at each call, so a reload may replace
 * the sender; @a must outlive the pump.
 */
void twl_agent_hooks(struct twl_agent *a, struct twl_pump_cfg *pc);

#endif /* TWL_AGENT_HOOKS_H */
