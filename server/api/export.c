// SPDX-License-Identifier: GPL-2.0
/*
 * linux-mm export: redaction and rendering (text email, JSON; CSV in
 * export_csv.c) of the export data document described in export.h. Pure:
 * no I/O.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <twilight/util.h>

#include "api/escape.h"
#include "api/export_json.h"
#include "api/export.h"
#include "api/export_kinds.h"
#include "api/export_usecases.h"
#include "api/export_where.h"

int twl_export_parse_format(const char *s, enum twl_export_format *fmt)
{
	if (!s || !strcmp(s, "text"))
		*fmt = TWL_EXPORT_TEXT;
	else if (!strcmp(s, "csv"))
		*fmt = TWL_EXPORT_CSV;
	else if (!strcmp(s, "json"))
		*fmt = TWL_EXPORT_JSON;
	else
		return -EINVAL;
	return 0;
}

/* ---- redaction ---------------------------------------------------- */

/* A label filter's label without export-show-labels. */
#define LABEL_WITHHELD "(withheld)"

json_t *twl_export_redact(const json_t *data,
			  const struct twl_export_opts *opts)
{
	struct twl_export_opts none = { 0 };
	json_t *copy, *feats, *f;
	size_t i;
	int rc;

	if (!opts)
		opts = &none;
	if (!json_is_object(data) ||
	    !json_is_array(json_object_get(data, "features"))) {
		errno = EINVAL;
		return NULL;
	}
	copy = json_deep_copy(data);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	feats = json_object_get(copy, "features");
	json_array_foreach(feats, i, f)
	{
		if (!json_is_object(f)) {
			json_decref(copy);
			errno = EINVAL;
			return NULL;
		}
		if (!opts->show_hosts)
			json_object_del(f, "hosts");
		rc = twl_export_redact_where(f, opts);
		if (!rc)
			rc = twl_export_redact_values(f, opts);
		if (rc) {
			json_decref(copy);
			errno = -rc;
			return NULL;
		}
	}
	/* the filter's label is a host label too */
	if (json_is_string(json_object_get(copy, "label")) &&
	    !opts->show_labels &&
	    json_object_set_new(copy, "label", json_string(LABEL_WITHHELD))) {
		json_decref(copy);
		errno = ENOMEM;
		return NULL;
	}
	if (json_object_set_new(copy, "redaction",
				twl_export_redaction(opts))) {
		json_decref(copy);
		errno = ENOMEM;
		return NULL;
	}
	return copy;
}

/* ---- text helpers -------------------------------------------------- */

/*
 * Sanitise @in into tokens: a word is a run of non-space units, each unit
 * either a printable UTF-8 character (1 column), an escape "\xNN" (4
 * columns) for a control byte or an invalid byte, or "\uXXXX" (6
 * columns) for a character that steers a terminal or the direction of
 * text (controlled(), below). Whitespace (space, tab, CR, LF) separates
 * words.
 */
struct word {
	const char *p; /* start in the input */
	size_t len; /* bytes in the input */
};

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

static size_t utf8_cols(const char *s)
{
	size_t cols = 0, n = strlen(s), in, bl;
	char tmp[TWL_ESCAPE_UNIT_MAX];

	while (n) {
		cols += twl_escape_unit((const unsigned char *)s, n, &in, tmp,
					&bl);
		s += in;
		n -= in;
	}
	return cols;
}

int twl_export_wrap(struct twl_buf *b, const char *text, const char *first,
		    const char *rest, unsigned width)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t n = strlen((const char *)s);
	const char *prefix = first ? first : "";
	size_t col, pcols;
	bool line_has_word = false;
	int rc;

	rest = rest ? rest : "";
	pcols = utf8_cols(prefix);
	rc = twl_buf_append(b, prefix, strlen(prefix));
	if (rc)
		return rc;
	col = pcols;
	while (n) {
		const unsigned char *w;
		size_t wn, wcols = 0, k, in, bl;
		char tmp[TWL_ESCAPE_UNIT_MAX];

		while (n && is_space(*s))
			s++, n--;
		if (!n)
			break;
		w = s;
		for (wn = 0; wn < n && !is_space(w[wn]); wn += in)
			wcols += twl_escape_unit(w + wn, n - wn, &in, tmp, &bl);
		/* Start a new line when the word does not fit on this one. */
		if (line_has_word && col + 1 + wcols > width) {
			rc = twl_buf_append(b, "\n", 1);
			if (!rc)
				rc = twl_buf_append(b, rest, strlen(rest));
			if (rc)
				return rc;
			col = utf8_cols(rest);
			line_has_word = false;
		} else if (line_has_word) {
			rc = twl_buf_append(b, " ", 1);
			if (rc)
				return rc;
			col++;
		}
		/* Emit the word, breaking it where it is wider than a line. */
		for (k = 0; k < wn; k += in) {
			unsigned c =
				twl_escape_unit(w + k, wn - k, &in, tmp, &bl);

			if (col + c > width && col > utf8_cols(rest) &&
			    (line_has_word || k)) {
				rc = twl_buf_append(b, "\n", 1);
				if (!rc)
					rc = twl_buf_append(b, rest,
							    strlen(rest));
				if (rc)
					return rc;
				col = utf8_cols(rest);
			}
			rc = twl_buf_append(b, tmp, bl);
			if (rc)
				return rc;
			col += c;
		}
		line_has_word = true;
		s += wn;
		n -= wn;
	}
	return twl_buf_append(b, "\n", 1);
}

static void fmt_date(int64_t t, char *out, size_t cap)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !gmtime_r(&tt, &tm)) {
		snprintf(out, cap, "unknown");
		return;
	}
	strftime(out, cap, "%Y-%m-%d", &tm);
}

static void fmt_share(json_int_t num, json_int_t den, char *out, size_t cap)
{
	if (den <= 0) {
		snprintf(out, cap, "n/a");
		return;
	}
	/* One decimal, computed in integers so output is exact and stable. */
	json_int_t permille = (num * 1000 + den / 2) / den;

	snprintf(out, cap,
		 "%" JSON_INTEGER_FORMAT ".%" JSON_INTEGER_FORMAT "%%",
		 permille / 10, permille % 10);
}

/* Whether feature @f goes to @list (NULL: every list). */
static bool feature_on_list(const json_t *f, const char *list)
{
	const char *to;

	if (!list)
		return true;
	to = twl_export_list_of(str_or(f, "id", ""));
	return to && !strcmp(to, list);
}

/* "yes for 2 use cases, no for 1" from the annotations' fits values. */
/* Contract: see export.h. */
void twl_export_fits_summary(const json_t *anns, char *out, size_t cap)
{
	size_t i, yes = 0, no = 0, partial = 0, pos;
	static const char *const names[] = { "yes", "partly", "no" };
	size_t counts[3];
	json_t *a;

	json_array_foreach(anns, i, a)
	{
		const char *f = str_or(a, "fits", "");

		if (!strcmp(f, "yes"))
			yes++;
		else if (!strcmp(f, "no"))
			no++;
		else if (!strcmp(f, "partial"))
			partial++;
	}
	if (!yes && !no && !partial) {
		snprintf(out, cap, "not assessed by any annotated use case");
		return;
	}
	counts[0] = yes;
	counts[1] = partial;
	counts[2] = no;
	pos = 0;
	for (i = 0; i < 3; i++) {
		if (!counts[i])
			continue;
		pos += snprintf(out + pos, cap - pos, "%s%s for %zu",
				pos ? ", " : "", names[i], counts[i]);
		if (pos >= cap)
			return;
	}
	snprintf(out + pos, cap - pos, " (of %zu annotated use case%s)",
		 yes + partial + no, yes + partial + no == 1 ? "" : "s");
}

/* A used feature's heading: name, upstream status, hosts and uses. */
static int text_feature_head(struct twl_buf *b, const json_t *f)
{
	char s1[32], s2[32], d1[16], d2[16];
	json_int_t using = int_of(f, "hosts_using");
	int rc = 0;

	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_wrapf(b, "", "  ", "%s: %s", str_or(f, "id", "?"),
			     str_or(f, "title", "")));
	TRY(twl_export_wrapf(
		b, "  ", "    ", "Upstream status: %s%s%s%s%s%s",
		str_or(f, "status", "unknown"),
		json_string_value(json_object_get(f, "kernel_version")) ?
			", since " :
			"",
		str_or(f, "kernel_version", ""),
		json_string_value(json_object_get(f, "commit")) ? " (commit " :
								  "",
		str_or(f, "commit", ""),
		json_string_value(json_object_get(f, "commit")) ? ")" : ""));
	fmt_share(using, int_of(f, "hosts_v1"), s1, sizeof(s1));
	fmt_share(using, int_of(f, "hosts_all"), s2, sizeof(s2));
	TRY(twl_export_wrapf(b, "  ", "    ",
			     "Hosts using it: %" JSON_INTEGER_FORMAT
			     " of %" JSON_INTEGER_FORMAT
			     " cgroup v1/hybrid hosts (%s)",
			     using, int_of(f, "hosts_v1"), s1));
	TRY(twl_export_wrapf(b, "  ", "    ",
			     "Share of all hosts: %" JSON_INTEGER_FORMAT
			     " of %" JSON_INTEGER_FORMAT " (%s)",
			     using, int_of(f, "hosts_all"), s2));
	fmt_date(int_of(f, "first_seen"), d1, sizeof(d1));
	fmt_date(int_of(f, "last_seen"), d2, sizeof(d2));
	TRY(twl_export_wrapf(b, "  ", "    ",
			     "Uses counted: %" JSON_INTEGER_FORMAT
			     " (first seen %s, last seen %s)",
			     int_of(f, "uses"), d1, d2));
out:
	return rc;
}

/* Where a feature is used: kernel versions, workloads, hosts. */
static int text_feature_where(struct twl_buf *b, const json_t *f)
{
	json_t *arr, *x;
	size_t i;
	int rc = 0;

	arr = json_object_get(f, "kernels");
	if (json_array_size(arr)) {
		TRY(twl_buf_append(b, "  Kernel versions:\n", 19));
		json_array_foreach(arr, i, x) TRY(twl_export_wrapf(
			b, "    - ", "      ",
			"%s: %" JSON_INTEGER_FORMAT " host%s",
			str_or(x, "kernel", "?"), int_of(x, "hosts"),
			int_of(x, "hosts") == 1 ? "" : "s"));
	}
	TRY(twl_export_text_workloads(b, f));
	arr = json_object_get(f, "hosts");
	if (json_array_size(arr)) {
		TRY(twl_buf_append(b, "  Hosts:\n", 9));
		json_array_foreach(arr, i, x) TRY(twl_export_wrapf(
			b, "    - ", "      ", "%s",
			json_string_value(x) ? json_string_value(x) : "?"));
	}
out:
	return rc;
}

/* The cgroup v2 replacement, whether it fits, and the use cases told. */
static int text_feature_use_cases(struct twl_buf *b, const json_t *f)
{
	json_t *arr;
	char fits[128];
	int rc = 0;

	TRY(twl_export_wrapf(b, "  ", "    ", "cgroup v2 replacement: %s",
			     str_or(f, "replacement", "none known")));
	if (json_string_value(json_object_get(f, "replacement_note")))
		TRY(twl_export_wrapf(b, "    ", "    ", "%s",
				     str_or(f, "replacement_note", "")));
	arr = json_object_get(f, "annotations");
	twl_export_fits_summary(arr, fits, sizeof(fits));
	TRY(twl_export_wrapf(b, "  ", "    ", "Does the replacement fit: %s",
			     fits));
	rc = twl_export_use_cases(b, f);
out:
	return rc;
}

/*
 * What the counts could see, when the data says (fleet.coverage): BPF on
 * the memory controller, else a kernel log, else neither (the census the
 * only evidence of some of those), then what was lost on the way.
 */
static int text_coverage(struct twl_buf *b, const json_t *cov)
{
	json_int_t hosts = int_of(cov, "hosts"),
		   bpf = int_of(cov, "bpf_memory"),
		   blind = int_of(cov, "unmeasured"), log = hosts - bpf - blind;
	int rc = 0;

	if (!json_is_object(cov))
		return 0;
	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_wrapf(
		b, "", "",
		"Coverage, from the latest report of each of the %" JSON_INTEGER_FORMAT
		" hosts that sent one: BPF counters attached to the memory "
		"controller on %" JSON_INTEGER_FORMAT
		", kernel log only on %" JSON_INTEGER_FORMAT
		", neither on %" JSON_INTEGER_FORMAT
		" (census only on %" JSON_INTEGER_FORMAT
		"); boot start not covered by a log source on %" JSON_INTEGER_FORMAT
		"; kernel log records lost on %" JSON_INTEGER_FORMAT
		"; BPF probes missing on %" JSON_INTEGER_FORMAT
		"; BPF map full (counts lost) on %" JSON_INTEGER_FORMAT
		". BPF counts memory controller files only: cpuset, freezer, "
		"blkio and cgroup core features are seen through kernel "
		"warnings alone.",
		hosts, bpf, log > 0 ? log : 0, blind,
		int_of(cov, "census_only"), int_of(cov, "boot_uncovered"),
		int_of(cov, "records_lost"), int_of(cov, "probe_missing"),
		int_of(cov, "map_overflow")));
out:
	return rc;
}

/* The part of the fleet a label filter counted, when it did. */
static int text_label(struct twl_buf *b, const char *label)
{
	if (!label)
		return 0;
	if (!strcmp(label, LABEL_WITHHELD))
		return twl_export_wrapf(
			b, "", "",
			"Only a part of our fleet is counted here: the hosts "
			"carrying one operator label (withheld).");
	return twl_export_wrapf(b, "", "",
				"Only a part of our fleet is counted here: the "
				"hosts labelled %s.",
				label);
}

/* The opening paragraphs: what this is, the window, the fleet. */
static int text_intro(struct twl_buf *b, const json_t *data, const char *list)
{
	json_t *fleet = json_object_get(data, "fleet");
	char date[16];
	int rc = 0;

	fmt_date(int_of(data, "generated"), date, sizeof(date));
	TRY(twl_export_wrapf(b, "", "", "Hello,"));
	TRY(twl_buf_append(b, "\n", 1));
	if (list)
		TRY(twl_export_wrapf(
			b, "", "",
			"The kernel asks users of deprecated cgroup v1 features to report "
			"their use case upstream. This report counts the use of the features "
			"whose maintainers read %s on our fleet over the %" JSON_INTEGER_FORMAT
			" days to %s, as measured by twilight (kernel log warnings and BPF "
			"counters of control-file accesses).",
			list, int_of(data, "window_days"), date));
	else
		TRY(twl_export_wrapf(
			b, "", "",
			"The kernel asks users of deprecated cgroup v1 features to report "
			"their use case to linux-mm@kvack.org. This report counts the use of "
			"these features on our fleet over the %" JSON_INTEGER_FORMAT
			" days to %s, as measured by twilight (kernel log warnings and BPF "
			"counters of control-file accesses).",
			int_of(data, "window_days"), date));
	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_wrapf(
		b, "", "",
		"Fleet: %" JSON_INTEGER_FORMAT
		" hosts reporting; cgroup v1: %" JSON_INTEGER_FORMAT
		", hybrid: %" JSON_INTEGER_FORMAT ", v2: %" JSON_INTEGER_FORMAT
		", unknown: %" JSON_INTEGER_FORMAT ".",
		int_of(fleet, "hosts"), int_of(fleet, "hosts_v1"),
		int_of(fleet, "hosts_hybrid"), int_of(fleet, "hosts_v2"),
		int_of(fleet, "hosts_unknown")));
	TRY(text_label(b, json_string_value(json_object_get(data, "label"))));
	TRY(text_coverage(b, json_object_get(fleet, "coverage")));
	TRY(twl_export_text_fleet_readiness(b, data));
out:
	return rc;
}

int twl_export_body(const json_t *data, const char *list, struct twl_buf *b)
{
	json_t *feats = json_object_get(data, "features");
	json_t *f;
	size_t i;
	int rc = 0;

	if (!json_is_array(feats))
		return -EINVAL;
	TRY(text_intro(b, data, list));
	json_array_foreach(feats, i, f)
	{
		if (!json_is_object(f)) {
			rc = -EINVAL;
			goto out;
		}
		if (!twl_export_feature_used(f) || !feature_on_list(f, list))
			continue;
		TRY(text_feature_head(b, f));
		TRY(twl_export_text_kinds(b, f));
		TRY(text_feature_where(b, f));
		TRY(twl_export_values_text(b, f));
		TRY(text_feature_use_cases(b, f));
	}
	TRY(twl_export_text_unused(b, data, list, feature_on_list));
	TRY(twl_buf_append(b, "\n", 1));
	TRY(twl_export_text_withheld(b, data));
	TRY(twl_export_wrapf(
		b, "", "",
		"Generated by twilight; nothing was sent automatically."));
out:
	return rc;
}

/* The one text of every feature: headers as plain lines, then the body. */
static int render_text(const json_t *data, struct twl_buf *b)
{
	json_t *feats = json_object_get(data, "features");
	json_t *fleet = json_object_get(data, "fleet");
	json_t *f;
	size_t i, n_used = 0, n_unused = 0;
	int rc = 0;

	json_array_foreach(feats, i, f) twl_export_feature_used(f) ? n_used++ :
								     n_unused++;
	TRY(twl_buf_printf(
		b,
		"Subject: cgroup v1 deprecated features in use: %zu of %zu on %" JSON_INTEGER_FORMAT
		" hosts\n",
		n_used, n_used + n_unused, int_of(fleet, "hosts")));
	TRY(twl_buf_printf(b, "To: linux-mm@kvack.org\n"
			      "Cc: cgroups@vger.kernel.org\n"
			      "Content-Type: text/plain; charset=utf-8\n\n"));
	TRY(twl_export_body(data, NULL, b));
out:
	return rc;
}

int twl_export_render(const json_t *data, enum twl_export_format fmt,
		      char **out, size_t *len)
{
	struct twl_buf b;
	char *s;
	int rc;

	*out = NULL;
	if (len)
		*len = 0;
	if (!json_is_object(data) ||
	    !json_is_array(json_object_get(data, "features")))
		return -EINVAL;
	if (fmt == TWL_EXPORT_JSON) {
		s = json_dumps(data, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (!s)
			return -ENOMEM;
		if (strlen(s) > TWL_EXPORT_MAX_BYTES) {
			free(s);
			return -E2BIG;
		}
		*out = s;
		if (len)
			*len = strlen(s);
		return 0;
	}
	twl_buf_init(&b, TWL_EXPORT_MAX_BYTES);
	rc = fmt == TWL_EXPORT_CSV ? twl_export_csv(data, &b) :
				     render_text(data, &b);
	if (!rc)
		rc = twl_buf_append(&b, "", 0);
	if (rc) {
		twl_buf_fini(&b);
		return rc;
	}
	*out = b.data;
	if (len)
		*len = b.len;
	return 0;
}
