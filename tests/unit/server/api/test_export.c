// SPDX-License-Identifier: GPL-2.0
/*
 * linux-mm export (server/api/export.c, export_where.c): wrapping at 72
 * columns, redaction, hostile strings, CSV quoting, golden email text.
 * Pure: no server, no database.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twilight/util.h>

#include "api/export.h"

/* Columns of one line: UTF-8 code points. */
static size_t cols(const char *s, size_t n)
{
	size_t c = 0, i;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

/* Assert every line of @text (from the first blank line on) is <= 72 columns. */
static void assert_wrapped(const char *text, bool body_only)
{
	const char *p = text, *nl;
	bool in_body = !body_only;

	while (*p) {
		nl = strchr(p, '\n');
		assert_non_null(nl); /* every line ends in a newline */
		if (in_body && cols(p, (size_t)(nl - p)) > TWL_EXPORT_WIDTH) {
			print_error("line too wide (%zu): %.*s\n",
				    cols(p, (size_t)(nl - p)), (int)(nl - p),
				    p);
			fail();
		}
		if (nl == p)
			in_body = true;
		p = nl + 1;
	}
}

static void test_parse_format(void **state)
{
	enum twl_export_format f;

	assert_int_equal(twl_export_parse_format(NULL, &f), 0);
	assert_int_equal(f, TWL_EXPORT_TEXT);
	assert_int_equal(twl_export_parse_format("csv", &f), 0);
	assert_int_equal(f, TWL_EXPORT_CSV);
	assert_int_equal(twl_export_parse_format("json", &f), 0);
	assert_int_equal(f, TWL_EXPORT_JSON);
	assert_int_equal(twl_export_parse_format("xml", &f), -EINVAL);
	assert_int_equal(twl_export_parse_format("", &f), -EINVAL);
}

static char *wrap(const char *text, const char *first, const char *rest,
		  unsigned width)
{
	struct twl_buf b;

	twl_buf_init(&b, 1 << 20);
	assert_int_equal(twl_export_wrap(&b, text, first, rest, width), 0);
	return b.data;
}

static void test_wrap_basic(void **state)
{
	char *s;

	s = wrap("one two three four", "", "", 9);
	assert_string_equal(s, "one two\nthree\nfour\n");
	free(s);
	s = wrap("  spaced\tout \n words ", "- ", "  ", 12);
	assert_string_equal(s, "- spaced out\n  words\n");
	free(s);
	/* A word wider than the line is broken, never overflows. */
	s = wrap("aaaaaaaaaaaaaaaaaaaaaaaaa", "", "", 10);
	assert_string_equal(s, "aaaaaaaaaa\naaaaaaaaaa\naaaaa\n");
	free(s);
	s = wrap("", "x ", "", 10);
	assert_string_equal(s, "x \n");
	free(s);
}

static void test_wrap_utf8_and_hostile(void **state)
{
	char *s;

	/* "é" is one column: 5 of them plus a space and 4 fit in 10. */
	s = wrap("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 abcd", "", "", 10);
	assert_string_equal(s,
			    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 abcd\n");
	free(s);
	/* Control bytes and invalid UTF-8 are escaped, never passed through. */
	s = wrap("a\x1b[31mred \xff\xfe end\x7f", "", "", 72);
	assert_string_equal(s, "a\\x1b[31mred \\xff\\xfe end\\x7f\n");
	free(s);
	/* A truncated multi-byte sequence is escaped byte by byte. */
	s = wrap("x\xe2\x82", "", "", 72);
	assert_string_equal(s, "x\\xe2\\x82\n");
	free(s);
	/* Escapes are not split across lines. */
	s = wrap("\x01\x02\x03", "", "", 5);
	assert_string_equal(s, "\\x01\n\\x02\n\\x03\n");
	free(s);
}

/*
 * The data document a store would build: two used features; unused ones
 * read only, silent where measured, not measured.
 */
static const char sample_json[] =
	"{\"generated\": 1764732000, \"window_days\": 30, \"catalog_version\": 1,"
	" \"fleet\": {\"hosts\": 1200, \"hosts_v1\": 800, \"hosts_hybrid\": 100,"
	"  \"hosts_v2\": 290, \"hosts_unknown\": 10, \"v1_or_hybrid\": 900,"
	"  \"coverage\": {\"hosts\": 1200, \"bpf_memory\": 1100,"
	"   \"unmeasured\": 20, \"census_only\": 5, \"boot_uncovered\": 3,"
	"   \"records_lost\": 2, \"probe_missing\": 1, \"map_overflow\": 4,"
	"   \"no_log_source\": 25}},"
	" \"features\": ["
	"  {\"id\": \"memcg_v1.soft_limit\","
	"   \"title\": \"Soft limit (memory.soft_limit_in_bytes)\","
	"   \"status\": \"warns\", \"kernel_version\": \"v6.12\","
	"   \"commit\": \"569c4f62d84a\", \"replacement\": \"memory.low\","
	"   \"replacement_note\": \"memory.low is best-effort protection under global"
	" pressure; it inverts the soft limit's meaning (protect below, instead of"
	" reclaim above), so values need rethinking\","
	"   \"hosts_using\": 12, \"hosts_v1\": 900, \"hosts_all\": 1200, \"uses\": 3456,"
	"   \"hosts_configuring\": 10, \"hosts_listening\": 0,"
	"   \"hosts_reading_only\": 800, \"bpf_measured\": true,"
	"   \"readers\": [{\"process\": \"runc\", \"hosts\": 812, \"reads\": 90000},"
	"    {\"process\": \"node_exporter\", \"hosts\": 3, \"reads\": 40}],"
	"   \"kernel_warnings\": {\"hosts\": 3, \"warnings\": 9, \"kernels\": ["
	"    {\"kernel\": \"6.12.9\", \"hosts\": 2, \"warnings\": 6,"
	"     \"origin\": \"upstream\"},"
	"    {\"kernel\": \"6.1.0-28-amd64\", \"hosts\": 1, \"warnings\": 3,"
	"     \"origin\": \"backport\"}]},"
	"   \"first_seen\": 1762000000, \"last_seen\": 1764700000,"
	"   \"kernels\": [{\"kernel\": \"6.1.0-28-amd64\", \"hosts\": 10},"
	"                {\"kernel\": \"6.1.0-31-amd64\", \"hosts\": 2}],"
	"   \"workloads\": ["
	"    {\"process\": \"java\", \"place\": \"docker\","
	"     \"place_name\": \"0123456789ab\", \"target\": \"docker\","
	"     \"image\": \"registry.secret.example/openjdk:21\","
	"     \"has_image\": true, \"hosts\": 7, \"uses\": 3000},"
	"    {\"process\": \"java\", \"place\": \"docker\","
	"     \"place_name\": \"ba9876543210\", \"target\": \"docker\","
	"     \"image\": \"registry.secret.example/openjdk:17\","
	"     \"has_image\": true, \"hosts\": 3, \"uses\": 400},"
	"    {\"process\": \"memtune\", \"place\": \"systemd_unit\","
	"     \"place_name\": \"memtune.service\","
	"     \"target\": \"systemd_unit\", \"image\": \"\","
	"     \"has_image\": false, \"hosts\": 2, \"uses\": 56},"
	"    {\"process\": \"containerd-shim\", \"place\": \"systemd_unit\","
	"     \"place_name\": \"containerd.service\", \"target\": \"docker\","
	"     \"image\": \"\", \"has_image\": false, \"hosts\": 1,"
	"     \"uses\": 5},"
	"    {\"process\": \"envoy\", \"place\": \"kubernetes\","
	"     \"place_name\": \"aa\", \"target\": \"kubernetes\","
	"     \"image\": \"\", \"has_image\": false, \"hosts\": 4,"
	"     \"uses\": 9},"
	"    {\"process\": \"memtune\", \"place\": \"systemd_unit\","
	"     \"place_name\": \"other.service\","
	"     \"target\": \"systemd_unit\", \"image\": \"\","
	"     \"has_image\": false, \"hosts\": 1, \"uses\": 2}],"
	"   \"by_label\": {\"key\": \"team\", \"groups\": ["
	"    {\"value\": \"payments-secret\", \"hosts\": 8},"
	"    {\"value\": null, \"hosts\": 4}]},"
	"   \"readiness\": {\"hosts\": 11},"
	"   \"hosts\": [\"web-17.secret.example\", \"db-3.secret.example\"],"
	"   \"annotations\": [{\"workload\": \"java\", \"text\": \"The JVM sizes its heap"
	" from the soft limit so that batch jobs give memory back to latency-critical"
	" services under pressure.\", \"fits\": \"partial\", \"author\": \"alice\","
	" \"team\": \"team-secret\", \"created\": 1764600000}]},"
	"  {\"id\": \"memcg_v1.oom_control\", \"title\": \"OOM notification\","
	"   \"status\": \"warns\", \"kernel_version\": \"v6.12\", \"commit\": null,"
	"   \"replacement\": \"memory.events\", \"replacement_note\": null,"
	"   \"hosts_using\": 1, \"hosts_v1\": 900, \"hosts_all\": 1200, \"uses\": 1,"
	"   \"hosts_configuring\": 0, \"hosts_listening\": 1,"
	"   \"hosts_reading_only\": 0, \"bpf_measured\": true, \"readers\": [],"
	"   \"kernel_warnings\": {\"hosts\": 0, \"warnings\": 0, \"kernels\": []},"
	"   \"first_seen\": 1764000000, \"last_seen\": 1764000000,"
	"   \"kernels\": [], \"workloads\": [], \"annotations\": []},"
	"  {\"id\": \"memcg_v1.swapaccount\", \"title\": \"swapaccount=0\","
	"   \"status\": \"no-op\", \"replacement\": \"memory.swap.max\","
	"   \"hosts_using\": 0, \"hosts_v1\": 900, \"hosts_all\": 1200, \"uses\": 0,"
	"   \"bpf_measured\": false, \"readers\": [],"
	"   \"first_seen\": null, \"last_seen\": null,"
	"   \"kernels\": [], \"workloads\": [], \"annotations\": []},"
	"  {\"id\": \"memcg_v1.kmem_tcp_usage\", \"title\": \"TCP usage\","
	"   \"status\": \"silent\", \"hosts_using\": 0, \"uses\": 0,"
	"   \"hosts_reading_only\": 5, \"bpf_measured\": true,"
	"   \"readers\": [{\"process\": \"node_exporter\", \"hosts\": 5,"
	"    \"reads\": 100}],"
	"   \"kernels\": [], \"workloads\": [], \"annotations\": []},"
	"  {\"id\": \"memcg_v1.memsw\", \"title\": \"memsw\","
	"   \"status\": \"silent\", \"hosts_using\": 0, \"uses\": 0,"
	"   \"bpf_measured\": true, \"readers\": [],"
	"   \"kernels\": [], \"workloads\": [], \"annotations\": []},"
	"  {\"id\": \"cgroup_v1.freezer\", \"title\": \"freezer\","
	"   \"status\": \"warns\", \"hosts_using\": 0, \"uses\": 0,"
	"   \"bpf_measured\": false, \"readers\": [],"
	"   \"kernels\": [], \"workloads\": [], \"annotations\": []}"
	" ],"
	" \"readiness\": {\"target\": \"debian-12-6.12\", \"title\":"
	"  \"Debian 12 (bookworm) moving to Debian's 6.12 kernel\","
	"  \"kernel\": \"6.12\", \"hosts\": 13}}";

static json_t *sample_data(void)
{
	json_error_t err;
	json_t *d = json_loads(sample_json, 0, &err);

	if (!d)
		print_error("sample json: %s at %d\n", err.text, err.line);
	assert_non_null(d);
	return d;
}

static char *render(const json_t *data, const struct twl_export_opts *opts,
		    enum twl_export_format fmt)
{
	json_t *red = twl_export_redact(data, opts);
	char *out = NULL;
	size_t len = 0;

	assert_non_null(red);
	assert_int_equal(twl_export_render(red, fmt, &out, &len), 0);
	assert_int_equal(strlen(out), len);
	json_decref(red);
	return out;
}

static char *read_golden(const char *name)
{
	const char *src = getenv("TWILIGHT_SOURCE_DIR");
	char path[1024];
	char *buf = NULL;

	if (!src) {
		print_error(
			"TWILIGHT_SOURCE_DIR is not set: run this test through ctest\n");
		fail();
	}
	snprintf(path, sizeof(path), "%s/tests/unit/server/api/golden/%s", src,
		 name);
	if (twl_read_file(path, 1 << 20, &buf, NULL)) {
		print_error("cannot read golden file %s\n", path);
		fail();
	}
	return buf;
}

static void test_text_golden(void **state)
{
	json_t *d = sample_data();
	char *out = render(d, NULL, TWL_EXPORT_TEXT);
	char *golden = read_golden("export-default.txt");

	if (strcmp(out, golden)) {
		/* cmocka truncates long messages: the whole text to a file */
		FILE *f = fopen("export-default.got", "w");

		if (f) {
			fputs(out, f);
			fclose(f);
		}
		print_error("export text differs from golden; got (whole text"
			    " in export-default.got in the test's directory):"
			    "\n%s\n",
			    out);
		fail();
	}
	assert_wrapped(out, true);
	free(golden);
	free(out);
	json_decref(d);
}

/*
 * A feature nobody configures or listens to is told apart by why: read
 * by monitoring only; silent where BPF measured it; not measured at all
 * (no BPF on the fleet, or BPF cannot count it). With no BPF host, no
 * feature is "not seen in use".
 */
static void test_text_unused_kinds(void **state)
{
	json_t *d = sample_data();
	json_t *cov = json_object_get(json_object_get(d, "fleet"), "coverage");
	char *out = render(d, NULL, TWL_EXPORT_TEXT);

	assert_non_null(strstr(out, "Read but not configured (only read, by"
				    " monitoring):\nmemcg_v1.kmem_tcp_usage"
				    " (5 hosts).\n"));
	assert_non_null(strstr(out, "\nNot seen in use in this period:"
				    " memcg_v1.memsw.\n"));
	assert_non_null(strstr(out, "\nNot measured (no BPF count of them on"
				    " this fleet, no kernel warning of\nthem"
				    " seen): memcg_v1.swapaccount,"
				    " cgroup_v1.freezer.\n"));
	/* a reader's feature is not in use: no block of its own */
	assert_null(strstr(out, "memcg_v1.kmem_tcp_usage: "));
	assert_non_null(strstr(out, "  Configured on 10 hosts, listened to"
				    " on 0; read and nothing else on 800\n"));
	assert_non_null(strstr(out, "  Read only (monitoring), by: runc on"
				    " 812 hosts, node_exporter on 3\n"));
	assert_non_null(strstr(out, "  Kernel warnings: 3 hosts, 9 warnings"
				    " (upstream 6.12.9: 2 hosts;\n    backport"
				    " on 6.1.0-28-amd64: 1 host)\n"));
	assert_non_null(strstr(out, "neither on 20 (census only on 5)"));
	free(out);

	json_object_set_new(cov, "bpf_memory", json_integer(0));
	out = render(d, NULL, TWL_EXPORT_TEXT);
	assert_null(strstr(out, "Not seen in use"));
	assert_non_null(strstr(out,
			       "\nNot measured (no BPF count of them on"
			       " this fleet, no kernel warning of\nthem"
			       " seen): memcg_v1.swapaccount, memcg_v1.memsw,"
			       " cgroup_v1.freezer.\n"));
	free(out);
	json_decref(d);
}

static void test_text_headers_and_counts(void **state)
{
	json_t *d = sample_data();
	char *out = render(d, NULL, TWL_EXPORT_TEXT);

	assert_true(!strncmp(out, "Subject: ", 9));
	assert_non_null(strstr(out, "\nTo: linux-mm@kvack.org\n"));
	assert_non_null(strstr(out, "\nCc: cgroups@vger.kernel.org\n"));
	/* Counts against their denominators. */
	assert_non_null(strstr(out, "12 of 900 cgroup v1/hybrid hosts (1.3%)"));
	assert_non_null(strstr(out, "Share of all hosts: 12 of 1200 (1.0%)"));
	assert_non_null(strstr(out, "Uses counted: 3456"));
	assert_non_null(strstr(out, "6.1.0-28-amd64: 10 hosts"));
	assert_non_null(strstr(out, "memory.low"));
	assert_non_null(strstr(out, "partly for 1"));
	assert_non_null(strstr(out, "memcg_v1.swapaccount"));
	free(out);
	json_decref(d);
}

/* @s with every run of whitespace made one space: wrapping undone. */
static char *flat(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n') {
			if (o == out || o[-1] != ' ')
				*o++ = ' ';
			continue;
		}
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* The process of workload row @i of feature 0 of redacted @d. */
static const char *row_process(const json_t *red, size_t i)
{
	json_t *f = json_array_get(json_object_get(red, "features"), 0);

	return json_string_value(json_object_get(
		json_array_get(json_object_get(f, "workloads"), i), "process"));
}

static void test_redaction_default(void **state)
{
	json_t *d = sample_data(), *red = twl_export_redact(d, NULL);
	char *out = render(d, NULL, TWL_EXPORT_TEXT);
	char *csv = render(d, NULL, TWL_EXPORT_CSV);
	char *js = render(d, NULL, TWL_EXPORT_JSON);
	char *text = flat(out);
	const char *all[] = { out, csv, js };
	size_t i;

	for (i = 0; i < 3; i++) {
		/* host names, images, labels, teams, cgroup names */
		assert_null(strstr(all[i], "secret"));
		assert_null(strstr(all[i], "0123456789ab"));
		assert_null(strstr(all[i], "memtune.service"));
		assert_null(strstr(all[i], "containerd.service"));
	}
	/* The two docker rows of java are one workload: uses add up. */
	assert_non_null(strstr(text, "- java in a docker container (image"
				     " withheld), on docker container cgroups:"
				     " 7 hosts, 3400 uses"));
	assert_non_null(strstr(text, "- memtune in a systemd unit, on systemd"
				     " unit cgroups: 2 hosts, 58 uses"));
	assert_non_null(strstr(text, "- containerd-shim in a systemd unit, on"
				     " docker container cgroups: 1 host, 5"
				     " uses"));
	assert_non_null(strstr(csv, "containerd-shim in a systemd unit, on"
				    " docker container cgroups (1 hosts, 5"
				    " uses)"));
	assert_non_null(strstr(text, "- envoy in a kubernetes pod, on"
				     " kubernetes pod cgroups: 4 hosts, 9"
				     " uses"));
	/* sorted by hosts, then uses */
	assert_string_equal(row_process(red, 0), "java");
	assert_string_equal(row_process(red, 1), "envoy");
	assert_string_equal(row_process(red, 2), "memtune");
	assert_string_equal(row_process(red, 3), "containerd-shim");
	assert_null(row_process(red, 4));
	/* the readiness lines, and what was withheld, each with its setting */
	assert_non_null(strstr(text, "13 of our hosts will lose a cgroup v1"
				     " interface they use with our"
				     " distribution's next kernel"
				     " (debian-12-6.12, Linux 6.12;"));
	assert_non_null(strstr(text, "11 of our hosts will lose this with our"
				     " distribution's next kernel."));
	assert_non_null(strstr(text, "Withheld from this report: host names"
				     " (export-show-hosts), cgroup names"
				     " (export-show-cgroups), container images"
				     " (export-show-images), host labels"
				     " (export-show-labels), teams"
				     " (export-show-teams), values written"
				     " (export-show-values)."));
	assert_null(strstr(text, "Shown by the sender's choice"));
	assert_null(strstr(text, "Hosts using it by"));
	json_decref(red);
	free(text);
	free(out);
	free(csv);
	free(js);
	json_decref(d);
}

/* Redacting redacted data changes nothing (the store pre-groups kinds). */
static void test_redaction_idempotent(void **state)
{
	json_t *d = sample_data();
	json_t *once = twl_export_redact(d, NULL);
	json_t *twice = twl_export_redact(once, NULL);

	assert_true(json_equal(once, twice));
	json_decref(twice);
	json_decref(once);
	json_decref(d);
}

static void test_redaction_show_more(void **state)
{
	struct twl_export_opts o = { .show_hosts = true,
				     .full_cgroups = true,
				     .show_images = true,
				     .show_labels = true,
				     .show_teams = true,
				     .show_values = true };
	struct twl_export_opts images = { .show_images = true };
	struct twl_export_opts hide = { .hide_processes = true };
	json_t *d = sample_data();
	char *raw = render(d, &o, TWL_EXPORT_TEXT), *out = flat(raw);
	char *js = render(d, &o, TWL_EXPORT_JSON);
	char *img_raw = render(d, &images, TWL_EXPORT_TEXT);
	char *img = flat(img_raw);
	char *hidden = render(d, &hide, TWL_EXPORT_TEXT);

	assert_non_null(strstr(out, "web-17.secret.example"));
	assert_non_null(strstr(
		out, "- java in a docker container (0123456789ab, image"
		     " registry.secret.example/openjdk:21), on docker container"
		     " cgroups: 7 hosts, 3000 uses"));
	assert_non_null(strstr(out, "- memtune in a systemd unit"
				    " (memtune.service), on systemd unit"
				    " cgroups: 2 hosts, 56 uses"));
	assert_non_null(strstr(out, "Hosts using it by team: payments-secret"
				    " 8, without the label 4"));
	assert_non_null(strstr(js, "\"team\": \"team-secret\""));
	assert_non_null(strstr(out, "Shown by the sender's choice: host names"
				    " (export-show-hosts), cgroup names"
				    " (export-show-cgroups), container images"
				    " (export-show-images), host labels"
				    " (export-show-labels), teams"
				    " (export-show-teams), values written"
				    " (export-show-values)."));
	assert_null(strstr(out, "Withheld from this report"));
	/* Images alone: two images of java stay two rows, no unit names. */
	assert_non_null(strstr(img, "- java in a docker container (image"
				    " registry.secret.example/openjdk:17), on"
				    " docker container cgroups: 3 hosts, 400"
				    " uses"));
	assert_null(strstr(img, "0123456789ab"));
	assert_null(strstr(img, "payments"));
	assert_non_null(strstr(img, "Withheld from this report: host names"
				    " (export-show-hosts), cgroup names"
				    " (export-show-cgroups), host labels"
				    " (export-show-labels), teams"
				    " (export-show-teams), values written"
				    " (export-show-values)."));
	assert_non_null(strstr(img, "Shown by the sender's choice: container"
				    " images (export-show-images)."));
	assert_null(strstr(hidden, "java in"));
	assert_null(strstr(hidden, "memtune in"));
	assert_non_null(strstr(hidden, "(hidden) in"));
	assert_non_null(strstr(hidden, "Process names are hidden."));
	assert_wrapped(raw, true);
	free(out);
	free(raw);
	free(js);
	free(img);
	free(img_raw);
	free(hidden);
	json_decref(d);
}

static void test_hostile_strings(void **state)
{
	json_t *d = sample_data();
	json_t *f = json_array_get(json_object_get(d, "features"), 0);
	json_t *w = json_array_get(json_object_get(f, "workloads"), 0);
	json_t *a = json_array_get(json_object_get(f, "annotations"), 0);
	char long_word[300];
	char *out, *csv, *p;
	int subjects = 0;

	json_object_set_new(w, "process",
			    json_string("<img src=x onerror=alert(1)>"));
	json_object_set_new(
		a, "text",
		json_string("ok\r\nSubject: injected\n\nBcc: a@b.c \x1b[2J"));
	memset(long_word, 'x', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	json_object_set_new(a, "workload", json_string(long_word));
	json_object_set_new(f, "title",
			    json_string("=HYPERLINK(\"http://evil\")"));
	out = render(d, NULL, TWL_EXPORT_TEXT);
	csv = render(d, NULL, TWL_EXPORT_CSV);

	assert_wrapped(out, false);
	for (p = out; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, "Subject:", 8))
			subjects++;
		assert_true(strncmp(p, "Bcc:", 4));
	}
	assert_int_equal(subjects, 1);
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\r'));
	assert_non_null(strstr(out, "\\x1b[2J"));
	/* Process names are data: shown verbatim as text. */
	assert_non_null(strstr(out, "<img src=x onerror=alert(1)>"));
	/* CSV: formula neutralised, quotes doubled. */
	assert_non_null(strstr(csv, "\"'=HYPERLINK(\"\"http://evil\"\")\""));
	free(out);
	free(csv);
	json_decref(d);
}

/* Count CSV records (CRLF outside quotes) and check quoting balance. */
static int csv_records(const char *s)
{
	bool q = false;
	int n = 0;

	for (; *s; s++) {
		if (*s == '"')
			q = !q;
		else if (!q && s[0] == '\r' && s[1] == '\n')
			n++;
	}
	assert_false(q);
	return n;
}

static void test_csv_and_json(void **state)
{
	json_t *d = sample_data(), *back, *red;
	char *csv = render(d, NULL, TWL_EXPORT_CSV);
	char *js = render(d, NULL, TWL_EXPORT_JSON);

	assert_int_equal(csv_records(csv), 7); /* header + 6 features */
	assert_true(!strncmp(csv, "feature,title,status,", 21));
	assert_non_null(strstr(
		csv, "\"memcg_v1.soft_limit\",\"Soft limit"
		     " (memory.soft_limit_in_bytes)\",\"warns\",\"v6.12\","
		     "12,900,1200,3456,"));
	back = json_loads(js, 0, NULL);
	assert_non_null(back);
	red = twl_export_redact(d, NULL);
	assert_true(json_equal(back, red));
	assert_false(json_is_true(json_object_get(
		json_object_get(back, "redaction"), "show_hosts")));
	json_decref(red);
	json_decref(back);
	free(csv);
	free(js);
	json_decref(d);
}

/* One used feature with structured use cases and the values written. */
static json_t *usecase_data(void)
{
	json_error_t err;
	json_t *d = json_loads(
		"{\"generated\": 1764732000, \"window_days\": 30,"
		" \"fleet\": {\"hosts\": 3}, \"features\": [{"
		" \"id\": \"memcg_v1.soft_limit\", \"title\": \"Soft limit\","
		" \"status\": \"warns\", \"hosts_using\": 2, \"uses\": 9,"
		" \"kernels\": [], \"workloads\": [],"
		" \"values\": {\"kind\": \"bytes\","
		"  \"name\": \"soft_limit_in_bytes\", \"written\": {"
		"  \"cgroups\": 3, \"hosts\": 2, \"processes\": 3,"
		"  \"min\": 268435456, \"max\": 8589934592,"
		"  \"set\": {\"cgroups\": 2, \"hosts\": 2, \"processes\": 2},"
		"  \"unlimited\": {\"cgroups\": 2, \"hosts\": 2,"
		"  \"processes\": 2}}},"
		" \"annotations\": ["
		"  {\"workload\": \"java\", \"text\": \"heap\", \"author\": \"a\","
		"   \"intent\": \"intentional\","
		"   \"set_by\": \"docker --memory-reservation\","
		"   \"v2_tried\": \"falls_short\","
		"   \"shortfall\": \"memory.low does not reclaim\","
		"   \"team\": \"payments\"},"
		"  {\"workload\": null, \"text\": \"x\", \"author\": \"b\","
		"   \"intent\": \"accidental\","
		"   \"set_by\": \"docker --memory-reservation\","
		"   \"v2_tried\": \"no\", \"team\": \"payments\"},"
		"  {\"workload\": \"envoy\", \"text\": \"y\", \"author\": \"c\","
		"   \"intent\": \"intentional\", \"set_by\": \"kubelet\","
		"   \"v2_tried\": \"works\", \"team\": null}]}]}",
		0, &err);

	if (!d)
		print_error("usecase json: %s at %d\n", err.text, err.line);
	assert_non_null(d);
	return d;
}

/*
 * The CSV carries the use cases' structured fields (counted and listed)
 * and the values written, each redacted as the text export is: teams and
 * values only when their export-show-* setting is on.
 */
static void test_csv_use_cases_and_values(void **state)
{
	struct twl_export_opts show = { .show_values = true,
					.show_teams = true };
	json_t *d = usecase_data();
	char *all = render(d, &show, TWL_EXPORT_CSV);
	char *none = render(d, NULL, TWL_EXPORT_CSV);
	const char *tail_all =
		"2,1,\"docker --memory-reservation (2); kubelet (1)\","
		"1,1,1,\"[java] memory.low does not reclaim\",\"payments\","
		"\"soft_limit_in_bytes set on 2 cgroups on 2 hosts: 256 MiB-8 GiB;"
		" reset to unlimited by 2 processes\","
		"0,0,0,\"\",0,0,\"\",\"yes\"\r\n";
	const char *tail_none =
		"2,1,\"docker --memory-reservation (2); kubelet (1)\","
		"1,1,1,\"[java] memory.low does not reclaim\",\"\","
		"\"withheld (export-show-values)\","
		"0,0,0,\"\",0,0,\"\",\"yes\"\r\n";

	assert_non_null(strstr(all,
			       "use_cases,use_cases_intentional,"
			       "use_cases_accidental,set_by,v2_not_tried,"
			       "v2_works,v2_falls_short,v2_shortfalls,"
			       "teams,values,hosts_configuring,"
			       "hosts_listening,hosts_reading_only,readers,"
			       "kernel_warning_hosts,kernel_warnings,"
			       "kernel_warning_kernels,bpf_measured\r\n"));
	assert_int_equal(csv_records(all), 2);
	assert_true(strlen(all) > strlen(tail_all));
	assert_string_equal(all + strlen(all) - strlen(tail_all), tail_all);
	assert_true(strlen(none) > strlen(tail_none));
	assert_string_equal(none + strlen(none) - strlen(tail_none), tail_none);
	free(all);
	free(none);
	json_decref(d);
}

/*
 * Terminal and bidi controls never reach a reader raw: C1 controls
 * (U+0080-U+009F, e.g. U+009B, a one-byte CSI) and bidi overrides and
 * isolates (U+202E turns "exe.txt" into "txt.exe" on screen) are
 * escaped as \uXXXX in the text export, and CSV cells escape them and
 * every control byte, ESC included.
 */
static void test_controls_escaped(void **state)
{
	static const char *const raw[] = {
		"\x1b",		"\xc2\x85",	"\xc2\x9b",	"\xe2\x80\xae",
		"\xe2\x81\xa6", "\xe2\x80\x8f", "\xe2\x80\xa8", "\xd8\x9c",
	};
	json_t *d = sample_data();
	json_t *f = json_array_get(json_object_get(d, "features"), 0);
	json_t *w = json_array_get(json_object_get(f, "workloads"), 0);
	char *s, *out, *csv;

	s = wrap("a\xc2\x9b"
		 "2Jb \xe2\x80\xae"
		 "txt.exe \xe2\x81\xa6"
		 "x\xe2\x81\xa9",
		 "", "", 72);
	assert_string_equal(s, "a\\u009b2Jb \\u202etxt.exe \\u2066x\\u2069\n");
	free(s);
	/* ordinary non-ASCII text stays as it is */
	s = wrap("gr\xc3\xbc\xc3\x9f"
		 "e \xe2\x80\x94 \xe6\x97\xa5",
		 "", "", 72);
	assert_string_equal(s, "gr\xc3\xbc\xc3\x9f"
			       "e \xe2\x80\x94 \xe6\x97\xa5\n");
	free(s);
	json_object_set_new(
		f, "title",
		json_string(
			"t\x1b]0;owned\x07 \xc2\x85 \xe2\x80\x8f \xd8\x9c"));
	json_object_set_new(w, "process",
			    json_string("\xe2\x80\xae"
					"gnp.exe\xe2\x80\xa8"
					"x"));
	out = render(d, NULL, TWL_EXPORT_TEXT);
	csv = render(d, NULL, TWL_EXPORT_CSV);
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		if (strstr(out, raw[i]) || strstr(csv, raw[i]))
			fail_msg("control sequence %zu passed through", i);
	}
	assert_non_null(
		strstr(csv, "\"t\\x1b]0;owned\\x07 \\u0085 \\u200f \\u061c\""));
	assert_non_null(strstr(csv, "\\u202egnp.exe\\u2028x"));
	assert_non_null(strstr(out, "\\u202egnp.exe\\u2028x"));
	assert_int_equal(csv_records(csv), 7);
	free(out);
	free(csv);
	json_decref(d);
}

static void test_malformed(void **state)
{
	json_t *bad = json_pack("{s:s}", "features", "nope");
	json_t *bad2 = json_pack("{s:[i]}", "features", 3);
	char *out = (char *)1;

	assert_null(twl_export_redact(bad, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(twl_export_redact(bad2, NULL));
	assert_int_equal(twl_export_render(bad, TWL_EXPORT_TEXT, &out, NULL),
			 -EINVAL);
	assert_null(out);
	assert_int_equal(twl_export_render(bad2, TWL_EXPORT_CSV, &out, NULL),
			 -EINVAL);
	json_decref(bad);
	json_decref(bad2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_wrap_basic),
		cmocka_unit_test(test_wrap_utf8_and_hostile),
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_text_unused_kinds),
		cmocka_unit_test(test_text_headers_and_counts),
		cmocka_unit_test(test_redaction_default),
		cmocka_unit_test(test_redaction_idempotent),
		cmocka_unit_test(test_redaction_show_more),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_csv_and_json),
		cmocka_unit_test(test_csv_use_cases_and_values),
		cmocka_unit_test(test_controls_escaped),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
