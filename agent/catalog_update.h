/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A catalog newer than the compiled-in one: fetched from the server (the
 * sender asks for it), checked with the generator's rules, kept in the
 * state directory as catalog.json and installed at once, so the matcher
 * recognises its texts without a restart and reports carry its version as
 * host.catalog_version. At start the kept file is installed again.
 */
#ifndef TWL_AGENT_CATALOG_UPDATE_H
#define TWL_AGENT_CATALOG_UPDATE_H

#include <stddef.h>

#define TWL_AGENT_CATALOG_FILE "catalog.json"

/*
 * twl_agent_catalog_load - install @state_dir/catalog.json when it is valid
 * and newer than the current catalog. Returns 1 installed, 0 absent or not
 * newer, or a negative errno with @err saying why (the compiled-in
 * catalog stays).
 */
int twl_agent_catalog_load(const char *state_dir, char *err, size_t err_cap);

/*
 * twl_agent_catalog_accept - a catalog @buf[0..@len) the server sent: check
 * it, keep it in @state_dir (replaced atomically) and install it. Returns
 * 1 installed (@err non-empty when it could not be kept: a restart goes
 * back to the older one), 0 when it is not newer than the current one,
 * or a negative errno with @err saying why (nothing changed).
 */
int twl_agent_catalog_accept(const char *state_dir, const char *buf, size_t len,
			     char *err, size_t err_cap);

#endif /* TWL_AGENT_CATALOG_UPDATE_H */
