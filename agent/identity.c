// SPDX-License-Identifier: GPL-2.0
/* Host identity (see identity.h). */
#include "identity.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <twilight/util.h>

#include "census.h"

int twl_host_id_from_machine_id(const char *mid, const char *key, char out[65])
{
	char buf[512];
	char *m;
	int n;

	snprintf(buf, sizeof(buf), "%s", mid);
	m = twl_strip(buf);
	if (!*m)
		return -ENODATA;
	/* machine id, a separator that occurs in neither, then the key. */
	n = snprintf(buf + 256, 256, "%s\n%s", m, key ? key : "");
	if (n < 0 || n >= 256)
		return -EINVAL;
	twl_sha256_hex(buf + 256, (size_t)n, out);
	return 0;
}

static bool hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static int random_host_id(const struct twl_identity_cfg *cfg,
			  struct twl_identity *id)
{
	char path[PATH_MAX], *text = NULL;
	int ret;

	if (!cfg->state_dir) {
		id->host_id_ephemeral = true;
		return twl_random_hex(id->host_id, 32);
	}
	if (snprintf(path, sizeof(path), "%s/%s", cfg->state_dir,
		     TWL_HOST_ID_FILE) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = twl_read_file(path, 1024, &text, NULL);
	if (!ret) {
		char *s = twl_strip(text);

		ret = hex64(s) ? 0 : -EINVAL;
		if (!ret)
			memcpy(id->host_id, s, 65);
		free(text);
		return ret;
	}
	if (ret != -ENOENT)
		return ret;
	if (cfg->read_only) {
		id->host_id_ephemeral = true;
		return twl_random_hex(id->host_id, 32);
	}
	ret = twl_random_hex(id->host_id, 32);
	if (ret)
		return ret;
	{
		char line[66];

		snprintf(line, sizeof(line), "%s\n", id->host_id);
		return twl_write_file_atomic(path, line, strlen(line), 0600);
	}
}

static int read_boot_id(const char *path, char out[65])
{
	char *text = NULL, *s;
	size_t i, n;
	int ret;

	ret = twl_read_file(path, 256, &text, NULL);
	if (ret)
		return ret;
	s = twl_strip(text);
	n = strlen(s);
	for (i = 0; i < n; i++)
		s[i] = (char)tolower((unsigned char)s[i]);
	ret = (n && n <= 64 && strspn(s, "0123456789abcdef-") == n) ? 0 :
								      -EINVAL;
	if (!ret)
		memcpy(out, s, n + 1);
	free(text);
	return ret;
}

int twl_identity_load(const struct twl_identity_cfg *cfg,
		      struct twl_identity *id)
{
	struct utsname u;
	char *mid = NULL;
	int ret;

	memset(id, 0, sizeof(*id));
	ret = twl_read_file(cfg->machine_id_path, 1024, &mid, NULL);
	if (!ret)
		ret = twl_host_id_from_machine_id(mid, cfg->host_id_key,
						  id->host_id);
	free(mid);
	if (ret) {
		ret = random_host_id(cfg, id);
		if (ret)
			return ret;
	}
	ret = read_boot_id(cfg->boot_id_path, id->boot_id);
	if (ret)
		return ret;
	if (uname(&u) == 0) {
		snprintf(id->kernel, sizeof(id->kernel), "%s", u.release);
		if (cfg->send_hostname)
			snprintf(id->hostname, sizeof(id->hostname), "%s",
				 u.nodename);
	}
	if (twl_census_mode_from(cfg->mountinfo, cfg->cgroup_root,
				 id->cgroup_mode, sizeof(id->cgroup_mode)))
		snprintf(id->cgroup_mode, sizeof(id->cgroup_mode), "v2");
	id->labels = cfg->labels;
	return 0;
}
