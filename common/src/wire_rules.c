// SPDX-License-Identifier: GPL-2.0
/*
 * Rules of the wire format that a member table cannot say: the
 * cross-member rules of a usage[] counter (shared by the validator and the
 * fast path, which both hand them a flattened entry), what an op means as
 * a use, label names and values, and the target kind an entry means.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <twilight/cgroup_class.h>
#include <twilight/wire.h>

#include "wire_internal.h"

static bool lower_or_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* Contract: see wire.h. */
bool twl_wire_label_key_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len > TWL_WIRE_MAX_LABEL_KEY || !lower_or_digit(s[0]))
		return false;
	for (i = 1; i < len; i++)
		if (!lower_or_digit(s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* Contract: see wire.h. */
bool twl_wire_label_value_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len > TWL_WIRE_MAX_LABEL_VALUE)
		return false;
	for (i = 0; i < len; i++)
		if (!lower_or_digit(s[i]) && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    (!s[i] || !strchr("_.:/@+-", s[i])))
			return false;
	return true;
}

/* Contract: see wire.h. */
const char *twl_wire_use_of_op(const char *op)
{
	if (!op)
		return NULL;
	if (!strcmp(op, "write"))
		return "configures";
	if (!strcmp(op, "register_event"))
		return "listens";
	if (!strcmp(op, "read"))
		return "reads";
	return NULL;
}

/* Contract: see wire.h. */
int twl_wire_usage_target_kind(const struct twl_wire_usage *u)
{
	int k = u->target_kind ? twl_cgroup_kind_parse(u->target_kind) : -1;

	return k >= 0 ? k : (int)twl_cgroup_kind_of(u->cgroup);
}

/* The path of the failing member: @a, or @a.@b; returns the depth to pop. */
static size_t push(struct ctx *c, const char *a, const char *b)
{
	size_t old = wire_path_push_key(c, a);

	if (b)
		wire_path_push_key(c, b);
	return old;
}

/* Counts and times: failed, condition_met <= count; first <= last seen. */
static int counter_rules(struct ctx *c, const struct twl_wire_usage *u)
{
	const char *names[] = { "failed", "condition_met" };
	long long vals[] = { u->failed, u->condition_met };
	size_t i, old;
	int ret;

	for (i = 0; i < 2; i++) {
		if (vals[i] <= u->count)
			continue;
		old = push(c, names[i], NULL);
		ret = wire_fail(c, TWL_VERR_OUT_OF_RANGE,
				"%s (%lld) is greater than count (%lld)",
				names[i], vals[i], u->count);
		wire_path_pop(c, old);
		return ret;
	}
	if (u->first_seen <= u->last_seen)
		return 0;
	old = push(c, "first_seen", NULL);
	ret = wire_fail(c, TWL_VERR_OUT_OF_RANGE,
			"first_seen (%lld) is after last_seen (%lld)",
			u->first_seen, u->last_seen);
	wire_path_pop(c, old);
	return ret;
}

/* min and max come together, min <= max, last among them or -1. */
static int value_rules(struct ctx *c, const struct twl_wire_value *v)
{
	size_t old = c->nseg;
	int ret = 0;

	if (v->has_min != v->has_max || (v->last >= 0 && !v->has_min)) {
		push(c, "value", v->has_min ? "max" : "min");
		ret = wire_fail(
			c, TWL_VERR_MISSING_FIELD,
			"%s; min and max summarise the finite values written and come together",
			v->has_min != v->has_max ?
				"min and max must be sent together" :
				"last is a finite value, so min and max must be sent");
	} else if (v->has_min && v->min > v->max) {
		push(c, "value", "min");
		ret = wire_fail(c, TWL_VERR_OUT_OF_RANGE,
				"min (%lld) is greater than max (%lld)", v->min,
				v->max);
	} else if (v->last >= 0 && (v->last < v->min || v->last > v->max)) {
		push(c, "value", "last");
		ret = wire_fail(c, TWL_VERR_OUT_OF_RANGE,
				"last (%lld) is outside min..max (%lld..%lld)",
				v->last, v->min, v->max);
	} else if (v->last < 0 && !v->unlimited) {
		push(c, "value", "last");
		ret = wire_fail(
			c, TWL_VERR_OUT_OF_RANGE,
			"last is -1 (unlimited) but unlimited is false");
	}
	wire_path_pop(c, old);
	return ret;
}

/* Contract: see wire_internal.h. */
int wire_usage_cross(struct ctx *c, const struct twl_wire_usage *u)
{
	const char *use = wire_use_of_valid_op(u->op);
	size_t old;
	int ret = counter_rules(c, u);

	if (ret)
		return ret;
	if (u->use && strcmp(u->use, use)) {
		old = push(c, "use", NULL);
		ret = wire_fail(c, TWL_VERR_BAD_VALUE,
				"\"%s\" does not go with op \"%s\" (\"%s\")",
				u->use, u->op ? u->op : "", use);
		wire_path_pop(c, old);
		return ret;
	}
	if (!u->value.present)
		return 0;
	if (strcmp(use, "configures")) {
		old = push(c, "value", NULL);
		ret = wire_fail(
			c, TWL_VERR_BAD_VALUE,
			"only an entry whose use is \"configures\" has a value, this one %s",
			use);
		wire_path_pop(c, old);
		return ret;
	}
	return value_rules(c, &u->value);
}
