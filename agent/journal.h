/* SPDX-License-Identifier: GPL-2.0 */
/*
 * journal: kernel records from the systemd journal, for backfill. Each
 * deprecation warning prints once per boot, usually minutes after boot; on
 * long-running hosts /dev/kmsg overwrote it long ago, the journal kept it.
 *
 * Read through libsystemd's sd-journal from journal FILES this module
 * chooses (this machine's directories, or files it is given), each probed
 * alone first so that a corrupt or truncated file is reported and skipped,
 * not fatal. Never followed record by record: a backfill reads what the
 * journal holds for the current boot and, on the first backfill only,
 * earlier boots (newest first, bounded); a boot with a saved cursor is
 * read on from it every time (the boot the agent last ran on is
 * finished that way after a reboot).
 *
 * Trust: only _TRANSPORT=kernel with SYSLOG_FACILITY=0 is a kernel record
 * (verified, wire origin "journal"). A user-space write to /dev/kmsg also
 * has _TRANSPORT=kernel, and journald splits "<14>kernel: text" into
 * SYSLOG_IDENTIFIER=kernel and the text, so it looks like the kernel in
 * journalctl; its facility (1 there) gives it away. journald's own
 * "Missed N kernel messages" entries count records lost per boot.
 *
 * Times: _SOURCE_MONOTONIC_TIMESTAMP is the kernel's stamp (the same
 * microseconds as the /dev/kmsg record); __MONOTONIC_TIMESTAMP is when
 * journald received it and is not used for records.
 *
 * Resuming: every entry handed out carries the cursor to commit once it is
 * handled (twl_journal_commit(), then save the state), so a restart
 * neither repeats nor skips. The state is one JSON file (journal.json in
 * the state dir), replaced atomically, at most TWL_JOURNAL_MAX_BOOTS boots.
 */
#ifndef TWL_AGENT_JOURNAL_H
#define TWL_AGENT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "textlog.h"

#define TWL_JOURNAL_MAX_BOOTS \
	16 /* boots kept in the state, read per backfill */
#define TWL_JOURNAL_CURSOR_MAX 512 /* sd-journal cursors are ~120 bytes */
#define TWL_JOURNAL_MAX_FILES 4096 /* journal files opened at most */
#define TWL_JOURNAL_MAX_UNIQUE 4096 /* boot ids looked at at most */
#define TWL_JOURNAL_STATE_FILE "journal.json"

/* ---- Where each boot was left (journal_state.c) ---- */

struct twl_journal_state {
	bool backfilled; /* earlier boots were chosen once: not again */
	size_t n;
	struct {
		char boot_id[33];
		char cursor[TWL_JOURNAL_CURSOR_MAX];
	} boots[TWL_JOURNAL_MAX_BOOTS]; /* oldest first */
};

/*
 * twl_journal_state_parse - @text (@len bytes of JSON) into @st. Returns 0,
 * or -EINVAL (not the state's form; @st is then empty). Unknown members
 * (a newer agent's) are ignored.
 */
int twl_journal_state_parse(const char *text, size_t len,
			    struct twl_journal_state *st);

/* twl_journal_state_load - @dir/journal.json into @st; no file is an empty state. 0 or -errno. */
int twl_journal_state_load(const char *dir, struct twl_journal_state *st);

/* twl_journal_state_save - replace @dir/journal.json atomically. 0 or -errno. */
int twl_journal_state_save(const char *dir, const struct twl_journal_state *st);

/* twl_journal_state_cursor - the saved cursor of @boot_id, or NULL. */
const char *twl_journal_state_cursor(const struct twl_journal_state *st,
				     const char *boot_id);

/*
 * twl_journal_state_set - remember @cursor for @boot_id (32 hex digits);
 * a new boot is added at the end and the oldest dropped when all
 * TWL_JOURNAL_MAX_BOOTS are taken. 0, or -EINVAL (bad id, cursor empty or
 * too long).
 */
int twl_journal_state_set(struct twl_journal_state *st, const char *boot_id,
			  const char *cursor);

/* ---- Reading (journal.c) ---- */

struct twl_journal_opts {
	/* Journal files to read (tests, an operator's copy); NULL: @dirs. */
	const char *const *files;
	/*
	 * Directories holding <machine-id>/system*.journal* (NULL-terminated);
	 * NULL: /var/log/journal and /run/log/journal.
	 */
	const char *const *dirs;
	const char *machine_id; /* for @dirs; NULL: /etc/machine-id */
	const char *current_boot; /* this boot's id; NULL: none is current */
	unsigned max_earlier_boots; /* read on the first backfill, newest first */
	const struct twl_journal_state
		*state; /* copied; NULL: nothing read yet */
	/* Called for each journal file skipped (corrupt, unreadable): path, -errno. */
	void (*on_file_error)(void *ctx, const char *path, int err);
	void *ctx;
};

/* Where the journal's view of one boot starts, and what this read saw. */
struct twl_journal_boot {
	char boot_id[33];
	char kernel[65]; /* release from "Linux version X ..."; "" when not held */
	uint64_t first_mono_us; /* kernel stamp of the boot's first kernel entry held */
	int64_t first_wall_us;
	bool start_covered; /* "Linux version" held, or the first entry at 0 */
	bool current;
	uint64_t records, user_kmsg, missed, failures; /* in this read */
};

enum twl_journal_kind {
	TWL_JOURNAL_RECORD = 1, /* rec is a kernel record */
	TWL_JOURNAL_BOOT_END, /* no record: the boot was read through */
};

struct twl_journal_entry {
	enum twl_journal_kind kind;
	struct twl_log_record rec; /* format TWL_LOG_JOURNAL */
	char boot_id[33];
	char kernel[65]; /* the boot's release, as in struct twl_journal_boot */
	char cursor[TWL_JOURNAL_CURSOR_MAX]; /* commit it once handled */
};

struct twl_journal_stats {
	uint64_t files, file_errors; /* journal files opened, skipped */
	uint64_t records, user_kmsg, missed, failures, read_errors;
};

struct twl_journal;

/*
 * twl_journal_open - probe and open the journal files, list the boots with
 * kernel records and choose the ones to read (see the top of this file).
 * Files that fail are reported through on_file_error and counted; no
 * usable file at all is not an error (an empty read). Returns NULL + errno
 * (ENOMEM; EINVAL for a bad option or /etc/machine-id without an id; the
 * error of a directory that cannot be listed or of reading
 * /etc/machine-id, e.g. EACCES).
 */
struct twl_journal *twl_journal_open(const struct twl_journal_opts *o);

/* twl_journal_free - close and free; NULL-safe. */
void twl_journal_free(struct twl_journal *j);

/*
 * twl_journal_next - the next entry of the chosen boots, oldest boot
 * first: 1 with @e filled (a RECORD, or a BOOT_END after a boot's last
 * entry so its trailing non-record entries are committed too), -ENODATA
 * when every chosen boot was read (the state is then marked backfilled,
 * unless no journal file could be opened: earlier boots wait for one).
 * Entries that are not records are counted, not returned; a read error of
 * the journal ends that boot's read (counted, the next boot follows).
 */
int twl_journal_next(struct twl_journal *j, struct twl_journal_entry *e);

/*
 * twl_journal_commit - @e is handled: its boot resumes after it. Updates
 * the state twl_journal_state() returns (save it with
 * twl_journal_state_save()). 0 or -EINVAL.
 */
int twl_journal_commit(struct twl_journal *j,
		       const struct twl_journal_entry *e);

/* twl_journal_state - the state with every commit so far. */
const struct twl_journal_state *twl_journal_state(const struct twl_journal *j);

/*
 * twl_journal_boots - the chosen boots (oldest first, at most @cap) into
 * @out; returns how many there are.
 */
size_t twl_journal_boots(const struct twl_journal *j,
			 struct twl_journal_boot *out, size_t cap);

/* twl_journal_stats - the counters so far. */
void twl_journal_stats(const struct twl_journal *j,
		       struct twl_journal_stats *st);

#endif /* TWL_AGENT_JOURNAL_H */
