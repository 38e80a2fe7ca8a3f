// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's outputs against the data file: schema/catalog.json is
 * parsed here with jansson directly (not through schema/gen) and every field
 * is compared with the compiled C table, with twl_catalog_to_json() and with
 * the SQL seed loaded into an in-memory SQLite database. Then the generator
 * is run on broken copies of the data file: each must fail with a message
 * naming the record and the field, and write nothing; the runtime loader
 * (twl_catalog_load_file()) must refuse each with the same message.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include <twilight/catalog.h>

static char src_dir[4096], bin_dir[4096];
static json_t *doc;

static void path_in(char *out, size_t cap, const char *dir, const char *rel)
{
	assert_true((size_t)snprintf(out, cap, "%s/%s", dir, rel) < cap);
}

static int setup(void **state)
{
	const char *s = getenv("TWILIGHT_SOURCE_DIR"),
		   *b = getenv("TWILIGHT_BINARY_DIR");
	char p[4200];
	json_error_t jerr;

	snprintf(src_dir, sizeof(src_dir), "%s", s ? s : TWL_TEST_SOURCE_DIR);
	snprintf(bin_dir, sizeof(bin_dir), "%s", b ? b : TWL_TEST_BINARY_DIR);
	path_in(p, sizeof(p), src_dir, "schema/catalog.json");
	doc = json_load_file(p, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		fprintf(stderr, "cannot load %s: %s (line %d)\n", p, jerr.text,
			jerr.line);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	json_decref(doc);
	return 0;
}

/* A JSON string-or-null member equals a C string-or-NULL. */
static void assert_str_field(json_t *obj, const char *key, const char *c,
			     const char *id)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		fail_msg("%s: field %s missing in catalog.json", id, key);
	if (json_is_null(v)) {
		if (c)
			fail_msg("%s.%s: data null, table \"%s\"", id, key, c);
		return;
	}
	assert_true(json_is_string(v));
	if (!c)
		fail_msg("%s.%s: data \"%s\", table NULL", id, key,
			 json_string_value(v));
	assert_string_equal(json_string_value(v), c);
}

static void assert_list(json_t *arr, const char *const *list, const char *id)
{
	size_t i, n = 0;
	json_t *v;

	assert_true(json_is_array(arr));
	while (list[n])
		n++;
	assert_int_equal(json_array_size(arr), n);
	json_array_foreach(arr, i, v)
		assert_string_equal(json_string_value(v), list[i]);
}

static void test_table_matches_data_file(void **state)
{
	json_t *feats = json_object_get(doc, "features"), *jf;
	size_t i;

	assert_int_equal(json_integer_value(json_object_get(doc, "version")),
			 twl_catalog_version());
	assert_int_equal(json_array_size(feats), twl_catalog_count());
	assert_null(twl_catalog_at(twl_catalog_count()));
	json_array_foreach(feats, i, jf)
	{
		const struct twl_feature *f = twl_catalog_at(i);
		const char *id = json_string_value(json_object_get(jf, "id"));
		json_t *msgs = json_object_get(jf, "messages"), *jm;
		size_t j;

		assert_non_null(f);
		assert_string_equal(f->id, id);
		assert_ptr_equal(twl_catalog_find(id), f);
		assert_str_field(jf, "subsystem", f->subsystem, id);
		assert_str_field(jf, "title", f->title, id);
		assert_str_field(jf, "status", f->status, id);
		assert_int_equal(json_is_true(json_object_get(jf, "warns")),
				 f->warns);
		assert_str_field(jf, "kernel_version", f->kernel_version, id);
		assert_str_field(jf, "commit", f->commit, id);
		assert_str_field(jf, "replacement", f->replacement, id);
		assert_str_field(jf, "replacement_note", f->replacement_note,
				 id);
		assert_str_field(jf, "warn_condition", f->warn_condition, id);
		assert_str_field(jf, "commit_note", f->commit_note, id);
		assert_str_field(jf, "config", f->config, id);
		assert_str_field(jf, "stopped_working", f->stopped_working, id);
		assert_str_field(jf, "stopped_note", f->stopped_note, id);
		assert_str_field(jf, "route", f->route->id, id);
		assert_str_field(jf, "in_reply_to", f->in_reply_to, id);
		assert_str_field(jf, "value_kind", f->value_kind, id);
		assert_str_field(jf, "value_name", f->value_name, id);
		assert_list(json_object_get(jf, "references"), f->references,
			    id);
		assert_list(json_object_get(jf, "files"), f->files, id);
		assert_list(json_object_get(jf, "event_files"), f->event_files,
			    id);
		for (size_t k = 0; f->files[k]; k++)
			assert_ptr_equal(twl_catalog_find_file(f->files[k]), f);
		for (size_t k = 0; f->event_files[k]; k++)
			assert_ptr_equal(
				twl_catalog_find_event_file(f->event_files[k]),
				f);
		assert_int_equal(json_array_size(msgs), f->n_messages);
		json_array_foreach(msgs, j, jm)
		{
			const struct twl_catalog_message *m = &f->messages[j];

			assert_string_equal(
				json_string_value(json_object_get(jm, "text")),
				m->text);
			assert_string_equal(
				json_string_value(json_object_get(jm, "match")),
				twl_match_kind_name(m->match));
			assert_int_equal(json_integer_value(
						 json_object_get(jm, "level")),
					 m->level);
			if (json_object_get(jm, "note"))
				assert_str_field(jm, "note", m->note, id);
			else
				assert_null(m->note);
			assert_non_null(m->literals[0]);
		}
	}
	assert_null(twl_catalog_find("memcg_v1.no_such_feature"));
	assert_null(twl_catalog_find(NULL));
}

/* The routes: every member, and each feature's pointer into the table. */
static void test_routes_match_data_file(void **state)
{
	json_t *routes = json_object_get(doc, "routes"), *jr;
	size_t i;

	assert_int_equal(json_array_size(routes), twl_catalog_route_count());
	assert_null(twl_catalog_route_at(twl_catalog_route_count()));
	json_array_foreach(routes, i, jr)
	{
		const struct twl_catalog_route *r = twl_catalog_route_at(i);
		const char *id = json_string_value(json_object_get(jr, "id"));

		assert_non_null(r);
		assert_string_equal(r->id, id);
		assert_str_field(jr, "file", r->file, id);
		assert_str_field(jr, "command", r->command, id);
		assert_str_field(jr, "tree", r->tree, id);
		assert_list(json_object_get(jr, "result"), r->result, id);
		assert_list(json_object_get(jr, "to"), r->to, id);
		assert_list(json_object_get(jr, "cc"), r->cc, id);
	}
	for (i = 0; i < twl_catalog_count(); i++) {
		const struct twl_catalog_route *r = twl_catalog_at(i)->route;
		size_t k = 0;

		while (twl_catalog_route_at(k) && twl_catalog_route_at(k) != r)
			k++;
		assert_ptr_equal(twl_catalog_route_at(k), r);
	}
}

/* GET /api/v1/catalog serves exactly the data file. */
static void test_to_json_equals_data_file(void **state)
{
	json_t *out = twl_catalog_to_json();

	assert_non_null(out);
	if (!json_equal(out, doc)) {
		char *s = json_dumps(out, JSON_COMPACT);

		fail_msg(
			"twl_catalog_to_json() differs from catalog.json: %.300s",
			s);
	}
	json_decref(out);
}

/* The whole of file @rel under @dir, NUL-terminated; the caller frees it. */
static char *slurp(const char *dir, const char *rel)
{
	char p[4200], *text;
	FILE *fp;
	long n;

	path_in(p, sizeof(p), dir, rel);
	fp = fopen(p, "r");
	if (!fp)
		fail_msg("cannot open %s: %s", p, strerror(errno));
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n > 0 && n < (1 << 24));
	rewind(fp);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return text;
}

static void exec_or_fail(sqlite3 *db, const char *sql, const char *what)
{
	char *errmsg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &errmsg) != SQLITE_OK)
		fail_msg("%s failed: %s", what, errmsg);
}

/* Run the generated seed twice on @db (it must be idempotent). */
static void run_seed(sqlite3 *db)
{
	char *sql = slurp(bin_dir, "generated/catalog_seed.sql");

	exec_or_fail(db, sql, "the seed (first run)");
	exec_or_fail(db, sql, "the seed (second run)");
	free(sql);
}

static sqlite3 *load_seed(void)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	run_seed(db);
	return db;
}

static const char *col_text(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL ?
		       NULL :
		       (const char *)sqlite3_column_text(st, c);
}

static void assert_opt_str(const char *a, const char *b, const char *what)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("%s: %s vs %s", what, a ? a : "NULL",
				 b ? b : "NULL");
		return;
	}
	assert_string_equal(a, b);
}

static int count_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int n;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_sql_seed_matches_data_file(void **state)
{
	sqlite3 *db = load_seed();
	sqlite3_stmt *sf, *sfile, *smsg;
	json_t *feats = json_object_get(doc, "features"), *jf;
	size_t i, n_files = 0, n_msgs = 0;

	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT subsystem, title, status, warns, kernel_version, upstream_commit, "
			"replacement, replacement_note, warn_condition, catalog_version, "
			"commit_note, config_symbol, stopped_working, stopped_note, route_id, "
			"in_reply_to FROM catalog_feature WHERE id = ?1",
			-1, &sf, NULL),
		SQLITE_OK);
	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT feature_id FROM catalog_file WHERE file = ?1 AND kind = ?2",
			-1, &sfile, NULL),
		SQLITE_OK);
	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT \"match\", text, level FROM catalog_message "
			"WHERE feature_id = ?1 AND idx = ?2",
			-1, &smsg, NULL),
		SQLITE_OK);
	json_array_foreach(feats, i, jf)
	{
		const char *id = json_string_value(json_object_get(jf, "id"));
		const char *keys[] = { "subsystem",	  "title",
				       "status",	  NULL,
				       "kernel_version",  "commit",
				       "replacement",	  "replacement_note",
				       "warn_condition",  NULL,
				       "commit_note",	  "config",
				       "stopped_working", "stopped_note",
				       "route",		  "in_reply_to" };
		json_t *v;
		size_t j;

		sqlite3_bind_text(sf, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(sf) != SQLITE_ROW)
			fail_msg("feature %s missing from catalog_feature", id);
		for (int c = 0; c < 16; c++) {
			if (!keys[c])
				continue;
			v = json_object_get(jf, keys[c]);
			assert_opt_str(col_text(sf, c),
				       json_is_null(v) ? NULL :
							 json_string_value(v),
				       keys[c]);
		}
		assert_int_equal(sqlite3_column_int(sf, 3),
				 json_is_true(json_object_get(jf, "warns")));
		assert_int_equal(
			sqlite3_column_int(sf, 9),
			json_integer_value(json_object_get(doc, "version")));
		sqlite3_reset(sf);

		for (int k = 0; k < 2; k++) {
			json_array_foreach(json_object_get(jf,
							   k ? "event_files" :
							       "files"),
					   j, v)
			{
				sqlite3_bind_text(sfile, 1,
						  json_string_value(v), -1,
						  SQLITE_STATIC);
				sqlite3_bind_text(sfile, 2,
						  k ? "event" : "file", -1,
						  SQLITE_STATIC);
				assert_int_equal(sqlite3_step(sfile),
						 SQLITE_ROW);
				assert_string_equal(col_text(sfile, 0), id);
				sqlite3_reset(sfile);
				n_files++;
			}
		}
		json_array_foreach(json_object_get(jf, "messages"), j, v)
		{
			sqlite3_bind_text(smsg, 1, id, -1, SQLITE_STATIC);
			sqlite3_bind_int64(smsg, 2, (sqlite3_int64)j);
			assert_int_equal(sqlite3_step(smsg), SQLITE_ROW);
			assert_string_equal(
				col_text(smsg, 0),
				json_string_value(json_object_get(v, "match")));
			assert_string_equal(
				col_text(smsg, 1),
				json_string_value(json_object_get(v, "text")));
			assert_int_equal(sqlite3_column_int(smsg, 2),
					 json_integer_value(
						 json_object_get(v, "level")));
			sqlite3_reset(smsg);
			n_msgs++;
		}
	}
	/* nothing more in the tables than in the data file */
	assert_int_equal(count_rows(db, "SELECT count(*) FROM catalog_feature"),
			 json_array_size(feats));
	assert_int_equal(count_rows(db, "SELECT count(*) FROM catalog_file"),
			 n_files);
	assert_int_equal(count_rows(db, "SELECT count(*) FROM catalog_message"),
			 n_msgs);
	sqlite3_finalize(sf);
	sqlite3_finalize(sfile);
	sqlite3_finalize(smsg);
	sqlite3_close(db);
}

/* The rows of @sql (one text column, ?1 bound to @key) equal array @arr. */
static size_t assert_sql_list(sqlite3 *db, const char *sql, const char *key,
			      json_t *arr)
{
	sqlite3_stmt *st;
	size_t n = 0;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		assert_true(n < json_array_size(arr));
		assert_string_equal(col_text(st, 0),
				    json_string_value(json_array_get(arr, n)));
		n++;
	}
	assert_int_equal(n, json_array_size(arr));
	sqlite3_finalize(st);
	return n;
}

/* catalog_route, catalog_route_address and catalog_reference. */
static void test_sql_seed_routes_and_threads(void **state)
{
	sqlite3 *db = load_seed();
	json_t *jr, *jf;
	size_t i, n_addr = 0, n_refs = 0;

	json_array_foreach(json_object_get(doc, "routes"), i, jr)
	{
		const char *id = json_string_value(json_object_get(jr, "id"));
		json_t *one = json_array();
		char *joined = NULL;
		size_t k, len = 0;
		json_t *v;

		json_array_foreach(json_object_get(jr, "result"), k, v)
		{
			joined = realloc(joined,
					 len + json_string_length(v) + 2);
			assert_non_null(joined);
			len += (size_t)sprintf(joined + len, "%s%s",
					       k ? "\n" : "",
					       json_string_value(v));
		}
		json_array_append_new(
			one,
			json_sprintf(
				"%s|%s|%s|%s",
				json_string_value(json_object_get(jr, "file")),
				json_string_value(
					json_object_get(jr, "command")),
				json_string_value(json_object_get(jr, "tree")),
				joined));
		assert_sql_list(
			db,
			"SELECT file || '|' || command || '|' || tree || '|' || result "
			"FROM catalog_route WHERE id = ?1",
			id, one);
		n_addr += assert_sql_list(
			db,
			"SELECT address FROM catalog_route_address WHERE route_id = ?1 "
			"AND role = 'to' ORDER BY idx",
			id, json_object_get(jr, "to"));
		n_addr += assert_sql_list(
			db,
			"SELECT address FROM catalog_route_address WHERE route_id = ?1 "
			"AND role = 'cc' ORDER BY idx",
			id, json_object_get(jr, "cc"));
		json_decref(one);
		free(joined);
	}
	json_array_foreach(json_object_get(doc, "features"), i, jf)
		n_refs += assert_sql_list(
			db,
			"SELECT message_id FROM catalog_reference WHERE feature_id = ?1 "
			"ORDER BY idx",
			json_string_value(json_object_get(jf, "id")),
			json_object_get(jf, "references"));
	assert_int_equal(count_rows(db, "SELECT count(*) FROM catalog_route"),
			 json_array_size(json_object_get(doc, "routes")));
	assert_int_equal(
		count_rows(db, "SELECT count(*) FROM catalog_route_address"),
		n_addr);
	assert_int_equal(count_rows(db,
				    "SELECT count(*) FROM catalog_reference"),
			 n_refs);
	sqlite3_close(db);
}

/* The column names of catalog_feature, in order, comma-separated. */
static void feature_columns(sqlite3 *db, char *out, size_t cap)
{
	sqlite3_stmt *st;
	size_t n = 0;

	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT name FROM pragma_table_info('catalog_feature')",
			-1, &st, NULL),
		SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW)
		n += (size_t)snprintf(out + n, cap - n, "%s,", col_text(st, 0));
	assert_true(n < cap);
	sqlite3_finalize(st);
}

/*
 * Migration 012 on a database whose catalog_feature the version-1 seed
 * made (with the row of a feature since dropped), and on a fresh one: the
 * seed then runs on both, the old row keeps NULL facts, and both end with
 * the columns a seed-only database has.
 */
static void test_migration_012(void **state)
{
	static const char v1_table[] =
		"CREATE TABLE catalog_feature (id TEXT PRIMARY KEY, subsystem TEXT NOT NULL,"
		" title TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN"
		" ('warns', 'no-op', 'removed', 'silent')), warns INTEGER NOT NULL CHECK"
		" (warns IN (0, 1)), kernel_version TEXT, upstream_commit TEXT,"
		" replacement TEXT NOT NULL, replacement_note TEXT NOT NULL,"
		" warn_condition TEXT, catalog_version INTEGER NOT NULL);"
		"INSERT INTO catalog_feature VALUES ('memcg_v1.gone', 'memory', 'Gone',"
		" 'silent', 0, NULL, NULL, 'x', 'y', NULL, 1);";
	char *mig = slurp(src_dir, "schema/migrations/012_catalog_facts.sql");
	char cols[3][1024];
	sqlite3 *db[3];

	for (int k = 0; k < 3; k++)
		assert_int_equal(sqlite3_open(":memory:", &db[k]), SQLITE_OK);
	exec_or_fail(db[0], v1_table, "the version-1 table");
	exec_or_fail(db[0], mig, "migration 012 on a version-1 catalog");
	exec_or_fail(db[1], mig, "migration 012 on a fresh database");
	for (int k = 0; k < 3; k++) {
		run_seed(db[k]);
		feature_columns(db[k], cols[k], sizeof(cols[k]));
	}
	assert_string_equal(cols[0], cols[2]);
	assert_string_equal(cols[1], cols[2]);
	assert_non_null(strstr(cols[2], "commit_note,config_symbol,"));
	assert_int_equal(
		count_rows(db[0],
			   "SELECT count(*) FROM catalog_feature "
			   "WHERE id = 'memcg_v1.gone' AND route_id IS NULL"),
		1);
	assert_int_equal(
		count_rows(
			db[0],
			"SELECT count(*) FROM catalog_feature "
			"WHERE stopped_note IS NOT NULL AND route_id IS NOT NULL"),
		twl_catalog_count());
	for (int k = 0; k < 3; k++)
		sqlite3_close(db[k]);
	free(mig);
}

/* Run the generator on @bad; returns its exit status, stderr in @err. */
/*
 * The runtime loader (twl_catalog_load()) on the same file must agree with
 * the generator: accept what it accepts, and reject the rest with the same
 * line (the generator prefixes "catalog_gen: ").
 */
static void check_loader_agrees(const char *in, const char *gen_err, int rc)
{
	char lerr[2048], want[2200];
	struct twl_catalog *c = twl_catalog_load_file(in, lerr, sizeof(lerr));

	if (rc == 0) {
		if (!c)
			fail_msg("generator accepted, loader refused: %s",
				 lerr);
		twl_catalog_free(c);
		return;
	}
	if (c)
		fail_msg("generator refused (%s), loader accepted", gen_err);
	snprintf(want, sizeof(want), "catalog_gen: %s\n", lerr);
	assert_string_equal(gen_err, want);
}

static int run_gen(json_t *bad, char *err, size_t cap, bool *wrote)
{
	char dir[] = "/tmp/twl-catgen-XXXXXX", in[64], out_c[64], out_sql[64],
	     cmd[8600];
	struct stat st;
	FILE *fp;
	size_t n;
	int status;

	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/c.json", dir);
	snprintf(out_c, sizeof(out_c), "%s/t.c", dir);
	snprintf(out_sql, sizeof(out_sql), "%s/s.sql", dir);
	assert_int_equal(json_dump_file(bad, in, JSON_INDENT(1)), 0);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' '%s' 2>'%s/err'",
		 TWL_TEST_CATALOG_GEN, in, out_c, out_sql, dir);
	status = system(cmd);
	assert_true(WIFEXITED(status));
	snprintf(cmd, sizeof(cmd), "%s/err", dir);
	fp = fopen(cmd, "r");
	assert_non_null(fp);
	n = fread(err, 1, cap - 1, fp);
	err[n] = '\0';
	fclose(fp);
	*wrote = stat(out_c, &st) == 0 || stat(out_sql, &st) == 0;
	check_loader_agrees(in, err, WEXITSTATUS(status));
	unlink(cmd);
	unlink(in);
	unlink(out_c);
	unlink(out_sql);
	rmdir(dir);
	return WEXITSTATUS(status);
}

static json_t *feature_copy(json_t *copy, const char *id)
{
	size_t i;
	json_t *f;

	json_array_foreach(
		json_object_get(copy, "features"), i,
		f) if (!strcmp(json_string_value(json_object_get(f, "id")),
			       id)) return f;
	fail_msg("no feature %s in the data file", id);
	return NULL;
}

static json_t *first_message(json_t *copy, const char *id)
{
	return json_array_get(
		json_object_get(feature_copy(copy, id), "messages"), 0);
}

struct bad_case {
	const char *what;
	void (*mutate)(json_t *copy);
	const char *expect[3]; /* substrings the error line must hold */
};

static void dup_id(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.soft_limit"), "id",
			    json_string("memcg_v1.kmem_tcp_limit"));
}

static void dup_file(json_t *c)
{
	json_array_append_new(
		json_object_get(feature_copy(c, "memcg_v1.force_empty"),
				"files"),
		json_string("memory.memsw.failcnt"));
}

static void dup_event_file(json_t *c)
{
	json_array_append_new(
		json_object_get(feature_copy(c, "memcg_v1.usage_threshold"),
				"event_files"),
		json_string("memory.oom_control"));
}

static void bad_status(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.move_charge"), "status",
			    json_string("deprecated"));
}

static void bad_template_unclosed(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.remount"), "text",
		json_string(
			"option changes via remount are deprecated (pid={pid comm={comm})"));
}

static void bad_template_adjacent(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.remount"), "text",
		json_string(
			"option changes via remount are deprecated (pid={pid}{comm})"));
}

static void bad_template_name(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.remount"), "text",
		json_string(
			"option changes via remount are deprecated (pid={Pid} comm={comm})"));
}

static void bad_template_dup_field(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.remount"), "text",
		json_string(
			"option changes via remount are deprecated (pid={pid} comm={pid})"));
}

static void bad_template_short_prefix(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.cpuset_sched_load_balance"), "text",
		json_string(
			"cpu{file} is deprecated, use cpuset.cpus.partition instead"));
}

static void bad_template_stray_brace(json_t *c)
{
	json_object_set_new(
		first_message(c, "cgroup_v1.remount"), "text",
		json_string(
			"option changes via remount} are deprecated (pid={pid})"));
}

static void bad_match_kind(json_t *c)
{
	json_object_set_new(first_message(c, "memcg_v1.swappiness"), "match",
			    json_string("regex"));
}

static void bad_level(json_t *c)
{
	json_object_set_new(first_message(c, "memcg_v1.swappiness"), "level",
			    json_integer(9));
}

static void unknown_key(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.memsw"), "replacment",
			    json_string("typo"));
}

static void missing_field(json_t *c)
{
	json_object_del(feature_copy(c, "memcg_v1.kmem_limit"), "replacement");
}

static void warns_without_messages(json_t *c)
{
	json_array_clear(json_object_get(
		feature_copy(c, "memcg_v1.non_hierarchical"), "messages"));
}

static void silent_but_warns(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.kmem_slabinfo"), "warns",
			    json_true());
}

static void dup_text_across(json_t *c)
{
	json_object_set(
		first_message(c, "memcg_v1.soft_limit"), "text",
		json_object_get(first_message(c, "memcg_v1.kmem_tcp_limit"),
				"text"));
}

static void event_control_as_file(json_t *c)
{
	json_array_append_new(
		json_object_get(feature_copy(c, "memcg_v1.usage_threshold"),
				"files"),
		json_string("cgroup.event_control"));
}

static void bad_commit(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.soft_limit"), "commit",
			    json_string("569C4F62"));
}

static json_t *route_copy(json_t *copy, const char *id)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(copy, "routes"), i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "id")), id))
			return r;
	}
	fail_msg("no route %s in the data file", id);
	return NULL;
}

static void commit_without_note(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.kmem_tcp_limit"),
			    "commit", json_null());
}

static void bad_config(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.memsw"), "config",
			    json_string("MEMCG_V1"));
}

static void bad_stopped_working(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.move_charge"),
			    "stopped_working", json_string("6.13"));
}

static void missing_stopped_note(json_t *c)
{
	json_object_del(feature_copy(c, "cgroup_v1.freezer"), "stopped_note");
}

static void bad_value_kind(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.soft_limit"),
			    "value_kind", json_string("size"));
}

static void value_kind_without_files(json_t *c)
{
	json_t *f = feature_copy(c, "memcg_v1.swapaccount");

	json_object_set_new(f, "value_kind", json_string("boolean"));
	json_object_set_new(f, "value_name", json_string("swapaccount"));
}

static void value_kind_without_name(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.swappiness"),
			    "value_name", json_null());
}

static void unknown_route(json_t *c)
{
	json_object_set_new(feature_copy(c, "memcg_v1.oom_control"), "route",
			    json_string("memcgv1"));
}

static void unused_route(json_t *c)
{
	json_t *r = json_deep_copy(route_copy(c, "blkio"));

	json_object_set_new(r, "id", json_string("blkio_spare"));
	json_array_append_new(json_object_get(c, "routes"), r);
}

static void duplicate_route(json_t *c)
{
	json_array_append_new(json_object_get(c, "routes"),
			      json_deep_copy(route_copy(c, "blkio")));
}

static void bad_in_reply_to(json_t *c)
{
	json_object_set_new(
		feature_copy(c, "memcg_v1.soft_limit"), "in_reply_to",
		json_string(
			"<20240814220021.3208384-1-shakeel.butt@linux.dev>"));
}

static void references_not_from_reply(json_t *c)
{
	json_t *refs = json_object_get(feature_copy(c, "memcg_v1.soft_limit"),
				       "references");

	json_array_remove(refs, 0);
}

static void references_without_reply(json_t *c)
{
	json_array_append_new(
		json_object_get(feature_copy(c, "cgroup_v1.remount"),
				"references"),
		json_string("20250311123640.530377-1-mkoutny@suse.com"));
}

static void address_not_in_result(json_t *c)
{
	json_array_append_new(json_object_get(route_copy(c, "memcg_v1"), "cc"),
			      json_string("Someone <someone@example.org>"));
}

static void address_in_to_and_cc(json_t *c)
{
	json_array_append_new(json_object_get(route_copy(c, "memcg_v1"), "cc"),
			      json_string("linux-mm@kvack.org"));
}

static void command_for_another_file(json_t *c)
{
	json_object_set_new(
		route_copy(c, "cgroup_v1"), "command",
		json_string(
			"scripts/get_maintainer.pl --nogit -f kernel/cgroup/cgroup.c"));
}

/* A template as specific as another feature's that can match the same lines. */
static void equal_specificity_templates(json_t *c)
{
	json_t *m = first_message(c, "cgroup_v1.blkio_reset_stats");

	json_object_set_new(m, "match", json_string("prefix"));
	json_object_set_new(m, "text",
			    json_string("cpuset.{file} is deprecatex"));
}

static void test_generator_rejects_bad_data(void **state)
{
	static const struct bad_case cases[] = {
		{ "duplicate id",
		  dup_id,
		  { "features[1]", "memcg_v1.kmem_tcp_limit", "duplicate" } },
		{ "duplicate file",
		  dup_file,
		  { "memcg_v1.force_empty", "memory.memsw.failcnt",
		    "memcg_v1.memsw" } },
		{ "duplicate event file",
		  dup_event_file,
		  { "memcg_v1.usage_threshold", "event_files", "duplicate" } },
		{ "unknown status",
		  bad_status,
		  { "memcg_v1.move_charge", "\"status\"", "deprecated" } },
		{ "unclosed field",
		  bad_template_unclosed,
		  { "cgroup_v1.remount", "messages[0].text", "not closed" } },
		{ "adjacent fields",
		  bad_template_adjacent,
		  { "cgroup_v1.remount", "messages[0].text", "two fields" } },
		{ "bad field name",
		  bad_template_name,
		  { "cgroup_v1.remount", "messages[0].text", "Pid" } },
		{ "duplicate field",
		  bad_template_dup_field,
		  { "cgroup_v1.remount", "messages[0].text", "twice" } },
		{ "short literal before the first field",
		  bad_template_short_prefix,
		  { "cgroup_v1.cpuset_sched_load_balance", "messages[0].text",
		    "at least 4 bytes" } },
		{ "stray closing brace",
		  bad_template_stray_brace,
		  { "cgroup_v1.remount", "messages[0].text",
		    "'}' without '{'" } },
		{ "bad match kind",
		  bad_match_kind,
		  { "memcg_v1.swappiness", "messages[0].match", "regex" } },
		{ "bad level",
		  bad_level,
		  { "memcg_v1.swappiness", "messages[0].level", "0..7" } },
		{ "unknown key",
		  unknown_key,
		  { "memcg_v1.memsw", "replacment", "unknown field" } },
		{ "missing field",
		  missing_field,
		  { "memcg_v1.kmem_limit", "\"replacement\"", "missing" } },
		{ "warns, no messages",
		  warns_without_messages,
		  { "memcg_v1.non_hierarchical", "messages", "warns" } },
		{ "silent but warns",
		  silent_but_warns,
		  { "memcg_v1.kmem_slabinfo", "messages", "warns" } },
		{ "same text in two features",
		  dup_text_across,
		  { "memcg_v1.soft_limit", "messages[0].text", "duplicate" } },
		{ "cgroup.event_control in files",
		  event_control_as_file,
		  { "memcg_v1.usage_threshold", "cgroup.event_control",
		    "event_files" } },
		{ "bad commit",
		  bad_commit,
		  { "memcg_v1.soft_limit", "\"commit\"", "hex" } },
		{ "null commit without a note",
		  commit_without_note,
		  { "memcg_v1.kmem_tcp_limit", "\"commit_note\"", "null" } },
		{ "bad config symbol",
		  bad_config,
		  { "memcg_v1.memsw", "\"config\"", "Kconfig" } },
		{ "bad stopped_working",
		  bad_stopped_working,
		  { "memcg_v1.move_charge", "\"stopped_working\"", "6.13" } },
		{ "missing stopped_note",
		  missing_stopped_note,
		  { "cgroup_v1.freezer", "\"stopped_note\"", "missing" } },
		{ "bad value_kind",
		  bad_value_kind,
		  { "memcg_v1.soft_limit", "\"value_kind\"", "\"size\"" } },
		{ "value_kind without files",
		  value_kind_without_files,
		  { "memcg_v1.swapaccount", "\"value_kind\"", "empty" } },
		{ "value_kind without a name",
		  value_kind_without_name,
		  { "memcg_v1.swappiness", "\"value_name\"", "null" } },
		{ "unknown route",
		  unknown_route,
		  { "memcg_v1.oom_control", "\"route\"", "memcgv1" } },
		{ "unused route",
		  unused_route,
		  { "routes[6]", "blkio_spare", "no feature" } },
		{ "duplicate route",
		  duplicate_route,
		  { "routes[6]", "\"id\"", "duplicate" } },
		{ "Message-ID in angle brackets",
		  bad_in_reply_to,
		  { "memcg_v1.soft_limit", "\"in_reply_to\"", "Message-ID" } },
		{ "references not starting with in_reply_to",
		  references_not_from_reply,
		  { "memcg_v1.soft_limit", "\"references\"", "in_reply_to" } },
		{ "references without in_reply_to",
		  references_without_reply,
		  { "cgroup_v1.remount", "\"references\"", "empty" } },
		{ "route address not in the result",
		  address_not_in_result,
		  { "routes[0] (memcg_v1)", "cc[7]", "address part" } },
		{ "route address in to and cc",
		  address_in_to_and_cc,
		  { "routes[0] (memcg_v1)", "cc[7]", "already in to" } },
		{ "route command for another file",
		  command_for_another_file,
		  { "routes[2] (cgroup_v1)", "\"command\"",
		    "kernel/cgroup/cgroup-v1.c" } },
		{ "templates of equal specificity",
		  equal_specificity_templates,
		  { "cgroup_v1.blkio_reset_stats", "ambiguous",
		    "cgroup_v1.cpuset_legacy_flags" } },
	};
	char err[2048];
	bool wrote;

	/* the untouched data file passes */
	assert_int_equal(run_gen(doc, err, sizeof(err), &wrote), 0);
	assert_true(wrote);
	assert_string_equal(err, "");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *copy = json_deep_copy(doc);

		cases[i].mutate(copy);
		int rc = run_gen(copy, err, sizeof(err), &wrote);

		json_decref(copy);
		if (rc != 1)
			fail_msg(
				"%s: generator exit %d, expected 1 (stderr: %s)",
				cases[i].what, rc, err);
		assert_false(wrote);
		for (size_t k = 0; k < 3 && cases[i].expect[k]; k++)
			if (!strstr(err, cases[i].expect[k]))
				fail_msg("%s: error lacks \"%s\": %s",
					 cases[i].what, cases[i].expect[k],
					 err);
		/* one line */
		assert_non_null(strchr(err, '\n'));
		assert_string_equal(strchr(err, '\n'), "\n");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_data_file),
		cmocka_unit_test(test_to_json_equals_data_file),
		cmocka_unit_test(test_routes_match_data_file),
		cmocka_unit_test(test_sql_seed_matches_data_file),
		cmocka_unit_test(test_sql_seed_routes_and_threads),
		cmocka_unit_test(test_migration_012),
		cmocka_unit_test(test_generator_rejects_bad_data),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
