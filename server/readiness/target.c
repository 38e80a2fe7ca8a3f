// SPDX-License-Identifier: GPL-2.0
/*
 * Targets as documents (target.h): validation, a target from a .config,
 * and the plan that reads the catalog against a target. Every decision
 * about a feature comes from its catalog entry (config, stopped_working,
 * kernel_version): no feature is named here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>

#include "readiness/kconfig.h"
#include "readiness/target.h"

#define MAX_TEXT 1024
#define INTERFACE_SUFFIX ".interface"

/* Contract: see target.h. */
int twl_target_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n && n <= TWL_TARGET_MAX_NAME && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* Contract: see target.h. */
long twl_kernel_version(const char *s)
{
	char *end;
	long major, minor;

	if (!s)
		return -1;
	if (*s == 'v')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	major = strtol(s, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9' || major > 99)
		return -1;
	minor = strtol(end + 1, &end, 10);
	if (minor > 999 || (*end && *end != '.' && *end != '-'))
		return -1;
	return major * 1000 + minor;
}

static int bad(char *err, size_t cap, const char *what)
{
	snprintf(err, cap, "%s", what);
	return -EINVAL;
}

/* An optional string member of at most MAX_TEXT bytes. */
static bool ok_text(const json_t *t, const char *k)
{
	const json_t *v = json_object_get(t, k);

	return !v || (json_is_string(v) && json_string_length(v) <= MAX_TEXT);
}

/* Contract: see target.h. */
int twl_target_check(const json_t *t, char *err, size_t cap)
{
	const json_t *cfg = json_object_get(t, "config"), *v;
	const char *k;

	if (!json_is_object(t))
		return bad(err, cap, "a target is a JSON object");
	if (!twl_target_name_ok(json_string_value(json_object_get(t, "name"))))
		return bad(
			err, cap,
			"name: 1 to 64 characters [a-z0-9._-], not first '.'");
	if (twl_kernel_version(
		    json_string_value(json_object_get(t, "kernel"))) < 0)
		return bad(err, cap, "kernel: a release such as \"6.12\"");
	if (!json_is_object(cfg))
		return bad(err, cap, "config: an object of CONFIG_X: boolean");
	json_object_foreach((json_t *)cfg, k, v)
	{
		if (strncmp(k, "CONFIG_", 7) || strlen(k) > 128 ||
		    !json_is_boolean(v))
			return bad(err, cap,
				   "config: an object of CONFIG_X: boolean");
	}
	if (!ok_text(t, "title") || !ok_text(t, "source") ||
	    !ok_text(t, "origin"))
		return bad(
			err, cap,
			"title, source, origin: strings of at most 1024 bytes");
	return 0;
}

/* Contract: see target.h. */
int twl_target_from_kconfig(const char *name, const char *text, size_t len,
			    const char *kernel, const char *origin,
			    json_t **out, char *err, size_t cap)
{
	char release[TWL_KCONFIG_MAX_RELEASE];
	json_t *syms, *t;
	int rc;

	*out = NULL;
	if (!twl_target_name_ok(name))
		return bad(
			err, cap,
			"name: 1 to 64 characters [a-z0-9._-], not first '.'");
	rc = twl_kconfig_parse(text, len, &syms, release, sizeof(release), err,
			       cap);
	if (rc)
		return rc;
	if (!kernel)
		kernel = release;
	t = json_pack("{s:s, s:s+, s:s, s:o, s:s+, s:s}", "name", name, "title",
		      "A kernel built with an uploaded .config, release ",
		      kernel, "kernel", kernel, "config", syms, "source",
		      "an uploaded .config; header release ",
		      release[0] ? release : "(none)", "origin", origin);
	if (!t)
		return -ENOMEM;
	rc = twl_target_check(t, err, cap);
	if (rc) {
		json_decref(t);
		if (twl_kernel_version(kernel) < 0)
			snprintf(err, cap,
				 "no kernel release: the .config has no "
				 "\"# Linux/<arch> <release> Kernel "
				 "Configuration\" header; pass kernel=");
		return rc;
	}
	*out = t;
	return 0;
}

/* What @t does to feature @f: "removed", "no_op", "warns" or NULL. */
static const char *feature_fate(const json_t *t, const struct twl_feature *f,
				long kv)
{
	const json_t *cfg = json_object_get(t, "config");
	const json_t *on = f->config ? json_object_get(cfg, f->config) : NULL;
	long stop = twl_kernel_version(f->stopped_working);
	long warn = twl_kernel_version(f->kernel_version);

	if (json_is_false(on))
		return "removed";
	if (stop >= 0 && stop <= kv)
		return "no_op";
	if (f->warns && warn >= 0 && warn <= kv)
		return "warns";
	return NULL;
}

static int is_interface(const struct twl_feature *f)
{
	size_t n = strlen(f->id), sl = sizeof(INTERFACE_SUFFIX) - 1;

	return n > sl && !strcmp(f->id + n - sl, INTERFACE_SUFFIX);
}

/* Add feature @f's entry for @fate to @plan's list of that name. */
static int plan_add(json_t *plan, const struct twl_feature *f, const char *fate)
{
	json_t *e;

	if (!strcmp(fate, "warns"))
		e = json_pack("{s:s, s:s, s:s}", "id", f->id, "title", f->title,
			      "since", f->kernel_version);
	else if (!strcmp(fate, "removed"))
		e = json_pack("{s:s, s:s, s:s}", "id", f->id, "title", f->title,
			      "config", f->config);
	else
		e = json_pack("{s:s, s:s, s:s}", "id", f->id, "title", f->title,
			      "stopped_working", f->stopped_working);
	if (json_array_append_new(json_object_get(plan, fate), e))
		return -1;
	if (!strcmp(fate, "removed") && is_interface(f))
		return json_object_set_new(json_object_get(plan, "interfaces"),
					   f->id, json_string(f->subsystem));
	return 0;
}

/* Note @f's config symbol in @plan's "unstated" when @t does not state it. */
static int plan_unstated(json_t *plan, const json_t *t,
			 const struct twl_feature *f)
{
	json_t *u = json_object_get(plan, "unstated"), *v;
	size_t i;

	if (!f->config ||
	    json_object_get(json_object_get(t, "config"), f->config))
		return 0;
	json_array_foreach(u, i, v)
	{
		if (!strcmp(json_string_value(v), f->config))
			return 0;
	}
	return json_array_append_new(u, json_string(f->config));
}

/* Contract: see target.h. */
json_t *twl_target_plan(const json_t *t)
{
	long kv = twl_kernel_version(
		json_string_value(json_object_get(t, "kernel")));
	json_t *plan = json_pack("{s:[], s:[], s:[], s:{}, s:[]}", "removed",
				 "no_op", "warns", "interfaces", "unstated");
	const struct twl_feature *f;
	const char *fate;
	size_t i;

	if (!plan)
		goto fail;
	for (i = 0; (f = twl_catalog_at(i)); i++) {
		fate = feature_fate(t, f, kv);
		if ((fate && plan_add(plan, f, fate)) ||
		    plan_unstated(plan, t, f))
			goto fail;
	}
	return plan;
fail:
	json_decref(plan);
	errno = ENOMEM;
	return NULL;
}

/* The ids of the entries of @arr. */
static json_t *ids(const json_t *arr)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		if (!out || json_array_append(out, json_object_get(v, "id")))
			break;
	}
	return out;
}

/* Contract: see target.h. */
json_t *twl_target_summary(const json_t *t)
{
	static const char *const lists[] = { "removed", "no_op", "warns" };
	json_t *s = json_deep_copy(t), *cfg = json_object(), *plan = NULL;
	const json_t *all = json_object_get(t, "config");
	const struct twl_feature *f;
	size_t i;

	if (!s)
		json_decref(cfg);
	if (!s || json_object_set_new(s, "config", cfg))
		goto fail;
	for (i = 0; (f = twl_catalog_at(i)); i++) {
		json_t *v = f->config ? json_object_get(all, f->config) : NULL;

		if (f->config &&
		    json_object_set_new(cfg, f->config,
					v ? json_incref(v) : json_null()))
			goto fail;
	}
	plan = twl_target_plan(t);
	if (!plan)
		goto fail;
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (json_object_set_new(s, lists[i],
					ids(json_object_get(plan, lists[i]))))
			goto fail;
	json_decref(plan);
	return s;
fail:
	json_decref(plan);
	json_decref(s);
	errno = ENOMEM;
	return NULL;
}
