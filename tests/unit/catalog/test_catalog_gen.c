// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's outputs against the data file: schema/catalog.json is
 * parsed here with jansson directly (not through schema/gen) and every field
 * is compared with the compiled C table, with twl_catalog_to_json() and with
 * the SQL seed loaded into an in-memory SQLite database. Then the generator
 * is run on broken copies of the data file: each must fail with a message
 * naming the record and the field, and write nothing.
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

static sqlite3 *load_seed(void)
{
	char p[4200], *sql = NULL, *errmsg = NULL;
	sqlite3 *db = NULL;
	FILE *fp;
	long n;

	path_in(p, sizeof(p), bin_dir, "generated/catalog_seed.sql");
	fp = fopen(p, "r");
	if (!fp)
		fail_msg("cannot open the SQL seed %s: %s", p, strerror(errno));
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n > 0 && n < (1 << 24));
	rewind(fp);
	sql = calloc(1, (size_t)n + 1);
	assert_non_null(sql);
	assert_int_equal(fread(sql, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	/* twice: the seed must be idempotent */
	for (int k = 0; k < 2; k++) {
		if (sqlite3_exec(db, sql, NULL, NULL, &errmsg) != SQLITE_OK)
			fail_msg("seed %s failed (run %d): %s", p, k + 1,
				 errmsg);
	}
	free(sql);
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
			"replacement, replacement_note, warn_condition, catalog_version "
			"FROM catalog_feature WHERE id = ?1",
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
		const char *keys[] = { "subsystem",	 "title",
				       "status",	 NULL,
				       "kernel_version", "commit",
				       "replacement",	 "replacement_note",
				       "warn_condition" };
		json_t *v;
		size_t j;

		sqlite3_bind_text(sf, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(sf) != SQLITE_ROW)
			fail_msg("feature %s missing from catalog_feature", id);
		for (int c = 0; c < 9; c++) {
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

/* Run the generator on @bad; returns its exit status, stderr in @err. */
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
		cmocka_unit_test(test_sql_seed_matches_data_file),
		cmocka_unit_test(test_generator_rejects_bad_data),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
