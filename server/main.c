// SPDX-License-Identifier: GPL-2.0
/*
 * twilight-server: zero-configuration start (database, CA, server
 * certificate, admin and enrolment tokens on first run), serving,
 * token administration, --check-config, and the export subcommand.
 */
#include <errno.h>
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
#include "api/export.h"
#include "http/server.h"
#include "store/store.h"
#include "http/tls.h"

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
		"usage: twilight-server [serve] --data-dir DIR [--listen ADDR:PORT] [--san NAME]... [options]\n"
		"       twilight-server token create --name NAME --role admin|viewer|agent [--data-dir DIR]\n"
		"       twilight-server token list [--data-dir DIR]\n"
		"       twilight-server token revoke ID [--data-dir DIR]\n"
		"       twilight-server export [--data-dir DIR] [--format text|csv|json] ... (see export --help)\n"
		"       twilight-server --check-config|-n [options]   check configuration and exit\n"
		"       twilight-server --help|-h | --version\n"
		"options (also 'key = value' lines in DATA_DIR/twilight-server.conf or --config FILE):\n");
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

static int cmd_token(struct twl_store *s, char **rest, int n_rest)
{
	char secret[TWL_SECRET_LEN + 1];
	json_t *list = NULL, *t;
	size_t i;
	int64_t id;
	int ret;

	if (n_rest >= 2 && !strcmp(rest[1], "list")) {
		ret = twl_store_token_list(s, &list);
		if (ret)
			goto fail;
		printf("%-5s %-8s %-24s %-12s %s\n", "ID", "ROLE", "NAME",
		       "CREATED", "REVOKED");
		json_array_foreach(list, i, t)
		{
			printf("%-5lld %-8s %-24s %-12lld %s\n",
			       (long long)json_integer_value(
				       json_object_get(t, "id")),
			       json_string_value(json_object_get(t, "role")),
			       json_string_value(json_object_get(t, "name")),
			       (long long)json_integer_value(
				       json_object_get(t, "created")),
			       json_is_null(json_object_get(t, "revoked")) ?
				       "-" :
				       "revoked");
		}
		json_decref(list);
		return 0;
	}
	if (n_rest >= 3 && !strcmp(rest[1], "revoke")) {
		id = strtoll(rest[2], NULL, 10);
		ret = twl_store_token_revoke(s, id, time(NULL));
		if (ret == -ENOENT) {
			fprintf(stderr,
				"twilight-server: no live token with id %s (see 'token list')\n",
				rest[2]);
			return 1;
		}
		if (ret)
			goto fail;
		printf("token %lld revoked\n", (long long)id);
		return 0;
	}
	if (n_rest >= 4 && !strcmp(rest[1], "create")) {
		/* token create NAME ROLE (positional, after flags were taken) */
		ret = twl_auth_token_create(s, rest[2], rest[3], time(NULL),
					    secret, &id);
		if (ret == -EINVAL) {
			fprintf(stderr,
				"twilight-server: token create NAME ROLE: role must be admin, viewer or agent, name 1-63 bytes\n");
			return 2;
		}
		if (ret)
			goto fail;
		printf("%s\n", secret);
		fprintf(stderr,
			"token %lld (%s, %s) created; the secret above is shown only once\n",
			(long long)id, rest[2], rest[3]);
		return 0;
	}
	usage(stderr);
	return 2;
fail:
	twl_log(LOG_ERR, "token %s failed: %s", n_rest > 1 ? rest[1] : "",
		strerror(-ret));
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
		 * A stray SIGHUP (a closed terminal, a reflexive
		 * `systemctl reload`) must not end the server: say what it
		 * does instead. Settings are read once, at start.
		 */
		if (hup_flag) {
			hup_flag = 0;
			twl_log(LOG_WARNING,
				"SIGHUP ignored: the server does not reload its configuration; restart it to apply changes");
		}
	}
	twl_log(LOG_INFO, "stopping on signal %d: finishing queued batches",
		(int)stop_flag);
	twl_server_free(srv);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct twl_config cfg;
	struct twl_store *store = NULL;
	char err[512], tlserr[512];
	char **rest;
	int n_rest = 0, ret, status = 1;
	bool check = false;

	twl_log_init("twilight-server", LOG_INFO);
	if (argc >= 2 && !strcmp(argv[1], "export"))
		return twl_export_cli(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("twilight-server %s\n", TWL_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "--check-config") ||
		    !strcmp(argv[i], "-n")) {
			check = true;
			memmove(&argv[i], &argv[i + 1],
				(size_t)(argc - i) * sizeof(*argv));
			argc--;
			i--;
		}
	}
	/* token create takes --name/--role; map them to positionals */
	rest = calloc((size_t)argc + 2, sizeof(*rest));
	if (!rest)
		return 1;
	{
		char **av = calloc((size_t)argc, sizeof(*av));
		char *name = NULL, *role = NULL;
		int ac = 0;

		if (!av)
			return 1;
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--name") && i + 1 < argc)
				name = argv[++i];
			else if (!strcmp(argv[i], "--role") && i + 1 < argc)
				role = argv[++i];
			else
				av[ac++] = argv[i];
		}
		twl_config_defaults(&cfg);
		ret = twl_config_load(&cfg, ac, av, rest, &n_rest, err,
				      sizeof(err));
		free(av);
		if (!ret)
			ret = twl_config_finish(&cfg, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "twilight-server: %s\n", err);
			free(rest);
			return 2;
		}
		if (name || role) {
			if (n_rest < 2 || strcmp(rest[0], "token") ||
			    strcmp(rest[1], "create") || !name || !role) {
				fprintf(stderr,
					"twilight-server: --name and --role go with 'token create'\n");
				free(rest);
				return 2;
			}
			rest[2] = name;
			rest[3] = role;
			n_rest = 4;
		}
	}
	if (n_rest && strcmp(rest[0], "serve") && strcmp(rest[0], "token")) {
		fprintf(stderr, "twilight-server: unknown command '%s'\n",
			rest[0]);
		usage(stderr);
		goto out;
	}
	if (check) {
		twl_config_dump(&cfg, stdout);
		if (access(cfg.data_dir, W_OK) && errno != ENOENT) {
			fprintf(stderr,
				"twilight-server: data dir %s is not writable\n",
				cfg.data_dir);
			goto out;
		}
		printf("configuration OK\n");
		status = 0;
		goto out;
	}
	if (ensure_dir(cfg.data_dir))
		goto out;
	ret = twl_store_open(cfg.db_path, &store);
	if (ret) {
		twl_log(LOG_ERR, "cannot open database %s: %s", cfg.db_path,
			strerror(-ret));
		goto out;
	}
	twl_store_set_wal_max(store, cfg.wal_max); /* -ENOTSUP: warned */
	if (n_rest && !strcmp(rest[0], "token")) {
		status = cmd_token(store, rest, n_rest);
		goto out;
	}
	ret = twl_tls_ensure(cfg.ca_file, cfg.cert_file, cfg.key_file,
			     (const char(*)[128])cfg.sans, cfg.n_sans, tlserr,
			     sizeof(tlserr));
	if (ret < 0) {
		twl_log(LOG_ERR, "TLS setup failed: %s", tlserr);
		goto out;
	}
	if (ret == 1)
		printf("twilight-server: generated TLS certificate %s (CA %s: give it to agents)\n",
		       cfg.cert_file, cfg.ca_file);
	if (bootstrap_token(store, cfg.data_dir, "admin.token",
			    "bootstrap-admin", "admin") < 0 ||
	    bootstrap_token(store, cfg.data_dir, "agent.token",
			    "bootstrap-enrolment", "agent") < 0)
		goto out;
	status = serve(&cfg, store);
out:
	twl_store_close(store);
	free(rest);
	return status;
}
