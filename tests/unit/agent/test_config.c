// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's option tables, validator and generated texts: kebab-case
 * keys with the old snake_case spellings still accepted (with a note),
 * and the example file in sync with the table.
 */
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

#include "../common/docs_sync.h"
#include "agent_test.h"
#include "config.h"

static struct twl_agent_cli cli;
static struct twl_cfg *p;

/* A session over @c (after twl_config_init()); freed by done(). */
static struct twl_cfg *session(struct twl_config *c)
{
	memset(&cli, 0, sizeof(cli));
	p = twl_config_session(c, &cli);
	assert_non_null(p);
	return p;
}

static int parse(struct twl_config *c, const char *text, size_t len)
{
	return twl_cfg_parse_text(session(c), "agent.conf", text, len);
}

static void done(struct twl_config *c)
{
	twl_config_fini(c);
	twl_cfg_free(p);
	p = NULL;
}

/* Was there an error about @key whose text has @why? */
static bool has_error(const char *key, const char *why)
{
	size_t i;

	for (i = 0; i < p->n_msgs; i++)
		if (!p->msgs[i].note && !strcmp(p->msgs[i].key, key) &&
		    strstr(p->msgs[i].text, why))
			return true;
	return false;
}

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

static void test_tables(void **state)
{
	char why[4096];

	if (twl_cfg_check_table(twl_config_options, twl_config_n_options, why,
				sizeof(why)))
		fail_msg("config table: %s", why);
	if (twl_cfg_check_table(twl_agent_cli_options, twl_agent_cli_n_options,
				why, sizeof(why)))
		fail_msg("command-line table: %s", why);
}

static void test_good_file(void **state)
{
	static const char text[] =
		"# comment\n"
		"\n"
		"server-url = https://twilight.example:8443\n"
		"  ca-file=/etc/twilight/ca.pem  \n"
		"batch-interval = 2m\n"
		"backoff-base = 500ms\n"
		"spool-max-bytes = 1G\n"
		"send-hostname = no\n"
		"log-level = debug\n"
		"host-id-key = \"fleet key with spaces\"\n"
		"census-max-cgroups = 50\r\n";
	struct twl_config c;

	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, text, sizeof(text) - 1), 0);
	assert_int_equal(p->n_msgs, 0);
	assert_string_equal(c.server_url, "https://twilight.example:8443");
	assert_string_equal(c.ca_file, "/etc/twilight/ca.pem");
	assert_int_equal(c.batch_interval_s, 120);
	assert_int_equal(c.backoff_base_ms, 500);
	assert_int_equal(c.spool_max_bytes, 1ULL << 30);
	assert_false(c.send_hostname);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_string_equal(c.host_id_key, "fleet key with spaces");
	assert_int_equal(c.census_max_cgroups, 50);
	done(&c);
}

/* An old config file in snake_case still works, with one note per key. */
static void test_old_spelling(void **state)
{
	static const char text[] =
		"server_url = https://twilight.example:8443\n"
		"ca_file = /etc/twilight/ca.pem\n"
		"enroll_token_file = /etc/twilight/enroll.token\n"
		"state_dir = /var/lib/a\n"
		"spool_dir = /var/lib/a/spool\n"
		"batch_interval = 1s\n"
		"census_interval = 1h\n"
		"kmsg_path = /tmp/kmsg\n"
		"cgroup_root = /sys/fs/cgroup/x\n"
		"bpf = true\n"
		"privacy_cgroup = hash\n"
		"privacy_key = k\n"
		"log_level = warning\n";
	struct twl_config c;
	size_t i;

	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, text, sizeof(text) - 1), 0);
	assert_false(twl_cfg_failed(p));
	assert_string_equal(c.server_url, "https://twilight.example:8443");
	assert_string_equal(c.spool_dir, "/var/lib/a/spool");
	assert_int_equal(c.batch_interval_s, 1);
	assert_string_equal(c.kmsg_path, "/tmp/kmsg");
	assert_true(c.bpf);
	assert_string_equal(c.privacy_cgroup, "hash");
	assert_int_equal(c.log_level, LOG_WARNING);
	/* bpf is spelled the same both ways: 12 notes for 13 lines. */
	assert_int_equal(p->n_msgs, 12);
	for (i = 0; i < p->n_msgs; i++)
		assert_true(p->msgs[i].note);
	assert_string_equal(p->msgs[0].key, "server_url");
	assert_non_null(strstr(p->msgs[0].text, "write server-url"));
	assert_non_null(strstr(p->msgs[11].text, "write log-level"));
	assert_int_equal(twl_config_validate(&c, false, p), 0);
	done(&c);
}

/* Each bad line must produce exactly one error naming line and key. */
static void test_every_bad_value_named(void **state)
{
	static const struct {
		const char *line;
		const char *key;
		const char *why; /* substring of the message */
	} cases[] = {
		{ "server-url = http://plain.example", "server-url", "https" },
		{ "ca-file = relative/ca.pem", "ca-file", "absolute" },
		{ "batch-interval = 0", "batch-interval", "outside" },
		{ "batch-interval2 = 5", "batch-interval2",
		  "unknown option (see twilight-agent --help)" },
		{ "heartbeat-interval = 5 fortnights", "heartbeat-interval",
		  "optional unit s, m, h or d" },
		{ "spool-max-bytes = -5", "spool-max-bytes",
		  "expected a size" },
		{ "send-hostname = maybe", "send-hostname", "true or false" },
		{ "log-level = loud", "log-level", "one of" },
		{ "census-max-cgroups = 12x", "census-max-cgroups", "integer" },
		{ "backoff-cap = 99999999999999999999999", "backoff-cap",
		  "range" },
		{ "host-id-key = \"unterminated", "host-id-key",
		  "unterminated" },
		{ "just some words", "", "key = value" },
		{ "state-dir =", "state-dir", "empty" },
		{ "census-max-time = 1ms", "census-max-time",
		  "1ms is outside the allowed range 10ms..1m" },
		{ "config = /etc/x.conf", "config",
		  "only be given on the command line" },
		/* no older batch than the server keeps ids of (batch-days) */
		{ "spool-max-age = 36d", "spool-max-age",
		  "36d is outside the allowed range 1h..35d" },
	};
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	char text[4096];
	size_t o = 0;
	struct twl_config c;

	for (i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\n",
				      cases[i].line);
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, text, o), -EINVAL);
	assert_int_equal(p->n_msgs, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(p->msgs[i].line, i + 1);
		assert_string_equal(p->msgs[i].key, cases[i].key);
		if (!strstr(p->msgs[i].text, cases[i].why))
			fail_msg("line %zu (%s): message \"%s\" lacks \"%s\"",
				 i + 1, cases[i].line, p->msgs[i].text,
				 cases[i].why);
	}
	/* Bad values leave the defaults in place. */
	assert_int_equal(c.batch_interval_s, 30);
	assert_null(c.server_url);
	done(&c);
}

static void test_privacy(void **state)
{
	static const char bad[] = "privacy-comm = scramble\n";
	static const char hash_nokey[] = "privacy-cgroup = hash\n";
	static const char secret[] = "privacy-key = \"s3cr\x01t\"\n";
	struct twl_config c;

	assert_int_equal(twl_config_init(&c), 0);
	assert_string_equal(c.privacy_comm, "keep");
	assert_false(c.bpf); /* never loads BPF unless asked */
	assert_int_equal(parse(&c, bad, sizeof(bad) - 1), -EINVAL);
	assert_non_null(strstr(p->msgs[0].text, "keep|hash|drop"));
	done(&c);

	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, hash_nokey, sizeof(hash_nokey) - 1), 0);
	assert_string_equal(c.privacy_cgroup, "hash");
	assert_int_equal(twl_config_validate(&c, false, p), -EINVAL);
	assert_true(has_error("privacy-key", "required when"));
	done(&c);

	/* The key is a secret: an error about it does not repeat it. */
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, secret, sizeof(secret) - 1), -EINVAL);
	assert_null(strstr(p->msgs[0].text, "s3cr"));
	done(&c);
}

/*
 * labels: name=value items, comma-separated or repeated, checked against
 * the wire's rules when the config is checked; bounded at 16.
 */
static void test_labels(void **state)
{
	static const char good[] =
		"labels = team=payments, env=prod\nlabels = k8s.zone=eu-west-1a\n";
	static const char *const bad[][2] = {
		{ "labels = Team=payments\n", "label name \"Team\"" },
		{ "labels = team=pay ments\n", "label value \"pay ments\"" },
		{ "labels = team=a,team=b\n", "\"team\" is given twice" },
		{ "labels = team=\n", "label value \"\" of team" },
	};
	static const char *const refused[][2] = {
		{ "labels = team\n", "is not key=value" },
		{ "labels = team=a,,env=b\n", "empty item" },
		{ "labels = a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,"
		  "m=13,n=14,o=15,p=16,q=17\n",
		  "more than 16 items" },
	};
	struct twl_config c;
	size_t i;

	(void)state;
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(c.labels.n, 0);
	assert_int_equal(parse(&c, good, sizeof(good) - 1), 0);
	assert_int_equal(c.labels.n, 3);
	assert_string_equal(c.labels.item[1], "env=prod");
	assert_string_equal(c.labels.item[2], "k8s.zone=eu-west-1a");
	assert_int_equal(twl_config_validate(&c, false, p), -EINVAL);
	assert_false(has_error("labels", ""));
	done(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(twl_config_init(&c), 0);
		assert_int_equal(parse(&c, bad[i][0], strlen(bad[i][0])), 0);
		assert_int_equal(twl_config_validate(&c, false, p), -EINVAL);
		if (!has_error("labels", bad[i][1]))
			fail_msg("%s: no error saying %s", bad[i][0],
				 bad[i][1]);
		done(&c);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(twl_config_init(&c), 0);
		assert_int_equal(parse(&c, refused[i][0],
				       strlen(refused[i][0])),
				 -EINVAL);
		if (!has_error("labels", refused[i][1]))
			fail_msg("%s: no error saying %s", refused[i][0],
				 refused[i][1]);
		assert_int_equal(c.labels.n, 0);
		done(&c);
	}
}

static void test_duplicate_key(void **state)
{
	/* Also when the old spelling and the new one meet. */
	static const char text[] = "batch_interval = 10\nbatch-interval = 20\n";
	struct twl_config c;

	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, text, sizeof(text) - 1), -EINVAL);
	assert_int_equal(p->n_errors, 1);
	assert_int_equal(p->msgs[1].line, 2);
	assert_non_null(strstr(p->msgs[1].text, "first on line 1"));
	assert_int_equal(c.batch_interval_s, 10);
	done(&c);
}

static void test_validate(void **state)
{
	char *dir = test_mkdtemp(), text[1024],
	     *path = test_path(dir, "agent.conf");
	struct twl_config c;

	/* Missing required options, half a client cert pair, base > cap, missing files. */
	snprintf(
		text, sizeof(text),
		"ca-file = %s/no-such-ca.pem\nclient-cert = %s/agent.pem\n"
		"backoff-base = 10m\nbackoff-cap = 1m\nstate-dir = %s\nspool-dir = %s\n",
		dir, dir, dir, dir);
	test_write(dir, "agent.conf", text);
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_cfg_load_file(session(&c), path,
					   TWL_AGENT_CONFIG_MAX, true),
			 0);
	assert_int_equal(twl_config_validate(&c, true, p), -EINVAL);
	assert_true(has_error("ca-file", "No such file"));
	assert_true(has_error("server-url", "required"));
	assert_true(has_error("client-key", "set together"));
	assert_true(has_error("backoff-base", "larger than backoff-cap"));
	assert_true(has_error("spool-dir", "must differ from state-dir"));
	/* Numbers set directly are held to the table's bounds too. */
	c.census_max_cgroups = 0;
	p->n_msgs = p->n_errors = 0;
	assert_int_equal(twl_config_validate(&c, false, p), -EINVAL);
	assert_true(has_error("census-max-cgroups", "outside"));
	done(&c);

	/* A missing config file is one error, with the reason. */
	free(path);
	path = test_path(dir, "missing.conf");
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(twl_cfg_load_file(session(&c), path,
					   TWL_AGENT_CONFIG_MAX, true),
			 -ENOENT);
	assert_int_equal(p->n_msgs, 1);
	assert_non_null(strstr(p->msgs[0].text, "No such file"));
	done(&c);
	free(path);
	test_rmtree(dir);
}

static void print_example(FILE *f, const void *arg)
{
	twl_config_print_example(f);
}

static void print_man(FILE *f, const void *flags)
{
	twl_config_print_man(f, flags != NULL);
}

/* agent/twilight-agent.conf.example is exactly what --print-config prints. */
static void test_example_in_sync(void **state)
{
	char *want = docs_capture(print_example, NULL);
	struct twl_config c;

	docs_sync_file("agent/twilight-agent.conf.example", want,
		       "regenerate it with twilight-agent --print-config");
	/* And it parses without errors or notes. */
	assert_int_equal(twl_config_init(&c), 0);
	assert_int_equal(parse(&c, want, strlen(want)), 0);
	assert_int_equal(p->n_msgs, 0);
	assert_non_null(c.server_url);
	done(&c);
	free(want);
}

/* twilight-agent(8) lists the flags and the keys the tables generate. */
static void test_man_in_sync(void **state)
{
	char *flags = docs_capture(print_man, "flags");
	char *keys = docs_capture(print_man, NULL);

	docs_sync_block("docs/man/twilight-agent.8", "options", flags);
	docs_sync_block("docs/man/twilight-agent.8", "configuration", keys);
	free(flags);
	free(keys);
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
	for (i = 0; i < twl_agent_cli_n_options; i++)
		assert_non_null(strstr(got, twl_agent_cli_options[i].name));
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_old_spelling),
		cmocka_unit_test(test_every_bad_value_named),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_privacy),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_example_in_sync),
		cmocka_unit_test(test_man_in_sync),
		cmocka_unit_test(test_help_lists_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
