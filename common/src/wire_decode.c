// SPDX-License-Identifier: GPL-2.0
/*
 * twl_wire_decode(), the server's fast path. usage[] is read member by
 * member straight from the text and checked with the same member table
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
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>
#include <twilight/wire.h>

#include "wire_internal.h"

/* Store member i's value in *u: s or v, by the member's kind. */
static void usage_put(struct twl_wire_usage *u, size_t i, const char *s,
		      long long v)
{
	char *at = (char *)u + wire_usage_members[i].flat;

	if (wire_usage_members[i].kind == K_STR)
		memcpy(at, &s, sizeof(s));
	else
		memcpy(at, &v, sizeof(v));
}

/* One usage[] entry's values as read from the text. */
struct flat_value {
	bool present, is_str;
	const char *s; /* NUL-terminated, in the report's strings */
	size_t len;
	long long i;
};

/*
 * Index of the member named key in wire_usage_members[], or -1. The search
 * starts at hint: senders write the members in the table's order, so
 * the one after the previous member is nearly always the next.
 */
static int usage_member(const char *key, size_t len, size_t hint)
{
	for (size_t k = 0; k < WIRE_N_USAGE; k++) {
		size_t i = (hint + k) % WIRE_N_USAGE;
		const char *name = wire_usage_members[i].name;

		if (len && name[0] == key[0] && !strncmp(name, key, len) &&
		    name[len] == '\0')
			return (int)i;
	}
	return -1;
}

/* Read one entry's object into f[WIRE_N_USAGE]; strings are copied. */
static int fast_entry(struct twl_json_parser *ps, struct flat_value *f,
		      char *strings, size_t *used)
{
	const char *s;
	size_t n;
	int i = -1;

	memset(f, 0, WIRE_N_USAGE * sizeof(*f));
	if (!twl_json_parser_take(ps, '{'))
		return -1;
	if (twl_json_parser_take(ps, '}'))
		return 0;
	do {
		if (twl_json_parser_string(ps, &s, &n))
			return -1;
		i = usage_member(s, n, (size_t)(i + 1));
		if (i < 0 || f[i].present || !twl_json_parser_take(ps, ':'))
			return -1; /* unknown or repeated member */
		f[i].present = true;
		f[i].is_str = twl_json_parser_peek(ps) == '"';
		if (!f[i].is_str) {
			if (twl_json_parser_int(ps, &f[i].i))
				return -1; /* not a string, not an integer */
			continue;
		}
		if (twl_json_parser_string(ps, &s, &n))
			return -1;
		memcpy(strings + *used, s, n);
		strings[*used + n] = '\0';
		f[i].s = strings + *used;
		f[i].len = n;
		*used += n + 1;
	} while (twl_json_parser_take(ps, ','));
	return twl_json_parser_take(ps, '}') ? 0 : -1;
}

/* check_object() and wire_check_usage() for an entry read by fast_entry(). */
static int fast_check(struct ctx *c, const struct flat_value *f,
		      struct twl_wire_usage *u)
{
	memset(u, 0, sizeof(*u));
	u->container = "";
	for (size_t i = 0; i < WIRE_N_USAGE; i++) {
		const struct member *m = &wire_usage_members[i];

		if (!f[i].present) {
			if (m->flags & M_REQ)
				return -1;
			continue;
		}
		if (!wire_member_in(c, m))
			return -1;
		if (m->kind == K_INT ?
			    f[i].is_str || wire_check_int(c, m, f[i].i) :
			    m->kind != K_STR || !f[i].is_str ||
				    wire_check_str(c, m, f[i].s, f[i].len, ""))
			return -1;
		usage_put(u, i, f[i].s, f[i].i);
	}
	return wire_usage_cross(c, u->count, u->failed, u->condition_met,
				u->first_seen, u->last_seen);
}

/* usage[]'s array, its entries read and kept unchecked in *r. */
static int fast_usage(struct twl_json_parser *ps, struct twl_wire_report *r,
		      struct flat_value **flat, size_t *cap, size_t *used)
{
	if (!twl_json_parser_take(ps, '['))
		return -1;
	if (twl_json_parser_take(ps, ']'))
		return 0;
	do {
		if (r->n_usage == TWL_WIRE_MAX_USAGE)
			return -1;
		if (r->n_usage == *cap) {
			size_t n = *cap ? 2 * *cap : 32;
			struct flat_value *f =
				realloc(*flat, n * WIRE_N_USAGE * sizeof(*f));

			if (!f)
				return -1;
			*flat = f;
			*cap = n;
		}
		if (fast_entry(ps, *flat + r->n_usage * WIRE_N_USAGE,
			       r->strings, used))
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
		if (fast_check(&c, flat + i * WIRE_N_USAGE, &r->usage[i]))
			goto out;
	ret = 0;
out:
	twl_json_parser_fini(&ps);
	free(flat);
	return ret;
}

/* Contract: see wire.h. */
int twl_wire_from_doc(json_t *doc, struct twl_wire_report *out)
{
	json_t *usage = json_object_get(doc, "usage"), *e;
	size_t n = json_array_size(usage), i, k;

	memset(out, 0, sizeof(*out));
	out->usage = malloc((n ? n : 1) * sizeof(*out->usage));
	if (!out->usage)
		return -ENOMEM;
	json_array_foreach(usage, i, e)
	{
		struct twl_wire_usage *u = &out->usage[i];

		for (k = 0; k < WIRE_N_USAGE; k++) {
			json_t *v =
				json_object_get(e, wire_usage_members[k].name);
			const char *s = json_string_value(v);

			usage_put(u, k, s ? s : "", json_integer_value(v));
		}
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
