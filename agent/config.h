/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config: the agent's configuration ("key = value" lines, or --key value
 * flags) and command line, as tables for the engine in
 * common/include/twilight/config.h: parsing, validation, --help, the
 * example config file (--print-config) and the manual page's option lists
 * all come from twl_config_options[] and twl_agent_cli_options[].
 */
#ifndef TWL_AGENT_CONFIG_H
#define TWL_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <twilight/config.h>

#include "labels.h"

#define TWL_AGENT_DEFAULT_CONFIG "/etc/twilight/agent.conf"
#define TWL_AGENT_CONFIG_MAX (64 * 1024) /* bytes of a config file */

struct twl_config {
	char *server_url;
	char *ca_file;
	char *client_cert;
	char *client_key;
	char *enroll_token_file;
	char *state_dir;
	char *spool_dir;
	uint64_t spool_max_bytes;
	unsigned spool_max_age_s;
	unsigned batch_interval_s;
	unsigned heartbeat_interval_s;
	unsigned census_interval_s;
	unsigned catalog_interval_s;
	unsigned census_max_cgroups;
	unsigned census_max_ms;
	unsigned backoff_base_ms;
	unsigned backoff_cap_ms;
	unsigned connect_timeout_ms;
	unsigned timeout_ms;
	char *kmsg_path;
	bool journal; /* backfill from the systemd journal */
	unsigned journal_boots; /* earlier boots read once */
	unsigned journal_interval_s;
	char *journal_dir; /* NULL: /var/log/journal and /run/log/journal */
	char *cgroup_root;
	char *mountinfo;
	char *boot_id_path;
	char *machine_id_path;
	char *host_id_key;
	bool send_hostname;
	int log_level; /* LOG_ERR .. LOG_DEBUG */
	bool bpf;
	bool container_images; /* usage[].image from the runtime's state */
	bool require_cap_drop; /* exit when capabilities stay held */
	char *privacy_cgroup; /* keep | hash | drop */
	char *privacy_comm; /* keep | hash | drop */
	char *privacy_key;
	struct twl_labels labels; /* host.labels */
};

/* The command line's own flags; the strings point into argv. */
struct twl_agent_cli {
	const char *config;
	const char *kmsg_file;
	bool check_config, dry_run, print_config, help, version;
};

extern const struct twl_cfg_opt twl_config_options[];
extern const size_t twl_config_n_options;
extern const struct twl_cfg_opt twl_agent_cli_options[];
extern const size_t twl_agent_cli_n_options;

/* twl_config_init - fill @c with the defaults of the table. 0 or -ENOMEM. */
int twl_config_init(struct twl_config *c);

/* twl_config_fini - free the strings of @c; NULL-safe, @c becomes empty. */
void twl_config_fini(struct twl_config *c);

/*
 * twl_config_session - a session of the engine over @c (set up with
 * twl_config_init()) and @cli: config keys and command-line flags, errors
 * naming "twilight-agent --help". NULL + errno on failure; free it with
 * twl_cfg_free().
 */
struct twl_cfg *twl_config_session(struct twl_config *c,
				   struct twl_agent_cli *cli);

/*
 * twl_config_validate - checks across options that the daemon needs:
 * required options set, numbers in bounds, client-cert and client-key
 * together, backoff-base <= backoff-cap, privacy-key for hashing, labels
 * by the wire's rules (twl_labels_check()), and, with
 * @check_files, that the files named exist and are readable and the
 * directories exist. Adds errors to @p; returns 0 or -EINVAL.
 */
int twl_config_validate(const struct twl_config *c, bool check_files,
			struct twl_cfg *p);

/* twl_config_print_help - the flags and the config keys as --help text. */
void twl_config_print_help(FILE *f);

/* twl_config_print_example - a commented example config from the table. */
void twl_config_print_example(FILE *f);

/*
 * twl_config_print_man - a roff list for twilight-agent(8): the flags
 * (@flags) or the configuration keys.
 */
void twl_config_print_man(FILE *f, bool flags);

#endif /* TWL_AGENT_CONFIG_H */
