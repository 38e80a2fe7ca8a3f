// SPDX-License-Identifier: GPL-2.0
/*
 * Container image names from the runtime's state (agent/container_image.h):
 * the parsers on fixture files shaped as Docker, containerd and CRI-O
 * write them (data/images/), hostile and malformed documents, the path
 * of each runtime's state file, and the look-up with its cache in a fake
 * root made in a temp dir. Nothing reads this machine's runtime state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "container_image.h"
#include "tu_common.h"

#define DOCKER_ID \
	"3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100"
#define CRI_ID \
	"5e6f00112233445566778899aabbccddeeff00112233445566778899aabbccdd"

static const char *data_dir;

/* The fixture @name of data/images into a new string. */
static char *fixture(const char *name, size_t *len)
{
	char path[1024], *text = NULL;

	snprintf(path, sizeof(path), "%s/images/%s", data_dir, name);
	assert_int_equal(twl_read_file(path, 1 << 20, &text, len), 0);
	return text;
}

static void test_docker(void **state)
{
	char out[TWL_IMAGE_NAME_CAP], small[8];
	size_t len;
	char *t = fixture("docker-config.v2.json", &len);

	(void)state;
	assert_int_equal(twl_image_from_docker(t, len, out, sizeof(out)), 0);
	/* Config.Image as created, not the top-level image digest */
	assert_string_equal(out, "registry.example.com/payments/ledger:2.4.1");
	assert_int_equal(twl_image_from_docker(t, len, small, sizeof(small)),
			 -ENOSPC);
	/* an OCI bundle is not Docker's state */
	free(t);
	t = fixture("containerd-config.json", &len);
	assert_int_equal(twl_image_from_docker(t, len, out, sizeof(out)),
			 -ENOENT);
	assert_string_equal(out, "");
	free(t);
}

static void test_oci(void **state)
{
	char out[TWL_IMAGE_NAME_CAP];
	size_t len;
	char *t = fixture("containerd-config.json", &len);

	(void)state;
	assert_int_equal(twl_image_from_oci(t, len, out, sizeof(out)), 0);
	assert_string_equal(out, "docker.io/envoyproxy/envoy:v1.31.2");
	free(t);
	t = fixture("crio-config.json", &len);
	assert_int_equal(twl_image_from_oci(t, len, out, sizeof(out)), 0);
	assert_string_equal(out, "quay.io/example/sidecar:1.0");
	free(t);
	/* a pod's sandbox carries no image name */
	t = fixture("pause-config.json", &len);
	assert_int_equal(twl_image_from_oci(t, len, out, sizeof(out)), -ENOENT);
	free(t);
}

/* Malformed and hostile documents: an error, never a bad name. */
static void test_bad_documents(void **state)
{
	static const struct {
		const char *doc;
		int rc;
	} cases[] = {
		{ "", -EINVAL },
		{ "{\"Config\": {\"Image\": \"a\"", -EINVAL },
		{ "[\"Config\"]", -EINVAL },
		{ "{\"Config\": \"nginx\"}", -ENOENT },
		{ "{\"Config\": {\"Image\": 7}}", -EINVAL },
		{ "{\"Config\": {\"Image\": \"\"}}", -EINVAL },
		{ "{\"Config\": {\"Image\": \"a b\"}}", -EINVAL },
		{ "{\"Config\": {\"Image\": \"x\\u001b[31m\"}}", -EINVAL },
		{ "{\"Config\": {\"Image\": \"caf\\u00e9\"}}", -EINVAL },
		{ "{\"Config\": {\"Image\": \"a\\u0000b\"}}", -EINVAL },
	};
	char out[TWL_IMAGE_NAME_CAP], big[400], doc[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = twl_image_from_docker(
			cases[i].doc, strlen(cases[i].doc), out, sizeof(out));
		if (rc != cases[i].rc)
			fail_msg("%s: got %d, want %d", cases[i].doc, rc,
				 cases[i].rc);
		assert_string_equal(out, "");
	}
	/* 256 bytes is the wire's longest image; 257 is refused */
	memset(big, 'a', sizeof(big));
	big[256] = '\0';
	snprintf(doc, sizeof(doc), "{\"Config\": {\"Image\": \"%s\"}}", big);
	assert_int_equal(
		twl_image_from_docker(doc, strlen(doc), out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 256);
	big[257] = '\0';
	big[256] = 'a';
	snprintf(doc, sizeof(doc), "{\"Config\": {\"Image\": \"%s\"}}", big);
	assert_int_equal(twl_image_from_docker(doc, strlen(doc), out,
					       sizeof(out)),
			 -EINVAL);
}

static void test_state_path(void **state)
{
	char p[512];
	int oci = -1;

	(void)state;
	assert_int_equal(twl_image_state_path("/r", "docker:" DOCKER_ID, p,
					      sizeof(p), &oci),
			 0);
	assert_string_equal(p, "/r/var/lib/docker/containers/" DOCKER_ID
			       "/config.v2.json");
	assert_int_equal(oci, 0);
	assert_int_equal(twl_image_state_path(NULL, "cri-containerd:" CRI_ID, p,
					      sizeof(p), &oci),
			 0);
	assert_string_equal(p, "/run/containerd/io.containerd.runtime.v2.task/"
			       "k8s.io/" CRI_ID "/config.json");
	assert_int_equal(oci, 1);
	assert_int_equal(twl_image_state_path("/", "crio:" CRI_ID, p, sizeof(p),
					      &oci),
			 0);
	assert_string_equal(p,
			    "/run/containers/storage/overlay-containers/" CRI_ID
			    "/userdata/config.json");
	/* no image to read, or an id that could leave the directory */
	assert_int_equal(twl_image_state_path("/", "systemd:a.service", p,
					      sizeof(p), &oci),
			 -ENOENT);
	assert_int_equal(twl_image_state_path("/", "podman:" CRI_ID, p,
					      sizeof(p), &oci),
			 -ENOENT);
	assert_int_equal(twl_image_state_path("/", "docker:../../etc", p,
					      sizeof(p), &oci),
			 -ENOENT);
	assert_int_equal(twl_image_state_path("/", "docker:h:0123abcd", p,
					      sizeof(p), &oci),
			 -ENOENT);
	assert_int_equal(twl_image_state_path("/", "", p, sizeof(p), &oci),
			 -ENOENT);
	assert_int_equal(twl_image_state_path("/", "docker:" DOCKER_ID, p, 20,
					      &oci),
			 -ENOSPC);
}

/* mkdir -p @path. 0 or the shell's status. */
static int make_dirs(const char *path)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	return system(cmd);
}

/* Copy fixture @name to @root/@rel, its directories made. */
static void place(const char *root, const char *rel, const char *name)
{
	char path[1024];
	size_t len;
	char *t = fixture(name, &len);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	*strrchr(path, '/') = '\0';
	assert_int_equal(make_dirs(path), 0);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(t, 1, len, f), len);
	fclose(f);
	free(t);
}

static void test_lookup(void **state)
{
	char *root = tu_mkdtemp("images");
	char out[TWL_IMAGE_NAME_CAP], path[1024];
	struct twl_image_cache *c;

	(void)state;
	assert_non_null(root);
	place(root, "var/lib/docker/containers/" DOCKER_ID "/config.v2.json",
	      "docker-config.v2.json");
	place(root,
	      "run/containerd/io.containerd.runtime.v2.task/k8s.io/" CRI_ID
	      "/config.json",
	      "containerd-config.json");
	c = twl_image_cache_new(root);
	assert_non_null(c);
	assert_int_equal(
		twl_image_lookup(c, "docker:" DOCKER_ID, out, sizeof(out)), 0);
	assert_string_equal(out, "registry.example.com/payments/ledger:2.4.1");
	assert_int_equal(twl_image_lookup(c, "cri-containerd:" CRI_ID, out,
					  sizeof(out)),
			 0);
	assert_string_equal(out, "docker.io/envoyproxy/envoy:v1.31.2");
	/* a FIFO where CRI-O's state would be: skipped, never waited on */
	snprintf(path, sizeof(path),
		 "%s/run/containers/storage/overlay-containers/" CRI_ID
		 "/userdata",
		 root);
	assert_int_equal(make_dirs(path), 0);
	strcat(path, "/config.json");
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(twl_image_lookup(c, "crio:" CRI_ID, out, sizeof(out)),
			 -ENOENT);
	assert_string_equal(out, "");
	assert_int_equal(twl_image_lookup(c, "systemd:x.service", out,
					  sizeof(out)),
			 -ENOENT);
	/* answered from the cache once read: the state file may go */
	snprintf(path, sizeof(path),
		 "%s/var/lib/docker/containers/" DOCKER_ID "/config.v2.json",
		 root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(
		twl_image_lookup(c, "docker:" DOCKER_ID, out, sizeof(out)), 0);
	assert_string_equal(out, "registry.example.com/payments/ledger:2.4.1");
	/* a buffer too small for any image name */
	assert_int_equal(twl_image_lookup(c, "docker:" DOCKER_ID, out, 10),
			 -ENOSPC);
	twl_image_cache_free(c);
	twl_image_cache_free(NULL);
	tu_rmrf(root);
	free(root);
}

/* A state file over TWL_IMAGE_FILE_MAX is not read: no image. */
static void test_lookup_bounded(void **state)
{
	char *root = tu_mkdtemp("images-big");
	char out[TWL_IMAGE_NAME_CAP], path[1024];
	struct twl_image_cache *c;
	FILE *f;
	size_t i;

	(void)state;
	assert_non_null(root);
	place(root, "var/lib/docker/containers/" DOCKER_ID "/config.v2.json",
	      "docker-config.v2.json");
	snprintf(path, sizeof(path),
		 "%s/var/lib/docker/containers/" DOCKER_ID "/config.v2.json",
		 root);
	f = fopen(path, "a");
	assert_non_null(f);
	for (i = 0; i <= TWL_IMAGE_FILE_MAX / 64; i++)
		fputs("                                                               \n",
		      f);
	fclose(f);
	c = twl_image_cache_new(root);
	assert_non_null(c);
	assert_int_equal(twl_image_lookup(c, "docker:" DOCKER_ID, out,
					  sizeof(out)),
			 -ENOENT);
	twl_image_cache_free(c);
	tu_rmrf(root);
	free(root);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker),
		cmocka_unit_test(test_oci),
		cmocka_unit_test(test_bad_documents),
		cmocka_unit_test(test_state_path),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_bounded),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
		return 2;
	}
	data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
