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

#define CLI_MAX_ARGS 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twilight-server export [--data-dir DIR | --db FILE] [options]\n"
		"  --feature ID        one catalog feature (default: all)\n"
		"  --format FMT        text (the email, default), csv or json\n"
		"  --days N            look-back window in days (default 30)\n"
		"  --show-hosts        list host names (default: withheld)\n"
		"  --hide-hosts        withhold host names (overrides the config file)\n"
		"  --full-cgroups      keep cgroup paths and container ids\n"
		"  --cgroup-kinds      reduce cgroup paths to their kind (default)\n"
		"  --hide-processes    replace process names by (hidden)\n"
		"  --output FILE       write to FILE instead of standard output\n"
		"Other server options (--config, --db, ...) are accepted.\n"
		"twilight never sends mail: review the text, then send it yourself.\n");
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "twilight-server export: %s: %s\n", what,
		strerror(err));
	return 1;
}

/* Contract: see export.h. */
int twl_export_cli(int argc, char **argv)
{
	struct twl_config cfg;
	struct twl_export_opts opts = { 0 };
	enum twl_export_format fmt = TWL_EXPORT_TEXT;
	const char *feature = NULL, *output = NULL;
	char *pass[CLI_MAX_ARGS], *rest[CLI_MAX_ARGS], err[256];
	bool hosts_set = false, cgroups_set = false;
	int n_pass = 0, n_rest = 0, i, rc;
	unsigned days = 30;
	struct twl_store *store = NULL;
	json_t *data = NULL, *red = NULL;
	char *text = NULL;
	size_t len = 0;

	if (argc > CLI_MAX_ARGS)
		return fprintf(stderr,
			       "twilight-server export: too many arguments\n"),
		       2;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--show-hosts") ||
			   !strcmp(a, "--hide-hosts")) {
			opts.show_hosts = !strcmp(a, "--show-hosts");
			hosts_set = true;
		} else if (!strcmp(a, "--full-cgroups") ||
			   !strcmp(a, "--cgroup-kinds")) {
			opts.full_cgroups = !strcmp(a, "--full-cgroups");
			cgroups_set = true;
		} else if (!strcmp(a, "--hide-processes")) {
			opts.hide_processes = true;
		} else if (!strcmp(a, "--feature") || !strcmp(a, "--format") ||
			   !strcmp(a, "--days") || !strcmp(a, "--output")) {
			if (!val) {
				fprintf(stderr,
					"twilight-server export: %s needs a value\n",
					a);
				return 2;
			}
			i++;
			if (!strcmp(a, "--feature")) {
				feature = val;
			} else if (!strcmp(a, "--output")) {
				output = val;
			} else if (!strcmp(a, "--format")) {
				if (twl_export_parse_format(val, &fmt)) {
					fprintf(stderr,
						"twilight-server export: --format %s: expected text, csv or json\n",
						val);
					return 2;
				}
			} else {
				char *end;
				long n = strtol(val, &end, 10);

				if (*end || end == val || n < 1 || n > 366) {
					fprintf(stderr,
						"twilight-server export: --days %s: expected 1 to 366\n",
						val);
					return 2;
				}
				days = (unsigned)n;
			}
		} else {
			pass[n_pass++] = argv[i];
		}
	}
	if (feature && !twl_catalog_find(feature)) {
		fprintf(stderr,
			"twilight-server export: --feature %s: not a catalog feature id (see GET /api/v1/catalog)\n",
			feature);
		return 2;
	}
	twl_config_defaults(&cfg);
	if (twl_config_load(&cfg, n_pass, pass, rest, &n_rest, err,
			    sizeof(err)) ||
	    twl_config_finish(&cfg, err, sizeof(err))) {
		fprintf(stderr, "twilight-server export: %s\n", err);
		usage(stderr);
		return 2;
	}
	if (n_rest) {
		fprintf(stderr,
			"twilight-server export: unexpected argument '%s'\n",
			rest[0]);
		return 2;
	}
	if (!hosts_set)
		opts.show_hosts = cfg.export_show_hosts;
	if (!cgroups_set)
		opts.full_cgroups = cfg.export_show_cgroups;
	if (access(cfg.db_path, R_OK)) {
		fprintf(stderr,
			"twilight-server export: no database at %s: give --data-dir of a server that has received reports\n",
			cfg.db_path);
		return 1;
	}
	rc = twl_store_open(cfg.db_path, &store);
	if (rc)
		return fail(cfg.db_path, -rc);
	rc = twl_read_export_data(store, time(NULL), days, feature,
				  opts.full_cgroups, opts.show_hosts, &data);
	if (rc) {
		fail("reading the export data", -rc);
		goto out;
	}
	red = twl_export_redact(data, &opts);
	if (!red) {
		rc = -errno;
		fail("redacting", errno);
		goto out;
	}
	rc = twl_export_render(red, fmt, &text, &len);
	if (rc) {
		fail("rendering", -rc);
		goto out;
	}
	if (output) {
		rc = twl_write_file_atomic(output, text, len, 0644);
		if (rc)
			fail(output, -rc);
	} else if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
		rc = -EIO;
		fail("standard output", EIO);
	}
out:
	free(text);
	json_decref(red);
	json_decref(data);
	twl_store_close(store);
	return rc ? 1 : 0;
}
