// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog parser: the data file's records one by one (routes, features) and
 * the file as a whole. The rules are in schema/catalog.md; each broken rule
 * is one line naming the record and the field.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catgen.h"

#define GET_MAINTAINER "scripts/get_maintainer.pl --nogit -f "

/* id: "<scope>.<name>", both lowercase identifiers. */
static bool valid_id(const char *s)
{
	const char *dot = strchr(s, '.');

	if (!dot || strlen(s) > MAX_ID)
		return false;
	return gen_is_lower_ident(s, (size_t)(dot - s)) &&
	       gen_is_lower_ident(dot + 1, strlen(dot + 1));
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

/* A Kconfig symbol as the kernel's .config spells it: CONFIG_[A-Z0-9_]+. */
static bool valid_config(const char *s)
{
	size_t n = strlen(s);

	if (n <= 7 || n > MAX_ID || strncmp(s, "CONFIG_", 7))
		return false;
	for (size_t i = 7; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* A Message-ID without its angle brackets: local@domain, printable ASCII. */
static bool valid_msgid(const char *s)
{
	const char *at = strchr(s, '@');
	size_t n = strlen(s);

	if (n == 0 || n > MAX_MSGID || !at || at == s || !at[1] ||
	    strchr(at + 1, '@'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '<' || s[i] == '>')
			return false;
	return true;
}

/* A path inside the kernel tree: [A-Za-z0-9_.-/], relative, no "..". */
static bool valid_tree_path(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 255 || s[0] == '/' || strstr(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.-/", s[i])))
			return false;
	return true;
}

static int check_file_list(json_t *arr, const char *key, size_t fi,
			   const char *id)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return gen_fail(
			W_FEATURE, fi, id,
			"field \"%s\": missing or not an array of strings",
			key);
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v) || !valid_file(json_string_value(v)))
			return gen_fail(
				W_FEATURE, fi, id,
				"%s[%zu]: not a control-file name ([a-z0-9_.], with a dot, at most %d bytes)",
				key, i, MAX_FILE);
		if (!strcmp(json_string_value(v), "cgroup.event_control"))
			return gen_fail(
				W_FEATURE, fi, id,
				"%s[%zu]: cgroup.event_control belongs to no feature; list the registration target in event_files",
				key, i);
	}
	return 0;
}

/*
 * A route's result: the lines get_maintainer.pl printed, each
 * "ADDRESS (ROLE)" with ADDRESS either "Name <user@host>" or a list address.
 */
static int check_result(json_t *arr, size_t ri, const char *id)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return gen_fail(
			W_ROUTE, ri, id,
			"field \"result\": missing or not a non-empty array of the lines get_maintainer.pl printed");
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);

		if (!s || json_string_length(v) > 512 || !strstr(s, " (") ||
		    !strchr(s, '@') || strchr(s, '\n'))
			return gen_fail(
				W_ROUTE, ri, id,
				"result[%zu]: not a get_maintainer.pl line \"ADDRESS (ROLE)\"",
				i);
	}
	return 0;
}

/* Is @addr the ADDRESS part (before the first " (") of a line of @result? */
static bool in_result(json_t *result, const char *addr)
{
	size_t i, n = strlen(addr);
	json_t *v;

	json_array_foreach(result, i, v)
	{
		const char *s = json_string_value(v);

		if (!strncmp(s, addr, n) && !strncmp(s + n, " (", 2))
			return true;
	}
	return false;
}

/* to or cc: addresses taken from the result, each once in to and cc. */
static int check_addresses(const struct groute *r, json_t *arr, const char *key,
			   size_t ri)
{
	size_t i, j;
	json_t *v, *w;

	if (!json_is_array(arr) ||
	    (!strcmp(key, "to") && !json_array_size(arr)))
		return gen_fail(W_ROUTE, ri, r->id,
				"field \"%s\": missing or not an array%s", key,
				strcmp(key, "to") ? "" :
						    " of at least one address");
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);

		if (!s || !in_result(r->result, s))
			return gen_fail(
				W_ROUTE, ri, r->id,
				"%s[%zu]: not the address part of a line of \"result\" (copy it as get_maintainer.pl printed it)",
				key, i);
		json_array_foreach(r->to, j, w)
		{
			if ((arr != r->to || j < i) &&
			    !strcmp(s, json_string_value(w)))
				return gen_fail(
					W_ROUTE, ri, r->id,
					"%s[%zu]: \"%s\" is already in to", key,
					i, s);
		}
		json_array_foreach(arr, j, w)
		{
			if (arr == r->cc && j < i &&
			    !strcmp(s, json_string_value(w)))
				return gen_fail(W_ROUTE, ri, r->id,
						"%s[%zu]: \"%s\" appears twice",
						key, i, s);
		}
	}
	return 0;
}

/* Contract: see catgen.h. */
int gen_parse_route(json_t *jr, struct groute *r, size_t ri)
{
	static const char *const keys[] = { "id",     "file", "command", "tree",
					    "result", "to",   "cc",	 NULL };
	json_t *v;
	int err;

	if (!json_is_object(jr))
		return gen_fail(W_ROUTE, ri, NULL, "must be an object");
	v = json_object_get(jr, "id");
	if (!json_is_string(v) ||
	    !gen_is_lower_ident(json_string_value(v), json_string_length(v)) ||
	    json_string_length(v) > MAX_ID)
		return gen_fail(
			W_ROUTE, ri, NULL,
			"field \"id\": missing or not a lowercase identifier, at most %d bytes",
			MAX_ID);
	r->id = json_string_value(v);
	err = gen_check_keys(jr, keys, W_ROUTE, ri, r->id, "");
	if (!err)
		err = gen_get_str(jr, "file", false, 255, &r->file, W_ROUTE, ri,
				  r->id);
	if (!err && !valid_tree_path(r->file))
		err = gen_fail(
			W_ROUTE, ri, r->id,
			"field \"file\": not a relative path in the kernel tree");
	if (!err)
		err = gen_get_str(jr, "command", false, 512, &r->command,
				  W_ROUTE, ri, r->id);
	if (!err &&
	    (strncmp(r->command, GET_MAINTAINER, strlen(GET_MAINTAINER)) ||
	     strcmp(r->command + strlen(GET_MAINTAINER), r->file)))
		err = gen_fail(W_ROUTE, ri, r->id,
			       "field \"command\": must be \"" GET_MAINTAINER
			       "%s\", the command that gave \"result\"",
			       r->file);
	if (!err)
		err = gen_get_str(jr, "tree", false, 256, &r->tree, W_ROUTE, ri,
				  r->id);
	r->result = json_object_get(jr, "result");
	r->to = json_object_get(jr, "to");
	r->cc = json_object_get(jr, "cc");
	if (!err)
		err = check_result(r->result, ri, r->id);
	if (!err)
		err = check_addresses(r, r->to, "to", ri);
	if (!err)
		err = check_addresses(r, r->cc, "cc", ri);
	return err;
}

/* status and warns: the feature's upstream standing. */
static int parse_status(json_t *jf, struct gfeat *f, size_t fi)
{
	static const char *const statuses[] = { "warns", "no-op", "removed",
						"silent", NULL };
	bool known = false;
	json_t *v;
	int err;

	err = gen_get_str(jf, "status", false, 16, &f->status, W_FEATURE, fi,
			  f->id);
	if (err)
		return err;
	for (const char *const *s = statuses; *s; s++)
		known = known || !strcmp(*s, f->status);
	if (!known)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"status\": unknown value \"%s\" (expected warns, no-op, removed or silent)",
			f->status);
	v = json_object_get(jf, "warns");
	if (!json_is_boolean(v))
		return gen_fail(W_FEATURE, fi, f->id,
				"field \"warns\": missing or not true/false");
	f->warns = json_is_true(v);
	return 0;
}

/* The plain strings of a feature: title, replacement, notes. */
static int parse_texts(json_t *jf, struct gfeat *f, size_t fi)
{
	int err;

	err = gen_get_str(jf, "subsystem", false, MAX_ID, &f->subsystem,
			  W_FEATURE, fi, f->id);
	if (!err && !gen_is_lower_ident(f->subsystem, strlen(f->subsystem)))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"subsystem\": must be a lowercase identifier, e.g. memory");
	if (!err)
		err = gen_get_str(jf, "title", false, 256, &f->title, W_FEATURE,
				  fi, f->id);
	if (!err)
		err = gen_get_str(jf, "warn_condition", true, MAX_TEXT,
				  &f->warn_condition, W_FEATURE, fi, f->id);
	if (!err)
		err = gen_get_str(jf, "replacement", false, MAX_TEXT,
				  &f->replacement, W_FEATURE, fi, f->id);
	if (!err)
		err = gen_get_str(jf, "replacement_note", false, MAX_TEXT,
				  &f->replacement_note, W_FEATURE, fi, f->id);
	return err;
}

/* Where the warning came from and where the knob stopped working. */
static int parse_history(json_t *jf, struct gfeat *f, size_t fi)
{
	int err;

	err = gen_get_str(jf, "kernel_version", true, 32, &f->kernel_version,
			  W_FEATURE, fi, f->id);
	if (!err && f->kernel_version && !valid_kver(f->kernel_version))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"kernel_version\": \"%s\" is not like v6.12 or v6.1.56",
			f->kernel_version);
	if (!err)
		err = gen_get_str(jf, "commit", true, 40, &f->commit, W_FEATURE,
				  fi, f->id);
	if (!err && f->commit && !valid_commit(f->commit))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"commit\": \"%s\" is not 7..40 lowercase hex digits",
			f->commit);
	if (!err)
		err = gen_get_str(jf, "commit_note", true, MAX_TEXT,
				  &f->commit_note, W_FEATURE, fi, f->id);
	if (!err && !f->commit && !f->commit_note)
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"commit_note\": null although \"commit\" is null (say why there is no commit: silent and where it is documented, or not verified)");
	if (!err)
		err = gen_get_str(jf, "config", true, MAX_ID, &f->config,
				  W_FEATURE, fi, f->id);
	if (!err && f->config && !valid_config(f->config))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"config\": \"%s\" is not a Kconfig symbol like CONFIG_MEMCG_V1",
			f->config);
	if (!err)
		err = gen_get_str(jf, "stopped_working", true, 32,
				  &f->stopped_working, W_FEATURE, fi, f->id);
	if (!err && f->stopped_working && !valid_kver(f->stopped_working))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"stopped_working\": \"%s\" is not like v6.13",
			f->stopped_working);
	if (!err)
		err = gen_get_str(jf, "stopped_note", false, MAX_TEXT,
				  &f->stopped_note, W_FEATURE, fi, f->id);
	return err;
}

/* in_reply_to and references: Message-IDs of the upstream thread. */
static int parse_thread(json_t *jf, struct gfeat *f, size_t fi)
{
	size_t i, j;
	json_t *v, *w;
	int err;

	err = gen_get_str(jf, "in_reply_to", true, MAX_MSGID, &f->in_reply_to,
			  W_FEATURE, fi, f->id);
	if (!err && f->in_reply_to && !valid_msgid(f->in_reply_to))
		err = gen_fail(
			W_FEATURE, fi, f->id,
			"field \"in_reply_to\": not a Message-ID local@domain (without < >)");
	if (err)
		return err;
	f->references = json_object_get(jf, "references");
	if (!json_is_array(f->references))
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"references\": missing or not an array");
	json_array_foreach(f->references, i, v)
	{
		if (!json_is_string(v) || !valid_msgid(json_string_value(v)))
			return gen_fail(
				W_FEATURE, fi, f->id,
				"references[%zu]: not a Message-ID local@domain (without < >)",
				i);
		json_array_foreach(f->references, j, w) if (
			j < i &&
			json_equal(
				v,
				w)) return gen_fail(W_FEATURE, fi, f->id,
						    "references[%zu]: appears twice",
						    i);
	}
	v = json_array_get(f->references, 0);
	if (f->in_reply_to ?
		    !v || strcmp(json_string_value(v), f->in_reply_to) :
		    v != NULL)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"references\": must start with in_reply_to (and be empty when it is null)");
	return 0;
}

/* route: the id of one of the catalog's routes. */
static int parse_route_ref(json_t *jf, struct gfeat *f, size_t fi,
			   const struct catalog *c)
{
	int err = gen_get_str(jf, "route", false, MAX_ID, &f->route, W_FEATURE,
			      fi, f->id);

	if (err)
		return err;
	for (f->route_idx = 0; f->route_idx < c->n_routes; f->route_idx++)
		if (!strcmp(c->routes[f->route_idx].id, f->route))
			return 0;
	return gen_fail(W_FEATURE, fi, f->id,
			"field \"route\": \"%s\" is not the id of a route",
			f->route);
}

/* files, event_files and the messages. */
static int parse_lists(json_t *jf, struct gfeat *f, size_t fi)
{
	json_t *v;
	int err;

	f->files = json_object_get(jf, "files");
	f->event_files = json_object_get(jf, "event_files");
	err = check_file_list(f->files, "files", fi, f->id);
	if (!err)
		err = check_file_list(f->event_files, "event_files", fi, f->id);
	if (err)
		return err;
	v = json_object_get(jf, "messages");
	if (!json_is_array(v))
		return gen_fail(W_FEATURE, fi, f->id,
				"field \"messages\": missing or not an array");
	f->n_msgs = json_array_size(v);
	if (f->n_msgs) {
		f->msgs = calloc(f->n_msgs, sizeof(*f->msgs));
		if (!f->msgs)
			return -ENOMEM;
	}
	for (size_t mi = 0; mi < f->n_msgs; mi++) {
		err = gen_parse_message(json_array_get(v, mi), &f->msgs[mi], fi,
					f->id, mi);
		if (err)
			return err;
	}
	return 0;
}

/* A value's name as the control file spells it: [a-z][a-z0-9_.]*. */
static bool valid_value_name(const char *s)
{
	if (*s < 'a' || *s > 'z')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

/*
 * value_kind and value_name: what a write to the feature's files sets, for
 * the value classes the server shows. A kind other than "none" needs files
 * to write and a name; "none" has neither name nor values.
 */
static int parse_value(json_t *jf, struct gfeat *f, size_t fi)
{
	static const char *const kinds[] = { "none",	"bytes",   "boolean",
					     "integer", "bitmask", NULL };
	size_t k;
	int err;

	err = gen_get_str(jf, "value_kind", false, 16, &f->value_kind,
			  W_FEATURE, fi, f->id);
	if (!err)
		err = gen_get_str(jf, "value_name", true, MAX_FILE,
				  &f->value_name, W_FEATURE, fi, f->id);
	if (err)
		return err;
	for (k = 0; kinds[k] && strcmp(kinds[k], f->value_kind); k++)
		;
	if (!kinds[k])
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"value_kind\": \"%s\" is not none, bytes, boolean, integer or bitmask",
			f->value_kind);
	if (k && !json_array_size(f->files))
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"value_kind\": \"%s\" but \"files\" is empty (nothing to write)",
			f->value_kind);
	if (!k != !f->value_name)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"value_name\": must be null exactly when \"value_kind\" is \"none\"");
	if (f->value_name && !valid_value_name(f->value_name))
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"value_name\": \"%s\" is not [a-z][a-z0-9_.]*",
			f->value_name);
	return 0;
}

/* Consistency between warns, status, messages and the warning's history. */
static int check_consistency(const struct gfeat *f, size_t fi)
{
	if (f->warns && f->n_msgs == 0)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"messages\": empty although \"warns\" is true");
	if (!f->warns && f->n_msgs)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"messages\": not empty although \"warns\" is false");
	if (!f->warns != !strcmp(f->status, "silent"))
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"status\": \"silent\" if and only if \"warns\" is false");
	if (f->warns && !f->warn_condition)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"warn_condition\": null although \"warns\" is true");
	if (!f->warns && f->warn_condition)
		return gen_fail(
			W_FEATURE, fi, f->id,
			"field \"warn_condition\": must be null when \"warns\" is false");
	if (!f->warns && (f->kernel_version || f->commit))
		return gen_fail(
			W_FEATURE, fi, f->id,
			"fields \"kernel_version\"/\"commit\" describe the warning: null when \"warns\" is false");
	return 0;
}

/* Contract: see catgen.h. */
int gen_parse_feature(json_t *jf, struct gfeat *f, size_t fi,
		      const struct catalog *c)
{
	static const char *const keys[] = { "id",
					    "subsystem",
					    "title",
					    "status",
					    "warns",
					    "kernel_version",
					    "commit",
					    "commit_note",
					    "config",
					    "stopped_working",
					    "stopped_note",
					    "warn_condition",
					    "replacement",
					    "replacement_note",
					    "route",
					    "in_reply_to",
					    "references",
					    "files",
					    "event_files",
					    "value_kind",
					    "value_name",
					    "messages",
					    NULL };
	json_t *v;
	int err;

	if (!json_is_object(jf))
		return gen_fail(W_FEATURE, fi, NULL, "must be an object");
	v = json_object_get(jf, "id");
	if (!json_is_string(v) || !valid_id(json_string_value(v)))
		return gen_fail(
			W_FEATURE, fi, NULL,
			"field \"id\": missing or not \"<scope>.<name>\" in [a-z0-9_], at most %d bytes",
			MAX_ID);
	f->id = json_string_value(v);
	err = gen_check_keys(jf, keys, W_FEATURE, fi, f->id, "");
	if (!err)
		err = parse_texts(jf, f, fi);
	if (!err)
		err = parse_status(jf, f, fi);
	if (!err)
		err = parse_history(jf, f, fi);
	if (!err)
		err = parse_route_ref(jf, f, fi, c);
	if (!err)
		err = parse_thread(jf, f, fi);
	if (!err)
		err = parse_lists(jf, f, fi);
	if (!err)
		err = parse_value(jf, f, fi);
	if (!err)
		err = check_consistency(f, fi);
	return err;
}

/* routes: parsed before the features, which refer to them by id. */
static int parse_routes(struct catalog *c)
{
	json_t *v = json_object_get(c->doc, "routes");
	int err;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return gen_fail(
			W_FILE, 0, NULL,
			"field \"routes\": missing or not a non-empty array");
	c->n_routes = json_array_size(v);
	c->routes = calloc(c->n_routes, sizeof(*c->routes));
	if (!c->routes)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_routes; i++) {
		err = gen_parse_route(json_array_get(v, i), &c->routes[i], i);
		if (err)
			return err;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->routes[j].id, c->routes[i].id))
				return gen_fail(
					W_ROUTE, i, c->routes[i].id,
					"field \"id\": duplicate of routes[%zu]",
					j);
	}
	return 0;
}

/* Every route is used by a feature (an unused one is a stale record). */
static int check_routes_used(const struct catalog *c)
{
	for (size_t r = 0; r < c->n_routes; r++) {
		bool used = false;

		for (size_t i = 0; i < c->n_feats; i++)
			used = used || c->feats[i].route_idx == r;
		if (!used)
			return gen_fail(
				W_ROUTE, r, c->routes[r].id,
				"no feature names this route (remove it)");
	}
	return 0;
}

static int parse_features(struct catalog *c)
{
	json_t *v = json_object_get(c->doc, "features");
	int err;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return gen_fail(
			W_FILE, 0, NULL,
			"field \"features\": missing or not a non-empty array");
	c->n_feats = json_array_size(v);
	c->feats = calloc(c->n_feats, sizeof(*c->feats));
	if (!c->feats)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_feats; i++) {
		err = gen_parse_feature(json_array_get(v, i), &c->feats[i], i,
					c);
		if (err)
			return err;
	}
	return 0;
}

/* Check the loaded document c->doc: the whole data file. */
static int parse_doc(struct catalog *c)
{
	static const char *const keys[] = { "version", "routes", "features",
					    NULL };
	json_t *v;
	int err;

	if (!json_is_object(c->doc))
		return gen_fail(
			W_FILE, 0, NULL,
			"top level must be an object {\"version\": n, \"routes\": [...], \"features\": [...]}");
	err = gen_check_keys(c->doc, keys, W_FILE, 0, NULL, "top level: ");
	if (err)
		return err;
	v = json_object_get(c->doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 0x7fffffff)
		return gen_fail(
			W_FILE, 0, NULL,
			"field \"version\": missing or not a positive integer");
	c->version = json_integer_value(v);
	err = parse_routes(c);
	if (!err)
		err = parse_features(c);
	if (!err)
		err = check_routes_used(c);
	if (!err)
		err = gen_check_cross(c);
	return err;
}

/* Report a JSON syntax error as "FILE:LINE:COL: what". */
static int json_fail(const json_error_t *jerr)
{
	snprintf(gen_err, sizeof(gen_err), "%s:%d:%d: %s", gen_in_path,
		 jerr->line, jerr->column, jerr->text);
	return -EINVAL;
}

/* Contract: see catgen.h. */
int gen_parse_catalog(struct catalog *c)
{
	json_error_t jerr;

	c->doc = json_load_file(gen_in_path, JSON_REJECT_DUPLICATES, &jerr);
	if (!c->doc)
		return json_fail(&jerr);
	return parse_doc(c);
}

/* Contract: see catgen.h. */
int gen_parse_buffer(struct catalog *c, const char *buf, size_t len)
{
	json_error_t jerr;

	c->doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!c->doc)
		return json_fail(&jerr);
	return parse_doc(c);
}

/* Contract: see catgen.h. */
void gen_catalog_fini(struct catalog *c)
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
	free(c->routes);
	json_decref(c->doc);
	*c = (struct catalog){ 0 };
}
