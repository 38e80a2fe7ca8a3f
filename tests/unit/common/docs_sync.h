/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For tests that keep documents in sync with what a program generates
 * from its option tables: a whole file (an example config), or the block
 * of a manual page between the lines
 *   .\" BEGIN GENERATED NAME
 *   .\" END GENERATED NAME
 * A stale document fails the test with how to fix it; with the environment
 * variable TWILIGHT_REGENERATE=1 the test rewrites it instead (then review
 * the diff). Include after <cmocka.h>.
 */
#ifndef TWL_TEST_DOCS_SYNC_H
#define TWL_TEST_DOCS_SYNC_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

/*
 * @fn's output as a string (free() it). The stream's pointers are static:
 * GCC's -Wdangling-pointer takes a local's address in a FILE for a
 * dangling one.
 */
static inline char *docs_capture(void (*fn)(FILE *f, const void *arg),
				 const void *arg)
{
	static char *out;
	static size_t len;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return out;
}

static inline bool docs_regenerate(void)
{
	const char *v = getenv("TWILIGHT_REGENERATE");

	return v && !strcmp(v, "1");
}

/* $TWILIGHT_SOURCE_DIR/@rel (free() it). */
static inline char *docs_path(const char *rel)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char *path = malloc(4096);

	if (!src)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	assert_non_null(path);
	snprintf(path, 4096, "%s/%s", src, rel);
	return path;
}

static inline void docs_write(const char *path, const char *text)
{
	assert_int_equal(twl_write_file_atomic(path, text, strlen(text), 0644),
			 0);
	fprintf(stderr, "docs: rewrote %s; review the diff\n", path);
}

/* The file @rel holds exactly @want. */
static inline void docs_sync_file(const char *rel, const char *want,
				  const char *how)
{
	char *path = docs_path(rel), *have = NULL;

	assert_int_equal(twl_read_file(path, 1 << 20, &have, NULL), 0);
	if (strcmp(have, want)) {
		if (!docs_regenerate())
			fail_msg(
				"%s is stale: %s, or run this test with TWILIGHT_REGENERATE=1",
				rel, how);
		docs_write(path, want);
	}
	free(have);
	free(path);
}

/* The block @name of the page @rel holds exactly @want. */
static inline void docs_sync_block(const char *rel, const char *name,
				   const char *want)
{
	char *path = docs_path(rel), *have = NULL, begin[128], end[128];
	char *b, *e, *fixed;
	size_t pre, len;

	snprintf(begin, sizeof(begin), ".\\\" BEGIN GENERATED %s\n", name);
	snprintf(end, sizeof(end), ".\\\" END GENERATED %s\n", name);
	assert_int_equal(twl_read_file(path, 1 << 20, &have, NULL), 0);
	b = strstr(have, begin);
	e = b ? strstr(b, end) : NULL;
	if (!b || !e)
		fail_msg("%s has no lines %s... %s", rel, begin, end);
	b += strlen(begin);
	if ((size_t)(e - b) != strlen(want) || memcmp(b, want, strlen(want))) {
		if (!docs_regenerate())
			fail_msg(
				"%s: the block %s is not what the option table generates; run this test with TWILIGHT_REGENERATE=1",
				rel, name);
		pre = (size_t)(b - have);
		len = pre + strlen(want) + strlen(e) + 1;
		fixed = malloc(len);
		assert_non_null(fixed);
		snprintf(fixed, len, "%.*s%s%s", (int)pre, have, want, e);
		docs_write(path, fixed);
		free(fixed);
	}
	free(have);
	free(path);
}

#endif /* TWL_TEST_DOCS_SYNC_H */
