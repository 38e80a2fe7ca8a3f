// SPDX-License-Identifier: GPL-2.0
/*
 * Container image names read from the runtime's state files, with a
 * bounded cache of the answers (container_image.h). The only I/O of
 * container images: one file read, at most TWL_IMAGE_FILE_MAX bytes, per
 * container not in the cache, non-blocking and only if regular.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_image.h"

/* Containers remembered; past it the oldest answer's slot is reused. */
#define IMAGE_SLOTS 256

/* Longest place remembered ("cri-containerd:" and a 64-digit id). */
#define PLACE_CAP 96

struct slot {
	char place[PLACE_CAP]; /* "" = free */
	char image[TWL_IMAGE_NAME_CAP]; /* "" = none found */
};

struct twl_image_cache {
	char *root;
	size_t next; /* the slot reused next (round robin) */
	struct slot slots[IMAGE_SLOTS];
};

/* Contract: see container_image.h. */
struct twl_image_cache *twl_image_cache_new(const char *root)
{
	struct twl_image_cache *c = calloc(1, sizeof(*c));

	if (!c)
		goto fail;
	c->root = strdup(root ? root : "/");
	if (c->root)
		return c;
fail:
	free(c);
	errno = ENOMEM;
	return NULL;
}

/* Contract: see container_image.h. */
void twl_image_cache_free(struct twl_image_cache *c)
{
	if (!c)
		return;
	free(c->root);
	free(c);
}

/*
 * The regular file @path, at most TWL_IMAGE_FILE_MAX bytes, into a new
 * buffer. O_NONBLOCK and the type checked: a FIFO planted there must not
 * stall the agent. 0, -EFBIG or another negative errno.
 */
static int read_state(const char *path, char **out, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t r = 1;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if (st.st_size > (off_t)TWL_IMAGE_FILE_MAX)
		rc = -EFBIG;
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		rc = -ENOMEM;
	while (!rc && got < (size_t)st.st_size && r > 0) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno != EINTR)
			rc = -errno;
		else if (r > 0)
			got += (size_t)r;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/* The image of @place read from its state file into @out, or -errno. */
static int read_image(const char *root, const char *place, char *out,
		      size_t cap)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int oci, rc;

	rc = twl_image_state_path(root, place, path, sizeof(path), &oci);
	if (!rc)
		rc = read_state(path, &text, &len);
	if (rc)
		return rc;
	rc = oci ? twl_image_from_oci(text, len, out, cap) :
		   twl_image_from_docker(text, len, out, cap);
	free(text);
	return rc;
}

/* Contract: see container_image.h. */
int twl_image_lookup(struct twl_image_cache *c, const char *place, char *out,
		     size_t cap)
{
	struct slot *s;
	size_t i;
	int rc;

	if (!c || !place || !out || cap < TWL_IMAGE_NAME_CAP)
		return -ENOSPC;
	out[0] = '\0';
	if (!place[0] || strlen(place) >= PLACE_CAP)
		return -ENOENT;
	for (i = 0; i < IMAGE_SLOTS; i++) {
		s = &c->slots[i];
		if (strcmp(s->place, place))
			continue;
		if (!s->image[0])
			return -ENOENT;
		strcpy(out, s->image);
		return 0;
	}
	rc = read_image(c->root, place, out, cap);
	if (rc == -ENOSPC)
		return rc;
	s = &c->slots[c->next];
	c->next = (c->next + 1) % IMAGE_SLOTS;
	strcpy(s->place, place);
	strcpy(s->image, rc ? "" : out);
	return rc ? -ENOENT : 0;
}
