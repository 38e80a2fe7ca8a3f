/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalog the server runs with, as one string that changes when the
 * catalog does (catalog_print.c): every backend keeps the last one it
 * matched stored texts against (server_meta "catalog_rematched") and
 * matches them again at open when it differs.
 */
#ifndef TWL_SERVER_CATALOG_PRINT_H
#define TWL_SERVER_CATALOG_PRINT_H

#include <stddef.h>

/* The key in server_meta. */
#define TWL_CATALOG_META_KEY "catalog_rematched"

/*
 * twl_catalog_print - "<version>:<hash of its seed text>" of the current
 * catalog (compiled-in or loaded) in @out (@cap bytes, 64 is enough).
 */
void twl_catalog_print(char *out, size_t cap);

#endif /* TWL_SERVER_CATALOG_PRINT_H */
