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
#include <getopt.h>
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
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: twilight-agent [options]\n"
		"Reports kernel deprecation warnings (cgroup v1 memory controller first)\n"
		"to a twilight server.\n\n"
		"  -c, --config FILE     config file (default " TWL_AGENT_DEFAULT_CONFIG
		")\n"
		"      --check-config    check the config, name every bad value, exit 1 if any\n"
		"      --dry-run         print the one report that would be sent, send nothing,\n"
		"                        write nothing (no config, server, token or root needed)\n"
		"      --kmsg-file FILE  read a saved dump (/dev/kmsg records, dmesg or dmesg -r\n"
		"                        output, detected) or a FIFO instead of /dev/kmsg;\n"
		"                        without --dry-run: spool what it holds and exit\n"
		"      --print-config    print a commented example config and exit\n"
		"  -h, --help            this help and the config options\n"
		"      --version         print the version\n\n"
		"Signals: SIGHUP reloads the config and retakes the census; SIGTERM spools\n"
		"what is pending and exits 0.\n\n");
	twl_config_print_help(f);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_CHECK = 256, O_DRY, O_KMSG, O_PRINT, O_VERSION };
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, O_CHECK },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "kmsg-file", required_argument, NULL, O_KMSG },
		{ "print-config", no_argument, NULL, O_PRINT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->config = TWL_AGENT_DEFAULT_CONFIG;
	while ((c = getopt_long(argc, argv, "c:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			o->config_given = true;
			break;
		case O_CHECK:
			o->check_config = true;
			break;
		case O_DRY:
			o->dry_run = true;
			break;
		case O_KMSG:
			o->kmsg_file = optarg;
			break;
		case O_PRINT:
			twl_config_print_example(stdout);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case O_VERSION:
			printf("twilight-agent %s (wire format v%d)\n",
			       TWL_AGENT_VERSION, TWL_WIRE_VERSION);
			exit(0);
		default:
			fprintf(stderr, "Try twilight-agent --help.\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"twilight-agent: unexpected argument \"%s\"; try --help\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Load (and for the daemon validate) the config into @cfg. 0 or -EINVAL. */
static int load_config(const struct opts *o, struct twl_config *cfg,
		       bool daemon)
{
	struct twl_config_errors *errs = calloc(1, sizeof(*errs));
	int ret;

	if (!errs)
		return -ENOMEM;
	if (!daemon && !o->config_given) {
		ret = twl_config_init(cfg);
		goto out;
	}
	ret = twl_config_load(cfg, o->config, errs);
	if (!ret && daemon)
		ret = twl_config_validate(cfg, true, errs);
	if (ret && ret != -ENOMEM) {
		twl_config_print_errors(stderr, o->config, errs);
		ret = -EINVAL;
	}
out:
	free(errs);
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

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	twl_log_init("twilight-agent", LOG_INFO);
	if (parse_args(argc, argv, &o))
		return 2;
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
