/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the wire-format code in common/src (wire_*.c): the member
 * tables' types, the checking context and the error path.
 *
 *   wire_spec.c      the member tables: wire format v1 and v2, declaratively
 *   wire_error.c     paths and error rendering (only when a check fails)
 *   wire_validate.c  the generic checker over the tables, and
 *                    twl_report_validate() / twl_report_parse()
 *   wire_rules.c     the rules across usage[] members, label names and
 *                    values, op to use, an entry's target kind
 *   wire_prescan.c   size, depth and UTF-8 bounds before jansson parses
 *   wire_decode.c    the server's fast path (twl_wire_decode)
 *
 * schema/wire-format.md documents the same rules for people; keep the
 * two in step.
 */
#ifndef TWILIGHT_WIRE_INTERNAL_H
#define TWILIGHT_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <twilight/wire.h>

enum kind { K_INT, K_BOOL, K_STR, K_OBJ, K_ARR, K_MAP };

/* member flags */
#define M_REQ 0x1 /* must be present */
#define M_NULL 0x2 /* JSON null allowed (objects only) */

/* string flags */
#define S_NONEMPTY 0x1
#define S_ID 0x2 /* [0-9a-f-] only, non-empty */
#define S_FEATURE 0x4 /* an id of the compiled catalog */
#define S_LABEL_KEY 0x8 /* twl_wire_label_key_ok() */
#define S_LABEL_VALUE 0x10 /* twl_wire_label_value_ok() */

struct objspec;
struct ctx;

struct member {
	const char *name;
	enum kind kind;
	unsigned flags;
	/*
	 * The wire version that introduced the member: a report of an older
	 * version that carries it gets unknown_field. Every table entry
	 * sets it (SINCE() and USAGE() in wire_spec.c).
	 */
	unsigned since;
	/* K_INT */
	long long min, max;
	/* K_STR, and the key of K_MAP */
	size_t max_len;
	unsigned str_flags;
	const char *const *enums; /* NULL-terminated allowed values */
	/* The version that introduced each of enums[] (NULL: all 1). */
	const unsigned char *enum_since;
	/* K_OBJ */
	const struct objspec *obj;
	/* K_ARR, K_MAP */
	size_t max_items;
	const struct member *item;
	/*
	 * usage[] members (and value's): where twl_wire_decode() puts the
	 * value, offsetof(struct twl_wire_usage, ...): a const char * (K_STR),
	 * long long (K_INT), bool (K_BOOL; K_OBJ: whether it is present).
	 */
	size_t flat;
	/* 1 + offsetof a bool set when the member is present; 0: none */
	size_t flat_has;
};

struct objspec {
	const char *what; /* "a warning", used in reasons */
	const struct member *members;
	size_t n_members;
	int (*check)(struct ctx *c, const json_t *obj);
};

/*
 * The path of the value being checked is kept as a stack of segments
 * (a member name or an array index) and only rendered into text when a
 * check fails: valid reports, the common case, never format a path.
 */
#define PATH_SEGS 64
/* Members per object spec whose lookups check_object() keeps. */
#define SPEC_CACHED 24

struct path_seg {
	const char *key; /* NULL: an array index */
	size_t index;
};

struct ctx {
	struct twl_verr *err;
	long long version;
	/* Every string and member name is known to be valid UTF-8 without
	 * NUL (the document came from twl_json_decode()). */
	bool utf8_known;
	struct path_seg seg[PATH_SEGS];
	size_t nseg; /* may exceed PATH_SEGS; only the first ones are kept */
	char path[256];
	size_t plen;
};

/* ---- wire_spec.c ---- */

/* The document's spec: every other table hangs off it. */
extern const struct objspec wire_report_spec;
/*
 * usage[]'s members, in the order senders write them; value's members.
 * The fast path keeps one slot per member of both: usage[]'s first, then
 * value's (the one object member of usage[]).
 */
extern const struct member wire_usage_members[];
#define WIRE_N_USAGE 19
extern const struct member wire_value_members[];
#define WIRE_N_VALUE 6

/* ---- wire_validate.c ---- */

/* A member is part of the version being checked. */
static inline bool wire_member_in(const struct ctx *c, const struct member *m)
{
	return c->version >= m->since;
}

/*
 * The report @doc against wire_report_spec; @utf8_known as in struct ctx.
 * 0, -EINVAL or -EPROTONOSUPPORT, with @err (may be NULL) filled.
 */
int wire_validate(const json_t *doc, struct twl_verr *err, bool utf8_known);

/* Checks shared by string values and map keys; @what names it in reasons. */
int wire_check_str(struct ctx *c, const struct member *m, const char *s,
		   size_t len, const char *what);

/*
 * Cross-member rules of a usage counter @u, flattened (types, ranges and
 * enums were checked already; use is the one sent, NULL if absent).
 */
int wire_usage_cross(struct ctx *c, const struct twl_wire_usage *u);

/*
 * The use an op means, for an op already checked against its enumeration
 * (twl_wire_use_of_op() for any text); "" for NULL.
 */
static inline const char *wire_use_of_valid_op(const char *op)
{
	if (!op)
		return "";
	return op[0] == 'w' ? "configures" : op[2] == 'a' ? "reads" : "listens";
}

/* The objspec check functions of usage[] entries and of the document. */
int wire_check_usage(struct ctx *c, const json_t *obj);
int wire_check_report(struct ctx *c, const json_t *obj);

/* ---- wire_prescan.c ---- */

/*
 * Bound size and depth and check every string's UTF-8 of @len bytes at
 * @buf before the text reaches jansson. 0 or -EINVAL (c->err filled).
 */
int wire_prescan(struct ctx *c, const char *buf, size_t len);

/* ---- wire_error.c ---- */

/*
 * Fill c->err (when not NULL) with @code, the rendered path and the
 * formatted reason (made printable ASCII). Always returns -EINVAL.
 */
__attribute__((format(printf, 3, 4))) int
wire_fail(struct ctx *c, const char *code, const char *fmt, ...);

/* "an object", "a string", ...: the JSON type of @v for reasons. */
const char *wire_type_name(const json_t *v);

/*
 * Path segments: each push returns the old depth to restore with
 * wire_path_pop(). @key must stay valid until the segment is popped (it
 * is only read by wire_fail()).
 */
static inline size_t wire_path_push_key(struct ctx *c, const char *key)
{
	size_t old = c->nseg;

	if (c->nseg < PATH_SEGS)
		c->seg[c->nseg] = (struct path_seg){ .key = key };
	c->nseg++;
	return old;
}

static inline size_t wire_path_push_index(struct ctx *c, size_t i)
{
	size_t old = c->nseg;

	if (c->nseg < PATH_SEGS)
		c->seg[c->nseg] = (struct path_seg){ .key = NULL, .index = i };
	c->nseg++;
	return old;
}

static inline void wire_path_pop(struct ctx *c, size_t old)
{
	c->nseg = old;
}

/* Integer range check, shared by the validator and the fast path. */
static inline int wire_check_int(struct ctx *c, const struct member *m,
				 long long v)
{
	if (v < m->min || v > m->max)
		return wire_fail(c, TWL_VERR_OUT_OF_RANGE,
				 "%lld is outside the allowed range %lld..%lld",
				 v, m->min, m->max);
	return 0;
}

#endif /* TWILIGHT_WIRE_INTERNAL_H */
