/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state: what the agent must remember across restarts, in
 * STATE_DIR/state.json, replaced atomically (temp file, fsync, rename):
 * the boot id, the first kmsg sequence number the agent saw on that boot
 * (where its view of the boot starts, for health.boots) and the last one
 * it handled, and the per-host batch sequence number last used.
 *
 * Ordering rule (callers): save last_seq only after the batch holding the
 * records up to it is durably spooled, so a crash re-reads rather than
 * skips; a crash between the two re-sends one batch at most.
 */
#ifndef TWL_AGENT_STATE_H
#define TWL_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TWL_STATE_FILE "state.json"

struct twl_state {
	char boot_id[65]; /* "" = none saved */
	bool have_last_seq;
	uint64_t last_seq; /* last kmsg seq handled on boot_id */
	bool have_first_seq;
	uint64_t first_seq; /* first kmsg seq seen on boot_id */
	uint64_t host_seq; /* last batch sequence number used (0 = none yet) */
};

/*
 * twl_state_parse - decode state.json text. Returns 0 or -EINVAL (not the
 * expected object, bad boot id, numbers out of range).
 */
int twl_state_parse(const char *text, size_t len, struct twl_state *st);

/*
 * twl_state_load - read @dir/state.json into @st. A missing file gives an
 * empty state and 0; an unreadable or corrupt one a negative errno
 * (-EINVAL when corrupt), @st then empty.
 */
int twl_state_load(const char *dir, struct twl_state *st);

/* twl_state_save - write @st to @dir/state.json atomically (0600). 0 or -errno. */
int twl_state_save(const char *dir, const struct twl_state *st);

/*
 * twl_state_for_boot - adapt @st to the current boot @boot_id: a different
 * boot forgets first_seq and last_seq (sequence numbers restart), keeps
 * host_seq.
 * Returns true when last_seq applies (same boot).
 */
bool twl_state_for_boot(struct twl_state *st, const char *boot_id);

#endif /* TWL_AGENT_STATE_H */
