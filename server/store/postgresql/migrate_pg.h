/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PostgreSQL store's schema migrations: store/postgresql/migrations/
 * NNN_name.sql, embedded at build time (store/sqlite/embed.cmake with
 * PREFIX=twl_pg -> migrations_pg_embed.c). Every pending one is applied
 * in one transaction holding a transaction-level advisory lock
 * (TWL_PG_MIGRATE_LOCK), so that servers starting together on one
 * database migrate it once: the others wait, then find nothing to do.
 * schema_version holds a row per migration applied.
 */
#ifndef TWL_SERVER_MIGRATE_PG_H
#define TWL_SERVER_MIGRATE_PG_H

#include <stddef.h>

#include <libpq-fe.h>

struct twl_pg_migration {
	const char *name; /* "001_core.sql"; the number is the version */
	const char *sql;
};

/* NULL-terminated, sorted by name (generated). */
extern const struct twl_pg_migration twl_pg_migrations[];

/* The advisory lock key of migrations ("twlm"). */
#define TWL_PG_MIGRATE_LOCK 0x74776c6dLL

/* Highest migration number this binary knows. */
int twl_pg_migrate_latest(void);

/*
 * twl_pg_migrate - apply every migration the database's schema_version
 * lacks on @conn (not in a transaction), in the order of their numbers;
 * one numbered below the newest applied too. Returns the resulting
 * version (>= 0), -EPROTO when the database is newer than this binary,
 * or another negative errno with nothing applied (@err, @err_cap bytes,
 * says which migration failed and why).
 */
int twl_pg_migrate(PGconn *conn, char *err, size_t err_cap);

/*
 * twl_pg_schema_version - the newest migration applied on @conn (0: none,
 * or no schema_version table yet), or a negative errno.
 */
int twl_pg_schema_version(PGconn *conn);

#endif /* TWL_SERVER_MIGRATE_PG_H */
