/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the agent transport/spool unit tests. */
#ifndef TU_COMMON_H
#define TU_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory under $TMPDIR (or /tmp); the caller frees the string. */
static inline char *tu_mkdtemp(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p = NULL;

	if (asprintf(&p, "%s/twl-%s-XXXXXX", base && *base ? base : "/tmp",
		     tag) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* rm -rf @path (test scratch only). */
static inline void tu_rmrf(const char *path)
{
	char *cmd = NULL;

	if (!path || asprintf(&cmd, "rm -rf '%s'", path) < 0)
		return;
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", path);
	free(cmd);
}

/* Number of entries in @dir whose name ends with @suffix (-1 if @dir is missing). */
static inline int tu_count(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t sl = strlen(suffix);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l >= sl && !strcmp(de->d_name + l - sl, suffix))
			n++;
	}
	closedir(d);
	return n;
}

/* Read a whole small file into a new string (NULL if missing). */
static inline char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			buf[n] = 0;
			if (len)
				*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

#endif
