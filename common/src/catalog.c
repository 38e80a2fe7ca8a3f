// SPDX-License-Identifier: GPL-2.0
/*
 * Lookups in the current catalog and its JSON form. The compiled-in table
 * (twl_catalog_compiled) is generated from schema/catalog.json into the
 * build tree's generated/twilight_catalog.c; catalog_load.c installs newer
 * ones.
 */
#include <errno.h>
#include <string.h>

#include <twilight/catalog.h>

unsigned twl_catalog_version(void)
{
	return twl_catalog_current()->version;
}

size_t twl_catalog_count(void)
{
	return twl_catalog_current()->n_features;
}

const struct twl_feature *twl_catalog_at(size_t i)
{
	const struct twl_catalog *c = twl_catalog_current();

	return i < c->n_features ? &c->features[i] : NULL;
}

size_t twl_catalog_route_count(void)
{
	return twl_catalog_current()->n_routes;
}

const struct twl_catalog_route *twl_catalog_route_at(size_t i)
{
	const struct twl_catalog *c = twl_catalog_current();

	return i < c->n_routes ? &c->routes[i] : NULL;
}

const struct twl_feature *twl_catalog_find(const char *id)
{
	const struct twl_catalog *c = twl_catalog_current();

	if (!id)
		return NULL;
	for (size_t i = 0; i < c->n_features; i++)
		if (!strcmp(c->features[i].id, id))
			return &c->features[i];
	return NULL;
}

static bool list_has(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

const struct twl_feature *twl_catalog_find_file(const char *file)
{
	const struct twl_catalog *c = twl_catalog_current();

	if (!file)
		return NULL;
	for (size_t i = 0; i < c->n_features; i++)
		if (list_has(c->features[i].files, file))
			return &c->features[i];
	return NULL;
}

const struct twl_feature *twl_catalog_find_event_file(const char *file)
{
	const struct twl_catalog *c = twl_catalog_current();

	if (!file)
		return NULL;
	for (size_t i = 0; i < c->n_features; i++)
		if (list_has(c->features[i].event_files, file))
			return &c->features[i];
	return NULL;
}

const char *twl_match_kind_name(enum twl_match_kind kind)
{
	return kind == TWL_MATCH_PREFIX ? "prefix" : "exact";
}

/* A JSON string, or null for NULL. */
static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *list_to_json(const char *const *list)
{
	json_t *a = json_array();

	for (; a && *list; list++) {
		if (json_array_append_new(a, json_string(*list))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *message_to_json(const struct twl_catalog_message *m)
{
	json_t *o = json_pack("{s:s, s:s, s:i}", "text", m->text, "match",
			      twl_match_kind_name(m->match), "level", m->level);

	if (o && m->note &&
	    json_object_set_new(o, "note", json_string(m->note))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The members that describe the feature's history and where it goes. */
static int add_facts(json_t *o, const struct twl_feature *f)
{
	json_t *facts = json_pack(
		"{s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:o}",
		"value_kind", f->value_kind, "value_name",
		str_or_null(f->value_name), "commit_note",
		str_or_null(f->commit_note), "config", str_or_null(f->config),
		"stopped_working", str_or_null(f->stopped_working),
		"warn_condition", str_or_null(f->warn_condition),
		"stopped_note", f->stopped_note, "route", f->route->id,
		"in_reply_to", str_or_null(f->in_reply_to), "references",
		list_to_json(f->references));

	if (!facts || json_object_update(o, facts)) {
		json_decref(facts);
		return -ENOMEM;
	}
	json_decref(facts);
	return 0;
}

static json_t *feature_to_json(const struct twl_feature *f)
{
	json_t *msgs = json_array();
	json_t *o;

	for (size_t i = 0; msgs && i < f->n_messages; i++) {
		if (json_array_append_new(msgs,
					  message_to_json(&f->messages[i]))) {
			json_decref(msgs);
			return NULL;
		}
	}
	/* "o" steals references; json_pack fails (and frees them) on any NULL. */
	o = json_pack(
		"{s:s, s:s, s:s, s:s, s:b, s:o, s:o, s:s, s:s, s:o, s:o, s:o}",
		"id", f->id, "subsystem", f->subsystem, "title", f->title,
		"status", f->status, "warns", f->warns, "kernel_version",
		str_or_null(f->kernel_version), "commit",
		str_or_null(f->commit), "replacement", f->replacement,
		"replacement_note", f->replacement_note, "files",
		list_to_json(f->files), "event_files",
		list_to_json(f->event_files), "messages", msgs);
	if (o && add_facts(o, f)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *route_to_json(const struct twl_catalog_route *r)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "id", r->id,
			 "file", r->file, "command", r->command, "tree",
			 r->tree, "result", list_to_json(r->result), "to",
			 list_to_json(r->to), "cc", list_to_json(r->cc));
}

json_t *twl_catalog_to_json(void)
{
	const struct twl_catalog *c = twl_catalog_current();
	json_t *feats = json_array(), *routes = json_array();
	json_t *doc;

	for (size_t i = 0; feats && i < c->n_features; i++) {
		if (json_array_append_new(feats,
					  feature_to_json(&c->features[i]))) {
			json_decref(feats);
			feats = NULL;
		}
	}
	for (size_t i = 0; routes && i < c->n_routes; i++) {
		if (json_array_append_new(routes,
					  route_to_json(&c->routes[i]))) {
			json_decref(routes);
			routes = NULL;
		}
	}
	doc = json_pack("{s:I, s:o, s:o}", "version", (json_int_t)c->version,
			"routes", routes, "features", feats);
	if (!doc)
		errno = ENOMEM;
	return doc;
}
