/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twilight-server configuration and command line, as option tables for
 * the engine in common/include/twilight/config.h: names, defaults, bounds,
 * parsing, --help, --print-config, the dump of --check-config and the
 * manual page's option lists all come from them. Precedence: defaults <
 * config file (DIR/twilight-server.conf or --config FILE; "key = value"
 * lines, '#' comments) < command-line flags (--key value / --key=value).
 */
#ifndef TWL_SERVER_CONFIG_H
#define TWL_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <twilight/config.h>

#define TWL_CONFIG_MAX_SANS 16
#define TWL_CONFIG_FILE_MAX (1 << 20) /* bytes of a config file */

struct twl_config {
	char data_dir[512];
	char config_file[512];
	char listen[128]; /* "127.0.0.1:8443", "[::1]:8443" */
	char web_dir[512];
	char db_path[512]; /* default DATA_DIR/twilight.db */
	bool check_db; /* integrity check before serving */
	char cert_file[512]; /* default DATA_DIR/server.pem */
	char key_file[512]; /* default DATA_DIR/server.key */
	char ca_file[512]; /* default DATA_DIR/ca.pem */
	char client_ca_file[512]; /* "" = no client certificates */
	bool require_client_cert;
	bool require_cap_drop; /* exit when capabilities stay held */
	char tls_priorities[256];
	size_t n_sans;
	char sans[TWL_CONFIG_MAX_SANS][128];

	unsigned max_connections; /* total */
	unsigned max_per_ip; /* per address (IPv6: /64), see limit_loopback */
	bool limit_loopback; /* apply per-IP limits to loopback too */
	unsigned conn_timeout_s; /* idle/slow client timeout */
	unsigned request_timeout_s; /* a request's deadline (http/watch.h) */
	size_t min_rate; /* body bytes per second at least */
	size_t body_memory; /* request bodies held, all connections */
	size_t max_body; /* bytes, request body as sent */
	size_t max_inflated; /* bytes, body after gunzip */
	size_t conn_memory; /* MHD per-connection memory */
	unsigned threads; /* MHD worker threads */

	double host_rate; /* reports/s per host key (token bucket) */
	double host_burst;
	double ip_rate; /* requests/s per address (IPv6: /64) */
	double ip_burst;
	double enroll_rate; /* enrolments/s per enrolment token */
	double enroll_burst;
	unsigned enroll_max_keys; /* live host keys one token may mint */
	unsigned key_cache_s; /* host keys trusted without a look-up (0: off) */

	unsigned batch_days; /* keep batch ids (>= 35) */
	unsigned data_days; /* keep raw rows; 0 = forever */
	unsigned commit_max; /* batches per group commit */
	unsigned commit_delay_ms; /* wait for more when few batches wait */
	unsigned queue_max; /* queued batches before 503 */
	size_t wal_max; /* bytes of WAL before the writer checkpoints itself */
	unsigned silent_after_s; /* fleet health: agent silent after */

	/* alerts by webhook (alerts/alerts.h) */
	unsigned alert_interval_s; /* detector scans; 0 = no detector */
	unsigned alert_new_days; /* a use after this many quiet days is new */
	double webhook_rate; /* deliveries per minute per webhook */
	unsigned webhook_retry_s; /* the first retry's wait */
	unsigned webhook_timeout_s; /* one attempt's deadline */
	char webhook_ca_file[512]; /* receivers' CAs; "" = the system's */

	/* slow answers kept and served again (api/answer_cache.h) */
	unsigned slow_answer_ms; /* keep answers that took this long */
	unsigned slow_answer_max_age_s; /* never serve older; 0 = keep none */
	bool slow_answer_ahead; /* the dashboard's answers computed ahead */

	/* linux-mm export privacy, used by export.c */
	bool export_show_hosts;
	bool export_show_cgroups;
	bool export_show_values; /* the values written (value_class.h) */
	bool export_show_images;
	bool export_show_labels;
	bool export_show_teams;
	char export_group_label[33]; /* a host label key, "" = none */
	char export_readiness_target[65]; /* a target name, "" = none */
};

/* The command line's own flags (main.c); the strings point into argv. */
struct twl_server_cli {
	bool check_config, print_config, help, version;
	const char *name, *role; /* token create */
};

extern const struct twl_cfg_opt twl_server_options[];
extern const size_t twl_server_n_options;
extern const struct twl_cfg_opt twl_server_cli_options[];
extern const size_t twl_server_cli_n_options;
extern const struct twl_cfg_opt twl_server_token_options[];
extern const size_t twl_server_token_n_options;
/* The export subcommand's own flags (export_cli.c). */
extern const struct twl_cfg_opt twl_export_cli_options[];
extern const size_t twl_export_cli_n_options;
/* The migrate-store subcommand's flags (migrate_store_cli.c). */
extern const struct twl_cfg_opt twl_migrate_store_cli_options[];
extern const size_t twl_migrate_store_cli_n_options;

/* Fill c with defaults (data_dir-derived paths are resolved later). */
void twl_config_defaults(struct twl_config *c);

/*
 * Apply argv options (argv[0] excluded, i.e. pass argc-1/argv+1) and the
 * config file they or the data dir name. Unknown options, bad values and
 * unreadable explicit config files give -EINVAL with every message, one a
 * line, in err. Non-option arguments are returned in rest and n_rest
 * (pointers into argv; rest has room for argc).
 */
int twl_config_load(struct twl_config *c, int argc, char **argv, char **rest,
		    int *n_rest, char *err, size_t err_cap);

/*
 * twl_config_parse_cli - twl_config_load() into session @p, which may hold
 * more tables (the command line's own flags): --data-dir and --config
 * first, then the file, then the other flags. Messages stay in @p. 0,
 * -EINVAL or -ENOMEM.
 */
int twl_config_parse_cli(struct twl_config *c, struct twl_cfg *p, int argc,
			 char **argv, char **rest, int *n_rest);

/* Set one option by name ("max-body", ...). 0 or -EINVAL/-ENOENT. */
int twl_config_set(struct twl_config *c, const char *key, const char *value,
		   char *err, size_t err_cap);

/*
 * twl_config_check - resolve the paths derived from data_dir, check every
 * value against its bounds (fields may have been set directly) and the
 * options against each other. Messages go to @p, a session over @c. 0 or
 * -EINVAL.
 */
int twl_config_check(struct twl_config *c, struct twl_cfg *p);

/* twl_config_check() with the messages, one a line, in err. 0 or -EINVAL. */
int twl_config_finish(struct twl_config *c, char *err, size_t err_cap);

/* Print option help to f (FILE *). */
void twl_config_usage(void *f);

/* Print the effective configuration (no secrets) to f (FILE *). */
void twl_config_dump(const struct twl_config *c, void *f);

/* twl_config_print_example - a commented example config from the table. */
void twl_config_print_example(FILE *f);

/*
 * twl_config_print_man - a roff list for twilight-server(8) of @block:
 * "commands" (the command line's own flags), "options" (the server's
 * options as flags), "token" (token create's) or "export". 0 or -ENOENT.
 */
int twl_config_print_man(FILE *f, const char *block);

#endif /* TWL_SERVER_CONFIG_H */
