// SPDX-License-Identifier: GPL-2.0
/*
 * twilight-agent: reads kernel deprecation warnings from /dev/kmsg, takes
 * a cgroup census, and ships both to the twilight server through a
 * durable spool. See agent/twilight-agent.conf.example and --help.
 *
 * This file is the command line: options, the config file, --check-config;
 * the run modes are daemon.c (the service) and dry_run.c (--dry-run).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "config.h"
#include "daemon.h"
#include "dry_run.h"

struct opts {
	const char *config;
	bool config_given;
	const char *kmsg_file;
	bool dry_run, check_config;
	/* The arguments after the program name: their keys override the file. */
	int argc;
	char **argv;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: twilight-agent [options] [--KEY VALUE]...\n"
		"Reports kernel deprecation warnings (cgroup v1 memory controller first)\n"
		"to a twilight server.\n\n");
	twl_config_print_help(f);
	fprintf(f,
		"\nA boolean key alone means true, --no-KEY false. Signals: SIGHUP reloads\n"
		"the config and retakes the census; SIGTERM spools what is pending and\n"
		"exits 0.\n");
}

/* --help, --version, --print-config: print and return 1; else 0. */
static int print_action(const struct twl_agent_cli *cli)
{
	if (cli->help)
		usage(stdout);
	else if (cli->version)
		printf("twilight-agent %s (wire format v%d)\n",
		       TWL_AGENT_VERSION, TWL_WIRE_VERSION);
	else if (cli->print_config)
		twl_config_print_example(stdout);
	else
		return 0;
	return 1;
}

/*
 * Parse the command line into @o. Its configuration keys are checked
 * against a scratch config now, so that a bad one is a usage error before
 * anything starts; load_config() applies them after the file. Returns 0,
 * 1 when an action (--help ...) is done, -EINVAL or -ENOMEM.
 */
static int parse_args(int argc, char **argv, struct opts *o)
{
	struct twl_agent_cli cli;
	struct twl_config scratch;
	struct twl_cfg *p = NULL;
	int ret = -ENOMEM;

	memset(&cli, 0, sizeof(cli));
	if (twl_config_init(&scratch))
		return -ENOMEM;
	if (twl_cfg_defaults(twl_agent_cli_options, twl_agent_cli_n_options,
			     &cli))
		goto out;
	p = twl_config_session(&scratch, &cli);
	if (!p)
		goto out;
	ret = twl_cfg_args(p, argc - 1, argv + 1, TWL_CFG_PASS_ALL, NULL, NULL);
	if (ret == -ENOMEM)
		goto out;
	if (print_action(&cli)) {
		ret = 1;
		goto out;
	}
	if (ret) {
		twl_cfg_print_msgs(stderr, p);
		fprintf(stderr, "Try twilight-agent --help.\n");
		goto out;
	}
	o->config = cli.config;
	o->config_given = twl_cfg_given(p, "config");
	o->kmsg_file = cli.kmsg_file;
	o->dry_run = cli.dry_run;
	o->check_config = cli.check_config;
	o->argc = argc - 1;
	o->argv = argv + 1;
out:
	twl_cfg_free(p);
	twl_config_fini(&scratch);
	return ret;
}

/*
 * Load the config into @cfg: the file (for the daemon, or when -c names
 * one), then the keys given on the command line; the daemon's is also
 * validated. Every error and deprecation note goes to stderr. 0, -EINVAL
 * or -ENOMEM; on error @cfg is left empty.
 */
static int load_config(const struct opts *o, struct twl_config *cfg,
		       bool daemon)
{
	struct twl_agent_cli cli; /* parse_args() took these flags */
	struct twl_cfg *p;
	int ret;

	ret = twl_config_init(cfg);
	if (ret)
		return ret;
	memset(&cli, 0, sizeof(cli));
	p = twl_config_session(cfg, &cli);
	if (!p) {
		twl_config_fini(cfg);
		return -ENOMEM;
	}
	if (daemon || o->config_given)
		ret = twl_cfg_load_file(p, o->config, TWL_AGENT_CONFIG_MAX,
					true);
	if (ret != -ENOMEM)
		ret = twl_cfg_args(p, o->argc, o->argv, TWL_CFG_PASS_LATE, NULL,
				   NULL);
	if (ret != -ENOMEM && daemon && !twl_cfg_failed(p))
		twl_config_validate(cfg, true, p);
	twl_cfg_print_msgs(stderr, p);
	if (ret != -ENOMEM)
		ret = twl_cfg_failed(p) ? -EINVAL : 0;
	if (ret)
		twl_config_fini(cfg);
	twl_cfg_free(p);
	return ret;
}

/* The run modes load the config through this, at start and on SIGHUP. */
static int run_load_config(void *ctx, struct twl_config *cfg, bool daemon)
{
	return load_config(ctx, cfg, daemon);
}

static int check_config(struct opts *o)
{
	struct twl_config cfg;
	int ret;

	ret = load_config(o, &cfg, true);
	twl_config_fini(&cfg);
	if (ret) {
		fprintf(stderr, "%s: configuration has errors (listed above)\n",
			o->config);
		return 1;
	}
	printf("%s: configuration OK\n", o->config);
	return 0;
}

int main(int argc, char **argv)
{
	struct twl_run_opts r;
	struct opts o;

	int ret;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	twl_log_init("twilight-agent", LOG_INFO);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 2 : 0;
	if (o.check_config)
		return check_config(&o);
	r.config_path = o.config;
	r.kmsg_file = o.kmsg_file;
	r.load_config = run_load_config;
	r.load_ctx = &o;
	if (o.dry_run)
		return twl_dry_run(&r);
	return twl_daemon_main(&r);
}
