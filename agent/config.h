/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config: the agent's configuration, "key = value" lines.
 *
 * Every option is one row of twl_config_options[] (name, type, default,
 * bounds, description): parsing, validation, --help and the example
 * config file (--print-config) all come from that table.
 */
#ifndef TWL_AGENT_CONFIG_H
#define TWL_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TWL_AGENT_DEFAULT_CONFIG "/etc/twilight/agent.conf"

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
	unsigned census_max_cgroups;
	unsigned census_max_ms;
	unsigned backoff_base_ms;
	unsigned backoff_cap_ms;
	unsigned connect_timeout_ms;
	unsigned timeout_ms;
	char *kmsg_path;
	char *cgroup_root;
	char *mountinfo;
	char *boot_id_path;
	char *machine_id_path;
	char *host_id_key;
	bool send_hostname;
	int log_level; /* LOG_ERR .. LOG_DEBUG */
	bool bpf;
	char *privacy_cgroup; /* keep | hash | drop */
	char *privacy_comm; /* keep | hash | drop */
	char *privacy_key;
};

enum twl_opt_type {
	TWL_OPT_STRING,
	TWL_OPT_PATH, /* absolute path */
	TWL_OPT_URL, /* https:// URL */
	TWL_OPT_BOOL, /* true/false/yes/no/on/off/1/0 */
	TWL_OPT_UINT, /* unsigned, within [min, max] */
	TWL_OPT_SECONDS, /* duration: 30, 30s, 5m, 2h, 7d; stored in seconds */
	TWL_OPT_MILLIS, /* duration: 500ms, 2s, 1m; stored in milliseconds */
	TWL_OPT_SIZE, /* bytes: 4096, 512K, 64M, 1G; stored as uint64_t */
	TWL_OPT_LOGLEVEL, /* err, warning, notice, info, debug */
	TWL_OPT_CHOICE, /* one of the words in choices, stored as a string */
};

struct twl_opt {
	const char *name;
	enum twl_opt_type type;
	const char *def; /* default as written in the file; NULL = unset */
	size_t off; /* offset in struct twl_config */
	uint64_t min, max; /* bounds for numeric types (in stored units) */
	bool required; /* must be set for the daemon (not for --dry-run) */
	const char *desc;
	const char *choices; /* TWL_OPT_CHOICE: "keep|hash|drop" */
};

extern const struct twl_opt twl_config_options[];
extern const size_t twl_config_n_options;

#define TWL_CONFIG_MAX_ERRORS 64

struct twl_config_error {
	unsigned line; /* 0 = not tied to a line */
	char key[48];
	char msg[256];
};

/* Every problem found, in order; more than the cap are counted in dropped. */
struct twl_config_errors {
	size_t n, dropped;
	struct twl_config_error e[TWL_CONFIG_MAX_ERRORS];
};

/* twl_config_init - fill @c with the defaults of the table. 0 or -ENOMEM. */
int twl_config_init(struct twl_config *c);

/* twl_config_fini - free the strings of @c; NULL-safe, @c becomes empty. */
void twl_config_fini(struct twl_config *c);

/*
 * twl_config_parse - apply "key = value" lines from @text (@len bytes) on
 * top of @c. '#' starts a comment line; values may be quoted with "...".
 * Unknown keys, repeated keys, malformed lines and bad values are all
 * recorded in @errs (each with line, key and why). Returns 0, -EINVAL if
 * anything was recorded, -ENOMEM.
 */
int twl_config_parse(struct twl_config *c, const char *text, size_t len,
		     struct twl_config_errors *errs);

/*
 * twl_config_load - twl_config_init() then twl_config_parse() of the file
 * at @path (at most 64 KiB). Returns 0, -EINVAL (see @errs), or the
 * negative errno of reading the file (also recorded in @errs).
 */
int twl_config_load(struct twl_config *c, const char *path,
		    struct twl_config_errors *errs);

/*
 * twl_config_validate - checks across options that the daemon needs:
 * required options set, client_cert and client_key together, backoff_base
 * <= backoff_cap, and, with @check_files, that the files named exist and
 * are readable and the directories exist. Appends to @errs; returns 0 or
 * -EINVAL.
 */
int twl_config_validate(const struct twl_config *c, bool check_files,
			struct twl_config_errors *errs);

/* twl_config_print_errors - one line per error: "FILE:LINE: KEY: why". */
void twl_config_print_errors(FILE *f, const char *path,
			     const struct twl_config_errors *errs);

/* twl_config_print_help - the option table as --help text. */
void twl_config_print_help(FILE *f);

/* twl_config_print_example - a commented example config from the table. */
void twl_config_print_example(FILE *f);

/* twl_config_loglevel_name - "err" .. "debug" for a syslog priority. */
const char *twl_config_loglevel_name(int prio);

#endif /* TWL_AGENT_CONFIG_H */
