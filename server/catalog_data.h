/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's catalog as data (catalog_data.c): the data directory's
 * catalog.json and the "catalog check" command.
 */
#ifndef TWL_SERVER_CATALOG_DATA_H
#define TWL_SERVER_CATALOG_DATA_H

/*
 * twl_server_catalog_load - install @data_dir/catalog.json when it is valid
 * and newer than the compiled-in catalog; when it is absent nothing is
 * said, when it is invalid or not newer the reason is logged and the
 * compiled-in catalog stays. Call before the store opens (it seeds its
 * tables from the current catalog). Returns 0, or a negative errno when
 * the install itself failed (-ENOMEM, -ENAMETOOLONG).
 */
int twl_server_catalog_load(const char *data_dir);

struct twl_store;

/*
 * twl_server_catalog_reload - on SIGHUP: install @data_dir/catalog.json
 * when it is valid (the rules of "catalog check") and its version is not
 * older than the current catalog's, then twl_store_catalog_reload() @s.
 * Logs one line in every case: what was installed and how many stored
 * unknown texts it matched, or why the current catalog stays (absent,
 * invalid, older, TWL_CATALOG_MAX_INSTALLS reached). Returns 0 when
 * installed, 1 when the current catalog stays, or a negative errno when
 * the store could not follow (the catalog is installed all the same).
 */
int twl_server_catalog_reload(const char *data_dir, struct twl_store *s);

/*
 * twl_catalog_cli - "twilight-server catalog check FILE" (@argv[0] is
 * "catalog"): 0 valid (prints its version), 1 invalid (the reason on
 * stderr, one line), 2 usage.
 */
int twl_catalog_cli(int argc, char **argv);

#endif /* TWL_SERVER_CATALOG_DATA_H */
