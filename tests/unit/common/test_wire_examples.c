// SPDX-License-Identifier: GPL-2.0
/*
 * Golden files: every schema/examples/ JSON file is accepted, every
 * invalid-*.json is rejected with the code and field that
 * schema/examples/README.md lists for it (a data table, read here).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "wire_test.h"

#define MAX_ROWS 256

struct expect {
	char file[128], code[32], field[128];
	bool seen;
};

static char examples_dir[4096];

static const char *examples(void)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");

	if (!src || !*src)
		fail_msg(
			"TWILIGHT_SOURCE_DIR is not set: run this test through ctest");
	snprintf(examples_dir, sizeof(examples_dir), "%s/schema/examples", src);
	return examples_dir;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Copy cell @s..@e without spaces and backticks; "(document)" means "". */
static void cell(char *out, size_t cap, const char *s, const char *e)
{
	size_t n = 0;

	for (; s < e; s++)
		if (*s != ' ' && *s != '`' && n + 1 < cap)
			out[n++] = *s;
	out[n] = '\0';
	if (!strcmp(out, "(document)"))
		out[0] = '\0';
}

/* Rows "| `invalid-x.json` | `code` | `field` | text |" of the README. */
static size_t read_table(struct expect *rows)
{
	char path[4200], *text = NULL, *line, *save = NULL;
	size_t n = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/README.md", examples());
	ret = twl_read_file(path, 1 << 20, &text, NULL);
	if (ret)
		fail_msg("cannot read %s: %s", path, strerror(-ret));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *c[5];
		int k = 0;
		const char *p;

		if (strncmp(line, "| `invalid-", 11))
			continue;
		for (p = line; *p && k < 5; p++)
			if (*p == '|')
				c[k++] = p;
		if (k < 5)
			fail_msg("README row has fewer than 4 cells: %s", line);
		if (n == MAX_ROWS)
			fail_msg("more than %d rows in the README table",
				 MAX_ROWS);
		cell(rows[n].file, sizeof(rows[n].file), c[0] + 1, c[1]);
		cell(rows[n].code, sizeof(rows[n].code), c[1] + 1, c[2]);
		cell(rows[n].field, sizeof(rows[n].field), c[2] + 1, c[3]);
		if (!rows[n].code[0])
			fail_msg("README row for %s has no code", rows[n].file);
		rows[n].seen = false;
		n++;
	}
	free(text);
	return n;
}

static json_t *parse_file(const char *name, struct twl_verr *err,
			  int *saved_errno)
{
	char path[4200], *buf = NULL;
	size_t len;
	json_t *doc;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", examples(), name);
	ret = twl_read_file(path, 64 << 20, &buf, &len);
	if (ret)
		fail_msg("cannot read %s: %s", path, strerror(-ret));
	errno = 0;
	doc = twl_report_parse(buf, len, err);
	*saved_errno = errno;
	free(buf);
	return doc;
}

/*
 * twl_wire_decode() on the same bytes: the same verdict and error as
 * twl_report_parse() (@doc, @err), and for a valid report with usage[]
 * the fast path, whose values agree with twl_wire_from_doc().
 */
static void check_fast_path(const char *name, json_t *doc,
			    const struct twl_verr *err)
{
	char path[4200], *buf = NULL;
	struct twl_wire_report fast, full;
	struct twl_verr werr;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", examples(), name);
	if (twl_read_file(path, 64 << 20, &buf, &len))
		fail_msg("cannot read %s", path);
	ret = twl_wire_decode(buf, len, &fast, &werr);
	free(buf);
	if (!doc) {
		if (!ret || memcmp(err, &werr, sizeof(werr)))
			fail_msg("%s: twl_wire_decode says %s at '%s'", name,
				 ret ? werr.code : "valid", werr.field);
		return;
	}
	if (ret)
		fail_msg("%s: twl_wire_decode rejects it: %s at '%s'", name,
			 werr.code, werr.field);
	if (json_object_get(doc, "usage") && json_object_get(fast.doc, "usage"))
		fail_msg("%s: not decoded by the fast path", name);
	assert_int_equal(twl_wire_from_doc(doc, &full), 0);
	assert_int_equal(fast.n_usage, full.n_usage);
	for (size_t i = 0; i < fast.n_usage; i++)
		same_usage(&fast.usage[i], &full.usage[i]);
	twl_wire_release(&fast);
	twl_wire_release(&full);
}

static void test_golden_accepted(void **state)
{
	DIR *d = opendir(examples());
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		fail_msg("cannot open %s: %s", examples(), strerror(errno));
	while ((de = readdir(d))) {
		struct twl_verr err;
		json_t *doc, *again;
		char *text;
		int e;

		if (!ends_with(de->d_name, ".json") ||
		    !strncmp(de->d_name, "invalid-", 8))
			continue;
		doc = parse_file(de->d_name, &err, &e);
		if (!doc)
			fail_msg("%s rejected: %s at '%s': %s", de->d_name,
				 err.code, err.field, err.reason);
		assert_int_equal(twl_report_validate(doc, NULL), 0);
		check_fast_path(de->d_name, doc, &err);
		/* Re-encoded, it is still valid (what the server stores). */
		text = json_dumps(doc, JSON_COMPACT);
		assert_non_null(text);
		again = twl_report_parse(text, strlen(text), &err);
		if (!again)
			fail_msg("%s re-encoded rejected: %s %s", de->d_name,
				 err.code, err.field);
		assert_true(json_equal(doc, again));
		json_decref(again);
		free(text);
		json_decref(doc);
		n++;
	}
	closedir(d);
	/* minimal, full, dmesg, v2-only, minimal-v2, full-v2 at least */
	if (n < 6)
		fail_msg("only %u golden examples in %s, expected at least 6",
			 n, examples());
}

static void test_invalid_rejected(void **state)
{
	static struct expect rows[MAX_ROWS];
	size_t n = read_table(rows), i;
	DIR *d;
	struct dirent *de;

	if (n < 11)
		fail_msg("README lists only %zu invalid examples", n);
	for (i = 0; i < n; i++) {
		struct twl_verr err;
		json_t *doc;
		int e;

		doc = parse_file(rows[i].file, &err, &e);
		if (doc)
			fail_msg("%s was accepted, expected %s at '%s'",
				 rows[i].file, rows[i].code, rows[i].field);
		if (strcmp(err.code, rows[i].code) ||
		    strcmp(err.field, rows[i].field))
			fail_msg("%s: got %s at '%s' (%s), expected %s at '%s'",
				 rows[i].file, err.code, err.field, err.reason,
				 rows[i].code, rows[i].field);
		if (!err.reason[0])
			fail_msg("%s: no reason given", rows[i].file);
		check_fast_path(rows[i].file, NULL, &err);
		assert_int_equal(e, strcmp(err.code, "unsupported_version") ?
					    EINVAL :
					    EPROTONOSUPPORT);
	}
	/* Every invalid-* file on disk has a row. */
	d = opendir(examples());
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "invalid-", 8))
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(rows[i].file, de->d_name))
				rows[i].seen = true;
		for (i = 0; i < n && strcmp(rows[i].file, de->d_name); i++)
			;
		if (i == n)
			fail_msg("%s has no row in schema/examples/README.md",
				 de->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++)
		if (!rows[i].seen)
			fail_msg("README lists %s but the file does not exist",
				 rows[i].file);
}

/* The required kinds of rejection each have at least one example. */
static void test_required_kinds_covered(void **state)
{
	static struct expect rows[MAX_ROWS];
	/* unknown_feature is no longer produced (catalog skew) */
	static const char *const kinds[] = {
		"wrong_type",	       "missing_field",
		"unknown_field",       "too_long",
		"invalid_utf8",	       "too_many",
		"unsupported_version", "bad_value",
		"out_of_range",	       "too_deep",
		"invalid_json"
	};
	size_t n = read_table(rows), i, k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (i = 0; i < n && strcmp(rows[i].code, kinds[k]); i++)
			;
		if (i == n)
			fail_msg("no invalid example with code %s", kinds[k]);
	}
}

static json_t *load_golden(const char *name)
{
	struct twl_verr err;
	json_t *doc;
	int e;

	doc = parse_file(name, &err, &e);
	if (!doc)
		fail_msg("%s rejected: %s at '%s': %s", name, err.code,
			 err.field, err.reason);
	return doc;
}

static size_t count_at(json_t *doc, const char *a, const char *b)
{
	json_t *v = json_object_get(doc, a);

	if (b)
		v = json_object_get(v, b);
	return json_is_array(v) ? json_array_size(v) : json_object_size(v);
}

/* The golden set shows every section the issue asks for. */
static void test_golden_coverage(void **state)
{
	json_t *full = load_golden("full.json"), *d, *w;
	bool remount = false, ops[3] = { false, false, false };
	size_t i;

	json_array_foreach(json_object_get(full, "warnings"), i, w)
	{
		json_t *f = json_object_get(w, "fields");

		if (!strcmp(json_string_value(json_object_get(w, "feature")),
			    "cgroup_v1.remount") &&
		    json_object_get(f, "pid") && json_object_get(f, "comm"))
			remount = true;
	}
	assert_true(remount);
	json_array_foreach(json_object_get(full, "usage"), i, w)
	{
		const char *op = json_string_value(json_object_get(w, "op"));

		ops[0] |= !strcmp(op, "read");
		ops[1] |= !strcmp(op, "write");
		ops[2] |= !strcmp(op, "register_event");
	}
	assert_true(ops[0] && ops[1] && ops[2]);
	assert_true(count_at(full, "unknown", NULL) > 0);
	assert_true(count_at(full, "census", "hierarchies") > 0);
	assert_true(count_at(full, "census", "knobs") > 0);
	assert_true(count_at(full, "health", "probes") > 0);
	assert_true(count_at(full, "health", NULL) >= 14); /* every member */
	json_decref(full);

	d = load_golden("dmesg.json");
	w = json_array_get(json_object_get(d, "warnings"), 0);
	assert_string_equal(json_string_value(json_object_get(w, "origin")),
			    "unverified");
	assert_int_equal(json_integer_value(json_object_get(w, "kmsg_seq")), 0);
	json_decref(d);

	d = load_golden("v2-only.json");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(d, "host"), "cgroup_mode")),
			    "v2");
	assert_int_equal(count_at(d, "warnings", NULL) +
				 count_at(d, "usage", NULL) +
				 count_at(d, "census", "knobs"),
			 0);
	json_decref(d);

	d = load_golden("minimal.json");
	assert_int_equal(json_object_size(d), 6);
	json_decref(d);
}

/* Whether some element of @arr (or @arr itself, an object) has @key. */
static bool any_has(json_t *arr, const char *key)
{
	json_t *e;
	size_t i;

	if (json_is_object(arr))
		return json_object_get(arr, key) != NULL;
	json_array_foreach(arr, i, e) if (json_object_get(e, key)) return true;
	return false;
}

/* Whether some element of @arr has @key equal to the string @want. */
static bool any_is(json_t *arr, const char *key, const char *want)
{
	json_t *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		const char *v = json_string_value(json_object_get(e, key));

		if (v && !strcmp(v, want))
			return true;
	}
	return false;
}

/* full-v2.json shows every member and enumeration value version 2 added. */
static void test_golden_v2_coverage(void **state)
{
	static const struct {
		const char *a, *b, *key;
	} members[] = {
		{ "host", NULL, "labels" },
		{ "warnings", NULL, "boot_id" },
		{ "warnings", NULL, "kernel" },
		{ "warnings", NULL, "source" },
		{ "unknown", NULL, "boot_id" },
		{ "unknown", NULL, "kernel" },
		{ "unknown", NULL, "source" },
		{ "usage", NULL, "use" },
		{ "usage", NULL, "target_kind" },
		{ "usage", NULL, "value" },
		{ "usage", NULL, "image" },
		{ "census", NULL, "runtimes" },
		{ "census", "knobs", "target_kind" },
		{ "census", "runtimes", "version" },
		{ "census", "runtimes", "cgroup_driver" },
		{ "health", NULL, "controllers" },
		{ "health", NULL, "boots" },
		{ "health", NULL, "journal_missed" },
		{ "health", NULL, "journal_errors" },
		{ "health", NULL, "entries_dropped" },
		{ "health", "controllers", "reason" },
		{ "health", "boots", "kernel" },
		{ "health", "boots", "first_kmsg_seq" },
		{ "health", "boots", "first_journal_us" },
	};
	static const struct {
		const char *a, *b, *key, *value;
	} values[] = {
		{ "warnings", NULL, "origin", "journal" },
		{ "unknown", NULL, "origin", "journal" },
		{ "usage", NULL, "use", "configures" },
		{ "usage", NULL, "use", "listens" },
		{ "usage", NULL, "use", "reads" },
		{ "health", "probes", "state", "not_built" },
		{ "health", "controllers", "state", "not_built" },
		{ "health", "controllers", "state", "unavailable" },
	};
	json_t *d = load_golden("full-v2.json"), *usage, *e, *v;
	bool min_max = false, unlimited_only = false;
	size_t i;

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(d, "v")), 2);
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		json_t *at = json_object_get(d, members[i].a);

		if (members[i].b)
			at = json_object_get(at, members[i].b);
		if (!any_has(at, members[i].key))
			fail_msg("full-v2.json: no %s%s%s[].%s", members[i].a,
				 members[i].b ? "." : "",
				 members[i].b ? members[i].b : "",
				 members[i].key);
	}
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		json_t *at = json_object_get(d, values[i].a);

		if (values[i].b)
			at = json_object_get(at, values[i].b);
		if (!any_is(at, values[i].key, values[i].value))
			fail_msg("full-v2.json: no %s \"%s\" in %s",
				 values[i].key, values[i].value, values[i].a);
	}
	usage = json_object_get(d, "usage");
	json_array_foreach(usage, i, e)
	{
		v = json_object_get(e, "value");
		min_max |= json_object_get(v, "min") &&
			   json_object_get(v, "max");
		unlimited_only |= v && !json_object_get(v, "min");
	}
	assert_true(min_max && unlimited_only);
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_accepted),
		cmocka_unit_test(test_golden_coverage),
		cmocka_unit_test(test_golden_v2_coverage),
		cmocka_unit_test(test_invalid_rejected),
		cmocka_unit_test(test_required_kinds_covered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
