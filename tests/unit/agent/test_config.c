// SPDX-License-Identifier: GPL-2.0
/* Config table, parser and validator; the example file stays in sync. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "agent_test.h"
#include "config.h"

static struct twl_config_errors errs;

static void test_defaults(void **state)
{
	struct twl_config c;

	assert_int_equal(twl_config_init(&c), 0);
	assert_null(c.server_url);
	assert_string_equal(c.kmsg_path, "/dev/kmsg");
	assert_string_equal(c.cgroup_root, "/sys/fs/cgroup");
	assert_int_equal(c.batch_interval_s, 30);
	assert_int_equal(c.spool_max_age_s, 30 * 86400);
	assert_int_equal(c.spool_max_bytes, 64ULL << 20);
	assert_int_equal(c.census_max_ms, 2000);
	assert_true(c.send_hostname);
	assert_int_equal(c.log_level, LOG_INFO);
	twl_config_fini(&c);
	twl_config_fini(&c); /* idempotent */
}

static void test_good_file(void **state)
{
	static const char text[] =
		"# comment\n"
		"\n"
		"server_url = https://twilight.example:8443\n"
		"  ca_file=/etc/twilight/ca.pem  \n"
		"batch_interval = 2m\n"
		"backoff_base = 500ms\n"
		"spool_max_bytes = 1G\n"
		"send_hostname = no\n"
		"log_level = debug\n"
		"host_id_key = \"fleet key with spaces\"\n"
		"census_max_cgroups = 50\r\n";
	struct twl_config c;

	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_config_parse(&c, text, sizeof(text) - 1, &errs),
			 0);
	assert_int_equal(errs.n, 0);
	assert_string_equal(c.server_url, "https://twilight.example:8443");
	assert_string_equal(c.ca_file, "/etc/twilight/ca.pem");
	assert_int_equal(c.batch_interval_s, 120);
	assert_int_equal(c.backoff_base_ms, 500);
	assert_int_equal(c.spool_max_bytes, 1ULL << 30);
	assert_false(c.send_hostname);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_string_equal(c.host_id_key, "fleet key with spaces");
	assert_int_equal(c.census_max_cgroups, 50);
	twl_config_fini(&c);
}

/* Each bad line must produce exactly one error naming line and key. */
static void test_every_bad_value_named(void **state)
{
	static const struct {
		const char *line;
		const char *key;
		const char *why; /* substring of the message */
	} cases[] = {
		{ "server_url = http://plain.example", "server_url", "https" },
		{ "ca_file = relative/ca.pem", "ca_file", "absolute" },
		{ "batch_interval = 0", "batch_interval", "outside" },
		{ "batch_interval2 = 5", "batch_interval2", "unknown option" },
		{ "heartbeat_interval = 5 fortnights", "heartbeat_interval",
		  "unknown unit" },
		{ "spool_max_bytes = -5", "spool_max_bytes", "non-negative" },
		{ "send_hostname = maybe", "send_hostname", "true or false" },
		{ "log_level = loud", "log_level", "one of" },
		{ "census_max_cgroups = 12x", "census_max_cgroups", "integer" },
		{ "backoff_cap = 99999999999999999999999", "backoff_cap",
		  "range" },
		{ "host_id_key = \"unterminated", "host_id_key",
		  "unterminated" },
		{ "just some words", "", "key = value" },
		{ "state_dir =", "state_dir", "empty" },
	};
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	char text[4096];
	size_t o = 0;
	struct twl_config c;

	for (i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\n",
				      cases[i].line);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_config_parse(&c, text, o, &errs), -EINVAL);
	assert_int_equal(errs.n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(errs.e[i].line, i + 1);
		assert_string_equal(errs.e[i].key, cases[i].key);
		if (!strstr(errs.e[i].msg, cases[i].why))
			fail_msg("line %zu (%s): message \"%s\" lacks \"%s\"",
				 i + 1, cases[i].line, errs.e[i].msg,
				 cases[i].why);
	}
	/* Bad values leave the defaults in place. */
	assert_int_equal(c.batch_interval_s, 30);
	assert_null(c.server_url);
	twl_config_fini(&c);
}

static void test_privacy(void **state)
{
	static const char bad[] = "privacy_comm = scramble\n";
	static const char hash_nokey[] = "privacy_cgroup = hash\n";
	struct twl_config c;
	size_t i;
	bool seen = false;

	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_string_equal(c.privacy_comm, "keep");
	assert_false(c.bpf); /* never loads BPF unless asked */
	assert_int_equal(twl_config_parse(&c, bad, sizeof(bad) - 1, &errs),
			 -EINVAL);
	assert_non_null(strstr(errs.e[0].msg, "keep|hash|drop"));
	twl_config_fini(&c);

	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_config_parse(&c, hash_nokey,
					  sizeof(hash_nokey) - 1, &errs),
			 0);
	assert_string_equal(c.privacy_cgroup, "hash");
	assert_int_equal(twl_config_validate(&c, false, &errs), -EINVAL);
	for (i = 0; i < errs.n; i++)
		seen |= !strcmp(errs.e[i].key, "privacy_key");
	assert_true(seen);
	twl_config_fini(&c);
}

static void test_duplicate_key(void **state)
{
	static const char text[] = "batch_interval = 10\nbatch_interval = 20\n";
	struct twl_config c;

	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_config_parse(&c, text, sizeof(text) - 1, &errs),
			 -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 2);
	assert_non_null(strstr(errs.e[0].msg, "first on line 1"));
	twl_config_fini(&c);
}

static void test_validate(void **state)
{
	char *dir = test_mkdtemp(), text[1024],
	     *path = test_path(dir, "agent.conf");
	struct twl_config c;
	size_t i;
	bool seen_ca = false, seen_url = false, seen_pair = false,
	     seen_backoff = false;

	/* Missing required options, half a client cert pair, base > cap, missing files. */
	snprintf(
		text, sizeof(text),
		"ca_file = %s/no-such-ca.pem\nclient_cert = %s/agent.pem\n"
		"backoff_base = 10m\nbackoff_cap = 1m\nstate_dir = %s\nspool_dir = %s/spool\n",
		dir, dir, dir, dir);
	test_write(dir, "agent.conf", text);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_load(&c, path, &errs), 0);
	assert_int_equal(twl_config_validate(&c, true, &errs), -EINVAL);
	for (i = 0; i < errs.n; i++) {
		if (!strcmp(errs.e[i].key, "ca_file") &&
		    strstr(errs.e[i].msg, "No such file"))
			seen_ca = true;
		if (!strcmp(errs.e[i].key, "server_url") &&
		    strstr(errs.e[i].msg, "required"))
			seen_url = true;
		if (!strcmp(errs.e[i].key, "client_key"))
			seen_pair = true;
		if (!strcmp(errs.e[i].key, "backoff_base"))
			seen_backoff = true;
	}
	assert_true(seen_ca && seen_url && seen_pair && seen_backoff);
	twl_config_fini(&c);

	/* A missing config file is one error, with the reason. */
	memset(&errs, 0, sizeof(errs));
	free(path);
	path = test_path(dir, "missing.conf");
	assert_int_equal(twl_config_load(&c, path, &errs), -ENOENT);
	assert_int_equal(errs.n, 1);
	twl_config_fini(&c);
	free(path);
	test_rmtree(dir);
}

/* agent/twilight-agent.conf.example is exactly what --print-config prints. */
static void test_example_in_sync(void **state)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char path[4096], *want = NULL, *got = NULL;
	size_t wlen = 0, glen = 0;
	struct twl_config c;
	FILE *f;

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/agent/twilight-agent.conf.example",
		 src);
	assert_int_equal(twl_read_file(path, 1 << 20, &want, &wlen), 0);
	f = open_memstream(&got, &glen);
	assert_non_null(f);
	twl_config_print_example(f);
	assert_int_equal(fclose(f), 0);
	if (glen != wlen || memcmp(got, want, glen))
		fail_msg(
			"%s is stale: regenerate it with twilight-agent --print-config",
			path);
	/* And it parses without errors. */
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_config_parse(&c, want, wlen, &errs), 0);
	assert_non_null(c.server_url);
	twl_config_fini(&c);
	free(want);
	free(got);
}

static void test_help_lists_every_option(void **state)
{
	char *got = NULL;
	size_t glen = 0, i;
	FILE *f = open_memstream(&got, &glen);

	assert_non_null(f);
	twl_config_print_help(f);
	assert_int_equal(fclose(f), 0);
	for (i = 0; i < twl_config_n_options; i++)
		assert_non_null(strstr(got, twl_config_options[i].name));
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_every_bad_value_named),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_privacy),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_example_in_sync),
		cmocka_unit_test(test_help_lists_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
