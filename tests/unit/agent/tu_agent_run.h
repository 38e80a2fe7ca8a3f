/* SPDX-License-Identifier: GPL-2.0 */
/* Running the twilight-agent binary from a test: its exit status and output. */
#ifndef TU_AGENT_RUN_H
#define TU_AGENT_RUN_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twilight/util.h>

#include "agent_test.h"

struct run {
	int status; /* exit code, or -1 if killed */
	char *out, *err;
	size_t out_len, err_len;
};

/*
 * Run @bin with @args (NULL-terminated, at most 14) in @cwd; capture its
 * stdout and stderr into @r (free with run_free()).
 */
static inline void run_agent_bin(const char *bin, const char *cwd,
				 const char *const *args, struct run *r)
{
	char *outp = test_path(cwd, ".stdout"),
	     *errp = test_path(cwd, ".stderr");
	const char *argv[16];
	pid_t pid;
	int st, i;

	argv[0] = bin;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || chdir(cwd) || dup2(o, 1) < 0 ||
		    dup2(e, 2) < 0)
			_exit(127);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	assert_int_equal(twl_read_file(outp, 16 << 20, &r->out, &r->out_len),
			 0);
	assert_int_equal(twl_read_file(errp, 1 << 20, &r->err, &r->err_len), 0);
	unlink(outp);
	unlink(errp);
	free(outp);
	free(errp);
}

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

#endif /* TU_AGENT_RUN_H */
