/* SPDX-License-Identifier: GPL-2.0 */
/*
 * config: the one configuration engine of the twilight programs.
 *
 * A program describes its options in tables of struct twl_cfg_opt rows
 * (name, type, default as text, bounds, field, help). From those tables
 * the engine reads "key = value" files and --key value flags, checks every
 * value, collects every problem with where (file:line or the flag), which
 * key and why, and prints --help, a commented example file, the effective
 * values and a manual page's option list. Nothing about an option is
 * written twice.
 *
 * Keys are kebab-case ("server-url"); a row's .alias is a former spelling
 * ("server_url") that still works, with a deprecation note.
 *
 * A session (struct twl_cfg) joins up to TWL_CFG_MAX_SECTIONS tables, each
 * with the struct its rows point into; it remembers where each option was
 * set and holds the messages. Precedence is the caller's order of calls:
 * defaults, then twl_cfg_args(EARLY) (e.g. --config), the file, then
 * twl_cfg_args(LATE); a later source overrides an earlier one.
 */
#ifndef TWILIGHT_CONFIG_H
#define TWILIGHT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum twl_cfg_type {
	TWL_CFG_STRING, /* any text without control characters */
	TWL_CFG_PATH, /* an absolute path */
	TWL_CFG_URL, /* an https:// URL */
	TWL_CFG_BOOL, /* true/false, yes/no, on/off, 1/0 */
	TWL_CFG_UINT, /* decimal integer */
	TWL_CFG_DOUBLE, /* decimal number, e.g. 2.5 */
	TWL_CFG_SIZE, /* bytes: 4096, 512K, 64M, 1G, 1GiB (K = 1024) */
	TWL_CFG_SECONDS, /* duration in seconds: 30, 30s, 5m, 2h, 7d */
	TWL_CFG_MILLIS, /* duration in ms: 500ms, 2s, 1m; bare = seconds */
	TWL_CFG_CHOICE, /* one word of .choices */
	TWL_CFG_LIST, /* comma-separated items and/or one item per repeat */
};

/* How a field is stored; TWL_CFG_FIELD() works it out from its C type. */
enum twl_cfg_kind {
	TWL_CFG_K_BUF, /* char[size], NUL-terminated */
	TWL_CFG_K_HEAP, /* char *, malloc'd; twl_cfg_free_fields() frees */
	TWL_CFG_K_ARGV, /* const char *, points into argv: TWL_CFG_CLI only */
	TWL_CFG_K_BOOL, /* bool */
	TWL_CFG_K_INT, /* int (a CHOICE: .min + index of the word) */
	TWL_CFG_K_U32, /* unsigned (a CHOICE: as int) */
	TWL_CFG_K_U64, /* uint64_t, size_t on LP64 */
	TWL_CFG_K_DOUBLE, /* double */
	TWL_CFG_K_LIST, /* char[n][item_size] and a size_t count */
};

#define TWL_CFG_KIND_OF(T, f) \
	_Generic(&((T *)0)->f,                                   \
		char **: TWL_CFG_K_HEAP,                         \
		const char **: TWL_CFG_K_ARGV,                   \
		bool *: TWL_CFG_K_BOOL,                          \
		int *: TWL_CFG_K_INT,                            \
		unsigned *: TWL_CFG_K_U32,                       \
		unsigned long *: TWL_CFG_K_U64,                  \
		unsigned long long *: TWL_CFG_K_U64,             \
		double *: TWL_CFG_K_DOUBLE,                      \
		default: TWL_CFG_K_BUF)

/* The field of struct @T an option row stores into. */
#define TWL_CFG_FIELD(T, f)                                 \
	.off = offsetof(T, f), .size = sizeof(((T *)0)->f), \
	.kind = TWL_CFG_KIND_OF(T, f)

/* A TWL_CFG_LIST's items, char @f[n][len], and their size_t @count. */
#define TWL_CFG_LIST_FIELD(T, f, count)                              \
	.off = offsetof(T, f), .size = sizeof(((T *)0)->f),          \
	.kind = TWL_CFG_K_LIST, .item_size = sizeof(((T *)0)->f[0]), \
	.count_off = offsetof(T, count)

/* Row flags. */
#define TWL_CFG_REQUIRED (1u << 0) /* twl_cfg_check(): must be set */
#define TWL_CFG_CLI (1u << 1) /* command line only: refused in a file */
#define TWL_CFG_EARLY (1u << 2) /* applied by twl_cfg_args(EARLY) */
#define TWL_CFG_SWITCH (1u << 3) /* flag without value; sets .implied */
#define TWL_CFG_SECRET (1u << 4) /* value never printed */
#define TWL_CFG_KV (1u << 5) /* LIST items are key=value */
#define TWL_CFG_URI (1u << 6) /* printed by twl_uri_redact(): no password */

struct twl_cfg_opt {
	const char *name; /* kebab-case: the file key and --name */
	enum twl_cfg_type type;
	const char *def; /* default, as written in a file; NULL = none */
	/*
	 * Bounds in stored units (UINT, SIZE, SECONDS, MILLIS; max 0 = the
	 * field's limit), or DOUBLE's dmin..dmax. A CHOICE stored as a number
	 * stores .min + the word's index.
	 */
	uint64_t min, max;
	double dmin, dmax;
	size_t off, size; /* TWL_CFG_FIELD() or TWL_CFG_LIST_FIELD() */
	enum twl_cfg_kind kind;
	size_t item_size, count_off; /* LIST only */
	unsigned flags; /* TWL_CFG_REQUIRED ... */
	char short_name; /* 'c' for -c; 0 = none */
	const char *arg; /* the value's name in --help (FILE); NULL: type */
	const char *alias; /* former spelling, accepted with a note */
	const char *choices; /* CHOICE: "keep|hash|drop" */
	const char *implied; /* SWITCH: the value the flag sets */
	const char *example; /* --print-config sets it to this, uncommented */
	const char *help; /* plain sentences for --help, examples and man */
};

/* ---- values: the one parser of each kind of value ------------------------ */

/* twl_parse_bool - true/yes/on/1 or false/no/off/0, any case. 0 or -EINVAL. */
int twl_parse_bool(const char *s, bool *out);

/*
 * twl_parse_u64 - a decimal integer, digits only (no sign, space or
 * suffix), at most @max. 0, -EINVAL (not a number) or -ERANGE (> @max).
 */
int twl_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * twl_parse_size - bytes with an optional unit: B, K/KB/KiB, M/MB/MiB,
 * G/GB/GiB, T/TB/TiB (any case, powers of 1024). 0, -EINVAL, -ERANGE.
 */
int twl_parse_size(const char *s, uint64_t *out);

/*
 * twl_parse_duration - a duration with an optional unit ms, s, m, h, d,
 * converted to units of @unit_ms milliseconds (1000: seconds, 1: ms); a
 * bare number is in seconds. A value that is not a whole number of units
 * is -EINVAL. 0, -EINVAL, -ERANGE.
 */
int twl_parse_duration(const char *s, uint64_t unit_ms, uint64_t *out);

/*
 * twl_parse_double - a finite decimal number ("2.5", "1e3"); no "inf",
 * "nan", hex or surrounding space. 0, -EINVAL or -ERANGE.
 */
int twl_parse_double(const char *s, double *out);

/*
 * twl_parse_choice - the index of @s among the '|'-separated @choices
 * (any case), or -EINVAL.
 */
int twl_parse_choice(const char *s, const char *choices);

/* ---- tables without a session ------------------------------------------- */

/*
 * twl_cfg_defaults - store every row's default into @obj (rows without
 * one are left alone). 0, -ENOMEM, or -EINVAL when a default does not
 * parse (a table bug; twl_cfg_check_table() finds those).
 */
int twl_cfg_defaults(const struct twl_cfg_opt *opts, size_t n, void *obj);

/* twl_cfg_free_fields - free the malloc'd strings of @obj, set them NULL. */
void twl_cfg_free_fields(const struct twl_cfg_opt *opts, size_t n, void *obj);

/*
 * twl_cfg_check_table - table bugs, one line each into @why (capped): a
 * name that is not kebab-case, a name or alias used twice, a default that
 * does not parse or is out of bounds, a kind that does not fit the type,
 * an argv string that is not TWL_CFG_CLI. 0 or -EINVAL.
 */
int twl_cfg_check_table(const struct twl_cfg_opt *opts, size_t n, char *why,
			size_t cap);

/* ---- sessions ----------------------------------------------------------- */

#define TWL_CFG_MAX_SECTIONS 4
#define TWL_CFG_MAX_OPTS 128 /* rows in all sections of a session */
#define TWL_CFG_MAX_MSGS 64

struct twl_cfg_msg {
	unsigned line; /* line in the file; 0: not from a file line */
	bool note; /* a deprecation note, not an error */
	bool flag; /* about a command-line argument */
	char key[64]; /* the key or flag as written; "" if none */
	char text[256];
};

struct twl_cfg_section {
	const struct twl_cfg_opt *opts;
	size_t n;
	void *obj;
};

struct twl_cfg_state {
	unsigned line; /* file line that set it; 0 = not the file */
	bool from_file, from_flag; /* ever set by the file / a flag */
	bool noted; /* deprecation note given */
	unsigned char list_src; /* source of a LIST's current items */
};

struct twl_cfg {
	char prog[32]; /* for "see PROG --help" */
	char file[512]; /* the file read last */
	size_t nsec, nopts;
	struct twl_cfg_section sec[TWL_CFG_MAX_SECTIONS];
	struct twl_cfg_state st[TWL_CFG_MAX_OPTS];
	size_t n_msgs, n_errors, dropped; /* dropped: past TWL_CFG_MAX_MSGS */
	struct twl_cfg_msg msgs[TWL_CFG_MAX_MSGS];
};

/* twl_cfg_new - an empty session; NULL + errno on failure. */
struct twl_cfg *twl_cfg_new(const char *prog);

/* twl_cfg_free - free @p (NULL-safe); the sections' structs are untouched. */
void twl_cfg_free(struct twl_cfg *p);

/*
 * twl_cfg_add - add a table whose fields live in @obj. 0, or -E2BIG past
 * TWL_CFG_MAX_SECTIONS sections or TWL_CFG_MAX_OPTS rows.
 */
int twl_cfg_add(struct twl_cfg *p, const struct twl_cfg_opt *opts, size_t n,
		void *obj);

/*
 * twl_cfg_parse_text - apply "key = value" lines from @text (@len bytes)
 * read from @file. Blank lines and lines starting with '#' or ';' are
 * skipped; a value may be quoted "..."; a key set twice is an error unless
 * it is a LIST, whose repeats add items. Every problem becomes a message
 * with its line. Returns 0, -EINVAL (messages added) or -ENOMEM.
 */
int twl_cfg_parse_text(struct twl_cfg *p, const char *file, const char *text,
		       size_t len);

/*
 * twl_cfg_load_file - twl_cfg_parse_text() of the file at @path (at most
 * @max bytes). A missing file is 0 unless @must_exist; an unreadable one
 * is a message and its negative errno.
 */
int twl_cfg_load_file(struct twl_cfg *p, const char *path, size_t max,
		      bool must_exist);

enum twl_cfg_pass {
	TWL_CFG_PASS_EARLY = 1, /* only TWL_CFG_EARLY options */
	TWL_CFG_PASS_LATE = 2, /* all others, and the positionals */
	TWL_CFG_PASS_ALL = 3,
};

/*
 * twl_cfg_args - apply the flags among @argv[0..@argc) (no program name):
 * --key value, --key=value, -k value, -kvalue; a BOOL also as --key,
 * --no-key, or --key followed by a boolean word; a SWITCH takes no value;
 * "--" ends the flags. Only the options of @pass are applied and only
 * their problems reported (unknown flags: in the LATE pass). Positionals
 * go to @rest (room for @argc) in the LATE pass, or are errors if @rest
 * is NULL. Returns 0, -EINVAL (messages added) or -ENOMEM.
 */
int twl_cfg_args(struct twl_cfg *p, int argc, char **argv, unsigned pass,
		 char **rest, int *n_rest);

/*
 * twl_cfg_set - set option @key (name or alias) to @value as the program
 * would (a LIST gains the items). 0, -ENOENT, -EINVAL (message added),
 * -ENOMEM.
 */
int twl_cfg_set(struct twl_cfg *p, const char *key, const char *value);

/*
 * twl_cfg_check - every REQUIRED option set, and every stored number
 * within its bounds (fields may have been set directly). Appends
 * messages; 0 or -EINVAL.
 */
int twl_cfg_check(struct twl_cfg *p);

/* twl_cfg_given - was option @name set by the file or a flag? */
bool twl_cfg_given(const struct twl_cfg *p, const char *name);

/* twl_cfg_error - add an error about @key (may be NULL), not tied to a line. */
void twl_cfg_error(struct twl_cfg *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* twl_cfg_failed - true when any error (not a note) was recorded. */
bool twl_cfg_failed(const struct twl_cfg *p);

/*
 * twl_cfg_print_msgs - one line per message: "FILE:LINE: KEY: why",
 * "command line: --KEY: why", "FILE: KEY: why" (or PROG when no file was
 * read); notes say "note:" first.
 */
void twl_cfg_print_msgs(FILE *f, const struct twl_cfg *p);

/* ---- documentation from the tables --------------------------------------- */

/* twl_cfg_print_flags - the rows as --help lines: "  -c, --config FILE  help". */
void twl_cfg_print_flags(FILE *f, const struct twl_cfg_opt *opts, size_t n);

/* twl_cfg_print_keys - the rows as --help entries: "  key  type  default X". */
void twl_cfg_print_keys(FILE *f, const struct twl_cfg_opt *opts, size_t n);

/*
 * twl_cfg_print_example - a commented entry per row (help, type, then
 * "key = example" or "#key = default"), for --print-config. Rows with
 * TWL_CFG_CLI are left out.
 */
void twl_cfg_print_example(FILE *f, const struct twl_cfg_opt *opts, size_t n);

/* twl_cfg_print_values - "key = value" per row but switches, from @obj. */
void twl_cfg_print_values(FILE *f, const struct twl_cfg_opt *opts, size_t n,
			  const void *obj);

/*
 * twl_cfg_print_man - the rows as a roff list of .TP entries for a manual
 * page: as flags (--name ARG) when @flags, else as file keys (name type).
 */
void twl_cfg_print_man(FILE *f, const struct twl_cfg_opt *opts, size_t n,
		       bool flags);

#endif /* TWILIGHT_CONFIG_H */
