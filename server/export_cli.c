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
#include <sys/stat.h>
#include <unistd.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "catalog_data.h"
#include "config.h"
#include "api/api_read.h"
#include "api/export.h"
#include "api/readiness.h"
#include "store/store.h"
#include "store/store_read.h"

/* The server's configuration (for the database and the privacy defaults)
 * and the export's own flags, which override the configuration's. */
struct export_args {
	struct twl_config cfg;
	const char *feature, *output, *out_dir, *from, *label;
	struct twl_read_filter lf; /* --label's KEY and VALUE */
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
	{ .name = "label",
	  .type = TWL_CFG_STRING,
	  ARG(label),
	  .flags = TWL_CFG_CLI,
	  .arg = "KEY=VALUE",
	  .help = "Count only the hosts whose operator label KEY is VALUE, "
		  "e.g. team=payments (default: the whole fleet). The text "
		  "says so; it names the label only with --show-labels." },
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
	{ .name = "show-values",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_values),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Show the values written (default: withheld, unless the "
		  "configuration sets export-show-values)." },
	{ .name = "hide-values",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_values),
	  .flags = SWITCH,
	  .implied = "false",
	  .help = "Withhold the values written, overriding the configuration "
		  "file." },
	{ .name = "show-images",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_images),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Name container images (default: withheld, unless the "
		  "configuration sets export-show-images)." },
	{ .name = "show-labels",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_labels),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Show hosts by the value of export-group-label (default: "
		  "withheld, unless the configuration sets "
		  "export-show-labels)." },
	{ .name = "show-teams",
	  .type = TWL_CFG_BOOL,
	  ARG(cfg.export_show_teams),
	  .flags = SWITCH,
	  .implied = "true",
	  .help = "Name the teams that own use cases (default: withheld, "
		  "unless the configuration sets export-show-teams)." },
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
	{ .name = "out-dir",
	  .type = TWL_CFG_STRING,
	  ARG(out_dir),
	  .flags = TWL_CFG_CLI,
	  .arg = "DIR",
	  .help = "Write one message per mailing list instead: DIR/LIST.eml "
		  "(RFC 5322, CRLF, with In-Reply-To and References of the "
		  "upstream thread) and DIR/LIST.txt (the body alone, to paste), "
		  "LIST being the list's address; a list with no feature in "
		  "use gets none (and loses an older one). Text only; not with "
		  "--output." },
	{ .name = "from",
	  .type = TWL_CFG_STRING,
	  ARG(from),
	  .flags = TWL_CFG_CLI,
	  .arg = "ADDR",
	  .help = "The From of the --out-dir messages, e.g. \"Jane Doe "
		  "<jane@example.org>\" (default: " TWL_EXPORT_FROM_PLACEHOLDER
		  ", to replace before sending)." },
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
	/*
	 * The server's catalog, the data directory's when newer, as GET
	 * /api/v1/export/linux-mm has it; before --feature is looked up and
	 * before the store opens (it seeds its tables from the catalog).
	 */
	ret = twl_cfg_failed(p) ? 0 : twl_server_catalog_load(a->cfg.data_dir);
	if (ret)
		twl_cfg_error(p, "data-dir",
			      "cannot install %s/catalog.json: %s",
			      a->cfg.data_dir, strerror(-ret));
	if (n_rest)
		twl_cfg_error(p, NULL, "unexpected argument '%s'", rest[0]);
	if (a->feature && !twl_catalog_find(a->feature))
		twl_cfg_error(
			p, "feature",
			"%s is not a catalog feature id (see GET /api/v1/catalog)",
			a->feature);
	if (a->label && twl_api_label_parse(a->label, &a->lf))
		twl_cfg_error(p, "label",
			      "expected KEY=VALUE, a host.labels key and value "
			      "(as the agent's labels setting has them)");
	if (a->out_dir && a->output)
		twl_cfg_error(p, "out-dir",
			      "give --out-dir or --output, not both");
	if (a->out_dir && a->format != TWL_EXPORT_TEXT)
		twl_cfg_error(p, "out-dir",
			      "--out-dir writes mail: --format must be text");
	if (a->from && !a->out_dir)
		twl_cfg_error(p, "from",
			      "--from is for the --out-dir messages");
	twl_cfg_print_msgs(stderr, p);
	if (!twl_cfg_failed(p))
		status = -1;
out:
	free(rest);
	twl_cfg_free(p);
	return status;
}

/*
 * The preview states what leaves the building: each redaction setting, on
 * or off, on standard error (the export itself says it too).
 */
static void preview_settings(const struct twl_export_opts *o)
{
	fprintf(stderr,
		"twilight-server export: redaction: export-show-hosts=%s "
		"export-show-cgroups=%s export-show-images=%s "
		"export-show-labels=%s export-show-teams=%s%s\n",
		o->show_hosts ? "on" : "off", o->full_cgroups ? "on" : "off",
		o->show_images ? "on" : "off", o->show_labels ? "on" : "off",
		o->show_teams ? "on" : "off",
		o->hide_processes ? ", process names hidden" : "");
	if (o->label_key)
		fprintf(stderr,
			"twilight-server export: counting only the hosts "
			"labelled %s=%s%s\n",
			o->label_key, o->label_value,
			o->show_labels ? "" :
					 " (the export withholds the label)");
}

/* The export data as @a asks, redacted, into *@red. 0 or an exit status. */
static int redacted(const struct export_args *a, struct twl_store *store,
		    json_t **red)
{
	struct twl_export_opts opts = {
		.show_hosts = a->cfg.export_show_hosts,
		.full_cgroups = a->cfg.export_show_cgroups,
		.hide_processes = a->hide_processes,
		.show_values = a->cfg.export_show_values,
		.show_images = a->cfg.export_show_images,
		.show_labels = a->cfg.export_show_labels,
		.show_teams = a->cfg.export_show_teams,
		.group_label = a->cfg.export_group_label,
		.label_key = a->label ? a->lf.label_key : NULL,
		.label_value = a->lf.label_value,
	};
	int64_t now = time(NULL);
	json_t *data = NULL;
	int rc;

	rc = twl_read_export_data(store, now, a->days, a->feature, &opts,
				  &data);
	if (rc)
		return fail("reading the export data", -rc);
	rc = twl_readiness_export(store, a->cfg.data_dir,
				  a->cfg.export_readiness_target,
				  now - (int64_t)a->days * 86400,
				  opts.label_key, opts.label_value, data);
	if (rc) {
		json_decref(data);
		return fail(rc == -ENOENT ? "export-readiness-target: no such "
					    "target" :
					    "reading the readiness target",
			    -rc);
	}
	preview_settings(&opts);
	*red = twl_export_redact(data, &opts);
	rc = *red ? 0 : fail("redacting", errno);
	json_decref(data);
	return rc;
}

/* The export as @a asks, rendered into *@text. 0 or an exit status. */
static int render(const struct export_args *a, struct twl_store *store,
		  char **text, size_t *len)
{
	json_t *red = NULL;
	int rc;

	rc = redacted(a, store, &red);
	if (rc)
		return rc;
	rc = twl_export_render(red, (enum twl_export_format)a->format, text,
			       len);
	if (rc)
		rc = fail("rendering", -rc);
	json_decref(red);
	return rc;
}

/* DIR/NAME.EXT of @a's --out-dir into @path. 0 or an exit status. */
static int out_path(const struct export_args *a, const char *name,
		    const char *ext, char *path, size_t cap)
{
	if ((size_t)snprintf(path, cap, "%s/%s.%s", a->out_dir, name, ext) <
	    cap)
		return 0;
	return fail(a->out_dir, ENAMETOOLONG);
}

/*
 * Remove the files an older run wrote for lists that have nothing to
 * report now, so the directory holds exactly this run's messages.
 */
static int remove_stale(const struct export_args *a,
			const struct twl_export_message *m, size_t n)
{
	static const char *const exts[] = { "eml", "txt" };
	char path[4096];
	size_t r, i, e;
	int rc;

	for (r = 0; r < twl_catalog_route_count(); r++) {
		const char *list = twl_catalog_route_at(r)->to[0];
		char *name;

		for (i = 0; i < n && strcmp(m[i].list, list); i++)
			;
		if (i < n)
			continue;
		name = twl_export_file_stem(list);
		if (!name)
			return fail("removing older messages", ENOMEM);
		for (e = 0, rc = 0; e < 2 && !rc; e++) {
			rc = out_path(a, name, exts[e], path, sizeof(path));
			if (!rc && unlink(path) && errno != ENOENT)
				rc = fail(path, errno);
		}
		free(name);
		if (rc)
			return rc;
	}
	return 0;
}

/* --out-dir: one .eml and one .txt per list. 0 or an exit status. */
static int write_messages(const struct export_args *a, struct twl_store *store)
{
	struct twl_export_message *m = NULL;
	json_t *red = NULL;
	char path[4096];
	size_t n = 0, i;
	int rc;

	rc = redacted(a, store, &red);
	if (rc)
		return rc;
	rc = twl_export_messages(red, a->from, &m, &n);
	if (rc) {
		rc = fail(rc == -EINVAL && a->from ?
				  "rendering the messages (is --from one mail "
				  "address?)" :
				  "rendering the messages",
			  -rc);
		goto out;
	}
	if (mkdir(a->out_dir, 0755) && errno != EEXIST) {
		rc = fail(a->out_dir, errno);
		goto out;
	}
	for (i = 0; i < n && !rc; i++) {
		rc = out_path(a, m[i].name, "eml", path, sizeof(path));
		if (!rc && (rc = twl_write_file_atomic(path, m[i].eml,
						       m[i].eml_len, 0644)))
			rc = fail(path, -rc);
		if (!rc)
			rc = out_path(a, m[i].name, "txt", path, sizeof(path));
		if (!rc && (rc = twl_write_file_atomic(path, m[i].body,
						       m[i].body_len, 0644)))
			rc = fail(path, -rc);
		if (!rc)
			fprintf(stderr, "%s/%s.eml, .txt: to %s\n", a->out_dir,
				m[i].name, m[i].list);
	}
	if (!rc)
		rc = remove_stale(a, m, n);
	if (!rc && !n)
		fprintf(stderr, "no feature in use: no message written\n");
out:
	twl_export_messages_free(m, n);
	json_decref(red);
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
	if (!twl_store_is_postgresql(a.cfg.db_path) &&
	    access(a.cfg.db_path, R_OK)) {
		fprintf(stderr,
			"twilight-server export: no database at %s: give --data-dir of a server that has received reports\n",
			a.cfg.db_path);
		return 1;
	}
	rc = twl_store_open(a.cfg.db_path, &store);
	if (rc)
		return fail(a.cfg.db_path, -rc);
	if (a.out_dir) {
		rc = write_messages(&a, store);
		goto out;
	}
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
