// SPDX-License-Identifier: GPL-2.0
/*
 * twilight-server: zero-configuration start (database, CA, server
 * certificate, admin and enrolment tokens on first run), serving,
 * token administration, --check-config, and the export and migrate-store
 * subcommands.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <twilight/util.h>

#include "http/auth.h"
#include "config.h"
#include "api/api_app.h"
#include "api/export.h"
#include "store/migrate_store.h"
#include "http/server.h"
#include "store/store.h"
#include "http/tls.h"
#include "caps.h"
#include "catalog_data.h"

static volatile sig_atomic_t stop_flag, hup_flag;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hup_flag = 1;
	else
		stop_flag = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twilight-server [serve] [--data-dir DIR] [--listen ADDR:PORT] [--san NAME]... [options]\n"
		"       twilight-server token create --name NAME --role admin|viewer|agent [--data-dir DIR]\n"
		"       twilight-server token list [--data-dir DIR]\n"
		"       twilight-server token revoke ID [--data-dir DIR]\n"
		"       twilight-server export [--data-dir DIR] [--format text|csv|json] ... (see export --help)\n"
		"       twilight-server migrate-store --from sqlite:PATH --to postgresql://... (see migrate-store --help)\n"
		"       twilight-server --check-config|-n [options]   check configuration and exit\n"
		"       twilight-server --print-config | --help|-h | --version\n\n");
	twl_cfg_print_flags(f, twl_server_cli_options,
			    twl_server_cli_n_options);
	fprintf(f, "\nToken options:\n");
	twl_cfg_print_flags(f, twl_server_token_options,
			    twl_server_token_n_options);
	fprintf(f,
		"\nServer options (also \"key = value\" lines in DATA_DIR/twilight-server.conf\n"
		"or --config FILE; a flag overrides the file; a boolean alone means true,\n"
		"--no-NAME false):\n");
	twl_config_usage(f);
}

static int ensure_dir(const char *dir)
{
	if (mkdir(dir, 0700) && errno != EEXIST) {
		twl_log(LOG_ERR, "cannot create data directory %s: %s", dir,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* First run: create a token and write its secret once to path (0600). */
static int bootstrap_token(struct twl_store *s, const char *dir,
			   const char *file, const char *name, const char *role)
{
	char path[600], secret[TWL_SECRET_LEN + 2];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!access(path, F_OK))
		return 0;
	ret = twl_auth_token_create(s, name, role, time(NULL), secret, NULL);
	if (ret)
		goto fail;
	strcat(secret, "\n");
	ret = twl_write_file_atomic(path, secret, strlen(secret), 0600);
	if (ret)
		goto fail;
	printf("twilight-server: %s token written to %s\n", role, path);
	return 1;
fail:
	twl_log(LOG_ERR, "cannot create the %s token %s: %s", role, path,
		strerror(-ret));
	return ret;
}

static int token_list(struct twl_store *s)
{
	json_t *list = NULL, *t;
	size_t i;
	int ret;

	ret = twl_store_token_list(s, &list);
	if (ret)
		return ret;
	printf("%-5s %-8s %-24s %-12s %s\n", "ID", "ROLE", "NAME", "CREATED",
	       "REVOKED");
	json_array_foreach(list, i, t)
	{
		printf("%-5lld %-8s %-24s %-12lld %s\n",
		       (long long)json_integer_value(json_object_get(t, "id")),
		       json_string_value(json_object_get(t, "role")),
		       json_string_value(json_object_get(t, "name")),
		       (long long)json_integer_value(
			       json_object_get(t, "created")),
		       json_is_null(json_object_get(t, "revoked")) ? "-" :
								     "revoked");
	}
	json_decref(list);
	return 0;
}

/* @id was checked by check_command(). */
static int token_revoke(struct twl_store *s, const char *id_text)
{
	uint64_t id = 0;
	int ret;

	twl_parse_u64(id_text, INT64_MAX, &id);
	ret = twl_store_token_revoke(s, (int64_t)id, time(NULL));
	if (ret == -ENOENT) {
		fprintf(stderr,
			"twilight-server: no live token with id %s (see 'token list')\n",
			id_text);
		return 1;
	}
	if (!ret)
		printf("token %llu revoked\n", (unsigned long long)id);
	return ret;
}

static int token_create(struct twl_store *s, const struct twl_server_cli *cli)
{
	char secret[TWL_SECRET_LEN + 1];
	int64_t id;
	int ret;

	ret = twl_auth_token_create(s, cli->name, cli->role, time(NULL), secret,
				    &id);
	if (ret == -EINVAL) {
		fprintf(stderr,
			"twilight-server: token create: --role must be admin, viewer or agent, --name 1-63 bytes\n");
		return 2;
	}
	if (ret)
		return ret;
	printf("%s\n", secret);
	fprintf(stderr,
		"token %lld (%s, %s) created; the secret above is shown only once\n",
		(long long)id, cli->name, cli->role);
	return 0;
}

/* "token list|revoke ID|create" (checked by check_command()): exit status. */
static int cmd_token(struct twl_store *s, const struct twl_server_cli *cli,
		     char **rest)
{
	int ret;

	if (!strcmp(rest[1], "list"))
		ret = token_list(s);
	else if (!strcmp(rest[1], "revoke"))
		ret = token_revoke(s, rest[2]);
	else
		ret = token_create(s, cli);
	if (ret >= 0)
		return ret;
	twl_log(LOG_ERR, "token %s failed: %s", rest[1], strerror(-ret));
	return 1;
}

static int serve(const struct twl_config *cfg, struct twl_store *s)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct twl_server *srv;
	sigset_t block, old;

	/* Block SIGINT/SIGTERM until sigsuspend(): no lost wake-up. Threads
	 * started by twl_server_new() inherit the mask, so the main thread
	 * takes the signal. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv = twl_server_new(cfg, s);
	if (!srv) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	printf("twilight-server: listening on https://%s (port %u); CA certificate %s; tokens in %s/\n",
	       cfg->listen, twl_server_port(srv), cfg->ca_file, cfg->data_dir);
	fflush(stdout);
	while (!stop_flag) {
		sigsuspend(&old);
		/*
		 * SIGHUP (`systemctl reload`) re-reads the data directory's
		 * catalog.json and never ends the server; settings are read
		 * once, at start. twl_server_catalog_reload() logs the outcome.
		 */
		if (hup_flag) {
			hup_flag = 0;
			/* installed: the kept answers saw the former catalog */
			if (twl_server_catalog_reload(cfg->data_dir, s) != 1)
				twl_api_answers_touch(srv);
		}
	}
	twl_log(LOG_INFO, "stopping on signal %d: finishing queued batches",
		(int)stop_flag);
	twl_server_free(srv);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/*
 * The command and its arguments make sense: serve, or token list, token
 * revoke ID, token create with --name and --role. 0, 1 for an unknown
 * command, 2 for wrong arguments (said on stderr).
 */
static int check_command(const struct twl_server_cli *cli, char **rest,
			 int n_rest)
{
	const char *sub = n_rest > 1 ? rest[1] : "";
	bool create = n_rest && !strcmp(rest[0], "token") &&
		      !strcmp(sub, "create");
	uint64_t id;

	if (n_rest && strcmp(rest[0], "serve") && strcmp(rest[0], "token")) {
		fprintf(stderr, "twilight-server: unknown command '%s'\n",
			rest[0]);
		usage(stderr);
		return 1;
	}
	if ((cli->name || cli->role) && !create) {
		fprintf(stderr,
			"twilight-server: --name and --role go with 'token create'\n");
		return 2;
	}
	if (n_rest && !strcmp(rest[0], "serve") && n_rest == 1)
		return 0;
	if (!n_rest || (create && n_rest == 2 && cli->name && cli->role) ||
	    (!strcmp(sub, "list") && n_rest == 2) ||
	    (!strcmp(sub, "revoke") && n_rest == 3 &&
	     !twl_parse_u64(rest[2], INT64_MAX, &id)))
		return 0;
	fprintf(stderr,
		"twilight-server: expected 'serve', 'token list', 'token revoke ID' (a number) or 'token create --name NAME --role ROLE'\n");
	return 2;
}

/* --help, --version, --print-config: print and return 1; else 0. */
static int print_action(const struct twl_server_cli *cli)
{
	if (cli->help)
		usage(stdout);
	else if (cli->version)
		printf("twilight-server %s\n", TWL_VERSION);
	else if (cli->print_config)
		twl_config_print_example(stdout);
	else
		return 0;
	return 1;
}

/*
 * The command line and the config file into @cfg and @cli: an exit status,
 * or -1 to go on with the command in @rest.
 */
static int parse_command_line(struct twl_config *cfg,
			      struct twl_server_cli *cli, int argc, char **argv,
			      char **rest, int *n_rest)
{
	struct twl_cfg *p = twl_cfg_new("twilight-server");
	int ret, status;

	memset(cli, 0, sizeof(*cli));
	twl_config_defaults(cfg);
	if (!p ||
	    twl_cfg_add(p, twl_server_cli_options, twl_server_cli_n_options,
			cli) ||
	    twl_cfg_add(p, twl_server_token_options, twl_server_token_n_options,
			cli)) {
		twl_cfg_free(p);
		return 1;
	}
	ret = twl_config_parse_cli(cfg, p, argc - 1, argv + 1, rest, n_rest);
	if (ret == -ENOMEM) {
		status = 1;
	} else if (print_action(cli)) {
		status = 0;
	} else {
		twl_config_check(cfg, p); /* all the problems at once */
		status = twl_cfg_failed(p) ? 2 : -1;
	}
	if (status)
		twl_cfg_print_msgs(stderr, p);
	twl_cfg_free(p);
	if (status == -1) {
		ret = check_command(cli, rest, *n_rest);
		status = ret ? ret : -1;
	}
	return status;
}

static int check_config(const struct twl_config *cfg)
{
	twl_config_dump(cfg, stdout);
	if (access(cfg->data_dir, W_OK) && errno != ENOENT) {
		fprintf(stderr,
			"twilight-server: data dir %s is not writable\n",
			cfg->data_dir);
		return 1;
	}
	printf("configuration OK\n");
	return 0;
}

/*
 * The database's integrity before serving: 0 when sound, else -EUCLEAN
 * (or what stopped the check) with the reason logged. Writing on into a
 * corrupt database can spread the damage, and every report would fail
 * while /healthz looked fine.
 */
static int check_db(struct twl_store *store, const char *path)
{
	char problem[256];
	time_t t0 = time(NULL);
	int ret = twl_store_check(store, problem, sizeof(problem));

	if (!ret) {
		twl_log(LOG_INFO, "database check: ok (%s, %lld s)", path,
			(long long)(time(NULL) - t0));
		return 0;
	}
	if (ret == -ENOTSUP) {
		twl_log(LOG_INFO,
			"database check: not available for this store");
		return 0;
	}
	if (ret == -EUCLEAN)
		twl_log(LOG_ERR,
			"database %s failed its integrity check (%s): not serving it. Restore the last backup (operators guide, \"Backup and restore\"), or start with --no-check-db to serve it as it is",
			path, problem);
	else
		twl_log(LOG_ERR,
			"cannot check database %s (%s: %s); start with --no-check-db to skip the check",
			path, strerror(-ret), problem);
	return ret;
}

/*
 * Give up capabilities before the store's and the daemon's threads start
 * (they inherit what this thread holds): 0 to go on, -1 to stop (said).
 */
static int drop_caps(const struct twl_config *cfg)
{
	struct sockaddr_storage ss;
	uint16_t port = 0;
	int ret;

	if (!twl_parse_addr_port(cfg->listen, &ss, NULL))
		port = ntohs(ss.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&ss)->sin6_port :
				     ((struct sockaddr_in *)&ss)->sin_port);
	ret = twl_caps_drop(port && port < 1024);
	if (ret >= 0) {
		if (!ret)
			twl_log(LOG_INFO, "capabilities dropped%s",
				port && port < 1024 ?
					" but CAP_NET_BIND_SERVICE (port below 1024)" :
					"");
		return 0;
	}
	if (!cfg->require_cap_drop) {
		twl_log(LOG_WARNING,
			"cannot drop capabilities (%s): serving with them, as require-cap-drop = false allows",
			strerror(-ret));
		return 0;
	}
	twl_log(LOG_ERR,
		"cannot drop capabilities (%s): not serving with them. Run the server as an unprivileged user (the packaged unit does), or set require-cap-drop = false",
		strerror(-ret));
	return -1;
}

/* Run the command in @rest (checked): the exit status. */
static int run(const struct twl_config *cfg, const struct twl_server_cli *cli,
	       char **rest, int n_rest)
{
	struct twl_store *store = NULL;
	char tlserr[512], db[sizeof(cfg->db_path)];
	int ret, status = 1;

	/* a URI may hold a password: only this form of it is logged */
	twl_uri_redact(cfg->db_path, db, sizeof(db));
	if (cli->check_config)
		return check_config(cfg);
	if (!(n_rest && !strcmp(rest[0], "token")) && drop_caps(cfg))
		return 1;
	if (ensure_dir(cfg->data_dir))
		return 1;
	ret = twl_server_catalog_load(cfg->data_dir);
	if (ret) {
		twl_log(LOG_ERR, "cannot install %s/catalog.json: %s",
			cfg->data_dir, strerror(-ret));
		return 1;
	}
	ret = twl_store_open(cfg->db_path, &store);
	if (ret) {
		twl_log(LOG_ERR, "cannot open database %s: %s", db,
			strerror(-ret));
		return 1;
	}
	twl_store_set_wal_max(store, cfg->wal_max); /* PostgreSQL: -ENOTSUP */
	if (n_rest && !strcmp(rest[0], "token")) {
		status = cmd_token(store, cli, rest);
		goto out;
	}
	if (cfg->check_db && check_db(store, db))
		goto out;
	ret = twl_tls_ensure(cfg->ca_file, cfg->cert_file, cfg->key_file,
			     (const char(*)[128])cfg->sans, cfg->n_sans, tlserr,
			     sizeof(tlserr));
	if (ret < 0) {
		twl_log(LOG_ERR, "TLS setup failed: %s", tlserr);
		goto out;
	}
	if (ret == 1)
		printf("twilight-server: generated TLS certificate %s (CA %s: give it to agents)\n",
		       cfg->cert_file, cfg->ca_file);
	if (bootstrap_token(store, cfg->data_dir, "admin.token",
			    "bootstrap-admin", "admin") < 0 ||
	    bootstrap_token(store, cfg->data_dir, "agent.token",
			    "bootstrap-enrolment", "agent") < 0)
		goto out;
	status = serve(cfg, store);
out:
	twl_store_close(store);
	return status;
}

int main(int argc, char **argv)
{
	struct twl_server_cli cli;
	struct twl_config cfg;
	char **rest;
	int n_rest = 0, status;

	twl_log_init("twilight-server", LOG_INFO);
	if (argc >= 2 && !strcmp(argv[1], "export"))
		return twl_export_cli(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "migrate-store"))
		return twl_migrate_store_cli(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "catalog"))
		return twl_catalog_cli(argc - 1, argv + 1);
	rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (!rest)
		return 1;
	status = parse_command_line(&cfg, &cli, argc, argv, rest, &n_rest);
	if (status < 0)
		status = run(&cfg, &cli, rest, n_rest);
	free(rest);
	return status;
}
