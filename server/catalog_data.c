// SPDX-License-Identifier: GPL-2.0
/*
 * The server's catalog as data: "twilight-server catalog check FILE", and
 * at start the data directory's catalog.json, installed when it is valid
 * and newer than the compiled-in catalog (the store then seeds its tables
 * from it and re-matches stored unknown texts, store_sqlite_catalog.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "catalog_data.h"

/* Contract: see catalog_data.h. */
int twl_server_catalog_load(const char *data_dir)
{
	char path[4200], err[1100];
	struct twl_catalog *c;
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/catalog.json", data_dir) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	c = twl_catalog_load_file(path, err, sizeof(err));
	if (!c && errno == ENOENT)
		return 0;
	if (!c) {
		twl_log(LOG_ERR,
			"not using %s: %s; serving the compiled-in catalog version %u (fix the file, check it with \"twilight-server catalog check\", and restart)",
			path, err, twl_catalog_compiled.version);
		return 0;
	}
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
