/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Schema migrations: schema/migrations/NNN_name.sql, embedded at build time
 * (embed.cmake -> migrations_embed.c), applied in order, each in its own
 * transaction, with PRAGMA user_version = NNN recorded in the same
 * transaction. Shared by the server and its tests.
 */
#ifndef TWL_SERVER_MIGRATE_H
#define TWL_SERVER_MIGRATE_H

#include <sqlite3.h>

struct twl_migration {
	const char *name; /* "001_init.sql"; the number is the version */
	const char *sql;
};

/* NULL-terminated, sorted by name (generated). */
extern const struct twl_migration twl_migrations[];
/* The generated catalog seed SQL (idempotent), "" if none was built. */
extern const char twl_catalog_seed_sql[];

/* Highest migration number this binary knows. */
int twl_migrate_latest(void);

/*
 * Apply every migration newer than the database's user_version. Returns
 * the resulting version (>= 0), -EPROTO when the database is newer than
 * this binary, or another negative errno (the failing migration rolled
 * back; err names it when err_cap > 0).
 */
int twl_migrate(sqlite3 *db, char *err, size_t err_cap);

/*
 * twl_catalog_seed_text - the current catalog's seed: the one made when a
 * newer catalog was loaded (twl_catalog_install()), else the generated one.
 */
const char *twl_catalog_seed_text(void);

/* Run the current catalog's seed in one transaction. 0 or negative errno. */
int twl_catalog_seed(sqlite3 *db, char *err, size_t err_cap);

#endif /* TWL_SERVER_MIGRATE_H */
