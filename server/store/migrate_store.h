/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "twilight-server migrate-store": an SQLite store copied into a
 * PostgreSQL store, in chunks by primary key, resumable, and verified by
 * row counts and a checksum per table (store/postgresql/README.md says
 * how, docs/operators.md when and what an operator does).
 */
#ifndef TWL_SERVER_MIGRATE_STORE_H
#define TWL_SERVER_MIGRATE_STORE_H

#include <stdbool.h>
#include <stdio.h>

struct twl_migrate_opts {
	const char *from; /* the SQLite file ("sqlite:" before it allowed) */
	const char *to; /* a postgresql:// URI */
	unsigned chunk_rows; /* rows per chunk (0: TWL_MIGRATE_CHUNK_ROWS) */
	bool recopy; /* copy again the tables that verify unequal */
	bool verify_only; /* copy nothing: verify what an earlier run copied */
	/* Testing: stop after this many chunks, as if killed (0: never). */
	unsigned long stop_after_chunks;
	FILE *out; /* progress and verification lines (NULL: stderr) */
	char err[1024]; /* set on failure: what failed and what to do */
};

#define TWL_MIGRATE_CHUNK_ROWS 5000

/*
 * twl_migrate_store - copy @o->from into @o->to and verify the copy.
 * Applies the target's migrations first; refuses (-EPROTO) a source whose
 * schema version is not the one this build writes, and (-EEXIST) a
 * target holding rows no run of this copy from the same file wrote.
 * Tables a previous run finished are not copied again; a table it left
 * midway continues after its last committed chunk. Then every table's
 * rows and checksum are compared, one line each on @o->out.
 * Returns 0 when all are equal; -EBADMSG when some differ (their lines
 * say which); -EINTR when stop_after_chunks stopped it; another negative
 * errno otherwise. On failure @o->err holds one line for the caller to
 * print.
 */
int twl_migrate_store(struct twl_migrate_opts *o);

/*
 * twl_migrate_store_cli - "twilight-server migrate-store" with its
 * arguments (@argv[0] is "migrate-store"): the exit status (0 copied and
 * verified, 1 failed or unequal, 2 a usage error).
 */
int twl_migrate_store_cli(int argc, char **argv);

#endif /* TWL_SERVER_MIGRATE_STORE_H */
