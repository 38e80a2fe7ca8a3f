/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalog parser, shared by the build-time generator
 * (schema/gen/catalog_gen.c) and the runtime loader (catalog_load.c): the
 * parsed catalog (catgen_parse.c validates each record, catgen_check.c the
 * records against each other) and the SQL seed (catgen_sql.c). Every
 * problem in the data file is one line in gen_err naming the record and the
 * field (see schema/catalog.md for the rules), so the generator and the
 * loader reject a file with the same words. Not part of the public API.
 */
#ifndef TWL_CATGEN_H
#define TWL_CATGEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define MAX_FIELDS 8 /* TWL_CATALOG_MAX_FIELDS */
#define MAX_FIELD_NAME 15 /* struct twl_match: char name[16] */
#define MIN_KEY_LEN 4 /* the matcher indexes the first 4 bytes */
#define MAX_TEXT 1024 /* TWL_WIRE_MAX_STR */
#define MAX_ID 63
#define MAX_FILE 63
#define MAX_MSGID 250 /* RFC 5322 lines stay within 998 bytes */

/* Where fail() reports: a feature, a route, or the file itself. */
enum gen_where { W_FILE, W_FEATURE, W_ROUTE };

struct gmsg {
	const char *text;
	bool exact;
	int level;
	const char *note;
	size_t n_fields;
	char *lits[MAX_FIELDS + 1];
	size_t lit_lens[MAX_FIELDS + 1];
	char *names[MAX_FIELDS];
	size_t trimmed_len; /* exact: text length without trailing whitespace */
	size_t specificity; /* literal bytes (the matcher's tie-break) */
};

struct groute {
	const char *id, *file, *command, *tree;
	json_t *result, *to, *cc; /* borrowed from the document */
};

struct gfeat {
	const char *id, *subsystem, *title, *status;
	bool warns;
	const char *kernel_version, *commit, *commit_note, *warn_condition;
	const char *replacement, *replacement_note;
	const char *config, *stopped_working, *stopped_note;
	const char *route, *in_reply_to;
	/* what a write sets: "none", "bytes", "boolean", "integer", "bitmask";
	 * value_name: how a maintainer calls it (NULL exactly for "none") */
	const char *value_kind, *value_name;
	size_t route_idx; /* index into catalog.routes */
	json_t *files, *event_files, *references; /* borrowed */
	struct gmsg *msgs;
	size_t n_msgs;
};

struct catalog {
	json_t *doc;
	long long version;
	struct groute *routes;
	size_t n_routes;
	struct gfeat *feats;
	size_t n_feats;
};

#define GEN_ERR_MAX 1024

/* The data file's path (or name), for messages; per thread. */
extern __thread const char *gen_in_path;

/* The last problem found by this thread's parse, one line without newline. */
extern __thread char gen_err[GEN_ERR_MAX];

/*
 * gen_fail - put "FILE: features[i] (id): ..." (or routes[i], or just the
 * file for W_FILE) in gen_err and return -EINVAL.
 */
__attribute__((format(printf, 4, 5))) int
gen_fail(enum gen_where w, size_t i, const char *id, const char *fmt, ...);

/* Helpers shared by the parsers (catgen_parse.c, catgen_message.c). */
size_t gen_trim_len(const char *s, size_t n);
bool gen_is_lower_ident(const char *s, size_t n);
int gen_check_keys(json_t *obj, const char *const *allowed, enum gen_where w,
		   size_t i, const char *id, const char *where);
int gen_get_str(json_t *obj, const char *key, bool nullable, size_t maxlen,
		const char **out, enum gen_where w, size_t i, const char *id);

/* gen_parse_message - parse and check features[fi].messages[mi] into @m. */
int gen_parse_message(json_t *jm, struct gmsg *m, size_t fi, const char *id,
		      size_t mi);

/* gen_parse_route - parse and check routes[ri] into @r. */
int gen_parse_route(json_t *jr, struct groute *r, size_t ri);

/* gen_parse_feature - parse and check features[fi] into @f (routes known). */
int gen_parse_feature(json_t *jf, struct gfeat *f, size_t fi,
		      const struct catalog *c);

/*
 * gen_parse_catalog - load the file gen_in_path into @c (zeroed) and check
 * everything: 0, -EINVAL (gen_err says why) or -ENOMEM. Call
 * gen_catalog_fini() in every case.
 */
int gen_parse_catalog(struct catalog *c);

/* gen_parse_buffer - like gen_parse_catalog(), from @buf[0..@len). */
int gen_parse_buffer(struct catalog *c, const char *buf, size_t len);

/* gen_check_cross - checks across records: ids, files, texts. */
int gen_check_cross(const struct catalog *c);

/* gen_catalog_fini - free what gen_parse_catalog() allocated. */
void gen_catalog_fini(struct catalog *c);

/* The outputs: the C table (generator only) and the SQL seed. */
void gen_write_c(FILE *o, const struct catalog *c);
void gen_write_sql(FILE *o, const struct catalog *c);

#endif /* TWL_CATGEN_H */
