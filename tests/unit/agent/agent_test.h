/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the agent unit tests: temp dirs and small files. */
#ifndef TWL_AGENT_TEST_H
#define TWL_AGENT_TEST_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory under TMPDIR (or /tmp); aborts the test run on failure. */
static inline char *test_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *p = malloc(PATH_MAX);

	if (!p)
		abort();
	snprintf(p, PATH_MAX, "%s/twl-agent-test.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(p)) {
		perror("mkdtemp");
		abort();
	}
	return p;
}

static inline int test_rm_cb(const char *path, const struct stat *sb, int flag,
			     struct FTW *f)
{
	return remove(path);
}

/* Remove @dir and everything below it, then free it. */
static inline void test_rmtree(char *dir)
{
	if (!dir)
		return;
	nftw(dir, test_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* Write @text to @dir/@name (creating parent dirs must be done by the caller). */
static inline void test_write(const char *dir, const char *name,
			      const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		abort();
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(text, f);
	if (fclose(f)) {
		perror(path);
		abort();
	}
}

static inline void test_mkdir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		abort();
	}
}

static inline char *test_path(const char *dir, const char *name)
{
	char *p = malloc(PATH_MAX);

	if (!p)
		abort();
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/*
 * Escape @text the way /dev/kmsg does (bytes < 0x20, >= 0x7f and '\' as
 * \xNN) into @out (@cap bytes). Returns the length.
 */
static inline size_t test_kmsg_escape(const char *text, char *out, size_t cap)
{
	size_t o = 0;

	for (; *text && o + 5 < cap; text++) {
		unsigned char c = (unsigned char)*text;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return o;
}

#endif /* TWL_AGENT_TEST_H */
