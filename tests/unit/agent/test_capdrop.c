// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's start (agent/startup.c) gives up its capabilities after
 * the kernel log and BPF: when capset() fails, as under a sandbox that
 * forbids it, the start fails with a line saying why and what to do,
 * unless require-cap-drop = false, when it goes on and says it kept them.
 *
 * capget() and capset() are replaced in this executable (it defines
 * them, so the agent's calls land here instead of in libc, as an
 * LD_PRELOAD shim would make them): capget() reports the set the test
 * chose, capset() fails or records what it was asked for. Nothing
 * changes this process's real capabilities. BPF is off (never loaded on
 * this machine); the kernel log is a dump file.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <twilight/config.h>
#include <twilight/util.h>

#include "agent_test.h"
#include "config.h"
#include "startup.h"

/* The fake capabilities: what capget() reports, whether capset() fails. */
static struct __user_cap_data_struct fake_held[2];
static bool fake_capset_fails;
static int capset_calls;

int capget(cap_user_header_t hdr, cap_user_data_t data);
int capset(cap_user_header_t hdr, const cap_user_data_t data);

int capget(cap_user_header_t hdr, cap_user_data_t data)
{
	if (hdr->version != _LINUX_CAPABILITY_VERSION_3) {
		errno = EINVAL;
		return -1;
	}
	memcpy(data, fake_held, sizeof(fake_held));
	return 0;
}

int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	capset_calls++;
	if (fake_capset_fails || hdr->version != _LINUX_CAPABILITY_VERSION_3) {
		errno = EPERM;
		return -1;
	}
	memcpy(fake_held, data, sizeof(fake_held));
	return 0;
}

/* Every capability held (root), or none. */
static void hold_all(bool all)
{
	memset(fake_held, 0, sizeof(fake_held));
	for (int i = 0; all && i < 2; i++)
		fake_held[i].effective = fake_held[i].permitted = 0xffffffff;
	capset_calls = 0;
}

/* The daemon's config in @dir, with @extra appended; loaded into @cfg. */
static void load_config(const char *dir, const char *extra,
			struct twl_config *cfg)
{
	struct twl_agent_cli cli;
	char text[4096], *path;
	struct twl_cfg *p;

	test_mkdir(dir, "state");
	test_write(dir, "ca.pem", "placeholder: the server is never reached\n");
	test_write(dir, "token", "token\n");
	snprintf(
		text, sizeof(text),
		"server-url = https://127.0.0.1:9\nca-file = %s/ca.pem\n"
		"enroll-token-file = %s/token\nstate-dir = %s/state\n"
		"spool-dir = %s/state/spool\nbpf = false\nlog-level = debug\n%s",
		dir, dir, dir, dir, extra);
	test_write(dir, "agent.conf", text);
	path = test_path(dir, "agent.conf");
	memset(&cli, 0, sizeof(cli));
	assert_int_equal(twl_config_init(cfg), 0);
	p = twl_config_session(cfg, &cli);
	assert_non_null(p);
	assert_int_equal(twl_cfg_load_file(p, path, TWL_AGENT_CONFIG_MAX, true),
			 0);
	assert_int_equal(twl_config_validate(cfg, true, p), 0);
	twl_cfg_free(p);
	free(path);
}

/*
 * twl_agent_start() of the daemon with @extra config lines, its log in
 * @dir/log (returned, to free); *@ret is what the start returned.
 */
static char *start(const char *dir, const char *extra, int *ret)
{
	char *dump = test_path(dir, "dump.kmsg"), *log = test_path(dir, "log");
	struct twl_run_opts o = { .kmsg_file = dump };
	struct twl_agent a;
	char *text = NULL;
	size_t len;
	int fd, saved;

	test_write(dir, "dump.kmsg", "");
	memset(&a, 0, sizeof(a));
	a.o = &o;
	load_config(dir, extra, &a.cfg);
	twl_log_init("twilight-agent", LOG_DEBUG);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	dup2(fd, 2);
	*ret = twl_agent_start(&a, false);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	twl_agent_stop(&a);
	assert_int_equal(twl_read_file(log, 1 << 20, &text, &len), 0);
	free(dump);
	free(log);
	return text;
}

/* capset() fails: no start, and the line says why and what to do. */
static void test_drop_fails_fatal(void **state)
{
	char *dir = test_mkdtemp(), *log;
	int ret;

	hold_all(true);
	fake_capset_fails = true;
	log = start(dir, "", &ret);
	assert_int_equal(ret, -1);
	assert_int_equal(capset_calls, 1);
	assert_non_null(strstr(log, "cannot drop capabilities"));
	assert_non_null(strstr(log, "set require-cap-drop = false"));
	assert_null(strstr(log, ": started: "));
	free(log);
	test_rmtree(dir);
}

/* require-cap-drop = false: the start goes on, saying what it kept. */
static void test_drop_fails_allowed(void **state)
{
	char *dir = test_mkdtemp(), *log;
	int ret;

	hold_all(true);
	fake_capset_fails = true;
	log = start(dir, "require-cap-drop = false\n", &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(capset_calls, 1);
	assert_non_null(strstr(log, "cannot drop capabilities"));
	assert_non_null(strstr(log, "running with them"));
	assert_non_null(strstr(log, ": started: "));
	free(log);
	test_rmtree(dir);
}

/* capset() works: every capability given up (BPF is off: none kept). */
static void test_drop_works(void **state)
{
	static const struct __user_cap_data_struct none[2];
	char *dir = test_mkdtemp(), *log;
	int ret;

	hold_all(true);
	fake_capset_fails = false;
	log = start(dir, "", &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(capset_calls, 1);
	assert_memory_equal(fake_held, none, sizeof(none));
	assert_non_null(strstr(log, "capabilities dropped"));
	assert_null(strstr(log, "cannot drop"));
	free(log);
	test_rmtree(dir);
}

/* Started without capabilities: nothing to drop, capset() not needed. */
static void test_nothing_held(void **state)
{
	char *dir = test_mkdtemp(), *log;
	int ret;

	hold_all(false);
	fake_capset_fails = true;
	log = start(dir, "", &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(capset_calls, 0);
	assert_null(strstr(log, "cannot drop"));
	free(log);
	test_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_fails_fatal),
		cmocka_unit_test(test_drop_fails_allowed),
		cmocka_unit_test(test_drop_works),
		cmocka_unit_test(test_nothing_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
