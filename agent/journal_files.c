// SPDX-License-Identifier: GPL-2.0
/*
 * Which journal files to read (journal.h): this machine's system journals
 * under the journal directories, each opened alone first so that a file
 * sd-journal refuses (truncated, corrupt header) is reported and left out
 * instead of failing the whole set, as sd_journal_open_files() would.
 */
#include "journal_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-journal.h>
#include <twilight/util.h>

static const char *const default_dirs[] = { "/var/log/journal",
					    "/run/log/journal", NULL };

/* system.journal, system@...journal, system@...journal~ (user journals hold no kernel records). */
static bool journal_name(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, "system", 6))
		return false;
	return (len > 8 && !strcmp(n + len - 8, ".journal")) ||
	       (len > 9 && !strcmp(n + len - 9, ".journal~"));
}

static int add_path(struct jfiles *f, const char *path)
{
	char *p;

	if (f->n == TWL_JOURNAL_MAX_FILES)
		return -E2BIG;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	f->paths[f->n++] = p;
	f->paths[f->n] = NULL;
	return 0;
}

/* The journal files directly in @dir; a missing directory holds none. */
static int scan_dir(struct jfiles *f, const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while (!ret && (de = readdir(d)) != NULL) {
		if (!journal_name(de->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		ret = add_path(f, path);
	}
	closedir(d);
	return ret;
}

/* This machine's id from /etc/machine-id (32 hex digits). */
static int read_machine_id(char out[33])
{
	char *text = NULL;
	size_t len;
	int ret = twl_read_file("/etc/machine-id", 256, &text, &len);

	if (ret)
		return ret;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	ret = len == 32 && strspn(text, "0123456789abcdef") >= 32 ? 0 : -EINVAL;
	if (!ret)
		memcpy(out, text, 33), out[32] = '\0';
	free(text);
	return ret;
}

int jfiles_list(struct jfiles *f, const struct twl_journal_opts *o)
{
	const char *const *dirs = o->dirs ? o->dirs : default_dirs;
	char mid[33], sub[4096];
	size_t i;
	int ret;

	if (o->files) {
		for (i = 0; o->files[i]; i++) {
			ret = add_path(f, o->files[i]);
			if (ret)
				return ret;
		}
		return 0;
	}
	if (o->machine_id) {
		snprintf(mid, sizeof(mid), "%s", o->machine_id);
	} else {
		ret = read_machine_id(mid);
		if (ret)
			return ret;
	}
	/* Only this machine's directory: remote/ and containers' are other hosts. */
	for (i = 0; dirs[i]; i++) {
		if (snprintf(sub, sizeof(sub), "%s/%s", dirs[i], mid) >=
		    (int)sizeof(sub))
			return -ENAMETOOLONG;
		ret = scan_dir(f, sub);
		if (ret)
			return ret;
	}
	return 0;
}

/* Can sd-journal open @path on its own? 0 or its -errno. */
static int probe(const char *path)
{
	const char *one[2] = { path, NULL };
	sd_journal *j = NULL;
	int ret = sd_journal_open_files(&j, one, 0);

	sd_journal_close(j);
	return ret < 0 ? ret : 0;
}

int jfiles_open(struct jfiles *f, const struct twl_journal_opts *o,
		struct twl_journal_stats *st, sd_journal **out)
{
	size_t i, good = 0;
	int ret;

	*out = NULL;
	for (i = 0; i < f->n; i++) {
		ret = probe(f->paths[i]);
		if (ret) {
			st->file_errors++;
			if (o->on_file_error)
				o->on_file_error(o->ctx, f->paths[i], ret);
			free(f->paths[i]);
			continue;
		}
		f->paths[good++] = f->paths[i];
	}
	f->n = good;
	f->paths[good] = NULL;
	st->files = good;
	if (!good)
		return 0;
	ret = sd_journal_open_files(out, (const char **)f->paths, 0);
	return ret < 0 ? ret : 0;
}

void jfiles_free(struct jfiles *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->paths[i]);
	f->n = 0;
}
