/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The linux-mm "report your usecase" export. Pure: a data document in
 * (built by the read store, see store_read.h), text out. Nothing here does
 * I/O, so the formatting is tested without a server or a database.
 *
 * The data document (also the "json" export format after redaction):
 * {
 *   "generated": <unix s>, "window_days": 30, "catalog_version": 1,
 *   "fleet": {"hosts": n, "hosts_v1": n, "hosts_hybrid": n, "hosts_v2": n,
 *             "hosts_unknown": n,
 *             "coverage": {"hosts": n, "bpf_memory": n, "boot_uncovered": n,
 *                          "records_lost": n, "probe_missing": n}},
 *   (coverage: hosts with coverage facts, all time, and how many of them
 *    have BPF attached to the memory controller, an uncovered boot start,
 *    lost kernel log records, missing probes; optional)
 *   "features": [{
 *     "id", "title", "status", "kernel_version", "commit", "replacement",
 *     "replacement_note" (strings or null),
 *     "hosts_using": n,       hosts that used it in the window
 *     "hosts_v1": n,          denominator: v1 + hybrid hosts reporting
 *     "hosts_all": n,         denominator: all hosts reporting
 *     "uses": n,              uses counted (BPF counters, warnings)
 *     "first_seen", "last_seen": unix s or null,
 *     "kernels": [{"kernel": s, "hosts": n}],
 *     "workloads": [{"process": s, "place": kind, "place_name": s,
 *                    "target": kind, "image": s, "has_image": b,
 *                    "hosts": n, "uses": n}],
 *       (docs/workloads.md: the writer's place and the target cgroup as
 *        the classifier's kinds, "root" ... "other"; place_name "" unless
 *        full_cgroups, image "" unless show_images; has_image: the agent
 *        sent an image, withheld or not; sorted by hosts, then uses)
 *     "by_label": {"key": s, "groups": [{"value": s|null, "hosts": n}]}
 *                             hosts using it per value of the group label
 *                             (only kept with show_labels)
 *     "hosts": [s, ...]       host names (only kept with show_hosts)
 *     "readiness": {"hosts": n}  hosts that lose it on the readiness target
 *     "annotations": [{"workload": s|null, "text": s, "fits": s|null,
 *                      "author": s, "created": n, "intent": s|null,
 *                      "set_by": s|null, "v2_tried": s|null,
 *                      "shortfall": s|null, "team": s|null (only kept
 *                      with show_teams)}]
 *     (the text groups them: export_usecases.h)
 *     "values": {...}         what was written (store_read.h's feature
 *                             "values"); after redaction kept, with its
 *                             "classes" (value_class.h), only with
 *                             show_values, else "values_withheld": true
 *                             when it had a class
 *   }],
 *   "readiness": {"target": s, "title": s, "kernel": s, "hosts": n}
 *                             the export-readiness-target (optional)
 * }
 */
#ifndef TWL_SERVER_EXPORT_H
#define TWL_SERVER_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum twl_export_format {
	TWL_EXPORT_TEXT = 0, /* the email */
	TWL_EXPORT_CSV = 1,
	TWL_EXPORT_JSON = 2,
};

/*
 * What may leave the building (the export goes to a public list). Defaults
 * (all false, NULL): no host names, no cgroup names (a workload's place
 * reduced to its kind), no container images, no host labels, no teams;
 * process names shown. Each is a server setting (export-show-*) the
 * preview states.
 */
struct twl_export_opts {
	bool show_hosts; /* list host names per feature */
	bool full_cgroups; /* name the writer's unit, pod or container */
	bool hide_processes; /* replace process names by "(hidden)" */
	bool show_values; /* the values written (export_values.c) */
	bool show_images; /* name the writers' container images */
	bool show_labels; /* the hosts using a feature by a label's value */
	bool show_teams; /* the teams that own use cases */
	const char *group_label; /* the label key to group by, NULL: none */
	/* only the hosts whose label label_key is label_value; NULL: all */
	const char *label_key, *label_value;
};

/* Most bytes an export may produce; past it the render fails with -E2BIG. */
#define TWL_EXPORT_MAX_BYTES (8u << 20)

/* Width of the email body. */
#define TWL_EXPORT_WIDTH 72

/*
 * twl_export_parse_format - "text" (or NULL), "csv", "json" -> *@fmt.
 * Returns 0 or -EINVAL.
 */
int twl_export_parse_format(const char *s, enum twl_export_format *fmt);

/*
 * twl_export_redact - a new document from @data with @opts applied:
 * without show_hosts the "hosts" arrays are removed; without full_cgroups
 * workloads lose their place's name, without show_images their image,
 * without show_labels "by_label" goes, without show_teams every
 * annotation's "team", and a label filter's "label" (the store's
 * "KEY=VALUE") becomes "(withheld)"; with hide_processes process names
 * become "(hidden)". Workloads that became equal are merged (uses added, hosts:
 * the largest, since the store counted distinct hosts per group) and
 * sorted by hosts, then uses. "redaction" states every setting. Returns a
 * new reference or NULL (errno EINVAL for a malformed @data, ENOMEM).
 */
json_t *twl_export_redact(const json_t *data,
			  const struct twl_export_opts *opts);

/*
 * twl_export_redact_values - redaction of feature @feat's "values"
 * (export_values.c): with @opts->show_values its "classes" are added
 * (process names "(hidden)" first with hide_processes), else the member
 * goes and "values_withheld" is set when it had a class. 0, -EINVAL
 * (malformed values), -ENOMEM.
 */
int twl_export_redact_values(json_t *feat, const struct twl_export_opts *opts);

/*
 * twl_export_render - render @data (already redacted: call
 * twl_export_redact() first) as @fmt into a new NUL-terminated buffer
 * *@out (free() it) of *@len bytes. Text: an email with Subject:, To:
 * linux-mm@kvack.org, Cc: cgroups@vger.kernel.org and a body wrapped at
 * TWL_EXPORT_WIDTH columns; control characters and invalid UTF-8 in
 * strings are shown escaped. CSV: RFC 4180, one row per feature, cells
 * that a spreadsheet would run as formulas prefixed with '. Returns 0,
 * -EINVAL (malformed @data), -E2BIG (over TWL_EXPORT_MAX_BYTES), -ENOMEM.
 */
int twl_export_render(const json_t *data, enum twl_export_format fmt,
		      char **out, size_t *len);

/*
 * twl_export_wrap - append @text to @b word-wrapped at @width columns
 * (UTF-8 code points), first line prefixed by @first, others by @rest
 * (both counted in the width; may be ""). Words longer than a line are
 * broken. Control characters become "\xNN", invalid UTF-8 bytes "\xNN".
 * Every line ends in "\n". Returns 0 or a negative errno from twl_buf.
 */
struct twl_buf;
int twl_export_wrap(struct twl_buf *b, const char *text, const char *first,
		    const char *rest, unsigned width);

/*
 * twl_export_values_text - append a redacted feature @f's value classes to
 * @b ("  Values written:" and one item each), or the line saying they
 * were withheld (export-show-values); nothing when it has neither.
 * Returns 0 or a negative errno from twl_buf.
 */
int twl_export_values_text(struct twl_buf *b, const json_t *f);

/*
 * twl_export_fits_summary - "yes for 2, partly for 1 (of 3 annotated use
 * cases)" from the annotations @anns' "fits" members, or "not assessed by
 * any annotated use case", into @out (@cap bytes, truncated to fit).
 */
void twl_export_fits_summary(const json_t *anns, char *out, size_t cap);

/*
 * twl_export_csv - append the CSV of redacted export data @data to @b:
 * a header row and one row per feature, the columns docs/api.md lists
 * (lists joined with "; "; the use cases' structured fields counted and
 * listed per feature; the value classes, or that they were withheld).
 * Returns 0, -EINVAL (a feature not an object) or a twl_buf error.
 */
int twl_export_csv(const json_t *data, struct twl_buf *b);

/*
 * twl_export_list_of - the mailing list reports about catalog feature @id
 * go to: the first To address of its catalog route (derived from the
 * kernel's MAINTAINERS, see schema/catalog.md), or NULL for an id the
 * catalog lacks or a feature without a route.
 */
const char *twl_export_list_of(const char *id);

/*
 * twl_export_body - append to @b the text export's body (no header lines)
 * for the features that go to @list (twl_export_list_of()), or for every
 * feature when @list is NULL: an introduction, one section per feature in
 * use, the features of @list not seen in use, a closing note. @data is
 * redacted already. Returns 0, -EINVAL (malformed @data) or a negative
 * errno from twl_buf (-E2BIG past its cap).
 */
int twl_export_body(const json_t *data, const char *list, struct twl_buf *b);

/*
 * One message per mailing list (twl_export_messages()): @eml a complete
 * RFC 5322 message (CRLF line ends, headers ASCII with RFC 2047 words where
 * a value is not, every stored string escaped so no header can be added
 * or cut), @body the same body with LF line ends for pasting into a mail
 * client. @name is @list made safe as a file name stem.
 */
struct twl_export_message {
	char *list, *name, *subject;
	char *eml, *body;
	size_t eml_len, body_len;
};

/* Most bytes of a Subject's value (features past it are counted). */
#define TWL_EXPORT_SUBJECT_MAX 160

/* The From used when no sender is configured: an address that cannot
 * be delivered, for the admin to replace in the mail client. */
#define TWL_EXPORT_FROM_PLACEHOLDER "Your Name <you@example.invalid>"

/*
 * twl_export_messages - the export of @data (redacted already) as one
 * message per mailing list that has a feature in use, in the order the
 * catalog's routes name the lists: To the list, Cc every other address of
 * the routes of those features, Subject naming those features (bounded by
 * TWL_EXPORT_SUBJECT_MAX), Date from data's "generated", From @from (NULL:
 * TWL_EXPORT_FROM_PLACEHOLDER), In-Reply-To the upstream thread most of
 * those features belong to and References every Message-ID their catalog
 * entries name (that thread's cover letter first). Lists with nothing in
 * use get no message; *@n may be 0. Free with twl_export_messages_free().
 * Returns 0, -EINVAL (malformed @data), -E2BIG, -ENOMEM.
 */
int twl_export_messages(const json_t *data, const char *from,
			struct twl_export_message **out, size_t *n);

/*
 * twl_export_file_stem - @list's address as a file name: a new string
 * (free() it) of its bytes with every one outside [A-Za-z0-9@._-] and a
 * leading '.' made '_'; NULL with errno ENOMEM.
 */
char *twl_export_file_stem(const char *list);

/* twl_export_messages_free - free @n messages at @m (NULL-safe). */
void twl_export_messages_free(struct twl_export_message *m, size_t n);

/*
 * twl_export_cli - the "twilight-server export" subcommand (export_cli.c):
 * argv[0] is "export"; options --feature ID, --format text|csv|json,
 * --days N, --show-hosts/--hide-hosts, --full-cgroups/--cgroup-kinds,
 * --show-images, --show-labels, --show-teams, --hide-processes, --output
 * FILE (default stdout), --out-dir DIR (one .eml and one .txt per mailing
 * list, twl_export_messages()) with --from ADDR, plus the server's own
 * options (--data-dir, --db, --config) to find the database, the export
 * privacy defaults (export-show-*), the group label and the readiness
 * target. States the redaction settings on standard error; an
 * export-readiness-target that names no target is an error. Returns a
 * process exit status (0 ok, 1 error, 2 usage).
 */
int twl_export_cli(int argc, char **argv);

#endif /* TWL_SERVER_EXPORT_H */
