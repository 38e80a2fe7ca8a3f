// SPDX-License-Identifier: GPL-2.0
/*
 * The twilight-agent binary: --dry-run prints exactly one valid report and
 * writes nothing; --check-config names every bad value; --print-config
 * output is a valid config. Usage: test_agent_cli AGENT_BINARY DATA_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "agent_test.h"
#include "config.h"
#include "tu_agent_run.h"

static const char *agent_bin, *data_dir;

/* Run the agent with @args (NULL-terminated) in @cwd; capture stdout/stderr. */
static void run_agent(const char *cwd, const char *const *args, struct run *r)
{
	run_agent_bin(agent_bin, cwd, args, r);
}

/* Names in @dir other than the capture files. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static json_t *dry_run_doc(const char *cwd, const char *const *args)
{
	struct twl_verr verr;
	struct run r;
	json_t *doc;

	run_agent(cwd, args, &r);
	if (r.status != 0)
		fail_msg("dry run exited %d: %s", r.status, r.err);
	/* Exactly one document: the parser rejects trailing data. */
	doc = twl_report_parse(r.out, r.out_len, &verr);
	if (!doc)
		fail_msg("dry-run output invalid: %s at %s: %s\n%s", verr.code,
			 verr.field, verr.reason, r.out);
	run_free(&r);
	return doc;
}

static size_t count_feature(json_t *doc, const char *id)
{
	json_t *w;
	size_t i, n = 0;

	json_array_foreach(json_object_get(doc, "warnings"), i, w) n +=
		!strcmp(json_string_value(json_object_get(w, "feature")), id);
	return n;
}

static void test_dry_run_kmsg_dump(void **state)
{
	char *dir = test_mkdtemp(), file[4096], conf[8192];
	const char *args[] = { "--dry-run", "--kmsg-file", file, NULL };
	const char *args_c[] = { "--dry-run",	"-c", NULL,
				 "--kmsg-file", file, NULL };
	json_t *doc, *u, *h;
	char *cpath, *host_id;

	snprintf(file, sizeof(file), "%s/sample.kmsg", data_dir);
	doc = dry_run_doc(dir, args);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 5);
	assert_int_equal(count_feature(doc, "memcg_v1.soft_limit"),
			 1); /* not the <12> copy */
	assert_int_equal(count_feature(doc, "memcg_v1.oom_control"), 1);
	assert_int_equal(count_feature(doc, "cgroup_v1.remount"), 1);
	assert_int_equal(count_feature(doc, "memcg_v1.swappiness"), 1);
	assert_int_equal(count_feature(doc, "memcg_v1.kmem_limit"), 1);
	u = json_object_get(doc, "unknown");
	assert_int_equal(json_array_size(u), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(u, 0), "text")),
			    "xt_foo: the --bar option # is deprecated");
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(u, 0), "count")),
			 2);
	h = json_object_get(doc, "health");
	assert_int_equal(
		json_integer_value(json_object_get(h, "parse_failures")), 1);
	assert_true(json_is_null(json_object_get(doc, "census")));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(doc, "warnings"), 0),
			"origin")),
		"kmsg");
	/* Wire version 2: every record with its boot, no labels unless set. */
	assert_int_equal(json_integer_value(json_object_get(doc, "v")),
			 TWL_WIRE_VERSION);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(doc, "warnings"), 4),
			"boot_id")),
		json_string_value(json_object_get(json_object_get(doc, "host"),
						  "boot_id")));
	assert_non_null(json_object_get(json_array_get(u, 0), "kernel"));
	assert_null(json_object_get(json_object_get(doc, "host"), "labels"));
	host_id = strdup(json_string_value(
		json_object_get(json_object_get(doc, "host"), "host_id")));
	assert_non_null(host_id);
	json_decref(doc);
	/* Nothing was written to the working directory. */
	assert_int_equal(count_entries(dir), 0);
	/* A config key given as a flag applies to the dry run too. */
	{
		const char *args_k[] = { "--dry-run", "--kmsg-file", file,
					 "--host-id-key=another fleet", NULL };

		doc = dry_run_doc(dir, args_k);
		assert_string_not_equal(
			json_string_value(json_object_get(
				json_object_get(doc, "host"), "host_id")),
			host_id);
		json_decref(doc);
		free(host_id);
	}

	/*
	 * With a config whose state dir is empty and no machine id: still
	 * nothing written (no host-id file), census from a fake mount table.
	 */
	test_mkdir(dir, "state");
	test_write(dir, "machine-id", "");
	test_write(dir, "mountinfo", "");
	snprintf(
		conf, sizeof(conf),
		"state-dir = %s/state\nspool-dir = %s/spool\nmachine-id-path = %s/machine-id\n"
		"mountinfo = %s/mountinfo\nlabels = team=payments, env=prod\n",
		dir, dir, dir, dir);
	test_write(dir, "agent.conf", conf);
	cpath = test_path(dir, "agent.conf");
	args_c[2] = cpath;
	doc = dry_run_doc(dir, args_c);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 5);
	h = json_object_get(json_object_get(doc, "host"), "labels");
	assert_int_equal(json_object_size(h), 2);
	assert_string_equal(json_string_value(json_object_get(h, "env")),
			    "prod");
	json_decref(doc);
	{
		char *st = test_path(dir, "state");

		assert_int_equal(count_entries(st), 0);
		free(st);
	}
	assert_int_equal(count_entries(dir),
			 4); /* state, machine-id, mountinfo, agent.conf */
	free(cpath);
	test_rmtree(dir);
}

static void test_dry_run_dmesg(void **state)
{
	char *dir = test_mkdtemp(), file[4096];
	const char *args[] = { "--dry-run", "--kmsg-file", file, NULL };
	json_t *doc, *w;
	size_t i;

	snprintf(file, sizeof(file), "%s/sample.dmesg", data_dir);
	doc = dry_run_doc(dir, args);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 3);
	assert_int_equal(count_feature(doc, "memcg_v1.kmem_tcp_limit"), 1);
	assert_int_equal(count_feature(doc, "memcg_v1.kmem_limit"), 1);
	assert_int_equal(count_feature(doc, "memcg_v1.non_hierarchical"), 1);
	json_array_foreach(json_object_get(doc, "warnings"), i, w)
	{
		assert_string_equal(
			json_string_value(json_object_get(w, "origin")),
			"unverified");
		assert_int_equal(
			json_integer_value(json_object_get(w, "kmsg_seq")), 0);
	}
	assert_int_equal(json_array_size(json_object_get(doc, "unknown")), 1);
	json_decref(doc);

	snprintf(file, sizeof(file), "%s/sample.dmesg-raw", data_dir);
	doc = dry_run_doc(dir, args);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")),
			 1); /* <14> is not */
	assert_int_equal(count_feature(doc, "memcg_v1.move_charge"), 1);
	json_decref(doc);
	assert_int_equal(count_entries(dir), 0);
	test_rmtree(dir);
}

static void test_dry_run_fifo(void **state)
{
	char *dir = test_mkdtemp(), *fifo = test_path(dir, "kmsg.fifo");
	const char *args[] = { "--dry-run", "--kmsg-file", fifo, NULL };
	json_t *doc;
	pid_t pid;
	int st;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const char recs[] =
			"4,100,1,-;Non-hierarchical mode is deprecated. Please report your usecase "
			"to linux-mm@kvack.org if you depend on this functionality.\n";
		int fd = open(fifo, O_WRONLY);

		if (fd < 0 || write(fd, recs, sizeof(recs) - 1) < 0)
			_exit(1);
		usleep(100000);
		close(fd);
		_exit(0);
	}
	doc = dry_run_doc(dir, args);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(count_feature(doc, "memcg_v1.non_hierarchical"), 1);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_array_get(json_object_get(doc, "warnings"), 0),
			"kmsg_seq")),
		100);
	json_decref(doc);
	free(fifo);
	test_rmtree(dir);
}

static void test_check_config(void **state)
{
	char *dir = test_mkdtemp(), text[4096],
	     *conf = test_path(dir, "agent.conf");
	const char *args[] = { "--check-config", "-c", conf, NULL };
	struct run r;

	test_write(dir, "agent.conf",
		   "server-url = http://insecure.example\n"
		   "batch-interval = 0s\n"
		   "no_such_option = 1\n"
		   "send-hostname = perhaps\n");
	run_agent(dir, args, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "agent.conf:1: server-url:"));
	assert_non_null(strstr(r.err, "agent.conf:2: batch-interval:"));
	assert_non_null(strstr(r.err, "agent.conf:3: no_such_option:"));
	assert_non_null(strstr(r.err, "agent.conf:4: send-hostname:"));
	run_free(&r);

	/* Parse errors fixed: now the cross checks speak (missing ca-file ...). */
	test_write(dir, "agent.conf", "server-url = https://127.0.0.1:8443\n");
	run_agent(dir, args, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "ca-file: required"));
	run_free(&r);

	/* A complete config. */
	test_write(dir, "ca.pem", "-----BEGIN CERTIFICATE-----\n");
	test_mkdir(dir, "state");
	test_mkdir(dir, "spool");
	snprintf(
		text, sizeof(text),
		"server-url = https://127.0.0.1:8443\nca-file = %s/ca.pem\nstate-dir = %s/state\n"
		"spool-dir = %s/spool\n",
		dir, dir, dir);
	test_write(dir, "agent.conf", text);
	run_agent(dir, args, &r);
	if (r.status != 0)
		fail_msg("good config rejected: %s", r.err);
	assert_non_null(strstr(r.out, "configuration OK"));
	assert_int_equal(r.err_len, 0);
	run_free(&r);

	/* An old file in snake_case: still OK, with a note per old key. */
	snprintf(
		text, sizeof(text),
		"server_url = https://127.0.0.1:8443\nca_file = %s/ca.pem\nstate_dir = %s/state\n"
		"spool_dir = %s/spool\n",
		dir, dir, dir);
	test_write(dir, "agent.conf", text);
	run_agent(dir, args, &r);
	if (r.status != 0)
		fail_msg("old spelling rejected: %s", r.err);
	assert_non_null(strstr(
		r.err,
		"agent.conf:1: note: server_url: deprecated spelling: write server-url"));
	assert_non_null(strstr(r.err, "agent.conf:4: note: spool_dir:"));
	run_free(&r);

	/* Labels are held to the wire's rules, naming the bad one. */
	snprintf(
		text, sizeof(text),
		"server-url = https://127.0.0.1:8443\nca-file = %s/ca.pem\nstate-dir = %s/state\n"
		"spool-dir = %s/spool\nlabels = team=payments,Env=prod\n",
		dir, dir, dir);
	test_write(dir, "agent.conf", text);
	run_agent(dir, args, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "labels: label name \"Env\" must be"));
	run_free(&r);

	/* A key on the command line overrides the file's. */
	{
		const char *over[] = { "--check-config", "-c", conf,
				       "--state-dir=/nonexistent/state", NULL };

		run_agent(dir, over, &r);
		assert_int_equal(r.status, 1);
		assert_non_null(strstr(
			r.err,
			"state-dir: /nonexistent/state: No such file or directory"));
		run_free(&r);
	}
	free(conf);
	test_rmtree(dir);
}

static void test_print_config_and_args(void **state)
{
	char *dir = test_mkdtemp();
	const char *pargs[] = { "--print-config", NULL };
	const char *bad[] = { "--no-such-flag", NULL };
	const char *bad_value[] = { "--dry-run", "--batch-interval", "0",
				    NULL };
	const char *stray[] = { "--dry-run", "stray", NULL };
	const char *help[] = { "--help", "--no-such-flag", NULL };
	struct twl_agent_cli cli;
	struct twl_config c;
	struct twl_cfg *p;
	struct run r;

	run_agent(dir, pargs, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(twl_config_init(&c), 0);
	memset(&cli, 0, sizeof(cli));
	p = twl_config_session(&c, &cli);
	assert_non_null(p);
	assert_int_equal(twl_cfg_parse_text(p, "out", r.out, r.out_len), 0);
	twl_cfg_free(p);
	twl_config_fini(&c);
	run_free(&r);

	/* Bad command lines exit 2 and say why, before anything starts. */
	run_agent(dir, bad, &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--no-such-flag: unknown option"));
	run_free(&r);
	run_agent(dir, bad_value, &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--batch-interval: bad duration"));
	assert_int_equal(r.out_len, 0);
	run_free(&r);
	run_agent(dir, stray, &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unexpected argument \"stray\""));
	run_free(&r);
	/* --help wins over a bad flag next to it. */
	run_agent(dir, help, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "--dry-run"));
	assert_non_null(strstr(r.out, "census-max-cgroups"));
	run_free(&r);
	test_rmtree(dir);
}

/* Does any regular file in @dir contain @needle? */
static bool dir_contains(const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while (!found && (de = readdir(d))) {
		char *path, *text = NULL;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		path = test_path(dir, de->d_name);
		if (twl_read_file(path, 1 << 20, &text, &len) == 0)
			found = memmem(text, len, needle, strlen(needle)) !=
				NULL;
		free(text);
		free(path);
	}
	closedir(d);
	return found;
}

/*
 * The daemon on a FIFO: SIGHUP reloads (a bad config is refused and the
 * agent keeps running), SIGTERM spools the pending record, saves the kmsg
 * position and exits 0. The server URL is a closed port on 127.0.0.1, so
 * the batch stays in the spool.
 */
static void test_daemon_sighup_sigterm(void **state)
{
	char *dir = test_mkdtemp(), conf[4096],
	     *fifo = test_path(dir, "kmsg.fifo");
	char *cpath = test_path(dir, "agent.conf"), *spool, *st = NULL;
	pid_t writer, agent;
	size_t len;
	int status;

	test_mkdir(dir, "state");
	test_write(dir, "ca.pem",
		   "placeholder: never used, the server is never reached\n");
	test_write(dir, "token", "token\n");
	snprintf(
		conf, sizeof(conf),
		"server-url = https://127.0.0.1:9\nca-file = %s/ca.pem\n"
		"enroll-token-file = %s/token\nstate-dir = %s/state\n"
		"spool-dir = %s/state/spool\nbatch-interval = 1h\nlog-level = debug\n",
		dir, dir, dir, dir);
	test_write(dir, "agent.conf", conf);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		static const char rec[] =
			"4,77,1,-;Cgroup memory moving (move_charge_at_immigrate) is deprecated. "
			"Please report your usecase to linux-mm@kvack.org if you depend on this "
			"functionality.\n";
		int fd = open(fifo, O_WRONLY);

		if (fd < 0 || write(fd, rec, sizeof(rec) - 1) < 0)
			_exit(1);
		sleep(30); /* keep the FIFO open: the agent must not see EOF */
		_exit(0);
	}
	agent = fork();
	assert_true(agent >= 0);
	if (agent == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execl(agent_bin, agent_bin, "-c", cpath, "--kmsg-file", fifo,
		      (char *)NULL);
		_exit(127);
	}
	usleep(700000);
	assert_int_equal(kill(agent, SIGHUP), 0); /* valid: reload */
	usleep(300000);
	test_write(dir, "agent.conf", "batch-interval = 0\n");
	assert_int_equal(kill(agent, SIGHUP),
			 0); /* invalid: refused, still running */
	usleep(300000);
	assert_int_equal(waitpid(agent, &status, WNOHANG), 0);
	assert_int_equal(kill(agent, SIGTERM), 0);
	assert_int_equal(waitpid(agent, &status, 0), agent);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	spool = test_path(dir, "state/spool");
	assert_true(dir_contains(spool, "memcg_v1.move_charge"));
	free(spool);
	spool = test_path(dir, "state/state.json");
	assert_int_equal(twl_read_file(spool, 4096, &st, &len), 0);
	assert_non_null(strstr(st, "\"last_kmsg_seq\":77"));
	free(st);
	free(spool);
	free(fifo);
	free(cpath);
	test_rmtree(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dry_run_kmsg_dump),
		cmocka_unit_test(test_dry_run_dmesg),
		cmocka_unit_test(test_dry_run_fifo),
		cmocka_unit_test(test_check_config),
		cmocka_unit_test(test_print_config_and_args),
		cmocka_unit_test(test_daemon_sighup_sigterm),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s AGENT_BINARY DATA_DIR\n", argv[0]);
		return 1;
	}
	agent_bin = argv[1];
	data_dir = argv[2];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
