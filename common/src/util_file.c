// SPDX-License-Identifier: GPL-2.0
/* Whole-file read with a cap, and crash-safe replace (tmp, fsync, rename). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <twilight/util.h>

/* Contract: see util.h. */
int twl_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, ret = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
out:
	free(copy);
	return ret;
}

int twl_write_file_atomic(const char *path, const void *p, size_t n,
			  mode_t mode)
{
	char *tmp = NULL;
	int fd = -1, ret;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	if (fchmod(fd, mode) < 0) {
		ret = -errno;
		goto fail;
	}
	ret = twl_write_all(fd, p, n);
	if (ret)
		goto fail;
	if (fsync(fd) < 0) {
		ret = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		ret = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		ret = -errno;
		goto fail;
	}
	free(tmp);
	return fsync_dir_of(path);
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return ret;
}

int twl_read_file(const char *path, size_t max, char **out, size_t *len)
{
	struct twl_buf b;
	char chunk[8192];
	int fd, ret = 0;

	*out = NULL;
	if (len)
		*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	twl_buf_init(&b, max);
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		ret = twl_buf_append(&b, chunk, (size_t)r);
		if (ret == -E2BIG)
			ret = -EFBIG;
		if (ret)
			goto out;
	}
	if (!b.data) {
		ret = twl_buf_append(&b, "", 0);
		if (ret)
			goto out;
	}
	*out = b.data;
	if (len)
		*len = b.len;
	b.data = NULL;
out:
	close(fd);
	twl_buf_fini(&b);
	return ret;
}
