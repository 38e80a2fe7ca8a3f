// SPDX-License-Identifier: GPL-2.0
/*
 * The server's option tables are sound, and what they generate is what
 * the repository ships: server/twilight-server.conf.example (the packaged
 * /etc/twilight/server.conf) and the option lists of twilight-server(8).
 * Run with TWILIGHT_REGENERATE=1 to rewrite stale documents.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/docs_sync.h"
#include "config.h"

static void check_table(const char *what, const struct twl_cfg_opt *opts,
			size_t n)
{
	char why[4096];

	if (twl_cfg_check_table(opts, n, why, sizeof(why)))
		fail_msg("%s table: %s", what, why);
}

static void test_tables(void **state)
{
	check_table("server", twl_server_options, twl_server_n_options);
	check_table("command-line", twl_server_cli_options,
		    twl_server_cli_n_options);
	check_table("token", twl_server_token_options,
		    twl_server_token_n_options);
	check_table("export", twl_export_cli_options, twl_export_cli_n_options);
	check_table("migrate-store", twl_migrate_store_cli_options,
		    twl_migrate_store_cli_n_options);
}

static void print_example(FILE *f, const void *arg)
{
	twl_config_print_example(f);
}

static void print_man(FILE *f, const void *block)
{
	assert_int_equal(twl_config_print_man(f, block), 0);
}

static void test_example_in_sync(void **state)
{
	char *want = docs_capture(print_example, NULL), err[4096];
	struct twl_config c;
	struct twl_cfg *p;

	docs_sync_file("server/twilight-server.conf.example", want,
		       "regenerate it with twilight-server --print-config");
	/* It parses, and sets what the package needs. */
	twl_config_defaults(&c);
	memset(c.web_dir, 0, sizeof(c.web_dir));
	p = twl_cfg_new("twilight-server");
	assert_non_null(p);
	assert_int_equal(twl_cfg_add(p, twl_server_options,
				     twl_server_n_options, &c),
			 0);
	assert_int_equal(twl_cfg_parse_text(p, "example", want, strlen(want)),
			 0);
	assert_int_equal(p->n_msgs, 0);
	assert_string_equal(c.web_dir, "/usr/share/twilight/web");
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), 0);
	twl_cfg_free(p);
	free(want);
}

static void test_man_in_sync(void **state)
{
	static const char *const blocks[] = { "commands", "options", "token",
					      "export", "migrate-store" };
	size_t i;

	for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		char *want = docs_capture(print_man, blocks[i]);

		docs_sync_block("docs/man/twilight-server.8", blocks[i], want);
		free(want);
	}
	assert_int_equal(twl_config_print_man(stdout, "nope"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_example_in_sync),
		cmocka_unit_test(test_man_in_sync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
