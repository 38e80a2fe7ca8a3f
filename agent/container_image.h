/* SPDX-License-Identifier: GPL-2.0 */
/*
 * container_image: the image name of a writer's container, read from the
 * container runtime's own state files (never a socket, never a program
 * run), for the wire's usage[].image. Only when the operator opted in
 * (container-images). Pure parsers of the state files apart from the
 * look-up that reads them; a small bounded cache of answers per
 * container.
 */
#ifndef TWILIGHT_AGENT_CONTAINER_IMAGE_H
#define TWILIGHT_AGENT_CONTAINER_IMAGE_H

#include <stddef.h>

/* Most bytes of a runtime state file read; a larger one is skipped. */
#define TWL_IMAGE_FILE_MAX (1u << 20)

/* Room for an image name and its NUL (wire: string 1..256). */
#define TWL_IMAGE_NAME_CAP 257

/*
 * twl_image_from_docker - the image name of Docker's container state
 * (containers/ID/config.v2.json, @len bytes of @json): its "Config" ->
 * "Image", as the container was created ("nginx:1.25",
 * "registry.example/app@sha256:..."), into @out (@cap bytes). Returns 0,
 * -ENOENT (no such member), -EINVAL (not JSON, or a name that is not 1..256
 * printable ASCII bytes) or -ENOSPC.
 */
int twl_image_from_docker(const char *json, size_t len, char *out, size_t cap);

/*
 * twl_image_from_oci - the image name in an OCI bundle's config.json
 * (@len bytes of @json) as a CRI runtime annotates it: containerd's
 * "io.kubernetes.cri.image-name", else CRI-O's
 * "io.kubernetes.cri-o.ImageName". Returns as twl_image_from_docker().
 */
int twl_image_from_oci(const char *json, size_t len, char *out, size_t cap);

/*
 * twl_image_state_path - where the runtime keeps the state of the
 * container @place (wire usage[].container: "docker:ID",
 * "cri-containerd:ID", "crio:ID") below @root ("" or NULL: "/"), into
 * @out (@cap bytes); *@oci says whether it is an OCI bundle config.json
 * (else Docker's config.v2.json). The id must be 1..64 hex digits, so a
 * path never leaves the runtime's directory. Returns 0, -ENOENT (a place
 * whose runtime keeps no image we read: podman, lxc, systemd, none, a
 * hashed id) or -ENOSPC.
 */
int twl_image_state_path(const char *root, const char *place, char *out,
			 size_t cap, int *oci);

struct twl_image_cache;

/*
 * twl_image_cache_new - a cache of image names below @root (NULL: "/"),
 * holding the last answers (found or not) of a bounded number of
 * containers. NULL with errno ENOMEM. Free with twl_image_cache_free().
 */
struct twl_image_cache *twl_image_cache_new(const char *root);

/* twl_image_cache_free - NULL-safe. */
void twl_image_cache_free(struct twl_image_cache *c);

/*
 * twl_image_lookup - the image name of container @place (as
 * twl_image_state_path()) into @out (@cap bytes, at least
 * TWL_IMAGE_NAME_CAP): from @c's cache, else read from the runtime's state
 * file (at most TWL_IMAGE_FILE_MAX bytes) and remembered. A container's
 * image never changes, so a found name is kept until the slot is reused;
 * "not found" too, since a state file the agent cannot read stays so.
 * Returns 0, or -ENOENT when no name is known (no state file, not
 * readable, too large, malformed: the wire then omits image), -ENOSPC.
 */
int twl_image_lookup(struct twl_image_cache *c, const char *place, char *out,
		     size_t cap);

#endif
