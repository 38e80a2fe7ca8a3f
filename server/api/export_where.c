// SPDX-License-Identifier: GPL-2.0
/*
 * The export's "where and who" (export_where.h): workload rows as
 * docs/workloads.md defines a workload, hosts by label, the readiness
 * line, and the note of what the redaction withheld. Pure: no I/O.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/export_json.h"
#include "api/export_where.h"

/* Contract: see export_where.h. */
int twl_export_wrapf(struct twl_buf *b, const char *first, const char *rest,
		     const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return twl_export_wrap(b, line, first, rest, TWL_EXPORT_WIDTH);
}

/* ---- redaction ------------------------------------------------------ */

/* Whether workloads @a and @b are one after redaction. */
static bool same_workload(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "process", "place", "place_name",
					    "target", "image" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(str_or(a, keys[i], ""), str_or(b, keys[i], "")))
			return false;
	return true;
}

/* Most hosts first, then most uses, then by name: a total order. */
static int by_hosts_uses(const void *pa, const void *pb)
{
	const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	json_int_t d = int_of(b, "hosts") - int_of(a, "hosts");

	if (!d)
		d = int_of(b, "uses") - int_of(a, "uses");
	if (d)
		return d < 0 ? -1 : 1;
	return strcmp(str_or(a, "process", ""), str_or(b, "process", ""));
}

/* @w redacted as @opts says: a new object, or NULL. */
static json_t *redact_one(const json_t *w, const struct twl_export_opts *opts)
{
	const char *image = str_or(w, "image", "");

	return json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:I}", "process",
		opts->hide_processes ? "(hidden)" : str_or(w, "process", ""),
		"place", str_or(w, "place", "other"), "place_name",
		opts->full_cgroups ? str_or(w, "place_name", "") : "", "target",
		str_or(w, "target", "other"), "image",
		opts->show_images ? image : "", "has_image",
		image[0] || json_is_true(json_object_get(w, "has_image")),
		"hosts", int_of(w, "hosts"), "uses", int_of(w, "uses"));
}

/* Merge @w into the equal row of @rows[0..*n), or append it. */
static void merge_row(json_t **rows, size_t *n, json_t *w)
{
	size_t i;

	for (i = 0; i < *n && !same_workload(rows[i], w); i++)
		;
	if (i == *n) {
		rows[(*n)++] = w;
		return;
	}
	json_object_set_new(
		rows[i], "uses",
		json_integer(int_of(rows[i], "uses") + int_of(w, "uses")));
	if (int_of(w, "hosts") > int_of(rows[i], "hosts"))
		json_object_set_new(rows[i], "hosts",
				    json_integer(int_of(w, "hosts")));
	if (json_is_true(json_object_get(w, "has_image")))
		json_object_set_new(rows[i], "has_image", json_true());
	json_decref(w);
}

static int redact_workloads(json_t *feat, const struct twl_export_opts *opts)
{
	json_t *in = json_object_get(feat, "workloads"), *out, *w, **rows;
	size_t i, n = 0;
	int rc = 0;

	if (!in)
		return 0;
	if (!json_is_array(in))
		return -EINVAL;
	rows = calloc(json_array_size(in) + 1, sizeof(*rows));
	out = json_array();
	if (!rows || !out) {
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(in, i, w)
	{
		json_t *r = json_is_object(w) ? redact_one(w, opts) : NULL;

		if (!r) {
			rc = json_is_object(w) ? -ENOMEM : -EINVAL;
			goto out;
		}
		merge_row(rows, &n, r);
	}
	qsort(rows, n, sizeof(*rows), by_hosts_uses);
	for (i = 0; i < n; i++) {
		w = rows[i];
		rows[i] = NULL;
		if (json_array_append_new(out, w))
			rc = -ENOMEM;
	}
	if (!rc && json_object_set(feat, "workloads", out))
		rc = -ENOMEM;
out:
	for (i = 0; rows && i < n; i++)
		json_decref(rows[i]);
	free(rows);
	json_decref(out);
	return rc;
}

/* Contract: see export_where.h. */
int twl_export_redact_where(json_t *feat, const struct twl_export_opts *opts)
{
	json_t *a;
	size_t i;

	if (!opts->show_labels)
		json_object_del(feat, "by_label");
	if (!opts->show_teams)
		json_array_foreach(json_object_get(feat, "annotations"), i, a)
			json_object_del(a, "team");
	return redact_workloads(feat, opts);
}

/* The settings, in the order the note names them. */
static const struct {
	const char *key, *setting, *what;
} settings[] = {
	{ "show_hosts", "export-show-hosts", "host names" },
	{ "full_cgroups", "export-show-cgroups", "cgroup names" },
	{ "show_images", "export-show-images", "container images" },
	{ "show_labels", "export-show-labels", "host labels" },
	{ "show_teams", "export-show-teams", "teams" },
	{ "show_values", "export-show-values", "values written" },
};

/* Contract: see export_where.h. */
json_t *twl_export_redaction(const struct twl_export_opts *opts)
{
	return json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "show_hosts",
			 opts->show_hosts, "full_cgroups", opts->full_cgroups,
			 "hide_processes", opts->hide_processes, "show_images",
			 opts->show_images, "show_labels", opts->show_labels,
			 "show_teams", opts->show_teams, "show_values",
			 opts->show_values);
}

/* ---- text ----------------------------------------------------------- */

/* A kind of cgroup (the classifier's) as the place a writer runs in. */
static const char *place_words(const char *kind)
{
	static const char *const words[][2] = {
		{ "root", "the root cgroup" },
		{ "kubernetes", "a kubernetes pod" },
		{ "docker", "a docker container" },
		{ "container", "a container" },
		{ "systemd_unit", "a systemd unit" },
		{ "systemd_slice", "a systemd slice" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(kind, words[i][0]))
			return words[i][1];
	return "another cgroup";
}

/* A kind of cgroup as the cgroups a writer used. */
static const char *target_words(const char *kind)
{
	static const char *const words[][2] = {
		{ "root", "the root cgroup" },
		{ "kubernetes", "kubernetes pod cgroups" },
		{ "docker", "docker container cgroups" },
		{ "container", "container cgroups" },
		{ "systemd_unit", "systemd unit cgroups" },
		{ "systemd_slice", "systemd slice cgroups" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(kind, words[i][0]))
			return words[i][1];
	return "other cgroups";
}

/* Contract: see export_where.h. */
char *twl_export_workload_text(const json_t *w, char *out, size_t cap)
{
	const char *name = str_or(w, "place_name", "");
	const char *image = str_or(w, "image", "");
	bool withheld = !image[0] &&
			json_is_true(json_object_get(w, "has_image"));
	bool paren = name[0] || image[0] || withheld;

	snprintf(out, cap, "%s in %s%s%s%s%s%s%s, on %s",
		 str_or(w, "process", "?"), place_words(str_or(w, "place", "")),
		 paren ? " (" : "", name,
		 name[0] && (image[0] || withheld) ? ", " : "",
		 image[0] ? "image " :
		 withheld ? "image withheld" :
			    "",
		 image, paren ? ")" : "",
		 target_words(str_or(w, "target", "")));
	return out;
}

/* "Hosts using it by team: payments 3, without the label 1". */
static int text_by_label(struct twl_buf *b, const json_t *bl)
{
	struct twl_buf line;
	json_t *g;
	size_t i;
	int rc = 0;

	if (!json_array_size(json_object_get(bl, "groups")))
		return 0;
	twl_buf_init(&line, 4096);
	json_array_foreach(json_object_get(bl, "groups"), i, g)
	{
		const char *v = json_string_value(json_object_get(g, "value"));

		TRY(twl_buf_printf(&line, "%s%s%s %" JSON_INTEGER_FORMAT,
				   i ? ", " : "", v ? "" : "without the label",
				   v ? v : "", int_of(g, "hosts")));
	}
	TRY(twl_export_wrapf(b, "  ", "    ", "Hosts using it by %s: %s",
			     str_or(bl, "key", "?"), line.data));
out:
	twl_buf_fini(&line);
	return rc;
}

/*
 * A feature's readiness line: the hosts that lose it, and of them those
 * that only read it, so the reader can tell them from the hosts using it.
 */
static int text_readiness(struct twl_buf *b, const json_t *r)
{
	json_int_t n = int_of(r, "hosts"), ro = int_of(r, "reading_only");

	if (!ro)
		return twl_export_wrapf(b, "  ", "    ",
					"%" JSON_INTEGER_FORMAT
					" of our hosts will lose this with our"
					" distribution's next kernel.",
					n);
	return twl_export_wrapf(
		b, "  ", "    ",
		"%" JSON_INTEGER_FORMAT " of our hosts will lose this with our"
		" distribution's next kernel (%" JSON_INTEGER_FORMAT
		" of them only read%s it, as monitoring does).",
		n, ro, ro == 1 ? "s" : "");
}

/* Contract: see export_where.h. */
int twl_export_text_workloads(struct twl_buf *b, const json_t *f)
{
	static const char head[] = "  Workloads (process, where it runs,"
				   " the kind of cgroup it used):\n";
	json_t *arr = json_object_get(f, "workloads"), *x;
	char phrase[1024];
	size_t i;
	int rc = 0;

	if (json_array_size(arr))
		TRY(twl_buf_append(b, head, sizeof(head) - 1));
	json_array_foreach(arr, i, x) TRY(twl_export_wrapf(
		b, "    - ", "      ",
		"%s: %" JSON_INTEGER_FORMAT " host%s, %" JSON_INTEGER_FORMAT
		" use%s",
		twl_export_workload_text(x, phrase, sizeof(phrase)),
		int_of(x, "hosts"), int_of(x, "hosts") == 1 ? "" : "s",
		int_of(x, "uses"), int_of(x, "uses") == 1 ? "" : "s"));
	if (json_is_object(json_object_get(f, "by_label")))
		TRY(text_by_label(b, json_object_get(f, "by_label")));
	x = json_object_get(f, "readiness");
	if (json_is_object(x))
		TRY(text_readiness(b, x));
out:
	return rc;
}

/* Contract: see export_where.h. */
int twl_export_text_fleet_readiness(struct twl_buf *b, const json_t *data)
{
	const json_t *r = json_object_get(data, "readiness");
	int rc = 0;

	if (!json_is_object(r))
		return 0;
	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_wrapf(
		b, "", "",
		"%" JSON_INTEGER_FORMAT " of our hosts will lose a cgroup v1 "
		"interface they use with our distribution's next kernel (%s%s%s; "
		"per feature below).",
		int_of(r, "hosts"), str_or(r, "target", "?"),
		json_string_value(json_object_get(r, "kernel")) ? ", Linux " :
								  "",
		str_or(r, "kernel", "")));
out:
	return rc;
}

/* Contract: see export_where.h. */
int twl_export_text_withheld(struct twl_buf *b, const json_t *data)
{
	const json_t *red = json_object_get(data, "redaction");
	struct twl_buf off, on;
	size_t i;
	int rc = 0;

	twl_buf_init(&off, 1024);
	twl_buf_init(&on, 1024);
	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		bool shown =
			json_is_true(json_object_get(red, settings[i].key));
		struct twl_buf *to = shown ? &on : &off;

		TRY(twl_buf_printf(to, "%s%s (%s)", to->len ? ", " : "",
				   settings[i].what, settings[i].setting));
	}
	if (off.len)
		TRY(twl_export_wrapf(
			b, "", "", "Withheld from this report: %s.", off.data));
	if (on.len)
		TRY(twl_export_wrapf(b, "", "",
				     "Shown by the sender's choice: %s.",
				     on.data));
	if (json_is_true(json_object_get(red, "hide_processes")))
		TRY(twl_export_wrapf(b, "", "", "Process names are hidden."));
out:
	twl_buf_fini(&off);
	twl_buf_fini(&on);
	return rc;
}
