/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The deprecation catalog: one record per deprecated kernel feature, compiled
 * from schema/catalog.json by schema/gen/catalog_gen.c (see schema/catalog.md
 * for the fields), or loaded at runtime from a newer data file with the
 * same rules (twl_catalog_load()). One catalog is current at a time: the
 * compiled-in one until twl_catalog_install() makes a loaded one current.
 * An installed catalog is never freed (other threads may hold pointers into
 * it), so a process installs at most TWL_CATALOG_MAX_INSTALLS. Every
 * function here is thread-safe; the lookups read the current catalog.
 */
#ifndef TWILIGHT_CATALOG_H
#define TWILIGHT_CATALOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct twl_match_index;

/* How a catalog message text is compared with a kernel message. */
enum twl_match_kind {
	TWL_MATCH_EXACT = 0, /* the whole text, trailing whitespace ignored */
	TWL_MATCH_PREFIX =
		1, /* a template with {name} fields, see catalog.md */
};

/* Most named fields one template may have (struct twl_match holds 8). */
#define TWL_CATALOG_MAX_FIELDS 8

/*
 * One known text of a feature's kernel message. For TWL_MATCH_PREFIX the
 * generator has split the template: literals[0] {field_names[0]} literals[1]
 * ... {field_names[n_fields - 1]} literals[n_fields]; literals[0] is never
 * empty. For TWL_MATCH_EXACT n_fields is 0 and literals[0] is the text.
 * literal_lens[] give the literals' lengths, the last one without trailing
 * whitespace, which the matcher ignores. specificity is the number of
 * literal bytes (the sum of literal_lens): when several messages match a
 * line, the matcher reports the one with the highest specificity, so an
 * exact text wins over a template that also matches it.
 */
struct twl_catalog_message {
	const char *text; /* as in the data file (template for PREFIX) */
	enum twl_match_kind match;
	int level; /* kmsg level the kernel prints it at (4 warn, 6 info) */
	const char *note; /* which kernels print this variant, or NULL */
	size_t n_fields;
	const char *const *literals; /* n_fields + 1 entries */
	const size_t *literal_lens; /* their lengths (last one trimmed) */
	const char *const *field_names; /* n_fields entries */
	size_t specificity; /* literal bytes, see above */
};

/*
 * Where reports about a feature go upstream: the To and Cc addresses taken
 * from the kernel's own MAINTAINERS, as `command` (get_maintainer.pl
 * --nogit -f file) printed them in `tree`; `result` keeps its lines.
 */
struct twl_catalog_route {
	const char *id; /* e.g. "memcg_v1" */
	const char *file; /* the kernel file that prints the warning */
	const char *command, *tree;
	const char *const *result; /* NULL-terminated output lines */
	const char *const *to, *const *cc; /* NULL-terminated addresses */
};

struct twl_feature {
	const char *id, *subsystem, *title, *status;
	bool warns;
	const char *kernel_version, *commit; /* NULL when unknown / silent */
	/* why commit is NULL (silent, and where documented; or unverified) */
	const char *commit_note;
	const char *config; /* Kconfig symbol whose =n removes it, or NULL */
	/* mainline release where the knob stopped doing its job, or NULL */
	const char *stopped_working;
	const char *stopped_note; /* what stopped, or that it still works */
	const char *replacement, *replacement_note;
	const struct twl_catalog_route *route;
	/* the upstream thread: Message-IDs without <>; in_reply_to NULL or
	 * references[0], references NULL-terminated (empty when no thread) */
	const char *in_reply_to;
	const char *const *references;
	/* NULL-terminated control-file names, e.g. "memory.soft_limit_in_bytes" */
	const char *const *files;
	/* NULL-terminated cgroup.event_control targets, e.g. "memory.oom_control" */
	const char *const *event_files;
	const char *warn_condition; /* NULL for silent features */
	/* what a write to its files sets: "none", "bytes", "boolean",
	 * "integer" or "bitmask"; value_name: the value's name
	 * ("oom_kill_disable"), NULL exactly for "none" */
	const char *value_kind, *value_name;
	const struct twl_catalog_message *messages;
	size_t n_messages;
};

/*
 * A whole catalog. twl_catalog_compiled is the table generated at build
 * time; a loaded one also carries its SQL seed and the matcher's index.
 */
struct twl_catalog {
	unsigned version;
	const struct twl_feature *features;
	size_t n_features;
	const struct twl_catalog_route *routes;
	size_t n_routes;
	const char *seed_sql; /* NULL for the compiled-in one (see server) */
	struct twl_match_index *index; /* NULL: built on first use */
};

extern const struct twl_catalog twl_catalog_compiled;

/* Largest catalog data file accepted (the shipped one is about 45 KiB). */
#define TWL_CATALOG_MAX_BYTES (1024 * 1024)

/* Most catalogs one process installs (each stays in memory until exit). */
#define TWL_CATALOG_MAX_INSTALLS 16

/*
 * twl_catalog_load - parse and check a catalog data file @buf[0..@len) with
 * the generator's rules (schema/catalog.md), named @name in messages.
 * Returns a new catalog (twl_catalog_free() it unless installed), or NULL
 * with errno EINVAL (@err gets the generator's one-line message, "NAME:
 * features[3] (id): ..."), EFBIG (over TWL_CATALOG_MAX_BYTES) or ENOMEM.
 */
struct twl_catalog *twl_catalog_load(const char *buf, size_t len,
				     const char *name, char *err,
				     size_t err_cap);

/* twl_catalog_load_file - twl_catalog_load() of the file @path. */
struct twl_catalog *twl_catalog_load_file(const char *path, char *err,
					  size_t err_cap);

/* twl_catalog_free - free a loaded catalog never installed; NULL-safe. */
void twl_catalog_free(struct twl_catalog *c);

/*
 * twl_catalog_install - make loaded catalog @c current for every lookup and
 * the matcher, at once; the catalog then belongs to this module until the
 * process exits. Returns 0, -ENOSPC after TWL_CATALOG_MAX_INSTALLS (@c
 * stays the caller's), or -ENOMEM (matcher index).
 */
int twl_catalog_install(struct twl_catalog *c);

/*
 * twl_catalog_current - the current catalog. A caller that walks it (or
 * keeps a feature pointer) keeps a consistent view even when another
 * thread installs a newer one meanwhile.
 */
const struct twl_catalog *twl_catalog_current(void);

/* twl_catalog_version - the current catalog's "version", which agents report. */
unsigned twl_catalog_version(void);

/* twl_catalog_count - number of features in the current catalog. */
size_t twl_catalog_count(void);

/* twl_catalog_at - feature @i (data-file order), NULL when @i is out of range. */
const struct twl_feature *twl_catalog_at(size_t i);

/* twl_catalog_route_count - number of routes in the table. */
size_t twl_catalog_route_count(void);

/* twl_catalog_route_at - route @i (data-file order), NULL when out of range. */
const struct twl_catalog_route *twl_catalog_route_at(size_t i);

/* twl_catalog_find - the feature with id @id, NULL if none (or @id NULL). */
const struct twl_feature *twl_catalog_find(const char *id);

/*
 * twl_catalog_find_file - the feature whose "files" list holds control file
 * @file (kernfs name, e.g. "memory.memsw.failcnt"), NULL if none. A file
 * belongs to at most one feature (the generator checks this).
 * cgroup.event_control itself is in no feature: look up its target with
 * twl_catalog_find_event_file().
 */
const struct twl_feature *twl_catalog_find_file(const char *file);

/*
 * twl_catalog_find_event_file - the feature an eventfd registration via
 * cgroup.event_control on @file counts as (e.g. "memory.oom_control" ->
 * memcg_v1.oom_control), NULL if none.
 */
const struct twl_feature *twl_catalog_find_event_file(const char *file);

/*
 * twl_catalog_to_json - the catalog as served at GET /api/v1/catalog:
 * {"version": n, "routes": [...], "features": [...]} with every field of
 * the data file (same member names, a feature's "route" as the route's id;
 * "note" only where the data file has one). Returns a new reference the
 * caller must json_decref(), or NULL with errno ENOMEM.
 */
json_t *twl_catalog_to_json(void);

/* twl_match_kind_name - "exact" or "prefix" (the data file's spelling). */
const char *twl_match_kind_name(enum twl_match_kind kind);

#endif /* TWILIGHT_CATALOG_H */
