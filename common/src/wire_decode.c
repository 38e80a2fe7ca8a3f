// SPDX-License-Identifier: GPL-2.0
/*
 * twl_wire_decode(), the server's fast path. usage[] is read member by
 * member straight from the text (its value object too) and checked with
 * the same member tables
 * (wire_spec.c) and checks as the validator (wire_validate.c); every
 * other member of the report becomes a jansson value and the document
 * goes through wire_validate() as ever. Anything this path does not
 * accept goes to twl_report_parse(), so it only has to accept exactly the
 * valid reports and never has to explain a rejection (its checks run
 * without an error to fill).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>
#include <twilight/wire.h>

#include "wire_internal.h"

/*
 * One member's value as read from the text (or from a jansson value, for
 * twl_wire_from_doc()); type is that of the JSON text: 's' string, 'i'
 * integer, 'b' boolean (in i), 'o' object.
 */
struct flat_value {
	const char *s; /* NUL-terminated, in the report's strings */
	long long i;
	uint32_t len; /* a document is at most TWL_WIRE_MAX_DOC_BYTES */
	bool present;
	char type;
};

/* Slots per entry: usage[]'s members, then value's. */
#define N_SLOTS (WIRE_N_USAGE + WIRE_N_VALUE)

/* Store member m's value f in *u, where the member's table says. */
static inline void flat_put(struct twl_wire_usage *u, const struct member *m,
			    const struct flat_value *f)
{
	char *at = (char *)u + m->flat;
	bool b;

	if (m->kind == K_STR) {
		memcpy(at, &f->s, sizeof(f->s));
		return;
	}
	if (m->kind == K_INT)
		memcpy(at, &f->i, sizeof(f->i));
	if (m->flat_has)
		*(bool *)((char *)u + m->flat_has - 1) = true;
	if (m->kind == K_INT)
		return;
	b = m->kind == K_OBJ || f->i;
	memcpy(at, &b, sizeof(b));
}

/* The meaning of absent members: "" strings, use derived from op. */
static void usage_finish(struct twl_wire_usage *u)
{
	const char **s[] = { &u->boot_id,	&u->feature,
			     &u->file,		&u->op,
			     &u->cgroup,	&u->comm,
			     &u->writer_cgroup, &u->container,
			     &u->target_kind,	&u->image,
			     &u->value.unit,	&u->value.source };

	if (!u->use)
		u->use = wire_use_of_valid_op(u->op);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (!*s[i])
			*s[i] = "";
}

/*
 * Index of the member named key among ms[0..n), or -1. The search starts
 * at hint: senders write the members in the table's order, so the one
 * after the previous member is nearly always the next.
 */
static int member_index(const struct member *ms, size_t n, const char *key,
			size_t len, size_t hint)
{
	for (size_t k = 0, i = hint < n ? hint : 0; k < n;
	     k++, i = i + 1 < n ? i + 1 : 0) {
		const char *name = ms[i].name;

		if (len && name[0] == key[0] && !strncmp(name, key, len) &&
		    name[len] == '\0')
			return (int)i;
	}
	return -1;
}

static int fast_object(struct twl_json_parser *ps, const struct member *ms,
		       size_t n, struct flat_value *f, struct flat_value *sub,
		       char *strings, size_t *used);

/* A string value into *f, copied NUL-terminated into strings. */
static inline int fast_string(struct twl_json_parser *ps, struct flat_value *f,
			      char *strings, size_t *used)
{
	const char *s;
	size_t len;

	if (twl_json_parser_string(ps, &s, &len))
		return -1;
	memcpy(strings + *used, s, len);
	strings[*used + len] = '\0';
	f->type = 's';
	f->s = strings + *used;
	f->len = len;
	*used += len + 1;
	return 0;
}

/* An object or boolean value into *f (an object's members into sub[]). */
static int fast_other(struct twl_json_parser *ps, const struct member *m,
		      struct flat_value *f, struct flat_value *sub,
		      char *strings, size_t *used)
{
	bool b;

	if (twl_json_parser_peek(ps) != '{') {
		f->type = 'b';
		if (twl_json_parser_bool(ps, &b))
			return -1;
		f->i = b;
		return 0;
	}
	f->type = 'o';
	if (m->kind != K_OBJ || !sub)
		return -1;
	return fast_object(ps, m->obj->members, m->obj->n_members, sub, NULL,
			   strings, used);
}

/* Read an object of the members ms[0..n) into f[0..n); unchecked. */
static int fast_object(struct twl_json_parser *ps, const struct member *ms,
		       size_t n, struct flat_value *f, struct flat_value *sub,
		       char *strings, size_t *used)
{
	const char *s;
	size_t len;
	int i = -1, ch, ret;

	memset(f, 0, n * sizeof(*f));
	if (!twl_json_parser_take(ps, '{'))
		return -1;
	if (twl_json_parser_take(ps, '}'))
		return 0;
	do {
		if (twl_json_parser_string(ps, &s, &len))
			return -1;
		i = member_index(ms, n, s, len, (size_t)(i + 1));
		if (i < 0 || f[i].present || !twl_json_parser_take(ps, ':'))
			return -1; /* unknown or repeated member */
		f[i].present = true;
		ch = twl_json_parser_peek(ps);
		if (ch == '"')
			ret = fast_string(ps, &f[i], strings, used);
		else if (ch == '{' || ch == 't' || ch == 'f')
			ret = fast_other(ps, &ms[i], &f[i], sub, strings, used);
		else /* a number; null and [ fail here */
			ret = (f[i].type = 'i',
			       twl_json_parser_int(ps, &f[i].i));
		if (ret)
			return -1;
	} while (twl_json_parser_take(ps, ','));
	return twl_json_parser_take(ps, '}') ? 0 : -1;
}

static int fast_check(struct ctx *c, const struct member *ms, size_t n,
		      const struct flat_value *f, const struct flat_value *sub,
		      struct twl_wire_usage *u);

/* The checks check_value() makes, for one member read by fast_object(). */
static int fast_check_one(struct ctx *c, const struct member *m,
			  const struct flat_value *f,
			  const struct flat_value *sub,
			  struct twl_wire_usage *u)
{
	switch (m->kind) {
	case K_INT:
		return f->type != 'i' || wire_check_int(c, m, f->i) ? -1 : 0;
	case K_STR:
		return f->type != 's' ||
				       wire_check_str(c, m, f->s, f->len, "") ?
			       -1 :
			       0;
	case K_BOOL:
		return f->type == 'b' ? 0 : -1;
	case K_OBJ:
		return f->type != 'o' || !sub ||
				       fast_check(c, m->obj->members,
						  m->obj->n_members, sub, NULL,
						  u) ?
			       -1 :
			       0;
	default:
		return -1;
	}
}

/* check_object() for members read by fast_object(); values into *u. */
static int fast_check(struct ctx *c, const struct member *ms, size_t n,
		      const struct flat_value *f, const struct flat_value *sub,
		      struct twl_wire_usage *u)
{
	for (size_t i = 0; i < n; i++) {
		const struct member *m = &ms[i];

		if (!f[i].present) {
			if ((m->flags & M_REQ) && wire_member_in(c, m))
				return -1;
			continue;
		}
		if (!wire_member_in(c, m) ||
		    fast_check_one(c, m, &f[i], sub, u))
			return -1;
		flat_put(u, m, &f[i]);
	}
	return 0;
}

/* check_object() and wire_check_usage() for an entry read by fast_object(). */
static int fast_entry_check(struct ctx *c, const struct flat_value *f,
			    struct twl_wire_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (fast_check(c, wire_usage_members, WIRE_N_USAGE, f, f + WIRE_N_USAGE,
		       u) ||
	    wire_usage_cross(c, u))
		return -1;
	usage_finish(u);
	return 0;
}

/* usage[]'s array, its entries read and kept unchecked in *r. */
static int fast_usage(struct twl_json_parser *ps, struct twl_wire_report *r,
		      struct flat_value **flat, size_t *cap, size_t *used)
{
	struct flat_value *f;

	if (!twl_json_parser_take(ps, '['))
		return -1;
	if (twl_json_parser_take(ps, ']'))
		return 0;
	do {
		if (r->n_usage == TWL_WIRE_MAX_USAGE)
			return -1;
		if (r->n_usage == *cap) {
			size_t n = *cap ? 2 * *cap : 32;
			f = realloc(*flat, n * N_SLOTS * sizeof(*f));
			if (!f)
				return -1;
			*flat = f;
			*cap = n;
		}
		f = *flat + r->n_usage * N_SLOTS;
		if (fast_object(ps, wire_usage_members, WIRE_N_USAGE, f,
				f + WIRE_N_USAGE, r->strings, used))
			return -1;
		r->n_usage++;
	} while (twl_json_parser_take(ps, ','));
	return twl_json_parser_take(ps, ']') ? 0 : -1;
}

/* The report's top-level object, usage[] apart. 0, or -1 to fall back. */
static int fast_doc(struct twl_json_parser *ps, struct twl_wire_report *r,
		    struct flat_value **flat, size_t *cap, size_t *used)
{
	bool seen_usage = false;
	const char *key;
	char *kcopy;
	size_t klen;
	json_t *v;
	int ret;

	if (!twl_json_parser_take(ps, '{'))
		return -1;
	if (twl_json_parser_take(ps, '}'))
		return twl_json_parser_at_end(ps) ? 0 : -1;
	do {
		if (twl_json_parser_string(ps, &key, &klen) ||
		    !twl_json_parser_take(ps, ':'))
			return -1;
		if (klen == 5 && !memcmp(key, "usage", 5)) {
			if (seen_usage || fast_usage(ps, r, flat, cap, used))
				return -1;
			seen_usage = true;
			continue;
		}
		if (json_object_getn(r->doc, key, klen))
			return -1; /* repeated member */
		/* The key may sit in scratch space the value overwrites. */
		kcopy = strndup(key, klen);
		v = kcopy ? twl_json_parser_value(ps, 2) : NULL;
		ret = v ? json_object_setn_new_nocheck(r->doc, kcopy, klen, v) :
			  -1;
		free(kcopy);
		if (ret)
			return -1;
	} while (twl_json_parser_take(ps, ','));
	return twl_json_parser_take(ps, '}') && twl_json_parser_at_end(ps) ? 0 :
									     -1;
}

static int fast_decode(const char *buf, size_t len, struct twl_wire_report *r)
{
	struct ctx c = { .utf8_known = true };
	struct flat_value *flat = NULL;
	struct twl_json_parser ps;
	size_t cap = 0, used = 0;
	int ret = -1;

	if (!buf || len > TWL_WIRE_MAX_DOC_BYTES)
		return -1;
	/* Decoded strings with their NULs never outgrow the text. */
	r->doc = json_object();
	r->strings = malloc(len + 1);
	if (!r->doc || !r->strings)
		return -1;
	twl_json_parser_init(&ps, buf, len, TWL_WIRE_MAX_DEPTH, NULL);
	if (fast_doc(&ps, r, &flat, &cap, &used) ||
	    wire_validate(r->doc, NULL, true))
		goto out;
	c.version = json_integer_value(json_object_get(r->doc, "v"));
	r->usage = malloc((r->n_usage ? r->n_usage : 1) * sizeof(*r->usage));
	if (!r->usage)
		goto out;
	for (size_t i = 0; i < r->n_usage; i++)
		if (fast_entry_check(&c, flat + i * N_SLOTS, &r->usage[i]))
			goto out;
	ret = 0;
out:
	twl_json_parser_fini(&ps);
	free(flat);
	return ret;
}

/* A validated member's jansson value as a flat_value. */
static struct flat_value from_json(const json_t *v)
{
	return (struct flat_value){
		.present = v != NULL,
		.s = json_string_value(v),
		.i = json_is_boolean(v) ? json_is_true(v) :
					  (long long)json_integer_value(v),
	};
}

/* Contract: see wire.h. */
int twl_wire_from_doc(json_t *doc, struct twl_wire_report *out)
{
	json_t *usage = json_object_get(doc, "usage"), *e, *value;
	size_t n = json_array_size(usage), i, k;
	struct flat_value f;

	memset(out, 0, sizeof(*out));
	out->usage = malloc((n ? n : 1) * sizeof(*out->usage));
	if (!out->usage)
		return -ENOMEM;
	json_array_foreach(usage, i, e)
	{
		struct twl_wire_usage *u = &out->usage[i];

		memset(u, 0, sizeof(*u));
		for (k = 0; k < WIRE_N_USAGE; k++) {
			f = from_json(
				json_object_get(e, wire_usage_members[k].name));
			if (f.present)
				flat_put(u, &wire_usage_members[k], &f);
		}
		value = json_object_get(e, "value");
		for (k = 0; value && k < WIRE_N_VALUE; k++) {
			f = from_json(json_object_get(
				value, wire_value_members[k].name));
			if (f.present)
				flat_put(u, &wire_value_members[k], &f);
		}
		usage_finish(u);
	}
	out->n_usage = n;
	out->doc = json_incref(doc);
	return 0;
}

/* Contract: see wire.h. */
int twl_wire_decode(const char *buf, size_t len, struct twl_wire_report *out,
		    struct twl_verr *err)
{
	json_t *doc;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!fast_decode(buf, len, out)) {
		if (err)
			memset(err, 0, sizeof(*err));
		return 0;
	}
	twl_wire_release(out);
	doc = twl_report_parse(buf, len, err);
	if (!doc)
		return errno == EPROTONOSUPPORT ? -EPROTONOSUPPORT :
		       errno == ENOMEM		? -ENOMEM :
						  -EINVAL;
	ret = twl_wire_from_doc(doc, out);
	json_decref(doc);
	return ret;
}

/* Contract: see wire.h. */
void twl_wire_release(struct twl_wire_report *r)
{
	json_decref(r->doc);
	free(r->usage);
	free(r->strings);
	memset(r, 0, sizeof(*r));
}
