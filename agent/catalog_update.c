// SPDX-License-Identifier: GPL-2.0
/* The agent's catalog updates (catalog_update.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "catalog_update.h"

/* Install @c when newer than the current catalog: 1, 0 (freed), -errno. */
static int install_newer(struct twl_catalog *c, char *err, size_t err_cap)
{
	unsigned cur = twl_catalog_version();
	int ret;

	if (c->version <= cur) {
		twl_catalog_free(c);
		return 0;
	}
	ret = twl_catalog_install(c);
	if (ret) {
		snprintf(
			err, err_cap,
			"cannot use catalog version %u: %s (restart the agent to use it)",
			c->version,
			ret == -ENOSPC ?
				"too many catalog updates since start" :
				strerror(-ret));
		twl_catalog_free(c);
		return ret;
	}
	return 1;
}

/* Contract: see catalog_update.h. */
int twl_agent_catalog_load(const char *state_dir, char *err, size_t err_cap)
{
	char path[4200];
	struct twl_catalog *c;

	err[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state_dir,
			     TWL_AGENT_CATALOG_FILE) >= sizeof(path)) {
		snprintf(err, err_cap, "%s: path too long", state_dir);
		return -ENAMETOOLONG;
	}
	c = twl_catalog_load_file(path, err, err_cap);
	if (!c && errno == ENOENT) {
		err[0] = '\0';
		return 0;
	}
	if (!c)
		return errno ? -errno : -EINVAL;
	return install_newer(c, err, err_cap);
}

/* Contract: see catalog_update.h. */
int twl_agent_catalog_accept(const char *state_dir, const char *buf, size_t len,
			     char *err, size_t err_cap)
{
	char path[4200];
	struct twl_catalog *c;
	int ret, wr;

	err[0] = '\0';
	c = twl_catalog_load(buf, len, "the server's catalog", err, err_cap);
	if (!c)
		return errno ? -errno : -EINVAL;
	if (c->version <= twl_catalog_version()) {
		twl_catalog_free(c);
		return 0;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state_dir,
			     TWL_AGENT_CATALOG_FILE) >= sizeof(path))
		wr = -ENAMETOOLONG;
	else
		wr = twl_write_file_atomic(path, buf, len, 0644);
	ret = install_newer(c, err, err_cap);
	if (ret == 1 && wr)
		snprintf(
			err, err_cap,
			"cannot keep it as %s/%s: %s (a restart goes back to the older catalog until the next fetch)",
			state_dir, TWL_AGENT_CATALOG_FILE, strerror(-wr));
	return ret;
}
