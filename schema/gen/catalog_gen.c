// SPDX-License-Identifier: GPL-2.0
/*
 * catalog_gen - validate schema/catalog.json and generate from it the C table
 * compiled into twl_common (twilight_catalog.c) and the SQL seed the server
 * loads (catalog_seed.sql). A build-time host tool: any problem in the data
 * file stops the build with one line naming the record and the field.
 *
 * Usage: catalog_gen CATALOG.json OUT.c OUT.sql
 *
 * The rules checked here are documented in schema/catalog.md.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FIELDS 8 /* TWL_CATALOG_MAX_FIELDS */
#define MAX_FIELD_NAME 15 /* struct twl_match: char name[16] */
#define MIN_KEY_LEN 4 /* the matcher indexes the first 4 bytes */
#define MAX_TEXT 1024 /* TWL_WIRE_MAX_STR */
#define MAX_ID 63
#define MAX_FILE 63

struct gmsg {
	const char *text;
	bool exact;
	int level;
	const char *note;
	size_t n_fields;
	char *lits[MAX_FIELDS + 1];
	size_t lit_lens[MAX_FIELDS + 1];
	char *names[MAX_FIELDS];
	size_t trimmed_len; /* exact: text length without trailing whitespace */
	size_t specificity; /* literal bytes (the matcher's tie-break) */
};

struct gfeat {
	const char *id, *subsystem, *title, *status;
	bool warns;
	const char *kernel_version, *commit, *warn_condition;
	const char *replacement, *replacement_note;
	json_t *files, *event_files; /* borrowed from the document */
	struct gmsg *msgs;
	size_t n_msgs;
};

struct catalog {
	json_t *doc;
	long long version;
	struct gfeat *feats;
	size_t n_feats;
};

static const char *in_path = "catalog.json";

/* One line on stderr naming the file, the record and the problem. */
__attribute__((format(printf, 3, 4))) static int fail(size_t fi, const char *id,
						      const char *fmt, ...)
{
	va_list ap;

	if (fi == (size_t)-1)
		fprintf(stderr, "catalog_gen: %s: ", in_path);
	else
		fprintf(stderr,
			"catalog_gen: %s: features[%zu] (%s): ", in_path, fi,
			id ? id : "no id");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t trim_len(const char *s, size_t n)
{
	while (n > 0 && is_ws(s[n - 1]))
		n--;
	return n;
}

static bool is_lower_ident(const char *s, size_t n)
{
	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* id: "<scope>.<name>", both lowercase identifiers. */
static bool valid_id(const char *s)
{
	const char *dot = strchr(s, '.');

	if (!dot || strlen(s) > MAX_ID)
		return false;
	return is_lower_ident(s, (size_t)(dot - s)) &&
	       is_lower_ident(dot + 1, strlen(dot + 1));
}

/* kernfs control-file name: [a-z0-9_.], at least one dot, no leading dot. */
static bool valid_file(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_FILE || s[0] == '.' || s[n - 1] == '.' ||
	    !strchr(s, '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '.'))
			return false;
	return true;
}

/* "v6.12" or "v6.1.56" */
static bool valid_kver(const char *s)
{
	int parts = 0;

	if (*s++ != 'v')
		return false;
	for (;;) {
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		parts++;
		if (*s == '\0')
			return parts >= 2 && parts <= 3;
		if (*s++ != '.')
			return false;
	}
}

static bool valid_commit(const char *s)
{
	size_t n = strlen(s);

	if (n < 7 || n > 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Every member of @obj must be in the NULL-terminated @allowed list. */
static int check_keys(json_t *obj, const char *const *allowed, size_t fi,
		      const char *id, const char *where)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool ok = false;

		for (const char *const *a = allowed; *a; a++)
			ok = ok || !strcmp(*a, key);
		if (!ok)
			return fail(
				fi, id,
				"%sunknown field \"%s\" (a typo? see schema/catalog.md)",
				where, key);
	}
	return 0;
}

/* Required string member; NULL allowed only when @nullable. */
static int get_str(json_t *obj, const char *key, bool nullable, size_t maxlen,
		   const char **out, size_t fi, const char *id)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return fail(fi, id, "field \"%s\": missing", key);
	if (json_is_null(v) && nullable) {
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return fail(fi, id, "field \"%s\": must be a string%s", key,
			    nullable ? " or null" : "");
	if (json_string_length(v) == 0)
		return fail(fi, id, "field \"%s\": must not be empty%s", key,
			    nullable ? " (use null)" : "");
	if (json_string_length(v) > maxlen)
		return fail(fi, id, "field \"%s\": longer than %zu bytes", key,
			    maxlen);
	*out = json_string_value(v);
	return 0;
}

/*
 * Split a "prefix" template into literals and {name} fields. Literal braces
 * are not allowed; fields must be separated by literal text; the first
 * literal must be at least MIN_KEY_LEN bytes (the matcher's index key).
 */
static int parse_template(struct gmsg *m, size_t fi, const char *id, size_t mi)
{
	const char *s = m->text, *lit = s;
	size_t n = strlen(s);

	m->n_fields = 0;
	for (size_t i = 0; i <= n; i++) {
		if (s[i] == '}')
			return fail(
				fi, id,
				"messages[%zu].text: bad template: '}' without '{' at byte %zu",
				mi, i);
		if (s[i] != '{' && s[i] != '\0')
			continue;
		/* end of a literal */
		size_t k = m->n_fields;
		size_t llen = (size_t)(s + i - lit);

		if (llen == 0 && k == 0)
			return fail(
				fi, id,
				"messages[%zu].text: bad template: must start with literal text",
				mi);
		if (llen == 0 && s[i] == '{')
			return fail(
				fi, id,
				"messages[%zu].text: bad template: two fields without text between them at byte %zu",
				mi, i);
		m->lits[k] = strndup(lit, llen);
		if (!m->lits[k])
			return -ENOMEM;
		m->lit_lens[k] = llen;
		if (s[i] == '\0')
			break;
		/* a field */
		const char *name = s + i + 1, *close = strchr(name, '}'),
			   *open = strchr(name, '{');

		if (!close || (open && open < close))
			return fail(
				fi, id,
				"messages[%zu].text: bad template: '{' at byte %zu is not closed",
				mi, i);
		size_t nlen = (size_t)(close - name);

		if (!is_lower_ident(name, nlen) || nlen > MAX_FIELD_NAME)
			return fail(
				fi, id,
				"messages[%zu].text: bad template: field name \"%.*s\" must be [a-z_][a-z0-9_]*, at most %d bytes",
				mi, (int)nlen, name, MAX_FIELD_NAME);
		if (k == MAX_FIELDS)
			return fail(
				fi, id,
				"messages[%zu].text: bad template: more than %d fields",
				mi, MAX_FIELDS);
		for (size_t j = 0; j < k; j++)
			if (strlen(m->names[j]) == nlen &&
			    !memcmp(m->names[j], name, nlen))
				return fail(
					fi, id,
					"messages[%zu].text: bad template: field \"%s\" appears twice",
					mi, m->names[j]);
		m->names[k] = strndup(name, nlen);
		if (!m->names[k])
			return -ENOMEM;
		m->n_fields++;
		i = (size_t)(close - s);
		lit = close + 1;
	}
	/* The matcher ignores trailing whitespace, so the last literal is trimmed. */
	m->lit_lens[m->n_fields] =
		trim_len(m->lits[m->n_fields], m->lit_lens[m->n_fields]);
	m->lits[m->n_fields][m->lit_lens[m->n_fields]] = '\0';
	if (m->lit_lens[0] < MIN_KEY_LEN)
		return fail(
			fi, id,
			"messages[%zu].text: bad template: literal text before the first field must be at least %d bytes",
			mi, MIN_KEY_LEN);
	m->specificity = 0;
	for (size_t k = 0; k <= m->n_fields; k++)
		m->specificity += m->lit_lens[k];
	return 0;
}

static int parse_message(json_t *jm, struct gmsg *m, size_t fi, const char *id,
			 size_t mi)
{
	static const char *const keys[] = { "text", "match", "level", "note",
					    NULL };
	char where[48];
	json_t *v;
	int err;

	if (!json_is_object(jm))
		return fail(fi, id, "messages[%zu]: must be an object", mi);
	snprintf(where, sizeof(where), "messages[%zu]: ", mi);
	err = check_keys(jm, keys, fi, id, where);
	if (err)
		return err;
	v = json_object_get(jm, "text");
	if (!json_is_string(v) || json_string_length(v) == 0)
		return fail(
			fi, id,
			"messages[%zu].text: missing or not a non-empty string",
			mi);
	if (json_string_length(v) > MAX_TEXT)
		return fail(fi, id, "messages[%zu].text: longer than %d bytes",
			    mi, MAX_TEXT);
	m->text = json_string_value(v);
	v = json_object_get(jm, "match");
	if (!json_is_string(v))
		return fail(
			fi, id,
			"messages[%zu].match: missing or not a string (exact or prefix)",
			mi);
	if (!strcmp(json_string_value(v), "exact"))
		m->exact = true;
	else if (!strcmp(json_string_value(v), "prefix"))
		m->exact = false;
	else
		return fail(
			fi, id,
			"messages[%zu].match: unknown kind \"%s\" (expected exact or prefix)",
			mi, json_string_value(v));
	v = json_object_get(jm, "level");
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 7)
		return fail(
			fi, id,
			"messages[%zu].level: missing or not an integer 0..7 (kmsg level)",
			mi);
	m->level = (int)json_integer_value(v);
	v = json_object_get(jm, "note");
	if (v && (!json_is_string(v) || json_string_length(v) == 0 ||
		  json_string_length(v) > MAX_TEXT))
		return fail(
			fi, id,
			"messages[%zu].note: must be a non-empty string when present",
			mi);
	m->note = v ? json_string_value(v) : NULL;

	if (!m->exact)
		return parse_template(m, fi, id, mi);
	m->trimmed_len = trim_len(m->text, strlen(m->text));
	if (m->trimmed_len < MIN_KEY_LEN)
		return fail(
			fi, id,
			"messages[%zu].text: shorter than %d bytes without trailing whitespace",
			mi, MIN_KEY_LEN);
	m->n_fields = 0;
	m->lits[0] = strndup(m->text, m->trimmed_len);
	if (!m->lits[0])
		return -ENOMEM;
	m->lit_lens[0] = m->trimmed_len;
	m->specificity = m->trimmed_len;
	return 0;
}

static int check_file_list(json_t *arr, const char *key, size_t fi,
			   const char *id)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return fail(fi, id,
			    "field \"%s\": missing or not an array of strings",
			    key);
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v) || !valid_file(json_string_value(v)))
			return fail(
				fi, id,
				"%s[%zu]: not a control-file name ([a-z0-9_.], with a dot, at most %d bytes)",
				key, i, MAX_FILE);
		if (!strcmp(json_string_value(v), "cgroup.event_control"))
			return fail(
				fi, id,
				"%s[%zu]: cgroup.event_control belongs to no feature; list the registration target in event_files",
				key, i);
	}
	return 0;
}

static int parse_feature(json_t *jf, struct gfeat *f, size_t fi)
{
	static const char *const keys[] = { "id",	   "subsystem",
					    "title",	   "status",
					    "warns",	   "kernel_version",
					    "commit",	   "warn_condition",
					    "replacement", "replacement_note",
					    "files",	   "event_files",
					    "messages",	   NULL };
	static const char *const statuses[] = { "warns", "no-op", "removed",
						"silent", NULL };
	const char *id = NULL;
	json_t *v;
	bool known = false;
	int err;

	if (!json_is_object(jf))
		return fail(fi, NULL, "must be an object");
	v = json_object_get(jf, "id");
	if (!json_is_string(v) || !valid_id(json_string_value(v)))
		return fail(
			fi, NULL,
			"field \"id\": missing or not \"<scope>.<name>\" in [a-z0-9_], at most %d bytes",
			MAX_ID);
	id = f->id = json_string_value(v);
	err = check_keys(jf, keys, fi, id, "");
	if (!err)
		err = get_str(jf, "subsystem", false, MAX_ID, &f->subsystem, fi,
			      id);
	if (!err && !is_lower_ident(f->subsystem, strlen(f->subsystem)))
		err = fail(
			fi, id,
			"field \"subsystem\": must be a lowercase identifier, e.g. memory");
	if (!err)
		err = get_str(jf, "title", false, 256, &f->title, fi, id);
	if (!err)
		err = get_str(jf, "status", false, 16, &f->status, fi, id);
	if (err)
		return err;
	for (const char *const *s = statuses; *s; s++)
		known = known || !strcmp(*s, f->status);
	if (!known)
		return fail(
			fi, id,
			"field \"status\": unknown value \"%s\" (expected warns, no-op, removed or silent)",
			f->status);
	v = json_object_get(jf, "warns");
	if (!json_is_boolean(v))
		return fail(fi, id,
			    "field \"warns\": missing or not true/false");
	f->warns = json_is_true(v);
	err = get_str(jf, "kernel_version", true, 32, &f->kernel_version, fi,
		      id);
	if (!err && f->kernel_version && !valid_kver(f->kernel_version))
		err = fail(
			fi, id,
			"field \"kernel_version\": \"%s\" is not like v6.12 or v6.1.56",
			f->kernel_version);
	if (!err)
		err = get_str(jf, "commit", true, 40, &f->commit, fi, id);
	if (!err && f->commit && !valid_commit(f->commit))
		err = fail(
			fi, id,
			"field \"commit\": \"%s\" is not 7..40 lowercase hex digits",
			f->commit);
	if (!err)
		err = get_str(jf, "warn_condition", true, MAX_TEXT,
			      &f->warn_condition, fi, id);
	if (!err)
		err = get_str(jf, "replacement", false, MAX_TEXT,
			      &f->replacement, fi, id);
	if (!err)
		err = get_str(jf, "replacement_note", false, MAX_TEXT,
			      &f->replacement_note, fi, id);
	if (err)
		return err;
	f->files = json_object_get(jf, "files");
	f->event_files = json_object_get(jf, "event_files");
	err = check_file_list(f->files, "files", fi, id);
	if (!err)
		err = check_file_list(f->event_files, "event_files", fi, id);
	if (err)
		return err;

	v = json_object_get(jf, "messages");
	if (!json_is_array(v))
		return fail(fi, id,
			    "field \"messages\": missing or not an array");
	f->n_msgs = json_array_size(v);
	if (f->n_msgs) {
		f->msgs = calloc(f->n_msgs, sizeof(*f->msgs));
		if (!f->msgs)
			return -ENOMEM;
	}
	for (size_t mi = 0; mi < f->n_msgs; mi++) {
		err = parse_message(json_array_get(v, mi), &f->msgs[mi], fi, id,
				    mi);
		if (err)
			return err;
	}

	/* Consistency between warns, status, messages and warn_condition. */
	if (f->warns && f->n_msgs == 0)
		return fail(
			fi, id,
			"field \"messages\": empty although \"warns\" is true");
	if (!f->warns && f->n_msgs)
		return fail(
			fi, id,
			"field \"messages\": not empty although \"warns\" is false");
	if (!f->warns != !strcmp(f->status, "silent"))
		return fail(
			fi, id,
			"field \"status\": \"silent\" if and only if \"warns\" is false");
	if (f->warns && !f->warn_condition)
		return fail(
			fi, id,
			"field \"warn_condition\": null although \"warns\" is true");
	if (!f->warns && f->warn_condition)
		return fail(
			fi, id,
			"field \"warn_condition\": must be null when \"warns\" is false");
	if (!f->warns && (f->kernel_version || f->commit))
		return fail(
			fi, id,
			"fields \"kernel_version\"/\"commit\" describe the warning: null when \"warns\" is false");
	return 0;
}

/*
 * Can one line match both templates? Conservatively yes when the first
 * literal of one starts with the first literal of the other. (An exact
 * text that a template matches is always more specific than the template:
 * it holds the template's literals and at least one byte per field.)
 */
static bool templates_overlap(const struct gmsg *a, const struct gmsg *b)
{
	size_t n = a->lit_lens[0] < b->lit_lens[0] ? a->lit_lens[0] :
						     b->lit_lens[0];

	return !memcmp(a->lits[0], b->lits[0], n);
}

/* Checks across records: unique ids, files, event files and texts. */
static int check_cross(const struct catalog *c)
{
	for (size_t a = 0; a < c->n_feats; a++) {
		const struct gfeat *fa = &c->feats[a];

		for (size_t b = 0; b <= a; b++) {
			const struct gfeat *fb = &c->feats[b];

			if (b < a && !strcmp(fa->id, fb->id))
				return fail(
					a, fa->id,
					"field \"id\": duplicate of features[%zu]",
					b);
			for (int k = 0; k < 2; k++) {
				json_t *la = k ? fa->event_files : fa->files,
				       *lb = k ? fb->event_files : fb->files;
				const char *key = k ? "event_files" : "files";
				size_t i, j;
				json_t *x, *y;

				json_array_foreach(la, i, x)
				{
					json_array_foreach(lb, j, y)
					{
						if ((b == a && j >= i) ||
						    strcmp(json_string_value(x),
							   json_string_value(y)))
							continue;
						return fail(
							a, fa->id,
							"%s[%zu]: duplicate file \"%s\" (already in features[%zu] %s)",
							key, i,
							json_string_value(x), b,
							fb->id);
					}
				}
			}
			for (size_t i = 0; i < fa->n_msgs; i++) {
				const struct gmsg *ma = &fa->msgs[i];

				for (size_t j = 0; j < fb->n_msgs; j++) {
					const struct gmsg *mb = &fb->msgs[j];

					if (b == a && j >= i)
						break;
					if (ma->exact && mb->exact &&
					    ma->trimmed_len ==
						    mb->trimmed_len &&
					    !memcmp(ma->text, mb->text,
						    ma->trimmed_len) &&
					    (b != a ||
					     !strcmp(ma->text, mb->text)))
						return fail(
							a, fa->id,
							"messages[%zu].text: duplicate of features[%zu] %s messages[%zu]%s",
							i, b, fb->id, j,
							b == a ?
								"" :
								" (a text belongs to one feature)");
					if (!ma->exact && !mb->exact &&
					    !strcmp(ma->text, mb->text))
						return fail(
							a, fa->id,
							"messages[%zu].text: duplicate template of features[%zu] %s",
							i, b, fb->id);
					if (b != a && !ma->exact &&
					    !mb->exact &&
					    ma->specificity ==
						    mb->specificity &&
					    templates_overlap(ma, mb))
						return fail(
							a, fa->id,
							"messages[%zu].text: ambiguous: a line can match this template and the one of %s messages[%zu], and both have %zu literal bytes (make one more specific)",
							i, fb->id, j,
							ma->specificity);
				}
			}
		}
	}
	return 0;
}

static int parse_catalog(struct catalog *c)
{
	static const char *const keys[] = { "version", "features", NULL };
	json_error_t jerr;
	json_t *v;
	int err;

	c->doc = json_load_file(in_path, JSON_REJECT_DUPLICATES, &jerr);
	if (!c->doc) {
		fprintf(stderr, "catalog_gen: %s:%d:%d: %s\n", in_path,
			jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(c->doc))
		return fail(
			(size_t)-1, NULL,
			"top level must be an object {\"version\": n, \"features\": [...]}");
	err = check_keys(c->doc, keys, (size_t)-1, NULL, "top level: ");
	if (err)
		return err;
	v = json_object_get(c->doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 0x7fffffff)
		return fail(
			(size_t)-1, NULL,
			"field \"version\": missing or not a positive integer");
	c->version = json_integer_value(v);
	v = json_object_get(c->doc, "features");
	if (!json_is_array(v) || json_array_size(v) == 0)
		return fail(
			(size_t)-1, NULL,
			"field \"features\": missing or not a non-empty array");
	c->n_feats = json_array_size(v);
	c->feats = calloc(c->n_feats, sizeof(*c->feats));
	if (!c->feats)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_feats; i++) {
		err = parse_feature(json_array_get(v, i), &c->feats[i], i);
		if (err)
			return err;
	}
	return check_cross(c);
}

static void catalog_fini(struct catalog *c)
{
	for (size_t i = 0; c->feats && i < c->n_feats; i++) {
		struct gfeat *f = &c->feats[i];

		for (size_t j = 0; j < f->n_msgs; j++) {
			for (size_t k = 0; k <= MAX_FIELDS; k++)
				free(f->msgs[j].lits[k]);
			for (size_t k = 0; k < MAX_FIELDS; k++)
				free(f->msgs[j].names[k]);
		}
		free(f->msgs);
	}
	free(c->feats);
	json_decref(c->doc);
}

/* A C string literal (or NULL) for @s. */
static void c_str(FILE *o, const char *s)
{
	if (!s) {
		fputs("NULL", o);
		return;
	}
	fputc('"', o);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '?')
			fprintf(o, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", o);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(o, "\\%03o", *p);
		else
			fputc(*p, o);
	}
	fputc('"', o);
}

static void c_list(FILE *o, const char *name, json_t *arr)
{
	size_t i;
	json_t *v;

	fprintf(o, "static const char *const %s[] = { ", name);
	json_array_foreach(arr, i, v)
	{
		c_str(o, json_string_value(v));
		fputs(", ", o);
	}
	fputs("NULL };\n", o);
}

static void write_c(FILE *o, const struct catalog *c)
{
	char name[64];

	fputs("/* Generated by schema/gen/catalog_gen.c from schema/catalog.json: do not edit. */\n"
	      "#include <stddef.h>\n#include <twilight/catalog.h>\n\n",
	      o);
	for (size_t i = 0; i < c->n_feats; i++) {
		const struct gfeat *f = &c->feats[i];

		snprintf(name, sizeof(name), "f%zu_files", i);
		c_list(o, name, f->files);
		snprintf(name, sizeof(name), "f%zu_event_files", i);
		c_list(o, name, f->event_files);
		for (size_t j = 0; j < f->n_msgs; j++) {
			const struct gmsg *m = &f->msgs[j];

			fprintf(o,
				"static const char *const f%zu_m%zu_lits[] = { ",
				i, j);
			for (size_t k = 0; k <= m->n_fields; k++) {
				c_str(o, m->lits[k]);
				fputs(", ", o);
			}
			fprintf(o,
				"};\nstatic const size_t f%zu_m%zu_lens[] = { ",
				i, j);
			for (size_t k = 0; k <= m->n_fields; k++)
				fprintf(o, "%zu, ", m->lit_lens[k]);
			fputs("};\n", o);
			if (m->n_fields) {
				fprintf(o,
					"static const char *const f%zu_m%zu_names[] = { ",
					i, j);
				for (size_t k = 0; k < m->n_fields; k++) {
					c_str(o, m->names[k]);
					fputs(", ", o);
				}
				fputs("};\n", o);
			}
		}
		if (!f->n_msgs)
			continue;
		fprintf(o,
			"static const struct twl_catalog_message f%zu_messages[] = {\n",
			i);
		for (size_t j = 0; j < f->n_msgs; j++) {
			const struct gmsg *m = &f->msgs[j];

			fputs("\t{ .text = ", o);
			c_str(o, m->text);
			fprintf(o, ",\n\t  .match = %s, .level = %d, .note = ",
				m->exact ? "TWL_MATCH_EXACT" :
					   "TWL_MATCH_PREFIX",
				m->level);
			c_str(o, m->note);
			fprintf(o,
				",\n\t  .n_fields = %zu, .literals = f%zu_m%zu_lits, .literal_lens = f%zu_m%zu_lens, ",
				m->n_fields, i, j, i, j);
			if (m->n_fields)
				fprintf(o, ".field_names = f%zu_m%zu_names, ",
					i, j);
			else
				fputs(".field_names = NULL, ", o);
			fprintf(o, ".specificity = %zu },\n", m->specificity);
		}
		fputs("};\n", o);
	}
	fputs("\nstatic const struct twl_feature table[] = {\n", o);
	for (size_t i = 0; i < c->n_feats; i++) {
		const struct gfeat *f = &c->feats[i];
		const char *const strs[][2] = {
			{ "id", f->id },
			{ "subsystem", f->subsystem },
			{ "title", f->title },
			{ "status", f->status },
			{ "kernel_version", f->kernel_version },
			{ "commit", f->commit },
			{ "replacement", f->replacement },
			{ "replacement_note", f->replacement_note },
			{ "warn_condition", f->warn_condition },
		};

		fputs("\t{\n", o);
		for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
			fprintf(o, "\t\t.%s = ", strs[k][0]);
			c_str(o, strs[k][1]);
			fputs(",\n", o);
		}
		fprintf(o,
			"\t\t.warns = %s,\n\t\t.files = f%zu_files,\n\t\t.event_files = f%zu_event_files,\n",
			f->warns ? "true" : "false", i, i);
		if (f->n_msgs)
			fprintf(o,
				"\t\t.messages = f%zu_messages,\n\t\t.n_messages = %zu,\n",
				i, f->n_msgs);
		else
			fputs("\t\t.messages = NULL,\n\t\t.n_messages = 0,\n",
			      o);
		fputs("\t},\n", o);
	}
	fprintf(o,
		"};\n\n"
		"unsigned twl_catalog_version(void)\n{\n\treturn %lldu;\n}\n\n"
		"size_t twl_catalog_count(void)\n{\n\treturn sizeof(table) / sizeof(table[0]);\n}\n\n"
		"const struct twl_feature *twl_catalog_at(size_t i)\n{\n"
		"\treturn i < sizeof(table) / sizeof(table[0]) ? &table[i] : NULL;\n}\n",
		c->version);
}

/* An SQL string literal (or NULL) for @s. */
static void sql_str(FILE *o, const char *s)
{
	if (!s) {
		fputs("NULL", o);
		return;
	}
	fputc('\'', o);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', o);
		fputc(*s, o);
	}
	fputc('\'', o);
}

static void write_sql(FILE *o, const struct catalog *c)
{
	fputs("-- Generated by schema/gen/catalog_gen.c from schema/catalog.json: do not edit.\n"
	      "-- Idempotent; run it inside one transaction.\n"
	      "CREATE TABLE IF NOT EXISTS catalog_feature (\n"
	      "\tid TEXT PRIMARY KEY,\n\tsubsystem TEXT NOT NULL,\n\ttitle TEXT NOT NULL,\n"
	      "\tstatus TEXT NOT NULL CHECK (status IN ('warns', 'no-op', 'removed', 'silent')),\n"
	      "\twarns INTEGER NOT NULL CHECK (warns IN (0, 1)),\n\tkernel_version TEXT,\n"
	      "\tupstream_commit TEXT,\n\treplacement TEXT NOT NULL,\n\treplacement_note TEXT NOT NULL,\n"
	      "\twarn_condition TEXT,\n\tcatalog_version INTEGER NOT NULL\n);\n"
	      "CREATE TABLE IF NOT EXISTS catalog_file (\n"
	      "\tfeature_id TEXT NOT NULL,\n\tfile TEXT NOT NULL,\n"
	      "\tkind TEXT NOT NULL CHECK (kind IN ('file', 'event')),\n\tPRIMARY KEY (file, kind)\n);\n"
	      "CREATE TABLE IF NOT EXISTS catalog_message (\n"
	      "\tfeature_id TEXT NOT NULL,\n\tidx INTEGER NOT NULL,\n"
	      "\t\"match\" TEXT NOT NULL CHECK (\"match\" IN ('exact', 'prefix')),\n"
	      "\ttext TEXT NOT NULL,\n\tlevel INTEGER NOT NULL,\n\tPRIMARY KEY (feature_id, idx)\n);\n"
	      "-- Files and texts are derived data: replace them all.\n"
	      "DELETE FROM catalog_file;\nDELETE FROM catalog_message;\n",
	      o);
	for (size_t i = 0; i < c->n_feats; i++) {
		const struct gfeat *f = &c->feats[i];
		const char *const strs[] = { f->id, f->subsystem, f->title,
					     f->status };
		size_t j;
		json_t *v;

		fputs("INSERT OR REPLACE INTO catalog_feature (id, subsystem, title, status, warns, kernel_version, "
		      "upstream_commit, replacement, replacement_note, warn_condition, catalog_version) VALUES (",
		      o);
		for (size_t k = 0; k < 4; k++) {
			sql_str(o, strs[k]);
			fputs(", ", o);
		}
		fprintf(o, "%d, ", f->warns ? 1 : 0);
		sql_str(o, f->kernel_version);
		fputs(", ", o);
		sql_str(o, f->commit);
		fputs(", ", o);
		sql_str(o, f->replacement);
		fputs(", ", o);
		sql_str(o, f->replacement_note);
		fputs(", ", o);
		sql_str(o, f->warn_condition);
		fprintf(o, ", %lld);\n", c->version);
		for (int k = 0; k < 2; k++) {
			json_array_foreach(k ? f->event_files : f->files, j, v)
			{
				fputs("INSERT OR REPLACE INTO catalog_file (feature_id, file, kind) VALUES (",
				      o);
				sql_str(o, f->id);
				fputs(", ", o);
				sql_str(o, json_string_value(v));
				fprintf(o, ", '%s');\n", k ? "event" : "file");
			}
		}
		for (j = 0; j < f->n_msgs; j++) {
			fputs("INSERT OR REPLACE INTO catalog_message (feature_id, idx, \"match\", text, level) VALUES (",
			      o);
			sql_str(o, f->id);
			fprintf(o, ", %zu, '%s', ", j,
				f->msgs[j].exact ? "exact" : "prefix");
			sql_str(o, f->msgs[j].text);
			fprintf(o, ", %d);\n", f->msgs[j].level);
		}
	}
}

/* Write @path through a temporary file and rename, so a failed run leaves no half file. */
static int write_out(const char *path,
		     void (*emit)(FILE *, const struct catalog *),
		     const struct catalog *c)
{
	char tmp[4096];
	FILE *o;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	o = fopen(tmp, "w");
	if (!o) {
		err = -errno;
		fprintf(stderr, "catalog_gen: cannot create %s: %s\n", tmp,
			strerror(errno));
		return err;
	}
	emit(o, c);
	if (ferror(o) | fclose(o)) {
		err = -EIO;
		fprintf(stderr, "catalog_gen: writing %s failed (disk full?)\n",
			tmp);
		unlink(tmp);
		return err;
	}
	if (rename(tmp, path)) {
		err = -errno;
		fprintf(stderr, "catalog_gen: cannot rename %s to %s: %s\n",
			tmp, path, strerror(errno));
		unlink(tmp);
	}
	return err;
}

int main(int argc, char **argv)
{
	struct catalog c = { 0 };
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: %s CATALOG.json OUT.c OUT.sql\n",
			argv[0]);
		return 2;
	}
	in_path = argv[1];
	err = parse_catalog(&c);
	if (err == -ENOMEM)
		fprintf(stderr, "catalog_gen: out of memory reading %s\n",
			in_path);
	if (!err)
		err = write_out(argv[2], write_c, &c);
	if (!err)
		err = write_out(argv[3], write_sql, &c);
	catalog_fini(&c);
	return err ? 1 : 0;
}
