// SPDX-License-Identifier: GPL-2.0
/*
 * "twilight-server export": the linux-mm export from the command line,
 * same data and text as GET /api/v1/export/linux-mm. Prints; never mails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "config.h"
#include "api/export.h"
#include "store/store.h"
#include "store/store_read.h"

/* The server's configuration (for the database and the privacy defaults)
 * and the export's own flags, which override the configuration's. */
struct export_args {
	struct twl_config cfg;
	const char *feature, *output;
	int format; /* enum twl_export_format: index in "text|csv|json" */
	unsigned days;
	bool hide_processes, help;
};

_Static_assert(TWL_EXPORT_TEXT == 0 && TWL_EXPORT_CSV == 1 &&
		       TWL_EXPORT_JSON == 2,
	       "--format's words are in the enum's order");

#define ARG(f) TWL_CFG_FIELD(struct export_args, f)
#define SWITCH (TWL_CFG_CLI | TWL_CFG_SWITCH)

const struct twl_cfg_opt twl_export_cli_options[] = {
	{ .name = "feature",
	  .type = TWL_CFG_STRING,
	  ARG(feature),
	  .flags = TWL_CFG_CLI,
	  .arg = "ID",
	  .help = "One catalog feature, e.g. memcg_v1.soft_limit (default: "
		  "all)." },
	{ .name = "format",
	  .type = TWL_CFG_CHOICE,
	  .def = "text",
	  ARG(format),
	  .flags = TWL_CFG_CLI,
	  .choices = "text|csv|json",
	  .arg = "FMT",
	  .help = "text (the email), csv or json." },
	{ .name = "days",
	  .type = TWL_CFG_UINT,
	  .def = "30",
	  ARG(days),
	  .min = 1,
	  .max = 366,
	  .flags = TWL_CFG_CLI,
	  .help = "Look-back window in days." },
	{ .name = "show-hosts",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_hosts),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "List host names (default: withheld, unless the "
		  "configuration sets export-show-hosts)." },
	{ .name = "hide-hosts",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_hosts),
	  .flags = SWITCH,
	  .implied = "false",
	  .help = "Withhold host names, overriding the configuration file." },
	{ .name = "full-cgroups",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_cgroups),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Keep cgroup paths and container ids." },
	{ .name = "cgroup-kinds",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_cgroups),
	  .flags = SWITCH,
	  .implied = "false",
	  .help = "Reduce cgroup paths to their kind (the default)." },
	{ .name = "hide-processes",
	  .type = TWL_CFG_BOOL,
	  ARG(hide_processes),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Replace process names by \"(hidden)\"." },
	{ .name = "output",
	  .type = TWL_CFG_STRING,
	  ARG(output),
	  .flags = TWL_CFG_CLI,
	  .arg = "FILE",
	  .help = "Write to FILE (atomically, mode 0644) instead of standard "
		  "output." },
	{ .name = "help",
	  .short_name = 'h',
	  .type = TWL_CFG_BOOL,
	  ARG(help),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Print these options and exit 0." },
};

const size_t twl_export_cli_n_options =
	sizeof(twl_export_cli_options) / sizeof(twl_export_cli_options[0]);

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twilight-server export [--data-dir DIR | --db FILE] [options]\n");
	twl_cfg_print_flags(f, twl_export_cli_options,
			    twl_export_cli_n_options);
	fprintf(f,
		"Other server options (--config, --db, ...) are accepted.\n"
		"twilight never sends mail: review the text, then send it yourself.\n");
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "twilight-server export: %s: %s\n", what,
		strerror(err));
	return 1;
}

/* The flags and the config file into @a: an exit status, or -1 to go on. */
static int parse(struct export_args *a, int argc, char **argv)
{
	struct twl_cfg *p = twl_cfg_new("twilight-server export");
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int n_rest = 0, ret, status = 2;

	memset(a, 0, sizeof(*a));
	twl_config_defaults(&a->cfg);
	if (!p || !rest ||
	    twl_cfg_defaults(twl_export_cli_options, twl_export_cli_n_options,
			     a) ||
	    twl_cfg_add(p, twl_export_cli_options, twl_export_cli_n_options,
			a)) {
		status = 1;
		goto out;
	}
	ret = twl_config_parse_cli(&a->cfg, p, argc - 1, argv + 1, rest,
				   &n_rest);
	if (ret == -ENOMEM) {
		status = 1;
		goto out;
	}
	if (a->help) {
		usage(stdout);
		status = 0;
		goto out;
	}
	twl_config_check(&a->cfg, p);
	if (n_rest)
		twl_cfg_error(p, NULL, "unexpected argument '%s'", rest[0]);
	if (a->feature && !twl_catalog_find(a->feature))
		twl_cfg_error(
			p, "feature",
			"%s is not a catalog feature id (see GET /api/v1/catalog)",
			a->feature);
	twl_cfg_print_msgs(stderr, p);
	if (!twl_cfg_failed(p))
		status = -1;
out:
	free(rest);
	twl_cfg_free(p);
	return status;
}

/* The export as @a asks, rendered into *@text. 0 or an exit status. */
static int render(const struct export_args *a, struct twl_store *store,
		  char **text, size_t *len)
{
	struct twl_export_opts opts = {
		.show_hosts = a->cfg.export_show_hosts,
		.full_cgroups = a->cfg.export_show_cgroups,
		.hide_processes = a->hide_processes,
	};
	json_t *data = NULL, *red = NULL;
	int rc;

	rc = twl_read_export_data(store, time(NULL), a->days, a->feature,
				  opts.full_cgroups, opts.show_hosts, &data);
	if (rc) {
		rc = fail("reading the export data", -rc);
		goto out;
	}
	red = twl_export_redact(data, &opts);
	if (!red) {
		rc = fail("redacting", errno);
		goto out;
	}
	rc = twl_export_render(red, (enum twl_export_format)a->format, text,
			       len);
	if (rc)
		rc = fail("rendering", -rc);
out:
	json_decref(red);
	json_decref(data);
	return rc;
}

/* Contract: see export.h. */
int twl_export_cli(int argc, char **argv)
{
	struct twl_store *store = NULL;
	struct export_args a;
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = parse(&a, argc, argv);
	if (rc >= 0)
		return rc;
	if (access(a.cfg.db_path, R_OK)) {
		fprintf(stderr,
			"twilight-server export: no database at %s: give --data-dir of a server that has received reports\n",
			a.cfg.db_path);
		return 1;
	}
	rc = twl_store_open(a.cfg.db_path, &store);
	if (rc)
		return fail(a.cfg.db_path, -rc);
	rc = render(&a, store, &text, &len);
	if (rc)
		goto out;
	if (a.output) {
		rc = twl_write_file_atomic(a.output, text, len, 0644);
		if (rc)
			rc = fail(a.output, -rc);
	} else if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
		rc = fail("standard output", EIO);
	}
out:
	free(text);
	twl_store_close(store);
	return rc;
}
