// SPDX-License-Identifier: GPL-2.0
/*
 * agent/catalog_update.c: a catalog the server sent is checked before
 * anything changes (a broken or older one is refused and nothing is
 * written), a newer one is kept in the state directory and installed, so
 * the matcher knows its new text at once, and the kept file is installed
 * again at the next start. (The fetch through the sender against a real
 * server: tests/integration/catalog.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>

#include "../common/catalog_newer.h"
#include "agent_test.h"
#include "catalog_update.h"

#define NEW_TEXT \
	"twilight-test: memory.twl_probe is deprecated and will be removed"

/* The shipped catalog with "version" @version and NEW_TEXT in soft_limit. */
static char *newer_text(unsigned version, size_t *len)
{
	return catalog_newer(getenv("TWILIGHT_SOURCE_DIR"), version, NEW_TEXT,
			     len);
}

static bool kept(const char *dir)
{
	struct stat st;
	char *p = test_path(dir, TWL_AGENT_CATALOG_FILE);
	bool ret = stat(p, &st) == 0;

	free(p);
	return ret;
}

static void test_refused_changes_nothing(void **state)
{
	char *dir = test_mkdtemp(), err[1200];
	unsigned v = twl_catalog_compiled.version;
	size_t len;
	char *text = newer_text(v + 1, &len);

	(void)state;
	/* nothing kept: nothing to load */
	assert_int_equal(twl_agent_catalog_load(dir, err, sizeof(err)), 0);
	/* broken: cut in half */
	assert_true(twl_agent_catalog_accept(dir, text, len / 2, err,
					     sizeof(err)) < 0);
	assert_non_null(strstr(err, "the server's catalog"));
	assert_false(kept(dir));
	free(text);
	/* not newer */
	text = newer_text(v, &len);
	assert_int_equal(
		twl_agent_catalog_accept(dir, text, len, err, sizeof(err)), 0);
	assert_false(kept(dir));
	free(text);
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
	assert_int_equal(twl_match_text(NEW_TEXT, strlen(NEW_TEXT), NULL), 0);
	/* a broken kept file is refused at start, with the reason */
	test_write(dir, TWL_AGENT_CATALOG_FILE, "{\"version\": 9}");
	assert_true(twl_agent_catalog_load(dir, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "routes"));
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
	test_rmtree(dir);
}

static void test_newer_kept_and_used(void **state)
{
	char *dir = test_mkdtemp(), *dir2 = test_mkdtemp(), err[1200];
	unsigned v = twl_catalog_compiled.version;
	struct twl_match m;
	size_t len;
	char *text = newer_text(v + 1, &len), *path, *back;

	(void)state;
	assert_int_equal(
		twl_agent_catalog_accept(dir, text, len, err, sizeof(err)), 1);
	assert_string_equal(err, "");
	assert_int_equal(twl_catalog_version(), v + 1);
	assert_int_equal(twl_match_text(NEW_TEXT, strlen(NEW_TEXT), &m), 1);
	assert_string_equal(m.feature->id, "memcg_v1.soft_limit");
	path = test_path(dir, TWL_AGENT_CATALOG_FILE);
	assert_int_equal(twl_read_file(path, 1 << 21, &back, NULL), 0);
	assert_string_equal(back, text);
	free(back);
	free(path);
	/* the same version again: nothing to do */
	assert_int_equal(
		twl_agent_catalog_accept(dir, text, len, err, sizeof(err)), 0);
	free(text);
	/* a kept newer file is installed at start */
	text = newer_text(v + 2, &len);
	test_write(dir2, TWL_AGENT_CATALOG_FILE, text);
	assert_int_equal(twl_agent_catalog_load(dir2, err, sizeof(err)), 1);
	assert_int_equal(twl_catalog_version(), v + 2);
	/* one that cannot be kept is still used, and said */
	free(text);
	text = newer_text(v + 3, &len);
	test_write(dir2, "file", "not a directory\n");
	path = test_path(dir2, "file");
	assert_int_equal(
		twl_agent_catalog_accept(path, text, len, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "cannot keep it"));
	assert_int_equal(twl_catalog_version(), v + 3);
	free(path);
	free(text);
	test_rmtree(dir);
	test_rmtree(dir2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_changes_nothing),
		cmocka_unit_test(test_newer_kept_and_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
