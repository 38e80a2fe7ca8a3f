// SPDX-License-Identifier: GPL-2.0
/*
 * What the kept answers depend on (server/api/answer_context.c): the
 * same configuration gives the same context; a setting an answer reads,
 * a target added and a newer catalog each give another; a setting of
 * the listener, TLS, the limits, the database link or the kept answers
 * themselves (which may differ between the servers of one cluster) does
 * not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "../common/catalog_newer.h"
#include "api/answer_context.h"
#include "config.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"

static char dir[] = "/tmp/twl-context-XXXXXX";

/* @cfg's context, checked to be 64 hex digits. */
static void context(const struct twl_config *cfg, char out[65])
{
	assert_int_equal(twl_answer_context(cfg, out), 0);
	assert_int_equal(strlen(out), 64);
	assert_int_equal(strspn(out, "0123456789abcdef"), 64);
}

/* The context of @cfg is @want's (@same) or another. */
static void expect(const struct twl_config *cfg, const char *want, bool same)
{
	char got[65];

	context(cfg, got);
	if (same)
		assert_string_equal(got, want);
	else
		assert_string_not_equal(got, want);
}

static void test_settings(void **state)
{
	struct twl_config cfg, other;
	char base[65];

	(void)state;
	twl_config_defaults(&cfg);
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s", dir);
	context(&cfg, base);
	expect(&cfg, base, true);
	/* settings an answer reads */
	other = cfg;
	other.silent_after_s += 60;
	expect(&other, base, false);
	other = cfg;
	other.export_show_values = !cfg.export_show_values;
	expect(&other, base, false);
	other = cfg;
	snprintf(other.export_readiness_target,
		 sizeof(other.export_readiness_target), "elsewhere");
	expect(&other, base, false);
	/* settings no answer reads */
	other = cfg;
	snprintf(other.listen, sizeof(other.listen), "127.0.0.2:9999");
	snprintf(other.db_path, sizeof(other.db_path), "/elsewhere/t.db");
	snprintf(other.data_dir, sizeof(other.data_dir), "%s/", dir);
	other.threads += 1;
	other.slow_answer_ms += 1;
	other.slow_answer_ahead = !cfg.slow_answer_ahead;
	other.commit_max += 1;
	other.commit_delay_ms += 1;
	expect(&other, base, true);
	assert_false(twl_answer_setting_counts("listen"));
	assert_true(twl_answer_setting_counts("silent-after"));
	assert_true(twl_answer_setting_counts("a-setting-added-later"));
}

/* Every name the list of settings that do not count is a setting. */
static void test_listed_names_exist(void **state)
{
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < twl_server_n_options; i++)
		n += !twl_answer_setting_counts(twl_server_options[i].name);
	assert_int_equal(n, 44); /* answer_context.c lists 44 */
}

static void test_targets_and_catalog(void **state)
{
	static const char kconfig[] =
		"# Linux/x86 6.12.0 Kernel Configuration\nCONFIG_MEMCG=y\n";
	struct twl_config cfg, none;
	struct twl_catalog *c;
	char base[65], err[256];
	size_t len;
	json_t *t;
	char *text;

	(void)state;
	twl_config_defaults(&cfg);
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s", dir);
	context(&cfg, base);
	none = cfg;
	none.data_dir[0] = '\0';
	expect(&none, base, false);
	/* a target uploaded */
	assert_int_equal(twl_target_from_kconfig(
				 "ctx-target", kconfig, strlen(kconfig),
				 "6.12.0", "uploaded", &t, err, sizeof(err)),
			 0);
	assert_int_equal(twl_targets_save(dir, t), 0);
	json_decref(t);
	expect(&cfg, base, false);
	context(&cfg, base);
	/* a newer catalog installed */
	text = catalog_newer(getenv("TWILIGHT_SOURCE_DIR"),
			     twl_catalog_compiled.version + 1, NULL, &len);
	c = twl_catalog_load(text, len, "newer", err, sizeof(err));
	free(text);
	assert_non_null(c);
	assert_int_equal(twl_catalog_install(c), 0);
	expect(&cfg, base, false);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_listed_names_exist),
		cmocka_unit_test(test_targets_and_catalog),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
