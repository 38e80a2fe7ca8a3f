// SPDX-License-Identifier: GPL-2.0
/*
 * The report validator: the generic checker that walks the member tables
 * of wire_spec.c (types, required and unknown members, lengths, UTF-8,
 * caps, ranges, enums, feature ids, cross-member rules), and the two
 * public entry points, twl_report_validate() and twl_report_parse().
 * wire_internal.h maps the other wire_*.c files.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/json_decode.h>
#include <twilight/util.h>
#include <twilight/wire.h>

#include "wire_internal.h"

static bool is_id(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
			return false;
	return true;
}

/*
 * Whether feature id @s is one the receiver accepts. The catalog-skew rule
 * lives here and only here: any well-formed id (1..64 bytes of
 * [a-z0-9_.] with a '.') is accepted, also one the receiver's catalog does
 * not hold, so that an agent with a newer catalog loses nothing; the
 * receiver keeps such records under their id (schema/wire-format.md,
 * "Catalog skew"). A malformed id is bad_value. TWL_VERR_UNKNOWN_FEATURE
 * is no longer produced.
 */
static int check_feature(struct ctx *c, const char *s, size_t len)
{
	bool dot = false;
	char q[40];
	size_t i;

	if (twl_catalog_find(s))
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.')
			dot = true;
		else if (!((s[i] >= 'a' && s[i] <= 'z') ||
			   (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			break;
	}
	if (i == len && dot)
		return 0;
	twl_printable_copy(s, len, q, sizeof(q));
	return wire_fail(
		c, TWL_VERR_BAD_VALUE,
		"\"%s\" is not a feature id: lowercase letters, digits, '_' and '.', with at least one '.'",
		q);
}

/* @s is one of m->enums of this version: 0, or bad_value naming them. */
static int check_enum(struct ctx *c, const struct member *m, const char *s,
		      size_t len)
{
	char q[40], allowed[160] = "";
	size_t i, n = 0;

	for (i = 0; m->enums[i]; i++)
		if (strlen(m->enums[i]) == len &&
		    !memcmp(m->enums[i], s, len) &&
		    (!m->enum_since || c->version >= m->enum_since[i]))
			return 0;
	twl_printable_copy(s, len, q, sizeof(q));
	for (i = 0; m->enums[i]; i++) {
		if (m->enum_since && c->version < m->enum_since[i])
			continue;
		snprintf(allowed + strlen(allowed),
			 sizeof(allowed) - strlen(allowed), "%s\"%s\"",
			 n++ ? ", " : "", m->enums[i]);
	}
	return wire_fail(c, TWL_VERR_BAD_VALUE,
			 "\"%s\" is not one of %s in wire version %lld", q,
			 allowed, c->version);
}

/* Contract: see wire_internal.h. */
int wire_check_str(struct ctx *c, const struct member *m, const char *s,
		   size_t len, const char *what)
{
	char q[40];

	if (!c->utf8_known && !twl_utf8_valid(s, len))
		return wire_fail(
			c, TWL_VERR_INVALID_UTF8,
			"%s is not valid UTF-8 or contains a NUL byte; send text as UTF-8 (escape other bytes)",
			what);
	if (len > m->max_len)
		return wire_fail(c, TWL_VERR_TOO_LONG,
				 "%s is %zu bytes, more than the %zu allowed",
				 what, len, m->max_len);
	if ((m->str_flags & (S_NONEMPTY | S_ID)) && !len)
		return wire_fail(c, TWL_VERR_BAD_VALUE, "%s must not be empty",
				 what);
	if (!m->str_flags && !m->enums)
		return 0;
	if ((m->str_flags & S_ID) && !is_id(s, len))
		return twl_printable_copy(s, len, q, sizeof(q)),
		       wire_fail(
			       c, TWL_VERR_BAD_VALUE,
			       "\"%s\" is not an identifier: use lowercase hex digits and '-' only",
			       q);
	if ((m->str_flags & S_LABEL_KEY) && !twl_wire_label_key_ok(s, len))
		return twl_printable_copy(s, len, q, sizeof(q)),
		       wire_fail(
			       c, TWL_VERR_BAD_VALUE,
			       "\"%s\" is not a label name: a lowercase letter or digit, then lowercase letters, digits, '_', '.' or '-'",
			       q);
	if ((m->str_flags & S_LABEL_VALUE) && !twl_wire_label_value_ok(s, len))
		return twl_printable_copy(s, len, q, sizeof(q)),
		       wire_fail(
			       c, TWL_VERR_BAD_VALUE,
			       "\"%s\" is not a label value: letters, digits and _ . : / @ + - only",
			       q);
	if (m->enums)
		return check_enum(c, m, s, len);
	if (m->str_flags & S_FEATURE)
		return check_feature(c, s, len);
	return 0;
}

static int check_value(struct ctx *c, const struct member *m, const json_t *v);

static int check_object(struct ctx *c, const struct objspec *spec,
			const json_t *obj)
{
	json_t *vals[SPEC_CACHED] = { NULL };
	const char *key;
	json_t *v;
	size_t i, old, klen, known = 0;
	int ret;

	/*
	 * Look each member of the spec up once (hash lookups). When the
	 * members found account for every member of the object, there is no
	 * unknown one and the per-key scan below is skipped.
	 */
	for (i = 0; i < spec->n_members; i++) {
		const struct member *m = &spec->members[i];

		if (!wire_member_in(c, m))
			continue;
		v = json_object_get(obj, m->name);
		if (i < SPEC_CACHED)
			vals[i] = v;
		if (v)
			known++;
	}
	/* Unknown members first: a misspelt name is reported as itself. */
	if (known != json_object_size(obj))
		json_object_keylen_foreach((json_t *)obj, key, klen, v)
		{
			for (i = 0; i < spec->n_members; i++)
				if (strlen(spec->members[i].name) == klen &&
				    !memcmp(spec->members[i].name, key, klen) &&
				    wire_member_in(c, &spec->members[i]))
					break;
			if (i == spec->n_members) {
				old = wire_path_push_key(c, key);
				ret = wire_fail(
					c, TWL_VERR_UNKNOWN_FIELD,
					"%s has no member of this name in wire version %lld; remove it",
					spec->what, c->version);
				wire_path_pop(c, old);
				return ret;
			}
		}
	for (i = 0; i < spec->n_members; i++) {
		const struct member *m = &spec->members[i];

		/* A member newer than the version was reported above if sent,
		 * and is never missing. */
		if (!wire_member_in(c, m))
			continue;
		v = i < SPEC_CACHED ? vals[i] : json_object_get(obj, m->name);
		old = wire_path_push_key(c, m->name);
		if (!v && (m->flags & M_REQ))
			ret = wire_fail(c, TWL_VERR_MISSING_FIELD,
					"%s must have this member", spec->what);
		else if (v)
			ret = check_value(c, m, v);
		else
			ret = 0;
		wire_path_pop(c, old);
		if (ret)
			return ret;
	}
	return spec->check ? spec->check(c, obj) : 0;
}

/* An array member: its cap, then each item against m->item. */
static int check_array(struct ctx *c, const struct member *m, const json_t *v)
{
	json_t *item;
	size_t i, old;
	int ret;

	if (!json_is_array(v))
		return wire_fail(c, TWL_VERR_WRONG_TYPE,
				 "expected an array, got %s",
				 wire_type_name(v));
	if (json_array_size(v) > m->max_items)
		return wire_fail(
			c, TWL_VERR_TOO_MANY,
			"%zu entries, more than the %zu allowed; split the batch",
			json_array_size(v), m->max_items);
	json_array_foreach((json_t *)v, i, item)
	{
		old = wire_path_push_index(c, i);
		ret = check_value(c, m->item, item);
		wire_path_pop(c, old);
		if (ret)
			return ret;
	}
	return 0;
}

/* A map member: its cap, then each key (as a string) and value. */
static int check_map(struct ctx *c, const struct member *m, const json_t *v)
{
	const char *key;
	json_t *item;
	size_t old, klen;
	int ret;

	if (!json_is_object(v))
		return wire_fail(c, TWL_VERR_WRONG_TYPE,
				 "expected an object, got %s",
				 wire_type_name(v));
	if (json_object_size(v) > m->max_items)
		return wire_fail(c, TWL_VERR_TOO_MANY,
				 "%zu members, more than the %zu allowed",
				 json_object_size(v), m->max_items);
	json_object_keylen_foreach((json_t *)v, key, klen, item)
	{
		old = wire_path_push_key(c, key);
		/* Key: same rules as a string value, with the key's cap. */
		ret = wire_check_str(c, m, key, klen, "the member name");
		if (!ret)
			ret = check_value(c, m->item, item);
		wire_path_pop(c, old);
		if (ret)
			return ret;
	}
	return 0;
}

static int check_value(struct ctx *c, const struct member *m, const json_t *v)
{
	switch (m->kind) {
	case K_INT:
		if (!json_is_integer(v))
			return wire_fail(c, TWL_VERR_WRONG_TYPE,
					 "expected an integer, got %s",
					 wire_type_name(v));
		return wire_check_int(c, m, json_integer_value(v));
	case K_BOOL:
		if (!json_is_boolean(v))
			return wire_fail(c, TWL_VERR_WRONG_TYPE,
					 "expected true or false, got %s",
					 wire_type_name(v));
		return 0;
	case K_STR:
		if (!json_is_string(v))
			return wire_fail(c, TWL_VERR_WRONG_TYPE,
					 "expected a string, got %s",
					 wire_type_name(v));
		return wire_check_str(c, m, json_string_value(v),
				      json_string_length(v), "the string");
	case K_OBJ:
		if (json_is_null(v) && (m->flags & M_NULL))
			return 0;
		if (!json_is_object(v))
			return wire_fail(c, TWL_VERR_WRONG_TYPE,
					 "expected an object%s, got %s",
					 (m->flags & M_NULL) ? " or null" : "",
					 wire_type_name(v));
		return check_object(c, m->obj, v);
	case K_ARR:
		return check_array(c, m, v);
	case K_MAP:
		return check_map(c, m, v);
	}
	return wire_fail(c, TWL_VERR_WRONG_TYPE,
			 "internal error: unknown member kind");
}

static long long int_member(const json_t *obj, const char *name, long long dflt)
{
	json_t *v = json_object_get(obj, name);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* usage[].value's members that the cross-member rules read. */
static void value_from_json(const json_t *v, struct twl_wire_value *out)
{
	out->present = v != NULL;
	out->has_min = json_object_get(v, "min") != NULL;
	out->has_max = json_object_get(v, "max") != NULL;
	out->unlimited = json_is_true(json_object_get(v, "unlimited"));
	out->last = int_member(v, "last", 0);
	out->min = int_member(v, "min", 0);
	out->max = int_member(v, "max", 0);
}

/* Contract: see wire_internal.h. */
int wire_check_usage(struct ctx *c, const json_t *obj)
{
	struct twl_wire_usage u = {
		.op = json_string_value(json_object_get(obj, "op")),
		.use = json_string_value(json_object_get(obj, "use")),
		.count = int_member(obj, "count", 0),
		.failed = int_member(obj, "failed", 0),
		.condition_met = int_member(obj, "condition_met", 0),
		.first_seen = int_member(obj, "first_seen", 0),
		.last_seen = int_member(obj, "last_seen", 0),
	};

	value_from_json(json_object_get(obj, "value"), &u.value);
	return wire_usage_cross(c, &u);
}

/*
 * Document-wide rules: unknown[] holds one entry per distinct normalised
 * text (the cap of 32 counts distinct messages, repeats go into count).
 */
int wire_check_report(struct ctx *c, const json_t *obj)
{
	json_t *unknown = json_object_get(obj, "unknown");
	size_t i, j, n = json_array_size(unknown), old;
	int ret;

	for (i = 1; i < n; i++) {
		json_t *a = json_object_get(json_array_get(unknown, i), "text");

		for (j = 0; j < i; j++) {
			if (!json_equal(a, json_object_get(
						   json_array_get(unknown, j),
						   "text")))
				continue;
			old = wire_path_push_key(c, "unknown");
			wire_path_push_index(c, i);
			wire_path_push_key(c, "text");
			ret = wire_fail(
				c, TWL_VERR_BAD_VALUE,
				"the same text as unknown[%zu]; send one entry per text and add up the counts",
				j);
			wire_path_pop(c, old);
			return ret;
		}
	}
	return 0;
}

/* Contract: see wire_internal.h. */
int wire_validate(const json_t *doc, struct twl_verr *err, bool utf8_known)
{
	struct ctx c = { .err = err, .utf8_known = utf8_known };
	json_t *v;
	long long ver;
	size_t old;
	int ret;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!doc || !json_is_object(doc))
		return wire_fail(&c, TWL_VERR_WRONG_TYPE,
				 "a report must be a JSON object, got %s",
				 doc ? wire_type_name(doc) : "nothing");
	/* The version decides which rules apply, so it is checked first. */
	v = json_object_get(doc, "v");
	old = wire_path_push_key(&c, "v");
	if (!v)
		ret = wire_fail(&c, TWL_VERR_MISSING_FIELD,
				"a report must say its wire version in \"v\"");
	else if (!json_is_integer(v))
		ret = wire_fail(&c, TWL_VERR_WRONG_TYPE,
				"expected an integer, got %s",
				wire_type_name(v));
	else if (json_integer_value(v) < 1)
		ret = wire_fail(&c, TWL_VERR_OUT_OF_RANGE,
				"wire versions start at 1, got %lld",
				(long long)json_integer_value(v));
	else
		ret = 0;
	if (ret)
		return ret;
	ver = json_integer_value(v);
	if (ver < TWL_WIRE_MIN_VERSION || ver > TWL_WIRE_VERSION) {
		wire_fail(
			&c, TWL_VERR_UNSUPPORTED_VERSION,
			"wire version %lld is not supported here (accepted: %d..%d); %s",
			ver, TWL_WIRE_MIN_VERSION, TWL_WIRE_VERSION,
			ver > TWL_WIRE_VERSION ?
				"upgrade the server, the agent keeps the batch" :
				"upgrade the agent");
		return -EPROTONOSUPPORT;
	}
	wire_path_pop(&c, old);
	c.version = ver;
	return check_object(&c, &wire_report_spec, doc);
}

/* Contract: see wire.h. */
int twl_report_validate(const json_t *doc, struct twl_verr *err)
{
	return wire_validate(doc, err, false);
}

/* Contract: see wire.h. */
json_t *twl_report_parse(const char *buf, size_t len, struct twl_verr *err)
{
	struct ctx c = { .err = err };
	struct twl_json_err jerr;
	json_t *doc;
	int ret;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!buf && len) {
		wire_fail(&c, TWL_VERR_INVALID_JSON, "no document");
		errno = EINVAL;
		return NULL;
	}
	/*
	 * The common case, a well-formed document, skips the pre-scan: a
	 * document twl_json_decode_nested() accepts within the depth cap
	 * passes it (its strings are checked with the same twl_utf8_valid()),
	 * and its strings need no second UTF-8 check in the validator. Any
	 * failure takes the full path below, so errors are exactly as before.
	 */
	if (len <= TWL_WIRE_MAX_DOC_BYTES) {
		doc = twl_json_decode_nested(buf ? buf : "", len,
					     TWL_WIRE_MAX_DEPTH, NULL);
		if (doc) {
			ret = wire_validate(doc, err, true);
			if (!ret)
				return doc;
			json_decref(doc);
			errno = -ret;
			return NULL;
		}
	}
	if (wire_prescan(&c, buf, len)) {
		errno = EINVAL;
		return NULL;
	}
	/* json_loadb(JSON_REJECT_DUPLICATES) semantics, faster: json_decode.h */
	doc = twl_json_decode(buf ? buf : "", len, &jerr);
	if (!doc) {
		wire_fail(&c, TWL_VERR_INVALID_JSON,
			  "not valid JSON: %s (line %d, column %d)", jerr.text,
			  jerr.line, jerr.column);
		errno = EINVAL;
		return NULL;
	}
	ret = wire_validate(doc, err, true);
	if (ret) {
		json_decref(doc);
		errno = -ret;
		return NULL;
	}
	return doc;
}
