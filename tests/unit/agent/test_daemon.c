// SPDX-License-Identifier: GPL-2.0
/*
 * agent/daemon.c with agent/startup.c, called in a child process (the
 * daemon blocks signals and drops capabilities): a config the loader
 * refuses ends the start, a dump file is read through and spooled and a
 * second run resumes after it, and while the daemon runs its batch job
 * spools on the batch interval without waiting for a signal. The server
 * URL is a closed port on 127.0.0.1: batches stay in the spool. BPF is
 * off (never loaded on this machine).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <twilight/config.h>
#include <twilight/util.h>

#include "agent_test.h"
#include "config.h"
#include "daemon.h"
#include "tu_daemon.h"

#define MOVE_CHARGE                                                              \
	"Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please " \
	"report your usecase to linux-mm@kvack.org if you depend on this "       \
	"functionality."

/* A config in @dir for the daemon, batches every @batch_s seconds. */
static char *write_config(const char *dir, unsigned batch_s)
{
	char conf[4096];

	test_mkdir(dir, "state");
	test_write(dir, "ca.pem",
		   "placeholder: never used, the server is never reached\n");
	test_write(dir, "token", "token\n");
	snprintf(conf, sizeof(conf),
		 "server-url = https://127.0.0.1:9\nca-file = %s/ca.pem\n"
		 "enroll-token-file = %s/token\nstate-dir = %s/state\n"
		 "spool-dir = %s/state/spool\nbatch-interval = %us\n"
		 "bpf = false\nlog-level = debug\n",
		 dir, dir, dir, dir, batch_s);
	test_write(dir, "agent.conf", conf);
	return test_path(dir, "agent.conf");
}

/* A config the loader refuses: nothing starts, exit status 1. */
static void test_refused_config(void **state)
{
	char *dir = test_mkdtemp(), *conf = write_config(dir, 30);
	struct loader l = { .path = conf, .refuse = true };
	char *dump = test_path(dir, "dump.kmsg");
	struct twl_run_opts o = { .config_path = conf,
				  .kmsg_file = dump,
				  .load_config = load,
				  .load_ctx = &l };
	pid_t pid;

	/* were the refusal ignored, the daemon would read this and stop */
	test_write(dir, "dump.kmsg", "4,77,1,-;" MOVE_CHARGE "\n");
	pid = spawn();
	if (pid == 0) {
		int ret = twl_daemon_main(&o);

		/* the loader ran once, asked for the daemon's checks */
		_exit(ret == 1 && l.calls == 1 && l.daemon ? 0 : 10 + ret);
	}
	assert_int_equal(wait_exit(pid), 0);
	assert_int_equal(batches_with(dir, "\"v\""), 0);
	free(dump);
	free(conf);
	test_rmtree(dir);
}

/*
 * A dump file: read through, its warning spooled, exit 0. The position
 * is kept per file, so a second run spools nothing, and a record added
 * to the file is the only one the third run spools.
 */
static void test_dump_file_resumes(void **state)
{
	char *dir = test_mkdtemp(), *conf = write_config(dir, 30);
	char *dump = test_path(dir, "dump.kmsg");
	struct loader l = { .path = conf };
	struct twl_run_opts o = { .config_path = conf,
				  .kmsg_file = dump,
				  .load_config = load,
				  .load_ctx = &l };

	test_write(dir, "dump.kmsg", "4,77,1,-;" MOVE_CHARGE "\n");
	assert_int_equal(wait_exit(start_daemon(dir, &o)), 0);
	assert_int_equal(batches_with(dir, "memcg_v1.move_charge"), 1);

	assert_int_equal(wait_exit(start_daemon(dir, &o)), 0);
	assert_int_equal(batches_with(dir, "memcg_v1.move_charge"), 1);

	test_write(dir, "dump.kmsg",
		   "4,77,1,-;" MOVE_CHARGE "\n4,78,2,-;" MOVE_CHARGE "\n");
	assert_int_equal(wait_exit(start_daemon(dir, &o)), 0);
	assert_int_equal(batches_with(dir, "memcg_v1.move_charge"), 2);
	assert_int_equal(batches_with(dir, "\"kmsg_seq\":78"), 1);
	assert_int_equal(batches_with(dir, "\"kmsg_seq\":77"), 1);
	free(dump);
	free(conf);
	test_rmtree(dir);
}

/*
 * The batch job spools a record on the batch interval while the daemon
 * keeps running (a FIFO whose writer stays: no end of input, no signal).
 */
static void test_batch_job_runs(void **state)
{
	char *dir = test_mkdtemp(), *conf = write_config(dir, 1);
	char *fifo = test_path(dir, "kmsg.fifo");
	struct loader l = { .path = conf };
	struct twl_run_opts o = { .config_path = conf,
				  .kmsg_file = fifo,
				  .load_config = load,
				  .load_ctx = &l };
	pid_t writer, agent;
	int i;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	writer = spawn();
	if (writer == 0) {
		static const char rec[] = "4,5,1,-;" MOVE_CHARGE "\n";
		int fd = open(fifo, O_WRONLY);

		if (fd < 0)
			_exit(1);
		/* after the daemon's first (empty) batch: the next one takes it */
		usleep(1500000);
		if (write(fd, rec, sizeof(rec) - 1) < 0)
			_exit(1);
		sleep(60); /* keep the FIFO open: the agent must not see EOF */
		_exit(0);
	}
	agent = start_daemon(dir, &o);
	/* Up to 30 s for the batch: a correctness wait, not a timing check. */
	for (i = 0; i < 300 && !batches_with(dir, "memcg_v1.move_charge"); i++)
		usleep(100000);
	assert_int_equal(batches_with(dir, "memcg_v1.move_charge"), 1);
	assert_int_equal(waitpid(agent, NULL, WNOHANG), 0); /* still running */
	assert_int_equal(kill(agent, SIGTERM), 0);
	assert_int_equal(wait_exit(agent), 0);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	/* nothing new at the stop: the record went out once */
	assert_int_equal(batches_with(dir, "memcg_v1.move_charge"), 1);
	free(fifo);
	free(conf);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_refused_config, kill_children),
		cmocka_unit_test_teardown(test_dump_file_resumes,
					  kill_children),
		cmocka_unit_test_teardown(test_batch_job_runs, kill_children),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
