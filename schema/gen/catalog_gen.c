// SPDX-License-Identifier: GPL-2.0
/*
 * catalog_gen - validate schema/catalog.json and generate from it the C table
 * compiled into twl_common (twilight_catalog.c) and the SQL seed the server
 * loads (catalog_seed.sql). A build-time host tool: any problem in the data
 * file stops the build with one line naming the record and the field, and
 * writes nothing.
 *
 * Usage: catalog_gen CATALOG.json OUT.c OUT.sql
 *
 * The parser and checks are shared with the runtime loader
 * (common/src/catgen_*.c: catgen_parse.c and catgen_message.c each record,
 * catgen_check.c the records against each other, catgen_sql.c the SQL
 * seed); gen_write_c.c here writes the C table. The rules checked are
 * documented in schema/catalog.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catgen.h"

/* Write @path through a temporary file and rename, so a failed run leaves no half file. */
static int write_out(const char *path,
		     void (*emit)(FILE *, const struct catalog *),
		     const struct catalog *c)
{
	char tmp[4096];
	FILE *o;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	o = fopen(tmp, "w");
	if (!o) {
		err = -errno;
		fprintf(stderr, "catalog_gen: cannot create %s: %s\n", tmp,
			strerror(errno));
		return err;
	}
	emit(o, c);
	if (ferror(o) | fclose(o)) {
		err = -EIO;
		fprintf(stderr, "catalog_gen: writing %s failed (disk full?)\n",
			tmp);
		unlink(tmp);
		return err;
	}
	if (rename(tmp, path)) {
		err = -errno;
		fprintf(stderr, "catalog_gen: cannot rename %s to %s: %s\n",
			tmp, path, strerror(errno));
		unlink(tmp);
	}
	return err;
}

int main(int argc, char **argv)
{
	struct catalog c = { 0 };
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: %s CATALOG.json OUT.c OUT.sql\n",
			argv[0]);
		return 2;
	}
	gen_in_path = argv[1];
	err = gen_parse_catalog(&c);
	if (err == -ENOMEM)
		fprintf(stderr, "catalog_gen: out of memory reading %s\n",
			gen_in_path);
	else if (err)
		fprintf(stderr, "catalog_gen: %s\n", gen_err);
	if (!err)
		err = write_out(argv[2], gen_write_c, &c);
	if (!err)
		err = write_out(argv[3], gen_write_sql, &c);
	gen_catalog_fini(&c);
	return err ? 1 : 0;
}
