// SPDX-License-Identifier: GPL-2.0
/*
 * The export as one message per mailing list (api/export_mail.c),
 * `twilight-server export --out-dir` and GET
 * /api/v1/export/linux-mm/messages: a fleet whose reports (wire documents
 * in routing/, sent through the enrol and report API)
 * use a memcg and a cpuset feature gets two messages, routed and threaded
 * as the catalog says; check_export_mail.py parses them with Python's
 * email package. Hostile stored text and senders cannot add a header.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <twilight/catalog.h>
#include <twilight/util.h>

#include "api/export.h"
#include "store/export_evidence.h"
#include "harness.h"

#define MEMCG_LIST "linux-mm@kvack.org"
#define CGROUPS_LIST "cgroups@vger.kernel.org"
#define HOSTILE "works\nBcc: evil@example.com\n\ninjected"

static struct fixture fx;
static char out[300];

static const char *src_dir(void)
{
	const char *s = getenv("TWILIGHT_SOURCE_DIR");

	if (!s)
		fail_msg("TWILIGHT_SOURCE_DIR is not set (run through ctest)");
	return s;
}

/* Move every time in @j by @delta seconds (the window ends now). */
static void rebase(json_t *j, int64_t delta)
{
	static const char *const keys[] = { "sent_time", "time", "first_seen",
					    "last_seen" };
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v) rebase(v, delta);
		return;
	}
	json_object_foreach(j, k, v)
	{
		for (i = 0; i < 4; i++)
			if (!strcmp(k, keys[i]) && json_is_integer(v))
				json_integer_set(v,
						 json_integer_value(v) + delta);
		if (json_is_object(v) || json_is_array(v))
			rebase(v, delta);
	}
}

/* routing/@name, its times moved to end an hour ago, sent as an agent
 * sends it: enrolled, then POST /api/v1/reports (parsed and ingested). */
static void post_doc(const char *name)
{
	char path[512], key[80], *text;
	struct http_result res;
	json_t *doc;

	snprintf(path, sizeof(path), "%s/tests/unit/server/api/routing/%s",
		 src_dir(), name);
	doc = json_load_file(path, 0, NULL);
	assert_non_null(doc);
	rebase(doc,
	       (int64_t)time(NULL) - 3600 -
		       json_integer_value(json_object_get(doc, "sent_time")));
	enrol_host(&fx,
		   json_string_value(json_object_get(
			   json_object_get(doc, "host"), "host_id")),
		   key);
	text = dump(doc);
	http(&fx, "POST", "/api/v1/reports", key, text, strlen(text), NULL,
	     &res);
	if (res.status != 200)
		fail_msg("%s refused (%ld): %.*s", name, res.status,
			 (int)res.len, res.body);
	http_result_fini(&res);
	json_decref(doc);
	free(text);
}

static int setup(void **state)
{
	struct http_result res;
	json_t *ann;
	char *body;

	fixture_start(&fx, NULL);
	snprintf(out, sizeof(out), "%s/out", fx.dir);
	post_doc("memcg-host.json");
	post_doc("cpuset-host.json");
	ann = json_pack("{s:s, s:s, s:s}", "feature", "memcg_v1.soft_limit",
			"text", HOSTILE, "fits", "no");
	body = dump(ann);
	json_decref(ann);
	http(&fx, "POST", "/api/v1/annotations", fx.admin, body, strlen(body),
	     NULL, &res);
	assert_int_equal(res.status, 201);
	http_result_fini(&res);
	free(body);
	return 0;
}

static int teardown(void **state)
{
	fixture_stop(&fx);
	return 0;
}

/* twilight-server export --data-dir DIR --out-dir OUT, then @extra
 * (NULL-ended). */
static int export_cli(const char *extra, ...)
{
	char *argv[16] = { "export", "--data-dir", fx.dir, "--out-dir", out };
	int argc = 5;
	va_list ap;

	va_start(ap, extra);
	for (; extra && argc < 15; extra = va_arg(ap, const char *))
		argv[argc++] = (char *)extra;
	va_end(ap);
	return twl_export_cli(argc, argv);
}

static char *slurp(const char *name)
{
	char path[600], *s = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", out, name);
	if (twl_read_file(path, 1 << 20, &s, &n))
		return NULL;
	return s;
}

/* check_export_mail.py on OUT with the messages @lists expects. */
static void python_check(const char *lists)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "python3 '%s/tests/unit/server/api/check_export_mail.py' "
		 "'%s/schema/catalog.json' '%s' %s",
		 src_dir(), src_dir(), out, lists);
	assert_int_equal(system(cmd), 0);
}

/* The header block of @eml (up to the empty line), a new string. */
static char *header_block(const char *eml)
{
	const char *end = strstr(eml, "\r\n\r\n");

	assert_non_null(end);
	return strndup(eml, (size_t)(end - eml) + 2);
}

/* @s with every run of spaces, CRs and LFs one space (a new string). */
static char *squash(const char *s)
{
	char *o = strdup(s), *p = o;

	assert_non_null(o);
	for (; *s; s++) {
		if (strchr(" \r\n", *s) && p > o && p[-1] == ' ')
			continue;
		*p++ = strchr(" \r\n", *s) ? ' ' : *s;
	}
	*p = '\0';
	return o;
}

/* memcg to linux-mm, cpuset to cgroups: two messages, right headers. */
static void test_two_lists(void **state)
{
	char *eml, *head, *txt;

	assert_int_equal(
		export_cli("--from", "Zoë Admin <ops@example.org>", NULL), 0);
	python_check(MEMCG_LIST "=memcg_v1.soft_limit " CGROUPS_LIST
				"=cgroup_v1.cpuset_memory_pressure");

	eml = slurp(MEMCG_LIST ".eml");
	assert_non_null(eml);
	head = header_block(eml);
	assert_non_null(strstr(head, "\r\nTo: " MEMCG_LIST "\r\n"));
	assert_non_null(strstr(head, "<shakeel.butt@linux.dev>"));
	assert_non_null(strstr(head, "\r\nCc: \"Johannes Weiner\" "
				     "<hannes@cmpxchg.org>,\r\n"));
	assert_non_null(strstr(head, "<mhocko@kernel.org>"));
	assert_non_null(strstr(
		head,
		"\r\nIn-Reply-To: <20240814220021.3208384-1-shakeel.butt@linux.dev>\r\n"));
	assert_non_null(strstr(
		head,
		"\r\nReferences: <20240814220021.3208384-1-shakeel.butt@linux.dev>\r\n"
		" <20240814220021.3208384-3-shakeel.butt@linux.dev>\r\n"));
	assert_non_null(strstr(head, "From: =?utf-8?q?Zo=C3=AB_Admin?= "
				     "<ops@example.org>\r\n"));
	/* the hostile annotation stays one escaped body line */
	assert_null(strstr(head, "Bcc"));
	assert_null(strstr(eml, "\r\nBcc:"));
	/* (the body's wrapper takes CR and LF for spaces between words) */
	txt = squash(eml);
	assert_non_null(strstr(txt, "works Bcc: evil@example.com injected"));
	assert_non_null(strstr(
		txt, "Coverage, from the latest report of each of the 2 hosts "
		     "that sent one: BPF counters attached to the memory "
		     "controller on 1, kernel log only on 1, neither on 0 "
		     "(census only on 0); boot start not covered by a log "
		     "source on 0; kernel log records lost on 1; BPF probes "
		     "missing on 0; BPF map full (counts lost) on 0."));
	free(txt);
	txt = slurp(MEMCG_LIST ".txt");
	assert_non_null(txt);
	assert_null(strstr(txt, "Subject:"));
	assert_null(strstr(txt, "\nTo:"));
	free(txt);
	free(head);
	free(eml);

	eml = slurp(CGROUPS_LIST ".eml");
	assert_non_null(eml);
	head = header_block(eml);
	assert_non_null(strstr(head, "\r\nTo: " CGROUPS_LIST "\r\n"));
	assert_non_null(strstr(head, "<longman@redhat.com>"));
	assert_null(strstr(head, "linux-mm@kvack.org"));
	assert_non_null(strstr(
		head,
		"\r\nIn-Reply-To: <20250311123640.530377-1-mkoutny@suse.com>\r\n"));
	assert_non_null(strstr(
		head, "=?utf-8?q?Michal_Koutn=C3=BD?= <mkoutny@suse.com>"));
	assert_non_null(strstr(
		head, "Subject: cgroup v1 features in use on our fleet:\r\n"
		      " cgroup_v1.cpuset_memory_pressure\r\n"));
	free(head);
	free(eml);

	/* One feature asked for: the cgroups message of the last run goes. */
	assert_int_equal(export_cli("--feature", "memcg_v1.soft_limit", NULL),
			 0);
	python_check(MEMCG_LIST "=memcg_v1.soft_limit");
}

/* A sender that would add a header is refused and nothing is written. */
static void test_hostile_sender(void **state)
{
	static const char *const bad[] = {
		"x@example.org\r\nBcc: evil@example.com",
		"Evil <x@example.org>\nBcc: evil@example.com",
		"Evil <x@example.org\r\nBcc: evil@example.com>",
		"Evil <x@example.org> Bcc: evil@example.com",
		"no address",
	};
	char path[512];
	size_t i;

	snprintf(path, sizeof(path), "%s/" MEMCG_LIST ".eml", out);
	/* control characters: refused by the option parser (usage) */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unlink(path);
		assert_int_equal(export_cli("--from", bad[i], NULL),
				 strchr(bad[i], '\n') ? 2 : 1);
		assert_int_equal(access(path, F_OK), -1);
	}
	/* usage errors: --out-dir is text only, and not with --output */
	assert_int_equal(export_cli("--format", "csv", NULL), 2);
	assert_int_equal(export_cli("--output", "/dev/null", NULL), 2);
}

/* A data document by hand: @n features of the catalog in use. */
static json_t *data_with(size_t n, const char *title)
{
	json_t *feats = json_array();
	size_t i;

	for (i = 0; i < twl_catalog_count(); i++)
		json_array_append_new(
			feats, json_pack("{s:s, s:s, s:i, s:i}", "id",
					 twl_catalog_at(i)->id, "title", title,
					 "hosts_using", i < n ? 1 : 0, "uses",
					 i < n ? 5 : 0));
	return json_pack("{s:i, s:i, s:{s:i}, s:o}", "generated", 1764732000,
			 "window_days", 30, "fleet", "hosts", 3, "features",
			 feats);
}

/* Every header line of every message: at most 78 columns, ASCII. */
static void check_header_lines(const struct twl_export_message *m)
{
	char *head = header_block(m->eml), *line, *save = NULL;

	for (line = strtok_r(head, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		const unsigned char *u = (const unsigned char *)line;

		assert_true(strlen(line) <= 78);
		for (; *u; u++)
			assert_true(*u >= 0x20 && *u <= 0x7e);
	}
	free(head);
}

/* All features in use: Subjects bounded, "and N more"; none in use: none. */
static void test_subject_bounded_and_empty(void **state)
{
	struct twl_export_message *m = NULL;
	json_t *data = data_with(twl_catalog_count(), "t\r\nBcc: x@y");
	size_t n = 0, i;

	assert_int_equal(twl_export_messages(data, NULL, &m, &n), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_true(strlen(m[i].subject) <= TWL_EXPORT_SUBJECT_MAX);
		assert_non_null(strstr(m[i].subject, " more"));
		assert_null(strstr(m[i].eml, "\r\nBcc:"));
		assert_null(strstr(m[i].body, "\nBcc:"));
		assert_non_null(strstr(m[i].eml, "From: \"Your Name\" "
						 "<you@example.invalid>\r\n"));
		check_header_lines(&m[i]);
	}
	assert_string_equal(m[0].list, MEMCG_LIST);
	assert_string_equal(m[0].name, MEMCG_LIST);
	assert_string_equal(m[1].list, CGROUPS_LIST);
	twl_export_messages_free(m, n);
	json_decref(data);

	data = data_with(0, "t");
	assert_int_equal(twl_export_messages(data, NULL, &m, &n), 0);
	assert_int_equal(n, 0);
	twl_export_messages_free(m, n);
	json_decref(data);
	data = json_object();
	assert_int_equal(twl_export_messages(data, NULL, &m, &n), -EINVAL);
	json_decref(data);
	/* past the option parser: the mail code refuses a header in From */
	data = data_with(1, "t");
	assert_int_equal(twl_export_messages(
				 data, "a@example.org\r\nBcc: x@y.z", &m, &n),
			 -EINVAL);
	assert_int_equal(n, 0);
	assert_int_equal(twl_export_messages(data, "A\r\nBcc: x@y.z <a@b.c>",
					     &m, &n),
			 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(m[0].eml, "From: \"A\\\\x0d\\\\x0aBcc: x@y.z\" "
					 "<a@b.c>\r\n"));
	assert_null(strstr(m[0].eml, "\r\nBcc"));
	twl_export_messages_free(m, n);
	json_decref(data);
}

/*
 * Golden messages: soft_limit and oom_control (memcg, one thread),
 * cpuset_memory_pressure (its own thread) and remount (none) in use.
 * TWILIGHT_REGENERATE=1 rewrites the files; review their diff.
 */
static void test_golden(void **state)
{
	static const char *const used[] = { "memcg_v1.soft_limit",
					    "memcg_v1.oom_control",
					    "cgroup_v1.cpuset_memory_pressure",
					    "cgroup_v1.remount" };
	struct twl_export_message *m = NULL;
	json_t *data = data_with(0, ""), *f;
	const char *regen = getenv("TWILIGHT_REGENERATE");
	char path[600], *want = NULL;
	size_t n = 0, i, k;

	json_object_set_new(data, "fleet",
			    json_pack("{s:i, s:i, s:i, s:i, s:i, s:{s:i, s:i}}",
				      "hosts", 12, "hosts_v1", 8,
				      "hosts_hybrid", 2, "hosts_v2", 2,
				      "hosts_unknown", 0, "coverage", "hosts",
				      12, "bpf_memory", 10));
	json_array_foreach(json_object_get(data, "features"), i, f)
	{
		const char *id = json_string_value(json_object_get(f, "id"));

		const struct twl_feature *c = twl_catalog_find(id);

		json_object_set_new(f, "title", json_string(c->title));
		json_object_set_new(f, "status", json_string(c->status));
		json_object_set_new(f, "kernel_version",
				    json_string(c->kernel_version));
		json_object_set_new(f, "commit", json_string(c->commit));
		json_object_set_new(f, "replacement",
				    json_string(c->replacement));
		json_object_set_new(f, "hosts_v1", json_integer(10));
		json_object_set_new(f, "hosts_all", json_integer(12));
		json_object_set_new(f, "bpf_measured",
				    json_boolean(twl_export_bpf_measurable(c)));
		for (k = 0; k < 4; k++)
			if (!strcmp(id, used[k]))
				json_object_set_new(f, "hosts_using",
						    json_integer(1 + (int)k));
		json_object_set_new(
			f, "uses",
			json_integer(json_integer_value(json_object_get(
					     f, "hosts_using")) *
				     7));
	}
	assert_int_equal(twl_export_messages(data, NULL, &m, &n), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
			 "%s/tests/unit/server/api/golden/mail-%s.eml",
			 src_dir(), m[i].name);
		if (regen && !strcmp(regen, "1"))
			assert_int_equal(twl_write_file_atomic(path, m[i].eml,
							       m[i].eml_len,
							       0644),
					 0);
		if (twl_read_file(path, 1 << 20, &want, NULL))
			fail_msg("cannot read golden file %s", path);
		if (strcmp(want, m[i].eml))
			fail_msg("%s differs (TWILIGHT_REGENERATE=1 rewrites "
				 "it); got:\n%s",
				 path, m[i].eml);
		free(want);
	}
	twl_export_messages_free(m, n);
	json_decref(data);
}

static long get(const char *path, struct http_result *r)
{
	http(&fx, "GET", path, fx.viewer, NULL, 0, NULL, r);
	return r->status;
}

#define MESSAGES "/api/v1/export/linux-mm/messages"

/* The endpoint: all messages as JSON, one as .eml or body, errors. */
static void test_http(void **state)
{
	struct http_result r;
	json_t *m;
	char ct[128];

	assert_int_equal(get(MESSAGES, &r), 200);
	assert_non_null(r.json);
	m = json_object_get(r.json, "messages");
	assert_int_equal(json_array_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(m, 0), "list")),
			    MEMCG_LIST);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(m, 1), "file")),
			    CGROUPS_LIST);
	assert_non_null(strstr(
		json_string_value(json_object_get(json_array_get(m, 1), "eml")),
		"\r\nTo: " CGROUPS_LIST "\r\n"));
	assert_non_null(strstr(json_string_value(json_object_get(
				       json_array_get(m, 0), "subject")),
			       "memcg_v1.soft_limit"));
	http_result_fini(&r);

	assert_int_equal(get(MESSAGES "?list=" CGROUPS_LIST, &r), 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "message/rfc822");
	assert_true(r.len > 5 && !memcmp(r.body, "From:", 5));
	assert_non_null(strstr(r.body, "In-Reply-To: <20250311123640"));
	http_result_fini(&r);
	assert_int_equal(get(MESSAGES "?list=" MEMCG_LIST "&part=body", &r),
			 200);
	assert_true(http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/plain; charset=utf-8");
	assert_true(r.len > 6 && !memcmp(r.body, "Hello,", 6));
	http_result_fini(&r);

	/* nothing of that list in use for this feature: 404 */
	assert_int_equal(get(MESSAGES
			     "?feature=memcg_v1.soft_limit&list=" CGROUPS_LIST,
			     &r),
			 404);
	http_result_fini(&r);
	assert_int_equal(get(MESSAGES "?list=linux-block@vger.kernel.org", &r),
			 400);
	http_result_fini(&r);
	assert_int_equal(get(MESSAGES "?part=eml", &r), 400);
	http_result_fini(&r);
	assert_int_equal(get(MESSAGES "?from=nobody", &r), 400);
	http_result_fini(&r);
	assert_int_equal(get(MESSAGES "?hosts=all", &r), 400);
	http_result_fini(&r);
	http(&fx, "GET", MESSAGES, NULL, NULL, 0, NULL, &r);
	assert_int_equal(r.status, 401);
	http_result_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_lists),
		cmocka_unit_test(test_hostile_sender),
		cmocka_unit_test(test_subject_bounded_and_empty),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_http),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
