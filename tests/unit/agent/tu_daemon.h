/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon (agent/daemon.c) run in a child process by a test: the
 * config loader main.c would be, the child's exit status, and the batches
 * it spooled. Teardown kill_children() ends what a failing test left.
 */
#ifndef TU_DAEMON_H
#define TU_DAEMON_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twilight/config.h>
#include <twilight/util.h>

#include "agent_test.h"
#include "config.h"
#include "daemon.h"

/* Children a failing test leaves behind; teardown kills them. */
static pid_t children[4];
static int n_children;

static inline pid_t spawn(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid > 0 && n_children < 4)
		children[n_children++] = pid;
	return pid;
}

static inline int kill_children(void **state)
{
	for (int i = 0; i < n_children; i++)
		if (kill(children[i], SIGKILL) == 0)
			waitpid(children[i], NULL, 0);
	n_children = 0;
	return 0;
}

struct loader {
	const char *path;
	int calls;
	bool daemon; /* as last asked */
	bool refuse;
};

/* main.c's loader in small: the file, checked as the daemon needs. */
static inline int load(void *ctx, struct twl_config *cfg, bool daemon)
{
	struct loader *l = ctx;
	struct twl_agent_cli cli;
	struct twl_cfg *p;
	int ret;

	l->calls++;
	l->daemon = daemon;
	memset(&cli, 0, sizeof(cli));
	assert_int_equal(twl_config_init(cfg), 0);
	p = twl_config_session(cfg, &cli);
	assert_non_null(p);
	ret = twl_cfg_load_file(p, l->path, TWL_AGENT_CONFIG_MAX, true);
	if (!ret && daemon)
		twl_config_validate(cfg, true, p);
	twl_cfg_print_msgs(stderr, p);
	if (!ret && twl_cfg_failed(p))
		ret = -EINVAL;
	twl_cfg_free(p);
	if (ret)
		twl_config_fini(cfg);
	return l->refuse ? -EINVAL : ret;
}

/* twl_daemon_main() in a child with its output in @dir/log; its pid. */
static inline pid_t start_daemon(const char *dir, const struct twl_run_opts *o)
{
	pid_t pid = spawn();

	if (pid == 0) {
		char *log = test_path(dir, "log");
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		_exit(twl_daemon_main(o));
	}
	return pid;
}

static inline int wait_exit(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Batch files in the spool holding @needle. */
static inline int batches_with(const char *dir, const char *needle)
{
	char *spool = test_path(dir, "state/spool");
	DIR *d = opendir(spool);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char *path, *text = NULL;
		size_t len;

		if (!strstr(de->d_name, ".batch"))
			continue;
		path = test_path(spool, de->d_name);
		if (!twl_read_file(path, 1 << 20, &text, &len) &&
		    memmem(text, len, needle, strlen(needle)))
			n++;
		free(text);
		free(path);
	}
	if (d)
		closedir(d);
	free(spool);
	return n;
}

#endif /* TU_DAEMON_H */
