// SPDX-License-Identifier: GPL-2.0
/*
 * "twilight-server migrate-store": its option table, then the copy
 * (store/migrate_store.c) and the one line that says how it ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/config.h>

#include "config.h"
#include "store/migrate_store.h"
#include "store/store.h"

struct migrate_args {
	const char *from, *to;
	unsigned chunk_rows;
	bool recopy, verify_only, help;
};

#define ARG(f) TWL_CFG_FIELD(struct migrate_args, f)
#define SWITCH (TWL_CFG_CLI | TWL_CFG_SWITCH)

const struct twl_cfg_opt twl_migrate_store_cli_options[] = {
	{ .name = "from",
	  .type = TWL_CFG_STRING,
	  ARG(from),
	  .flags = TWL_CFG_CLI | TWL_CFG_REQUIRED,
	  .arg = "sqlite:PATH",
	  .help = "The SQLite store to copy (DATA_DIR/twilight.db), read "
		  "only: a server may keep running on it until the final "
		  "pass." },
	{ .name = "to",
	  .type = TWL_CFG_STRING,
	  ARG(to),
	  .flags = TWL_CFG_CLI | TWL_CFG_REQUIRED | TWL_CFG_URI,
	  .arg = "postgresql://...",
	  .help = "The PostgreSQL database to copy into: empty, or holding "
		  "an earlier run's copy of the same file (it resumes)." },
	{ .name = "chunk-rows",
	  .type = TWL_CFG_UINT,
	  .def = "5000",
	  ARG(chunk_rows),
	  .min = 1,
	  .max = 1000000,
	  .flags = TWL_CFG_CLI,
	  .help = "Rows per chunk: each is read in one statement and "
		  "committed with the copy's progress in one transaction, so "
		  "a stopped copy resumes after the last one committed." },
	{ .name = "recopy",
	  .type = TWL_CFG_BOOL,
	  ARG(recopy),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Copy the tables that verify unequal again, from scratch "
		  "(the final pass, with the server stopped)." },
	{ .name = "verify-only",
	  .type = TWL_CFG_BOOL,
	  ARG(verify_only),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Copy nothing: compare the row counts and checksums of "
		  "every table." },
	{ .name = "help",
	  .short_name = 'h',
	  .type = TWL_CFG_BOOL,
	  ARG(help),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print these options and exit 0." },
};

const size_t twl_migrate_store_cli_n_options =
	sizeof(twl_migrate_store_cli_options) /
	sizeof(twl_migrate_store_cli_options[0]);

#define options twl_migrate_store_cli_options
#define N_OPTIONS twl_migrate_store_cli_n_options

static void usage(FILE *f)
{
	fprintf(f, "usage: twilight-server migrate-store --from sqlite:PATH "
		   "--to postgresql://... [options]\n"
		   "Copies an SQLite store into PostgreSQL, resumable, then "
		   "verifies every table\n(row counts and checksums); exit 0 "
		   "only when all are equal.\n");
	twl_cfg_print_flags(f, options, N_OPTIONS);
}

/* The flags into @a: an exit status, or -1 to go on. */
static int parse(struct migrate_args *a, int argc, char **argv)
{
	struct twl_cfg *p = twl_cfg_new("twilight-server migrate-store");
	int status = 2, ret;

	memset(a, 0, sizeof(*a));
	if (!p || twl_cfg_defaults(options, N_OPTIONS, a) ||
	    twl_cfg_add(p, options, N_OPTIONS, a)) {
		status = 1;
		goto out;
	}
	ret = twl_cfg_args(p, argc - 1, argv + 1, TWL_CFG_PASS_ALL, NULL, NULL);
	if (ret == -ENOMEM) {
		status = 1;
		goto out;
	}
	if (a->help) {
		usage(stdout);
		status = 0;
		goto out;
	}
	if (!ret)
		twl_cfg_check(p);
	if (a->to && !twl_store_is_postgresql(a->to))
		twl_cfg_error(p, "to", "expected a postgresql:// URI");
	if (a->from && twl_store_is_postgresql(a->from))
		twl_cfg_error(p, "from",
			      "expected an SQLite file (sqlite:PATH)");
	twl_cfg_print_msgs(stderr, p);
	if (!twl_cfg_failed(p))
		status = -1;
out:
	twl_cfg_free(p);
	return status;
}

/* Contract: see migrate_store.h. */
int twl_migrate_store_cli(int argc, char **argv)
{
	struct twl_migrate_opts *o = calloc(1, sizeof(*o));
	struct migrate_args a;
	int rc;

	rc = parse(&a, argc, argv);
	if (rc >= 0 || !o) {
		free(o);
		return rc >= 0 ? rc : 1;
	}
	o->from = a.from;
	o->to = a.to;
	o->chunk_rows = a.chunk_rows;
	o->recopy = a.recopy;
	o->verify_only = a.verify_only;
	rc = twl_migrate_store(o);
	if (rc)
		fprintf(stderr, "twilight-server migrate-store: %s\n",
			o->err[0] ? o->err : strerror(-rc));
	free(o);
	return rc ? 1 : 0;
}
