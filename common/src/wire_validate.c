// SPDX-License-Identifier: GPL-2.0
/*
 * The report validator: a declarative description of wire format v1
 * (tables below, one per object) walked by a small generic checker, plus a
 * byte pre-scan that bounds size, depth and UTF-8 before jansson parses,
 * and at the end the server's fast path (twl_wire_decode), which reads
 * usage[] straight from the text against the same table and checks.
 * schema/wire-format.md documents the same rules for people; keep the two
 * in step.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/json_decode.h>
#include <twilight/util.h>
#include <twilight/wire.h>

enum kind { K_INT, K_BOOL, K_STR, K_OBJ, K_ARR, K_MAP };

/* member flags */
#define M_REQ 0x1 /* must be present */
#define M_NULL 0x2 /* JSON null allowed (objects only) */

/* string flags */
#define S_NONEMPTY 0x1
#define S_ID 0x2 /* [0-9a-f-] only, non-empty */
#define S_FEATURE 0x4 /* an id of the compiled catalog */

struct objspec;

struct member {
	const char *name;
	enum kind kind;
	unsigned flags;
	unsigned since; /* first wire version with this member (0 = 1) */
	/* K_INT */
	long long min, max;
	/* K_STR, and the key of K_MAP */
	size_t max_len;
	unsigned str_flags;
	const char *const *enums; /* NULL-terminated allowed values */
	/* K_OBJ */
	const struct objspec *obj;
	/* K_ARR, K_MAP */
	size_t max_items;
	const struct member *item;
};

struct ctx;

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

#define INT(n, fl, lo, hi)                                                  \
	{                                                                   \
		.name = n, .kind = K_INT, .flags = fl, .min = lo, .max = hi \
	}
#define COUNT(n, fl) INT(n, fl, 0, TWL_WIRE_MAX_INT)
#define BOOL(n, fl)                                    \
	{                                              \
		.name = n, .kind = K_BOOL, .flags = fl \
	}
#define STR(n, fl, len, sf)                                            \
	{                                                              \
		.name = n, .kind = K_STR, .flags = fl, .max_len = len, \
		.str_flags = sf                                        \
	}
#define ENUM(n, fl, list)                                  \
	{                                                  \
		.name = n, .kind = K_STR, .flags = fl,     \
		.max_len = TWL_WIRE_MAX_STR, .enums = list \
	}
#define OBJ(n, fl, spec)                                           \
	{                                                          \
		.name = n, .kind = K_OBJ, .flags = fl, .obj = spec \
	}
#define ARR(n, fl, cap, it)                                              \
	{                                                                \
		.name = n, .kind = K_ARR, .flags = fl, .max_items = cap, \
		.item = it                                               \
	}
#define FEATURE(n, fl) STR(n, fl, TWL_WIRE_MAX_FEATURE, S_NONEMPTY | S_FEATURE)
#define SPEC(w, m, chk)                                             \
	{                                                           \
		.what = w, .members = m,                            \
		.n_members = sizeof(m) / sizeof(m[0]), .check = chk \
	}

static const char *const origin_enum[] = { "kmsg", "unverified", NULL };
static const char *const cgroup_mode_enum[] = { "v1", "v2", "hybrid", NULL };
static const char *const op_enum[] = { "read", "write", "register_event",
				       NULL };
static const char *const kind_enum[] = { "v1", "v2", NULL };
static const char *const state_enum[] = { "attached", "unavailable", NULL };

static int check_usage(struct ctx *c, const json_t *obj);
static int check_report(struct ctx *c, const json_t *obj);

/* host */
static const struct member host_members[] = {
	STR("host_id", M_REQ, TWL_WIRE_MAX_ID, S_ID),
	STR("hostname", M_REQ, TWL_WIRE_MAX_NAME, S_NONEMPTY),
	STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID),
	STR("kernel", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY),
	ENUM("cgroup_mode", M_REQ, cgroup_mode_enum),
	STR("agent_version", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY),
	INT("catalog_version", M_REQ, 1, INT32_MAX),
};
static const struct objspec host_spec = SPEC("the host", host_members, NULL);

/* warnings[] */
static const struct member field_value =
	STR(NULL, 0, TWL_WIRE_MAX_FIELD_VALUE, 0);
static const struct member warning_members[] = {
	FEATURE("feature", M_REQ),
	STR("text", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY),
	COUNT("kmsg_seq", M_REQ),
	COUNT("mono_us", M_REQ),
	COUNT("time", M_REQ),
	INT("level", M_REQ, 0, 7),
	{ .name = "fields",
	  .kind = K_MAP,
	  .max_items = TWL_WIRE_MAX_FIELDS,
	  .max_len = TWL_WIRE_MAX_FIELD_NAME,
	  .item = &field_value },
	ENUM("origin", M_REQ, origin_enum),
};
static const struct objspec warning_spec =
	SPEC("a warning", warning_members, NULL);
static const struct member warning_item = OBJ(NULL, 0, &warning_spec);

/* unknown[] */
static const struct member unknown_members[] = {
	STR("text", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY),
	COUNT("kmsg_seq", M_REQ),
	COUNT("mono_us", M_REQ),
	COUNT("time", M_REQ),
	INT("count", M_REQ, 1, TWL_WIRE_MAX_INT),
	ENUM("origin", M_REQ, origin_enum),
};
static const struct objspec unknown_spec =
	SPEC("an unknown deprecation", unknown_members, NULL);
static const struct member unknown_item = OBJ(NULL, 0, &unknown_spec);

/* usage[] */
static const struct member usage_members[] = {
	STR("boot_id", M_REQ, TWL_WIRE_MAX_ID, S_ID),
	FEATURE("feature", M_REQ),
	STR("file", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY),
	ENUM("op", M_REQ, op_enum),
	STR("cgroup", M_REQ, TWL_WIRE_MAX_STR, 0),
	STR("comm", M_REQ, TWL_WIRE_MAX_COMM, 0),
	INT("uid", M_REQ, 0, UINT32_MAX),
	STR("writer_cgroup", M_REQ, TWL_WIRE_MAX_STR, 0),
	STR("container", 0, TWL_WIRE_MAX_STR, 0),
	INT("last_pid", 0, 0, INT32_MAX),
	COUNT("count", M_REQ),
	COUNT("failed", M_REQ),
	COUNT("condition_met", 0),
	COUNT("first_seen", M_REQ),
	COUNT("last_seen", M_REQ),
};
static const struct objspec usage_spec =
	SPEC("a usage counter", usage_members, check_usage);
static const struct member usage_item = OBJ(NULL, 0, &usage_spec);

/* census */
static const struct member controller_item =
	STR(NULL, 0, TWL_WIRE_MAX_SHORT, S_NONEMPTY);
static const struct member hierarchy_members[] = {
	ENUM("kind", M_REQ, kind_enum),
	STR("mount", M_REQ, TWL_WIRE_MAX_STR, S_NONEMPTY),
	ARR("controllers", M_REQ, TWL_WIRE_MAX_CONTROLLERS, &controller_item),
};
static const struct objspec hierarchy_spec =
	SPEC("a hierarchy", hierarchy_members, NULL);
static const struct member hierarchy_item = OBJ(NULL, 0, &hierarchy_spec);
static const struct member knob_members[] = {
	FEATURE("feature", M_REQ),
	STR("file", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY),
	STR("cgroup", M_REQ, TWL_WIRE_MAX_STR, 0),
	STR("value", M_REQ, TWL_WIRE_MAX_STR, 0),
};
static const struct objspec knob_spec = SPEC("a knob", knob_members, NULL);
static const struct member knob_item = OBJ(NULL, 0, &knob_spec);
static const struct member census_members[] = {
	COUNT("time", M_REQ),
	ARR("hierarchies", M_REQ, TWL_WIRE_MAX_HIERARCHIES, &hierarchy_item),
	ARR("knobs", M_REQ, TWL_WIRE_MAX_KNOBS, &knob_item),
	COUNT("cgroups_walked", M_REQ),
	BOOL("truncated", M_REQ),
};
static const struct objspec census_spec =
	SPEC("the census", census_members, NULL);

/* health */
static const struct member probe_members[] = {
	STR("name", M_REQ, TWL_WIRE_MAX_SHORT, S_NONEMPTY),
	ENUM("state", M_REQ, state_enum),
	STR("reason", 0, TWL_WIRE_MAX_STR, 0),
};
static const struct objspec probe_spec = SPEC("a probe", probe_members, NULL);
static const struct member probe_item = OBJ(NULL, 0, &probe_spec);
static const struct member feature_item = FEATURE(NULL, 0);
static const struct member health_members[] = {
	COUNT("records_lost", 0),
	COUNT("parse_failures", 0),
	ARR("probes", 0, TWL_WIRE_MAX_PROBES, &probe_item),
	ARR("probe_missing", 0, TWL_WIRE_MAX_PROBES, &feature_item),
	COUNT("map_overflows", 0),
	COUNT("spool_bytes", 0),
	COUNT("spool_files", 0),
	COUNT("spool_dropped", 0),
	COUNT("send_failures", 0),
	STR("last_error", 0, TWL_WIRE_MAX_STR, 0),
	BOOL("key_rejected", 0),
	COUNT("rss_kb", 0),
	COUNT("rss_anon_kb", 0),
	COUNT("cpu_ms", 0),
};
static const struct objspec health_spec =
	SPEC("the health", health_members, NULL);

/* the document */
static const struct member report_members[] = {
	INT("v", M_REQ, 1, TWL_WIRE_VERSION),
	STR("batch_id", M_REQ, TWL_WIRE_MAX_ID, S_ID),
	INT("seq", M_REQ, 1, TWL_WIRE_MAX_INT),
	COUNT("sent_time", M_REQ),
	OBJ("host", M_REQ, &host_spec),
	ARR("warnings", 0, TWL_WIRE_MAX_WARNINGS, &warning_item),
	ARR("unknown", 0, TWL_WIRE_MAX_UNKNOWN, &unknown_item),
	ARR("usage", 0, TWL_WIRE_MAX_USAGE, &usage_item),
	OBJ("census", M_NULL, &census_spec),
	OBJ("health", M_REQ, &health_spec),
};
static const struct objspec report_spec =
	SPEC("the report", report_members, check_report);

/* Append one segment to the rendered path (cut when 256 bytes are full). */
static void render_key(struct ctx *c, const char *key)
{
	size_t room = sizeof(c->path) - c->plen;

	if (room > 1) {
		int n = snprintf(c->path + c->plen, room, "%s",
				 c->plen ? "." : "");

		twl_printable_copy(key, strlen(key), c->path + c->plen + n,
				   room - (size_t)n);
		c->plen += strlen(c->path + c->plen);
	}
}

static void render_index(struct ctx *c, size_t i)
{
	size_t room = sizeof(c->path) - c->plen;

	if (room > 1) {
		snprintf(c->path + c->plen, room, "[%zu]", i);
		c->plen += strlen(c->path + c->plen);
	}
}

/* Render the segment stack into c->path (only on failure). */
static void path_render(struct ctx *c)
{
	size_t i, n = c->nseg < PATH_SEGS ? c->nseg : PATH_SEGS;

	c->plen = 0;
	c->path[0] = '\0';
	for (i = 0; i < n; i++) {
		if (c->seg[i].key)
			render_key(c, c->seg[i].key);
		else
			render_index(c, c->seg[i].index);
	}
}

__attribute__((format(printf, 3, 4))) static int
fail(struct ctx *c, const char *code, const char *fmt, ...)
{
	struct twl_verr *e = c->err;
	char reason[sizeof(e->reason)];
	va_list ap;

	if (!e)
		return -EINVAL;
	path_render(c);
	snprintf(e->code, sizeof(e->code), "%s", code);
	if (c->plen < sizeof(e->field)) {
		memcpy(e->field, c->path, c->plen + 1);
	} else {
		memcpy(e->field, c->path, sizeof(e->field) - 4);
		strcpy(e->field + sizeof(e->field) - 4, "...");
	}
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	twl_printable_copy(reason, strlen(reason), e->reason,
			   sizeof(e->reason));
	return -EINVAL;
}

/*
 * Path segments: returns the old depth to restore with path_pop(). @key
 * must stay valid until the segment is popped (it is only read by fail()).
 */
static size_t path_push_key(struct ctx *c, const char *key)
{
	size_t old = c->nseg;

	if (c->nseg < PATH_SEGS)
		c->seg[c->nseg] = (struct path_seg){ .key = key };
	c->nseg++;
	return old;
}

static size_t path_push_index(struct ctx *c, size_t i)
{
	size_t old = c->nseg;

	if (c->nseg < PATH_SEGS)
		c->seg[c->nseg] = (struct path_seg){ .key = NULL, .index = i };
	c->nseg++;
	return old;
}

static void path_pop(struct ctx *c, size_t old)
{
	c->nseg = old;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a fractional number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

static bool is_id(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
			return false;
	return true;
}

/* Checks shared by string values and map keys. */
static int check_str(struct ctx *c, const struct member *m, const char *s,
		     size_t len, const char *what)
{
	char q[40];
	size_t i;

	if (!c->utf8_known && !twl_utf8_valid(s, len))
		return fail(
			c, TWL_VERR_INVALID_UTF8,
			"%s is not valid UTF-8 or contains a NUL byte; send text as UTF-8 (escape other bytes)",
			what);
	if (len > m->max_len)
		return fail(c, TWL_VERR_TOO_LONG,
			    "%s is %zu bytes, more than the %zu allowed", what,
			    len, m->max_len);
	if ((m->str_flags & (S_NONEMPTY | S_ID)) && !len)
		return fail(c, TWL_VERR_BAD_VALUE, "%s must not be empty",
			    what);
	if ((m->str_flags & S_ID) && !is_id(s, len))
		return twl_printable_copy(s, len, q, sizeof(q)),
		       fail(c, TWL_VERR_BAD_VALUE,
			    "\"%s\" is not an identifier: use lowercase hex digits and '-' only",
			    q);
	if (m->enums) {
		for (i = 0; m->enums[i]; i++)
			if (strlen(m->enums[i]) == len &&
			    !memcmp(m->enums[i], s, len))
				break;
		if (!m->enums[i]) {
			char allowed[96] = "";

			twl_printable_copy(s, len, q, sizeof(q));
			for (i = 0; m->enums[i]; i++)
				snprintf(allowed + strlen(allowed),
					 sizeof(allowed) - strlen(allowed),
					 "%s\"%s\"", i ? ", " : "",
					 m->enums[i]);
			return fail(c, TWL_VERR_BAD_VALUE,
				    "\"%s\" is not one of %s", q, allowed);
		}
	}
	if ((m->str_flags & S_FEATURE) && !twl_catalog_find(s))
		return twl_printable_copy(s, len, q, sizeof(q)),
		       fail(c, TWL_VERR_UNKNOWN_FEATURE,
			    "\"%s\" is not a feature id of the receiver's catalog (version %u); upgrade the receiver's catalog or fix the sender",
			    q, twl_catalog_version());
	return 0;
}

static int check_int(struct ctx *c, const struct member *m, long long v)
{
	if (v < m->min || v > m->max)
		return fail(c, TWL_VERR_OUT_OF_RANGE,
			    "%lld is outside the allowed range %lld..%lld", v,
			    m->min, m->max);
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

		if (c->version < (m->since ? m->since : 1))
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
				    c->version >=
					    (spec->members[i].since ?
						     spec->members[i].since :
						     1))
					break;
			if (i == spec->n_members) {
				old = path_push_key(c, key);
				ret = fail(
					c, TWL_VERR_UNKNOWN_FIELD,
					"%s has no member of this name in wire version %lld; remove it",
					spec->what, c->version);
				path_pop(c, old);
				return ret;
			}
		}
	for (i = 0; i < spec->n_members; i++) {
		const struct member *m = &spec->members[i];

		/* A member newer than the version was reported above if sent. */
		v = i < SPEC_CACHED ? vals[i] : json_object_get(obj, m->name);
		old = path_push_key(c, m->name);
		if (!v && (m->flags & M_REQ))
			ret = fail(c, TWL_VERR_MISSING_FIELD,
				   "%s must have this member", spec->what);
		else if (v)
			ret = check_value(c, m, v);
		else
			ret = 0;
		path_pop(c, old);
		if (ret)
			return ret;
	}
	return spec->check ? spec->check(c, obj) : 0;
}

static int check_value(struct ctx *c, const struct member *m, const json_t *v)
{
	const char *key;
	json_t *item;
	size_t i, old, klen;
	int ret;

	switch (m->kind) {
	case K_INT:
		if (!json_is_integer(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected an integer, got %s",
				    type_name(v));
		return check_int(c, m, json_integer_value(v));
	case K_BOOL:
		if (!json_is_boolean(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected true or false, got %s",
				    type_name(v));
		return 0;
	case K_STR:
		if (!json_is_string(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected a string, got %s", type_name(v));
		return check_str(c, m, json_string_value(v),
				 json_string_length(v), "the string");
	case K_OBJ:
		if (json_is_null(v) && (m->flags & M_NULL))
			return 0;
		if (!json_is_object(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected an object%s, got %s",
				    (m->flags & M_NULL) ? " or null" : "",
				    type_name(v));
		return check_object(c, m->obj, v);
	case K_ARR:
		if (!json_is_array(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected an array, got %s", type_name(v));
		if (json_array_size(v) > m->max_items)
			return fail(
				c, TWL_VERR_TOO_MANY,
				"%zu entries, more than the %zu allowed; split the batch",
				json_array_size(v), m->max_items);
		json_array_foreach((json_t *)v, i, item)
		{
			old = path_push_index(c, i);
			ret = check_value(c, m->item, item);
			path_pop(c, old);
			if (ret)
				return ret;
		}
		return 0;
	case K_MAP:
		if (!json_is_object(v))
			return fail(c, TWL_VERR_WRONG_TYPE,
				    "expected an object, got %s", type_name(v));
		if (json_object_size(v) > m->max_items)
			return fail(c, TWL_VERR_TOO_MANY,
				    "%zu members, more than the %zu allowed",
				    json_object_size(v), m->max_items);
		json_object_keylen_foreach((json_t *)v, key, klen, item)
		{
			old = path_push_key(c, key);
			/* Key: same rules as a string value, with the key's cap. */
			ret = check_str(c, m, key, klen, "the member name");
			if (!ret)
				ret = check_value(c, m->item, item);
			path_pop(c, old);
			if (ret)
				return ret;
		}
		return 0;
	}
	return fail(c, TWL_VERR_WRONG_TYPE,
		    "internal error: unknown member kind");
}

static long long int_member(const json_t *obj, const char *name, long long dflt)
{
	json_t *v = json_object_get(obj, name);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* Cross-member rules of a usage counter (types were checked already). */
static int usage_cross(struct ctx *c, long long count, long long failed,
		       long long condition_met, long long first, long long last)
{
	const char *names[] = { "failed", "condition_met" };
	long long vals[] = { failed, condition_met };
	size_t i, old;
	int ret;

	for (i = 0; i < 2; i++) {
		if (vals[i] > count) {
			old = path_push_key(c, names[i]);
			ret = fail(c, TWL_VERR_OUT_OF_RANGE,
				   "%s (%lld) is greater than count (%lld)",
				   names[i], vals[i], count);
			path_pop(c, old);
			return ret;
		}
	}
	if (first > last) {
		old = path_push_key(c, "first_seen");
		ret = fail(c, TWL_VERR_OUT_OF_RANGE,
			   "first_seen (%lld) is after last_seen (%lld)", first,
			   last);
		path_pop(c, old);
		return ret;
	}
	return 0;
}

static int check_usage(struct ctx *c, const json_t *obj)
{
	return usage_cross(c, int_member(obj, "count", 0),
			   int_member(obj, "failed", 0),
			   int_member(obj, "condition_met", 0),
			   int_member(obj, "first_seen", 0),
			   int_member(obj, "last_seen", 0));
}

/*
 * Document-wide rules: unknown[] holds one entry per distinct normalised
 * text (the cap of 32 counts distinct messages, repeats go into count).
 */
static int check_report(struct ctx *c, const json_t *obj)
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
			old = path_push_key(c, "unknown");
			path_push_index(c, i);
			path_push_key(c, "text");
			ret = fail(
				c, TWL_VERR_BAD_VALUE,
				"the same text as unknown[%zu]; send one entry per text and add up the counts",
				j);
			path_pop(c, old);
			return ret;
		}
	}
	return 0;
}

static int validate(const json_t *doc, struct twl_verr *err, bool utf8_known)
{
	struct ctx c = { .err = err, .utf8_known = utf8_known };
	json_t *v;
	long long ver;
	size_t old;
	int ret;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!doc || !json_is_object(doc))
		return fail(&c, TWL_VERR_WRONG_TYPE,
			    "a report must be a JSON object, got %s",
			    doc ? type_name(doc) : "nothing");
	/* The version decides which rules apply, so it is checked first. */
	v = json_object_get(doc, "v");
	old = path_push_key(&c, "v");
	if (!v)
		ret = fail(&c, TWL_VERR_MISSING_FIELD,
			   "a report must say its wire version in \"v\"");
	else if (!json_is_integer(v))
		ret = fail(&c, TWL_VERR_WRONG_TYPE,
			   "expected an integer, got %s", type_name(v));
	else if (json_integer_value(v) < 1)
		ret = fail(&c, TWL_VERR_OUT_OF_RANGE,
			   "wire versions start at 1, got %lld",
			   (long long)json_integer_value(v));
	else
		ret = 0;
	if (ret)
		return ret;
	ver = json_integer_value(v);
	if (ver < TWL_WIRE_MIN_VERSION || ver > TWL_WIRE_VERSION) {
		fail(&c, TWL_VERR_UNSUPPORTED_VERSION,
		     "wire version %lld is not supported here (accepted: %d..%d); %s",
		     ver, TWL_WIRE_MIN_VERSION, TWL_WIRE_VERSION,
		     ver > TWL_WIRE_VERSION ?
			     "upgrade the server, the agent keeps the batch" :
			     "upgrade the agent");
		return -EPROTONOSUPPORT;
	}
	path_pop(&c, old);
	c.version = ver;
	return check_object(&c, &report_spec, doc);
}

/* Contract: see wire.h. */
int twl_report_validate(const json_t *doc, struct twl_verr *err)
{
	return validate(doc, err, false);
}

/* One open [ or { seen by the pre-scan. */
struct scan_level {
	char type; /* '[' or '{' */
	bool expect_key;
	size_t index;
	size_t key_off, key_len; /* the last member name, copied on failure */
	char key[48];
};

/* Path of the value at the scan position, from the first @depth levels. */
static void scan_path(struct ctx *c, struct scan_level *lv, int depth,
		      const char *buf)
{
	int i;

	path_pop(c, 0);
	for (i = 0; i < depth; i++) {
		if (lv[i].type == '[') {
			path_push_index(c, lv[i].index);
		} else {
			twl_printable_copy(buf + lv[i].key_off, lv[i].key_len,
					   lv[i].key, sizeof(lv[i].key));
			path_push_key(c, lv[i].key);
		}
	}
}

/*
 * Bound size and depth and check every string's UTF-8 before the text
 * reaches jansson (whose own depth limit, 2048, is far too deep for us).
 * Syntax errors are left to jansson; this only tracks [ { } ] , : and
 * strings closely enough to name the member an error is in.
 */
static int prescan(struct ctx *c, const char *buf, size_t len)
{
	struct scan_level lv[TWL_WIRE_MAX_DEPTH];
	size_t i, start = 0;
	int depth = 0;
	bool in_str = false, esc = false, is_key = false, not_ascii = false;

	if (len > TWL_WIRE_MAX_DOC_BYTES)
		return fail(
			c, TWL_VERR_TOO_LONG,
			"the document is %zu bytes, more than the %u allowed; split the batch",
			len, TWL_WIRE_MAX_DOC_BYTES);
	for (i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			/* Only strings with a NUL or a non-ASCII byte need
			 * the full UTF-8 check. */
			if (ch == 0 || (unsigned char)ch >= 0x80)
				not_ascii = true;
			if (esc) {
				esc = false;
			} else if (ch == '\\') {
				esc = true;
			} else if (ch == '"') {
				in_str = false;
				if (not_ascii &&
				    !twl_utf8_valid(buf + start, i - start)) {
					scan_path(c, lv,
						  is_key ? depth - 1 : depth,
						  buf);
					return fail(
						c, TWL_VERR_INVALID_UTF8,
						"%s is not valid UTF-8 or contains a NUL byte; send text as UTF-8 (escape other bytes)",
						is_key ? "a member name" :
							 "the string");
				}
				if (is_key) {
					lv[depth - 1].key_off = start;
					lv[depth - 1].key_len = i - start;
				}
			}
			continue;
		}
		switch (ch) {
		case '"':
			in_str = true;
			not_ascii = false;
			start = i + 1;
			is_key = depth > 0 && lv[depth - 1].type == '{' &&
				 lv[depth - 1].expect_key;
			break;
		case '{':
		case '[':
			if (depth == TWL_WIRE_MAX_DEPTH) {
				scan_path(c, lv, depth, buf);
				return fail(
					c, TWL_VERR_TOO_DEEP,
					"nesting deeper than %d levels of arrays and objects",
					TWL_WIRE_MAX_DEPTH);
			}
			lv[depth].type = ch;
			lv[depth].expect_key = ch == '{';
			lv[depth].index = 0;
			lv[depth].key_off = 0;
			lv[depth].key_len = 0;
			depth++;
			break;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (depth > 0) {
				lv[depth - 1].index++;
				lv[depth - 1].expect_key = lv[depth - 1].type ==
							   '{';
			}
			break;
		case ':':
			if (depth > 0)
				lv[depth - 1].expect_key = false;
			break;
		default:
			break;
		}
	}
	/* An unterminated string: jansson reports it. */
	path_pop(c, 0);
	return 0;
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
		fail(&c, TWL_VERR_INVALID_JSON, "no document");
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
			ret = validate(doc, err, true);
			if (!ret)
				return doc;
			json_decref(doc);
			errno = -ret;
			return NULL;
		}
	}
	if (prescan(&c, buf, len)) {
		errno = EINVAL;
		return NULL;
	}
	/* json_loadb(JSON_REJECT_DUPLICATES) semantics, faster: json_decode.h */
	doc = twl_json_decode(buf ? buf : "", len, &jerr);
	if (!doc) {
		fail(&c, TWL_VERR_INVALID_JSON,
		     "not valid JSON: %s (line %d, column %d)", jerr.text,
		     jerr.line, jerr.column);
		errno = EINVAL;
		return NULL;
	}
	ret = validate(doc, err, true);
	if (ret) {
		json_decref(doc);
		errno = -ret;
		return NULL;
	}
	return doc;
}

/* Contract: see wire.h. */
json_t *twl_verr_to_json(const struct twl_verr *err)
{
	return json_pack("{s:s, s:s, s:s}", "error", err->code, "field",
			 err->field, "reason", err->reason);
}

/*
 * The fast path of twl_wire_decode(). usage[] is read member by member
 * straight from the text and checked with the same member table and
 * checks as above; every other member of the report becomes a jansson
 * value and the document goes through validate() as ever. Anything this
 * path does not accept goes to twl_report_parse(), so it only has to
 * accept exactly the valid reports and never has to explain a rejection
 * (its checks run without an error to fill).
 */
#define N_USAGE_MEMBERS (sizeof(usage_members) / sizeof(usage_members[0]))

/* Where each usage_members[] value lands, in the same order. */
static const size_t usage_flat[] = {
	offsetof(struct twl_wire_usage, boot_id),
	offsetof(struct twl_wire_usage, feature),
	offsetof(struct twl_wire_usage, file),
	offsetof(struct twl_wire_usage, op),
	offsetof(struct twl_wire_usage, cgroup),
	offsetof(struct twl_wire_usage, comm),
	offsetof(struct twl_wire_usage, uid),
	offsetof(struct twl_wire_usage, writer_cgroup),
	offsetof(struct twl_wire_usage, container),
	offsetof(struct twl_wire_usage, last_pid),
	offsetof(struct twl_wire_usage, count),
	offsetof(struct twl_wire_usage, failed),
	offsetof(struct twl_wire_usage, condition_met),
	offsetof(struct twl_wire_usage, first_seen),
	offsetof(struct twl_wire_usage, last_seen),
};
_Static_assert(sizeof(usage_flat) / sizeof(usage_flat[0]) == N_USAGE_MEMBERS,
	       "usage_flat[] must follow usage_members[]");

/* Store member i's value in *u: s or v, by the member's kind. */
static void usage_put(struct twl_wire_usage *u, size_t i, const char *s,
		      long long v)
{
	char *at = (char *)u + usage_flat[i];

	if (usage_members[i].kind == K_STR)
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
 * Index of the member named key in usage_members[], or -1. The search
 * starts at hint: senders write the members in the table's order, so
 * the one after the previous member is nearly always the next.
 */
static int usage_member(const char *key, size_t len, size_t hint)
{
	for (size_t k = 0; k < N_USAGE_MEMBERS; k++) {
		size_t i = (hint + k) % N_USAGE_MEMBERS;
		const char *name = usage_members[i].name;

		if (len && name[0] == key[0] && !strncmp(name, key, len) &&
		    name[len] == '\0')
			return (int)i;
	}
	return -1;
}

/* Read one entry's object into f[N_USAGE_MEMBERS]; strings are copied. */
static int fast_entry(struct twl_json_parser *ps, struct flat_value *f,
		      char *strings, size_t *used)
{
	const char *s;
	size_t n;
	int i = -1;

	memset(f, 0, N_USAGE_MEMBERS * sizeof(*f));
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

/* check_object() and check_usage() for an entry read by fast_entry(). */
static int fast_check(struct ctx *c, const struct flat_value *f,
		      struct twl_wire_usage *u)
{
	memset(u, 0, sizeof(*u));
	u->container = "";
	for (size_t i = 0; i < N_USAGE_MEMBERS; i++) {
		const struct member *m = &usage_members[i];

		if (!f[i].present) {
			if (m->flags & M_REQ)
				return -1;
			continue;
		}
		if (c->version < (m->since ? m->since : 1))
			return -1;
		if (m->kind == K_INT ?
			    f[i].is_str || check_int(c, m, f[i].i) :
			    m->kind != K_STR || !f[i].is_str ||
				    check_str(c, m, f[i].s, f[i].len, ""))
			return -1;
		usage_put(u, i, f[i].s, f[i].i);
	}
	return usage_cross(c, u->count, u->failed, u->condition_met,
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
			struct flat_value *f = realloc(
				*flat, n * N_USAGE_MEMBERS * sizeof(*f));

			if (!f)
				return -1;
			*flat = f;
			*cap = n;
		}
		if (fast_entry(ps, *flat + r->n_usage * N_USAGE_MEMBERS,
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
	    validate(r->doc, NULL, true))
		goto out;
	c.version = json_integer_value(json_object_get(r->doc, "v"));
	r->usage = malloc((r->n_usage ? r->n_usage : 1) * sizeof(*r->usage));
	if (!r->usage)
		goto out;
	for (size_t i = 0; i < r->n_usage; i++)
		if (fast_check(&c, flat + i * N_USAGE_MEMBERS, &r->usage[i]))
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

		for (k = 0; k < N_USAGE_MEMBERS; k++) {
			json_t *v = json_object_get(e, usage_members[k].name);
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
