/* SPDX-License-Identifier: GPL-2.0 */
/* journal_int: the journal files shared by journal.c and journal_files.c only. */
#ifndef TWL_AGENT_JOURNAL_INT_H
#define TWL_AGENT_JOURNAL_INT_H

#include <systemd/sd-journal.h>

#include "journal.h"

/* Journal file paths, NULL-terminated. */
struct jfiles {
	size_t n;
	char *paths[TWL_JOURNAL_MAX_FILES + 1];
};

/* jfiles_list - the files to read per @o (see struct twl_journal_opts). 0 or -errno. */
int jfiles_list(struct jfiles *f, const struct twl_journal_opts *o);

/*
 * jfiles_open - probe each file alone (a refused one is reported through
 * @o->on_file_error, counted in @st and dropped from @f), then open the
 * rest together into *@out (NULL when none is left). 0 or -errno.
 */
int jfiles_open(struct jfiles *f, const struct twl_journal_opts *o,
		struct twl_journal_stats *st, sd_journal **out);

/* jfiles_free - free the paths. */
void jfiles_free(struct jfiles *f);

#endif /* TWL_AGENT_JOURNAL_INT_H */
