// SPDX-License-Identifier: GPL-2.0
/*
 * The SQL seed the server runs at every start: catalog_seed.sql from the
 * generator for the compiled-in catalog, or made at runtime for one loaded
 * from a data directory (catalog_load.c). Idempotent; no BEGIN/COMMIT (the server runs it in one
 * transaction). catalog_feature keeps rows of features dropped from the
 * data file (reports may name them); every other table is derived data,
 * emptied and refilled. The columns catalog_feature gained with catalog
 * version 2 are added to older databases by schema/migrations/012.
 */
#include "catgen.h"

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS catalog_feature (\n"
	"\tid TEXT PRIMARY KEY,\n\tsubsystem TEXT NOT NULL,\n\ttitle TEXT NOT NULL,\n"
	"\tstatus TEXT NOT NULL CHECK (status IN ('warns', 'no-op', 'removed', 'silent')),\n"
	"\twarns INTEGER NOT NULL CHECK (warns IN (0, 1)),\n\tkernel_version TEXT,\n"
	"\tupstream_commit TEXT,\n\treplacement TEXT NOT NULL,\n\treplacement_note TEXT NOT NULL,\n"
	"\twarn_condition TEXT,\n\tcatalog_version INTEGER NOT NULL,\n"
	"\tcommit_note TEXT,\n\tconfig_symbol TEXT,\n\tstopped_working TEXT,\n"
	"\tstopped_note TEXT,\n\troute_id TEXT,\n\tin_reply_to TEXT\n);\n"
	"CREATE TABLE IF NOT EXISTS catalog_file (\n"
	"\tfeature_id TEXT NOT NULL,\n\tfile TEXT NOT NULL,\n"
	"\tkind TEXT NOT NULL CHECK (kind IN ('file', 'event')),\n\tPRIMARY KEY (file, kind)\n);\n"
	"CREATE TABLE IF NOT EXISTS catalog_message (\n"
	"\tfeature_id TEXT NOT NULL,\n\tidx INTEGER NOT NULL,\n"
	"\t\"match\" TEXT NOT NULL CHECK (\"match\" IN ('exact', 'prefix')),\n"
	"\ttext TEXT NOT NULL,\n\tlevel INTEGER NOT NULL,\n\tPRIMARY KEY (feature_id, idx)\n);\n"
	"CREATE TABLE IF NOT EXISTS catalog_route (\n"
	"\tid TEXT PRIMARY KEY,\n\tfile TEXT NOT NULL,\n\tcommand TEXT NOT NULL,\n"
	"\ttree TEXT NOT NULL,\n\tresult TEXT NOT NULL\n);\n"
	"CREATE TABLE IF NOT EXISTS catalog_route_address (\n"
	"\troute_id TEXT NOT NULL,\n\trole TEXT NOT NULL CHECK (role IN ('to', 'cc')),\n"
	"\tidx INTEGER NOT NULL,\n\taddress TEXT NOT NULL,\n\tPRIMARY KEY (route_id, role, idx)\n);\n"
	"CREATE TABLE IF NOT EXISTS catalog_reference (\n"
	"\tfeature_id TEXT NOT NULL,\n\tidx INTEGER NOT NULL,\n"
	"\tmessage_id TEXT NOT NULL,\n\tPRIMARY KEY (feature_id, idx)\n);\n"
	"-- Files, texts, routes and references are derived data: replace them all.\n"
	"DELETE FROM catalog_file;\nDELETE FROM catalog_message;\n"
	"DELETE FROM catalog_route;\nDELETE FROM catalog_route_address;\n"
	"DELETE FROM catalog_reference;\n";

/* The inside of an SQL string literal for @s (quotes doubled). */
static void sql_inside(FILE *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', o);
		fputc(*s, o);
	}
}

/* An SQL string literal (or NULL) for @s. */
static void sql_str(FILE *o, const char *s)
{
	if (!s) {
		fputs("NULL", o);
		return;
	}
	fputc('\'', o);
	sql_inside(o, s);
	fputc('\'', o);
}

/* @n strings separated by ", ". */
static void sql_strs(FILE *o, const char *const *s, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputs(", ", o);
		sql_str(o, s[k]);
	}
}

static void write_route(FILE *o, const struct groute *r)
{
	const char *const strs[] = { r->id, r->file, r->command, r->tree };
	const char *const roles[] = { "to", "cc" };
	size_t i;
	json_t *v;

	fputs("INSERT INTO catalog_route (id, file, command, tree, result) VALUES (",
	      o);
	sql_strs(o, strs, 4);
	fputs(", '", o);
	json_array_foreach(r->result, i, v)
	{
		fputs(i ? "\n" : "", o);
		sql_inside(o, json_string_value(v));
	}
	fputs("');\n", o);
	for (int k = 0; k < 2; k++) {
		json_array_foreach(k ? r->cc : r->to, i, v)
		{
			fputs("INSERT INTO catalog_route_address (route_id, role, idx, address) VALUES (",
			      o);
			sql_str(o, r->id);
			fprintf(o, ", '%s', %zu, ", roles[k], i);
			sql_str(o, json_string_value(v));
			fputs(");\n", o);
		}
	}
}

static void write_feature_row(FILE *o, const struct gfeat *f, long long version)
{
	const char *const head[] = { f->id, f->subsystem, f->title, f->status };
	const char *const mid[] = { f->kernel_version, f->commit,
				    f->replacement, f->replacement_note,
				    f->warn_condition };
	const char *const tail[] = { f->commit_note,	 f->config,
				     f->stopped_working, f->stopped_note,
				     f->route,		 f->in_reply_to };

	fputs("INSERT OR REPLACE INTO catalog_feature (id, subsystem, title, status, warns, kernel_version, "
	      "upstream_commit, replacement, replacement_note, warn_condition, catalog_version, "
	      "commit_note, config_symbol, stopped_working, stopped_note, route_id, in_reply_to) VALUES (",
	      o);
	sql_strs(o, head, 4);
	fprintf(o, ", %d, ", f->warns ? 1 : 0);
	sql_strs(o, mid, 5);
	fprintf(o, ", %lld, ", version);
	sql_strs(o, tail, 6);
	fputs(");\n", o);
}

static void write_feature_lists(FILE *o, const struct gfeat *f)
{
	size_t j;
	json_t *v;

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
	json_array_foreach(f->references, j, v)
	{
		fputs("INSERT INTO catalog_reference (feature_id, idx, message_id) VALUES (",
		      o);
		sql_str(o, f->id);
		fprintf(o, ", %zu, ", j);
		sql_str(o, json_string_value(v));
		fputs(");\n", o);
	}
}

/* Contract: see catgen.h. */
void gen_write_sql(FILE *o, const struct catalog *c)
{
	fputs("-- Generated by schema/gen/catalog_gen.c from schema/catalog.json: do not edit.\n"
	      "-- Idempotent; run it inside one transaction.\n",
	      o);
	fputs(schema, o);
	for (size_t i = 0; i < c->n_routes; i++)
		write_route(o, &c->routes[i]);
	for (size_t i = 0; i < c->n_feats; i++) {
		write_feature_row(o, &c->feats[i], c->version);
		write_feature_lists(o, &c->feats[i]);
	}
}
