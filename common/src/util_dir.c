// SPDX-License-Identifier: GPL-2.0
/* mkdir -p for the agent's spool and BPF pin directory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <twilight/util.h>

/* mkdir @path; one that is already there counts only if it is a directory. */
static int mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (!mkdir(path, mode))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Contract: see util.h. */
int twl_mkdir_p(const char *path, mode_t mode)
{
	char *copy;
	int ret = 0;

	if (!path || !path[0])
		return -EINVAL;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		ret = mkdir_one(copy, mode);
		*p = '/';
		if (ret)
			goto out;
	}
	ret = mkdir_one(copy, mode);
out:
	free(copy);
	return ret;
}
