// SPDX-License-Identifier: GPL-2.0
/*
 * The runtime catalog loader: schema/catalog.json loaded at runtime equals
 * the compiled-in table field by field (and its SQL seed the generator's
 * catalog_seed.sql byte for byte); a newer catalog with one more text,
 * once installed, is what every lookup and the matcher use; bad input is
 * refused with a message and changes nothing. (The generator and the
 * loader reject broken files with the same line: test_catalog_gen.c.)
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

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/match.h>
#include <twilight/util.h>

#include "../common/catalog_newer.h"

#define NEW_TEXT \
	"memory cgroup: twilight catalog test text, not printed by any kernel"

static char src_dir[4096], bin_dir[4096];

static void path_in(char *out, size_t cap, const char *dir, const char *rel)
{
	assert_true((size_t)snprintf(out, cap, "%s/%s", dir, rel) < cap);
}

static int setup(void **state)
{
	const char *s = getenv("TWILIGHT_SOURCE_DIR"),
		   *b = getenv("TWILIGHT_BINARY_DIR");

	(void)state;
	snprintf(src_dir, sizeof(src_dir), "%s", s ? s : TWL_TEST_SOURCE_DIR);
	snprintf(bin_dir, sizeof(bin_dir), "%s", b ? b : TWL_TEST_BINARY_DIR);
	return 0;
}

static struct twl_catalog *load_shipped(void)
{
	char p[4200], err[1024];
	struct twl_catalog *c;

	path_in(p, sizeof(p), src_dir, "schema/catalog.json");
	c = twl_catalog_load_file(p, err, sizeof(err));
	if (!c)
		fail_msg("loading %s: %s", p, err);
	return c;
}

static void str_eq(const char *a, const char *b, const char *what)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("%s: one NULL, one \"%s\"", what, a ? a : b);
		return;
	}
	if (strcmp(a, b))
		fail_msg("%s: \"%s\" != \"%s\"", what, a, b);
}

static void list_eq(const char *const *a, const char *const *b,
		    const char *what)
{
	size_t i = 0;

	for (; a[i] && b[i]; i++)
		str_eq(a[i], b[i], what);
	if (a[i] || b[i])
		fail_msg("%s: lists differ in length at %zu", what, i);
}

static void message_eq(const struct twl_catalog_message *a,
		       const struct twl_catalog_message *b, const char *id)
{
	str_eq(a->text, b->text, id);
	assert_int_equal(a->match, b->match);
	assert_int_equal(a->level, b->level);
	str_eq(a->note, b->note, id);
	assert_int_equal(a->n_fields, b->n_fields);
	assert_int_equal(a->specificity, b->specificity);
	for (size_t k = 0; k <= a->n_fields; k++) {
		str_eq(a->literals[k], b->literals[k], id);
		assert_int_equal(a->literal_lens[k], b->literal_lens[k]);
	}
	for (size_t k = 0; k < a->n_fields; k++)
		str_eq(a->field_names[k], b->field_names[k], id);
	if (!a->n_fields)
		assert_true(a->field_names == NULL && b->field_names == NULL);
}

static void feature_eq(const struct twl_feature *a, const struct twl_feature *b)
{
	const char *id = a->id;

	str_eq(a->id, b->id, "id");
	str_eq(a->subsystem, b->subsystem, id);
	str_eq(a->title, b->title, id);
	str_eq(a->status, b->status, id);
	assert_int_equal(a->warns, b->warns);
	str_eq(a->kernel_version, b->kernel_version, id);
	str_eq(a->commit, b->commit, id);
	str_eq(a->commit_note, b->commit_note, id);
	str_eq(a->config, b->config, id);
	str_eq(a->stopped_working, b->stopped_working, id);
	str_eq(a->stopped_note, b->stopped_note, id);
	str_eq(a->replacement, b->replacement, id);
	str_eq(a->replacement_note, b->replacement_note, id);
	str_eq(a->route->id, b->route->id, id);
	str_eq(a->in_reply_to, b->in_reply_to, id);
	list_eq(a->references, b->references, id);
	list_eq(a->files, b->files, id);
	list_eq(a->event_files, b->event_files, id);
	str_eq(a->warn_condition, b->warn_condition, id);
	str_eq(a->value_kind, b->value_kind, id);
	str_eq(a->value_name, b->value_name, id);
	assert_int_equal(a->n_messages, b->n_messages);
	assert_true((a->messages == NULL) == (b->messages == NULL));
	for (size_t j = 0; j < a->n_messages; j++)
		message_eq(&a->messages[j], &b->messages[j], id);
}

static void test_loaded_equals_compiled(void **state)
{
	const struct twl_catalog *a = &twl_catalog_compiled;
	struct twl_catalog *b = load_shipped();
	char p[4200], *seed;

	(void)state;
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->n_features, b->n_features);
	assert_int_equal(a->n_routes, b->n_routes);
	for (size_t i = 0; i < a->n_features; i++) {
		feature_eq(&a->features[i], &b->features[i]);
		/* the route is the loaded catalog's own, not a copy elsewhere */
		assert_ptr_equal(b->features[i].route,
				 &b->routes[a->features[i].route - a->routes]);
	}
	for (size_t i = 0; i < a->n_routes; i++) {
		const struct twl_catalog_route *r = &a->routes[i],
					       *s = &b->routes[i];

		str_eq(r->id, s->id, "route id");
		str_eq(r->file, s->file, r->id);
		str_eq(r->command, s->command, r->id);
		str_eq(r->tree, s->tree, r->id);
		list_eq(r->result, s->result, r->id);
		list_eq(r->to, s->to, r->id);
		list_eq(r->cc, s->cc, r->id);
	}
	path_in(p, sizeof(p), bin_dir, "generated/catalog_seed.sql");
	assert_int_equal(twl_read_file(p, 1 << 22, &seed, NULL), 0);
	assert_non_null(b->seed_sql);
	assert_string_equal(b->seed_sql, seed);
	assert_null(a->seed_sql);
	free(seed);
	twl_catalog_free(b);
}

/* The shipped data file with "version" @version and NEW_TEXT in soft_limit. */
static char *newer_text(int version, size_t *len)
{
	return catalog_newer(src_dir, (unsigned)version, NEW_TEXT, len);
}

static void test_refuses_bad_input(void **state)
{
	char err[1024], *big;
	size_t len;
	char *text = newer_text(7, &len);

	(void)state;
	/* a syntax error names the input, line and column */
	assert_null(twl_catalog_load("{\"version\": 3,\n x}", 18, "srv", err,
				     sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "srv:2:"));
	/* a rule of the generator */
	text[strstr(text, "\"exact\"") - text + 1] = 'X';
	assert_null(twl_catalog_load(text, len, "srv", err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "messages["));
	/* over the size cap, before any parsing */
	big = calloc(1, TWL_CATALOG_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, ' ', TWL_CATALOG_MAX_BYTES + 1);
	assert_null(twl_catalog_load(big, TWL_CATALOG_MAX_BYTES + 1, "srv", err,
				     sizeof(err)));
	assert_int_equal(errno, EFBIG);
	assert_non_null(strstr(err, "larger than"));
	free(big);
	free(text);
	/* nothing of it became current */
	assert_ptr_equal(twl_catalog_current(), &twl_catalog_compiled);
}

static void test_install_matches_new_text(void **state)
{
	char err[1024];
	size_t len;
	char *text = newer_text(twl_catalog_compiled.version + 1, &len);
	struct twl_catalog *c;
	struct twl_match m;
	const char *old =
		twl_catalog_find("memcg_v1.soft_limit")->messages[0].text;

	(void)state;
	assert_int_equal(twl_match_text(NEW_TEXT, strlen(NEW_TEXT), &m), 0);
	c = twl_catalog_load(text, len, "newer", err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	free(text); /* the catalog keeps nothing of the buffer */
	assert_int_equal(twl_catalog_install(c), 0);
	assert_ptr_equal(twl_catalog_current(), c);
	assert_int_equal(twl_catalog_version(),
			 twl_catalog_compiled.version + 1);
	assert_int_equal(twl_match_text(NEW_TEXT, strlen(NEW_TEXT), &m), 1);
	assert_string_equal(m.feature->id, "memcg_v1.soft_limit");
	assert_ptr_equal(m.feature, twl_catalog_find("memcg_v1.soft_limit"));
	assert_int_equal(twl_match_normalized(NEW_TEXT, strlen(NEW_TEXT), &m),
			 1);
	/* the texts it had still match, through the new index */
	assert_int_equal(twl_match_text(old, strlen(old), &m), 1);
	assert_string_equal(m.feature->id, "memcg_v1.soft_limit");
	assert_ptr_equal(twl_catalog_at(0), &c->features[0]);
}

/* Installs are capped: each stays in memory until the process exits. */
static void test_install_cap(void **state)
{
	struct twl_catalog *c = NULL;
	int ret = 0;
	size_t i;

	(void)state;
	for (i = 0; i <= TWL_CATALOG_MAX_INSTALLS && !ret; i++) {
		c = load_shipped();
		ret = twl_catalog_install(c);
	}
	assert_int_equal(ret, -ENOSPC);
	assert_ptr_not_equal(twl_catalog_current(), c);
	twl_catalog_free(c); /* refused: still the caller's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded_equals_compiled),
		cmocka_unit_test(test_refuses_bad_input),
		cmocka_unit_test(test_install_matches_new_text),
		cmocka_unit_test(test_install_cap),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
