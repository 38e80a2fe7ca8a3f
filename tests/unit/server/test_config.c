// SPDX-License-Identifier: GPL-2.0
/*
 * Server configuration (server/config.c): flags, the config file, and
 * the checks of twl_config_finish().
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static char dir[64];
static char dbpath[128];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/twl-store-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_config(void **state)
{
	struct twl_config c;
	char err[256], *rest[8];
	char *argv[] = { "serve",	    "--data-dir",
			 "/tmp/x",	    "--listen=[::1]:9443",
			 "--san",	    "10.0.2.2",
			 "--max-body",	    "2M",
			 "--limit-loopback" };
	char *bad1[] = { "--no-such-option", "1" };
	char *bad2[] = { "--max-body", "lots" };
	char *wal[] = { "--wal-max", "64M" };
	int n_rest;

	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 9, argv, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(n_rest, 1);
	assert_string_equal(rest[0], "serve");
	assert_string_equal(c.listen, "[::1]:9443");
	assert_int_equal(c.n_sans, 1);
	assert_string_equal(c.sans[0], "10.0.2.2");
	assert_int_equal(c.max_body, 2u << 20);
	assert_true(c.limit_loopback);
	assert_string_equal(c.db_path, "/tmp/x/twilight.db");
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, bad1, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no-such-option"));
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, bad2, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "max-body"));
	twl_config_defaults(&c);
	c.batch_days = 10;
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "35"));
	twl_config_defaults(&c);
	assert_int_equal(c.wal_max, 256u << 20);
	assert_int_equal(twl_config_load(&c, 2, wal, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(c.wal_max, 64u << 20);
	c.wal_max = 16u << 20;
	assert_int_equal(twl_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wal-max"));
}

static void test_config_file(void **state)
{
	struct twl_config c;
	char err[256], *rest[4], path[160], dd[200];
	char *argv[] = { "--data-dir", dd, "--threads", "3" };
	int n_rest;
	FILE *f;

	snprintf(dd, sizeof(dd), "%s", dir);
	snprintf(path, sizeof(path), "%s/twilight-server.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# comment\nthreads = 5\nhost-rate = 2.5\nlisten = 127.0.0.1:1234\n",
	      f);
	fclose(f);
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 4, argv, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_int_equal(c.threads, 3); /* flag beats file */
	assert_true(c.host_rate == 2.5);
	assert_string_equal(c.listen, "127.0.0.1:1234");
	f = fopen(path, "w");
	fputs("threads = many\n", f);
	fclose(f);
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 2, argv, rest, &n_rest, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":1:"));
	unlink(path);
}

/* --check-config's dump shows a PostgreSQL URI without its password. */
static void test_dump_redacts_uri(void **state)
{
	struct twl_config c;
	char err[256], *rest[4], dd[200], *out = NULL;
	char *argv[] = { "--data-dir", dd, "--db",
			 "postgresql://twl:hunter2@db.example:5432/twl"
			 "?sslmode=require" };
	size_t len = 0;
	int n_rest;
	FILE *f;

	snprintf(dd, sizeof(dd), "%s", dir);
	twl_config_defaults(&c);
	assert_int_equal(twl_config_load(&c, 4, argv, rest, &n_rest, err,
					 sizeof(err)),
			 0);
	assert_string_equal(c.db_path, argv[3]); /* kept whole for use */
	f = open_memstream(&out, &len);
	assert_non_null(f);
	twl_config_dump(&c, f);
	fclose(f);
	assert_non_null(strstr(
		out,
		"\ndb = postgresql://twl:***@db.example:5432/twl?sslmode=require\n"));
	assert_null(strstr(out, "hunter2"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_dump_redacts_uri),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
