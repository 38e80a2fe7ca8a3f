// SPDX-License-Identifier: GPL-2.0
/*
 * The image name of a container from its runtime's state files: pure
 * parsers and the path of the file (container_image.h). No I/O.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "container_image.h"

/* An image reference is printable ASCII without spaces, 1..256 bytes. */
static int copy_name(const char *s, char *out, size_t cap)
{
	size_t n, i;

	if (!s)
		return -ENOENT;
	n = strlen(s);
	if (!n || n >= TWL_IMAGE_NAME_CAP)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return -EINVAL;
	if (n >= cap)
		return -ENOSPC;
	memcpy(out, s, n + 1);
	return 0;
}

/* The string at member @path (NULL-ended) of @json as an image name. */
static int name_at(const char *json, size_t len, const char *const *path,
		   char *out, size_t cap)
{
	json_t *doc = json_loadb(json, len, 0, NULL), *o = doc;
	int rc;

	if (!json_is_object(doc)) {
		json_decref(doc);
		return -EINVAL;
	}
	for (; *path && o; path++)
		o = json_object_get(o, *path);
	if (o && !json_is_string(o))
		rc = -EINVAL;
	else
		rc = copy_name(json_string_value(o), out, cap);
	json_decref(doc);
	return rc;
}

/* Contract: see container_image.h. */
int twl_image_from_docker(const char *json, size_t len, char *out, size_t cap)
{
	static const char *const path[] = { "Config", "Image", NULL };

	if (!json || !out || !cap)
		return -EINVAL;
	out[0] = '\0';
	return name_at(json, len, path, out, cap);
}

/* Contract: see container_image.h. */
int twl_image_from_oci(const char *json, size_t len, char *out, size_t cap)
{
	static const char *const cri[] = { "annotations",
					   "io.kubernetes.cri.image-name",
					   NULL };
	static const char *const crio[] = { "annotations",
					    "io.kubernetes.cri-o.ImageName",
					    NULL };
	int rc;

	if (!json || !out || !cap)
		return -EINVAL;
	out[0] = '\0';
	rc = name_at(json, len, cri, out, cap);
	return rc == -ENOENT ? name_at(json, len, crio, out, cap) : rc;
}

/* Where each runtime keeps a container's state, by the place's kind. */
static const struct {
	const char *kind; /* the place up to its ':' */
	const char *dir, *file; /* below the root: dir ID file */
	int oci;
} states[] = {
	{ "docker", "var/lib/docker/containers/", "/config.v2.json", 0 },
	{ "cri-containerd",
	  "run/containerd/io.containerd.runtime.v2.task/k8s.io/",
	  "/config.json", 1 },
	{ "crio", "run/containers/storage/overlay-containers/",
	  "/userdata/config.json", 1 },
};

static bool hex_id(const char *id)
{
	size_t n = strlen(id);

	return n >= 1 && n <= 64 && strspn(id, "0123456789abcdef") == n;
}

/* Contract: see container_image.h. */
int twl_image_state_path(const char *root, const char *place, char *out,
			 size_t cap, int *oci)
{
	const char *colon = place ? strchr(place, ':') : NULL;
	size_t i;
	int n;

	if (!colon || !hex_id(colon + 1))
		return -ENOENT;
	if (!root || !strcmp(root, "/"))
		root = "";
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		if (strlen(states[i].kind) != (size_t)(colon - place) ||
		    strncmp(place, states[i].kind, colon - place))
			continue;
		n = snprintf(out, cap, "%s/%s%s%s", root, states[i].dir,
			     colon + 1, states[i].file);
		if (n < 0 || (size_t)n >= cap)
			return -ENOSPC;
		*oci = states[i].oci;
		return 0;
	}
	return -ENOENT;
}
