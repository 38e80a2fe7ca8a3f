// SPDX-License-Identifier: GPL-2.0
/*
 * The server's catalog as data: "twilight-server catalog check FILE", and
 * at start the data directory's catalog.json, installed when it is valid
 * and newer than the compiled-in catalog (the store then seeds its tables
 * from it and re-matches stored unknown texts, store_sqlite_catalog.c);
 * on SIGHUP the same file again, when it is valid and not older than the
 * current catalog.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "catalog_data.h"
#include "store/store.h"

/*
 * @data_dir/catalog.json (its name into @path) checked with the
 * generator's rules into *@c: 0; -ENOENT when there is none; -EINVAL with
 * the reason in @err; -ENAMETOOLONG; -ENOMEM.
 */
static int load_file(const char *data_dir, char path[4200],
		     struct twl_catalog **c, char err[1100])
{
	if ((size_t)snprintf(path, 4200, "%s/catalog.json", data_dir) >= 4200)
		return -ENAMETOOLONG;
	*c = twl_catalog_load_file(path, err, 1100);
	if (*c)
		return 0;
	if (errno == ENOENT || errno == ENOMEM)
		return -errno;
	return -EINVAL;
}

/* Contract: see catalog_data.h. */
int twl_server_catalog_load(const char *data_dir)
{
	char path[4200], err[1100];
	struct twl_catalog *c;
	int ret;

	ret = load_file(data_dir, path, &c, err);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EINVAL) {
		twl_log(LOG_ERR,
			"not using %s: %s; serving the compiled-in catalog version %u (fix the file, check it with \"twilight-server catalog check\", and restart)",
			path, err, twl_catalog_compiled.version);
		return 0;
	}
	if (ret)
		return ret;
	if (c->version <= twl_catalog_compiled.version) {
		twl_log(LOG_WARNING,
			"not using %s: its version %u is not newer than the compiled-in catalog's %u (remove the file, or raise its version)",
			path, c->version, twl_catalog_compiled.version);
		twl_catalog_free(c);
		return 0;
	}
	ret = twl_catalog_install(c);
	if (ret) {
		twl_catalog_free(c);
		return ret;
	}
	twl_log(LOG_NOTICE,
		"catalog version %u from %s (compiled-in: version %u): %zu features",
		c->version, path, twl_catalog_compiled.version, c->n_features);
	return 0;
}

/* Why a reload keeps the current catalog, logged; 1. */
static int keep(const char *path, const char *why)
{
	twl_log(LOG_WARNING,
		"SIGHUP: catalog version %u stays: %s %s (settings are read at start only; restart to apply them)",
		twl_catalog_version(), path, why);
	return 1;
}

/* Contract: see catalog_data.h. */
int twl_server_catalog_reload(const char *data_dir, struct twl_store *s)
{
	char path[4200], err[1100], why[1300];
	unsigned old = twl_catalog_version();
	struct twl_catalog *c;
	int64_t n = 0;
	int ret;

	ret = load_file(data_dir, path, &c, err);
	if (ret == -ENOENT)
		return keep(path, "does not exist");
	if (ret == -EINVAL) {
		snprintf(
			why, sizeof(why),
			"is invalid: %s (fix it; \"twilight-server catalog check\" says the same)",
			err);
		return keep(path, why);
	}
	if (ret)
		return keep(path, strerror(-ret));
	if (c->version < old) {
		snprintf(
			why, sizeof(why),
			"has version %u, older than the current %u (raise its version)",
			c->version, old);
		twl_catalog_free(c);
		return keep(path, why);
	}
	ret = twl_catalog_install(c);
	if (ret) {
		twl_catalog_free(c);
		snprintf(
			why, sizeof(why),
			ret == -ENOSPC ?
				"was not installed: this process installed %d catalogs already (restart to load it)" :
				"was not installed: out of memory",
			TWL_CATALOG_MAX_INSTALLS);
		return keep(path, why);
	}
	ret = twl_store_catalog_reload(s, &n);
	if (ret) {
		twl_log(LOG_ERR,
			"SIGHUP: catalog version %u from %s serves and matches, but the database's catalog tables and unknown texts were not updated: %s (free disk space and restart: the start does it)",
			c->version, path, strerror(-ret));
		return ret;
	}
	twl_log(LOG_NOTICE,
		"SIGHUP: catalog version %u -> %u from %s: %zu features; %" PRId64
		" unknown deprecation texts matched to its features",
		old, c->version, path, c->n_features, n);
	return 0;
}

/* Contract: see catalog_data.h. */
int twl_catalog_cli(int argc, char **argv)
{
	char err[1100];
	struct twl_catalog *c;

	if (argc != 3 || strcmp(argv[1], "check")) {
		fprintf(stderr,
			"usage: twilight-server catalog check FILE\n"
			"Checks a catalog data file with the build's rules (schema/catalog.md).\n");
		return 2;
	}
	c = twl_catalog_load_file(argv[2], err, sizeof(err));
	if (!c) {
		fprintf(stderr, "twilight-server: catalog check: %s\n", err);
		return 1;
	}
	printf("%s: valid catalog version %u, %zu features, %zu routes (compiled-in: version %u%s)\n",
	       argv[2], c->version, c->n_features, c->n_routes,
	       twl_catalog_compiled.version,
	       c->version > twl_catalog_compiled.version ?
		       "; the server would use this one" :
		       "; not newer: the server would keep its own");
	twl_catalog_free(c);
	return 0;
}
