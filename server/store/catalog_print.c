// SPDX-License-Identifier: GPL-2.0
/* The current catalog as one string (catalog_print.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <twilight/catalog.h>

#include "store/catalog_print.h"
#include "store/sqlite/migrate.h" /* the seed text, a digest of the catalog */

/* Contract: see catalog_print.h. */
void twl_catalog_print(char *out, size_t cap)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = twl_catalog_seed_text(); *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(out, cap, "%u:%016" PRIx64, twl_catalog_version(), h);
}
