// SPDX-License-Identifier: GPL-2.0
/*
 * The deprecation texts each guest kernel can print
 * (tests/guest/kernels/texts/KERNEL.texts, read from the kernels' sources)
 * against the catalog, so that real kernels and the catalog cannot drift
 * apart: each line, %d and %s filled in, is written as a /dev/kmsg record,
 * parsed by the agent's record parser and matched; it must be its feature
 * at its level, and an exact catalog text of that feature must equal it
 * byte for byte (trailing whitespace included). Then texts-check.awk,
 * which the guest tests run on a booted kernel's /dev/kmsg dump, runs on
 * dumps made from the same files: everything found, and an unknown text,
 * another level and a changed byte reported.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kmsg_parse.h"
#include "kmsg_record.h"
#include <twilight/catalog.h>
#include <twilight/match.h>

#define MAX_TEXTS 64
#define TEXT_CAP 1024

/* The guest kernels of kernel/kernels (tests/guest/kernels/CMakeLists.txt). */
static const char *const kernels[] = { "patched-6.1", "unpatched-6.1",
				       "debian-6.1", "debian-6.12",
				       "upstream-6.12" };

struct ktext {
	int level;
	char feature[64];
	char format[TEXT_CAP]; /* the C string decoded, %d and %s kept */
	int lineno;
};

static char src_dir[4096];

static int setup(void **state)
{
	const char *s = getenv("TWILIGHT_SOURCE_DIR");

	snprintf(src_dir, sizeof(src_dir), "%s", s ? s : TWL_TEST_SOURCE_DIR);
	return 0;
}

/* Decode C string body @s (escapes \n \t \\ \") into @out; -1 if unknown. */
static int c_unescape(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\') {
			if (++i == n)
				return -1;
			c = s[i] == 'n'	 ? '\n' :
			    s[i] == 't'	 ? '\t' :
			    s[i] == '\\' ? '\\' :
			    s[i] == '"'	 ? '"' :
					   0;
			if (!c)
				return -1;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

/* One line "LEVEL<TAB>FEATURE<TAB>\"C string\""; 1 parsed, 0 skipped. */
static int parse_line(char *line, struct ktext *t, const char *file, int lineno)
{
	char *tab1, *tab2, *q;
	size_t n = strcspn(line, "\n");

	line[n] = '\0';
	if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
		return 0;
	tab1 = strchr(line, '\t');
	tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
	q = tab2 ? tab2 + 1 : NULL;
	if (!tab2 || strchr(q, '\t') || tab1 - line != 1 || line[0] < '0' ||
	    line[0] > '7' || (size_t)(tab2 - tab1 - 1) >= sizeof(t->feature) ||
	    strlen(q) < 2 || q[0] != '"' || q[strlen(q) - 1] != '"')
		fail_msg("%s:%d: not LEVEL<TAB>FEATURE<TAB>\"C string\": %s",
			 file, lineno, line);
	t->level = line[0] - '0';
	memcpy(t->feature, tab1 + 1, (size_t)(tab2 - tab1 - 1));
	t->feature[tab2 - tab1 - 1] = '\0';
	if (c_unescape(q + 1, strlen(q) - 2, t->format, sizeof(t->format)))
		fail_msg("%s:%d: unknown escape in %s", file, lineno, q);
	t->lineno = lineno;
	return 1;
}

/* The texts of @kernel; returns how many. */
static size_t load_texts(const char *kernel, struct ktext *t, char *path,
			 size_t path_cap)
{
	char line[2048];
	size_t n = 0;
	int lineno = 0;
	FILE *fp;

	assert_true((size_t)snprintf(path, path_cap,
				     "%s/tests/guest/kernels/texts/%s.texts",
				     src_dir, kernel) < path_cap);
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		assert_true(n < MAX_TEXTS);
		n += (size_t)parse_line(line, &t[n], path, ++lineno);
	}
	fclose(fp);
	if (n == 0)
		fail_msg("%s has no text", path);
	return n;
}

/* The text the kernel prints: %d and %s filled in, %% as %. */
static void instantiate(const char *format, char *out, size_t cap,
			const char *file, int lineno)
{
	size_t o = 0;

	for (const char *p = format; *p; p++) {
		const char *ins = NULL;
		char one[2] = { *p, '\0' };

		if (*p == '%') {
			p++;
			ins = *p == 'd' ? "4242" :
			      *p == 's' ? "twl-mount" :
			      *p == '%' ? "%" :
					  NULL;
			if (!ins)
				fail_msg(
					"%s:%d: conversion %%%c is neither %%d nor %%s",
					file, lineno, *p ? *p : '0');
		}
		if (!ins)
			ins = one;
		assert_true(o + strlen(ins) < cap);
		memcpy(out + o, ins, strlen(ins));
		o += strlen(ins);
	}
	out[o] = '\0';
}

/* Some exact message of @f has exactly @text, trailing whitespace included. */
static bool has_exact_text(const struct twl_feature *f, const char *text)
{
	for (size_t j = 0; j < f->n_messages; j++)
		if (f->messages[j].match == TWL_MATCH_EXACT &&
		    !strcmp(f->messages[j].text, text))
			return true;
	return false;
}

static void check_text(const struct ktext *t, const char *file)
{
	static char raw[TWL_KMSG_RECORD_MAX];
	static struct twl_kmsg_record rec;
	char text[TEXT_CAP];
	const struct twl_feature *f;
	struct twl_match m;
	size_t n;

	instantiate(t->format, text, sizeof(text), file, t->lineno);
	n = kmsg_record(raw, sizeof(raw), t->level, 7, NULL, text);
	assert_int_equal(twl_kmsg_parse_record(raw, n, &rec), 0);
	assert_true(twl_kmsg_is_kernel(&rec));
	if (!twl_match_text(rec.text, rec.text_len, &m))
		fail_msg(
			"%s:%d: the catalog has no message for \"%s\" (add it to schema/catalog.json)",
			file, t->lineno, text);
	f = m.feature;
	if (strcmp(f->id, t->feature))
		fail_msg("%s:%d: the catalog says %s, the file %s", file,
			 t->lineno, f->id, t->feature);
	if (f->messages[m.message].level != t->level)
		fail_msg(
			"%s:%d: %s: the catalog has level %d, the kernel prints %d",
			file, t->lineno, f->id, f->messages[m.message].level,
			t->level);
	if (f->messages[m.message].match == TWL_MATCH_EXACT &&
	    !has_exact_text(f, text))
		fail_msg(
			"%s:%d: %s lists no variant equal to \"%s\" byte for byte (list every variant a kernel prints)",
			file, t->lineno, f->id, text);
}

/* Every text of every guest kernel is its feature's in the catalog. */
static void test_kernel_texts_are_in_the_catalog(void **state)
{
	struct ktext t[MAX_TEXTS];
	char path[4300];
	size_t total = 0;

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		size_t n = load_texts(kernels[k], t, path, sizeof(path));

		for (size_t i = 0; i < n; i++)
			check_text(&t[i], path);
		total += n;
	}
	assert_true(total >= 30);
}

/* The directory holds exactly the five kernels' files. */
static void test_one_file_per_kernel(void **state)
{
	char dir[4200];
	struct dirent *e;
	size_t found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/guest/kernels/texts", src_dir);
	d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t k = 0;

		if (e->d_name[0] == '.')
			continue;
		while (k < sizeof(kernels) / sizeof(kernels[0]) &&
		       (strncmp(e->d_name, kernels[k], strlen(kernels[k])) ||
			strcmp(e->d_name + strlen(kernels[k]), ".texts")))
			k++;
		if (k == sizeof(kernels) / sizeof(kernels[0]))
			fail_msg("%s/%s is no guest kernel's texts file", dir,
				 e->d_name);
		found++;
	}
	closedir(d);
	assert_int_equal(found, sizeof(kernels) / sizeof(kernels[0]));
}

/*
 * Write a /dev/kmsg dump of @kernel's texts at their levels, plus @extra
 * (already a record line, or NULL), run texts-check.awk on it and return
 * its exit status; its output is left in @out.
 */
static int run_check(const char *kernel, const char *extra, char *out,
		     size_t cap)
{
	char dir[] = "/tmp/twl-texts-XXXXXX", dump[64], res[64], cmd[9000],
	     path[4300], text[TEXT_CAP];
	static char raw[TWL_KMSG_RECORD_MAX];
	struct ktext t[MAX_TEXTS];
	size_t n = load_texts(kernel, t, path, sizeof(path)), len;
	unsigned long long seq = 0;
	FILE *fp;
	int status;

	assert_non_null(mkdtemp(dir));
	snprintf(dump, sizeof(dump), "%s/dump", dir);
	snprintf(res, sizeof(res), "%s/out", dir);
	fp = fopen(dump, "w");
	assert_non_null(fp);
	/* noise: a kernel line and a user-space one that say "deprecated" */
	len = kmsg_record(raw, sizeof(raw), 6, seq++, NULL, "EXT4-fs mounted");
	fwrite(raw, 1, len, fp);
	len = kmsg_record(raw, sizeof(raw), 12, seq++, NULL,
			  "some daemon: option foo is deprecated");
	fwrite(raw, 1, len, fp);
	for (size_t i = 0; i < n; i++) {
		instantiate(t[i].format, text, sizeof(text), path, t[i].lineno);
		len = kmsg_record(raw, sizeof(raw), t[i].level, seq++, NULL,
				  text);
		fwrite(raw, 1, len, fp);
		fputs(" SUBSYSTEM=memory\n", fp); /* a dictionary line */
	}
	if (extra)
		fprintf(fp, "%s\n", extra);
	assert_int_equal(fclose(fp), 0);
	snprintf(
		cmd, sizeof(cmd),
		"awk -v texts='%s' -f '%s/tests/guest/kernels/texts-check.awk' '%s' >'%s' 2>&1",
		path, src_dir, dump, res);
	status = system(cmd);
	fp = fopen(res, "r");
	assert_non_null(fp);
	len = fread(out, 1, cap - 1, fp);
	out[len] = '\0';
	fclose(fp);
	unlink(dump);
	unlink(res);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* texts-check.awk accepts what each kernel prints and names what it lacks. */
static void test_texts_check_awk(void **state)
{
	static const char *const bad[][2] = {
		{ "4,900,9000,-;memory.foo is deprecated", "memory.foo" },
		/* the right text at another level */
		{ "6,900,9000,-;option changes via remount are deprecated (pid=1 comm=x)",
		  "level 6" },
		/* one byte changed */
		{ "4,900,9000,-;The swapaccount=0 commandline option is deprecated in favour of configuring swap control via cgroupfs. Please report your usecase to linux-mm@kvack.org if you depend on this functionality.",
		  "in favour" },
		/* a comm missing: %s is never empty */
		{ "4,900,9000,-;option changes via remount are deprecated (pid=1 comm=)",
		  "comm=)" },
	};
	char out[4096];

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		if (run_check(kernels[k], NULL, out, sizeof(out)) != 0)
			fail_msg("texts-check.awk rejects %s's own texts: %s",
				 kernels[k], out);
		assert_non_null(strstr(out, "all "));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run_check("debian-6.12", bad[i][0], out, sizeof(out));

		if (rc != 1 || !strstr(out, "NOT IN") ||
		    !strstr(out, bad[i][1]))
			fail_msg("texts-check.awk exit %d for \"%s\": %s", rc,
				 bad[i][0], out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_file_per_kernel),
		cmocka_unit_test(test_kernel_texts_are_in_the_catalog),
		cmocka_unit_test(test_texts_check_awk),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
