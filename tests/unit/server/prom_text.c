// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format as the server's tests read it (prom_text.h):
 * a whole scrape checked line by line, and one series' value.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom_text.h"

/* The metric name of a sample line (up to '{' or ' ') into @out. */
static void metric_of(const char *line, char *out, size_t cap)
{
	size_t n = strcspn(line, "{ ");

	assert_true(n < cap);
	memcpy(out, line, n);
	out[n] = '\0';
}

/* Contract: see prom_text.h. */
int prom_check_exposition(const char *text)
{
	regex_t sample;
	char *copy = strdup(text), *save = NULL, *line;
	char declared[64][96], seen[512][256], name[96];
	int nd = 0, ns = 0;

	assert_int_equal(
		regcomp(&sample,
			"^[a-zA-Z_:][a-zA-Z0-9_:]*"
			"(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\""
			"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\")*\\})?"
			" -?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?$",
			REG_EXTENDED | REG_NOSUB),
		0);
	assert_true(text[strlen(text) - 1] == '\n');
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# TYPE ", 7)) {
			assert_true(nd < 64);
			assert_int_equal(sscanf(line + 7, "%95s", declared[nd]),
					 1);
			nd++;
			continue;
		}
		if (!strncmp(line, "# HELP ", 7))
			continue;
		if (regexec(&sample, line, 0, NULL, 0))
			fail_msg("not a sample line: '%s'", line);
		metric_of(line, name, sizeof(name));
		bool ok = false;
		for (int i = 0; i < nd && !ok; i++) {
			size_t n = strlen(declared[i]);

			ok = !strncmp(name, declared[i], n) &&
			     (!name[n] || !strcmp(name + n, "_bucket") ||
			      !strcmp(name + n, "_sum") ||
			      !strcmp(name + n, "_count"));
		}
		if (!ok)
			fail_msg("sample of undeclared metric: '%s'", line);
		/* the series (name and labels) once */
		size_t key = strcspn(line, " ");
		assert_true(key < sizeof(seen[0]) && ns < 512);
		for (int i = 0; i < ns; i++)
			if (!strncmp(seen[i], line, key) && !seen[i][key])
				fail_msg("series twice: '%s'", line);
		memcpy(seen[ns], line, key);
		seen[ns++][key] = '\0';
	}
	regfree(&sample);
	free(copy);
	return ns;
}

/* Contract: see prom_text.h. */
long long prom_value_of(const char *text, const char *series)
{
	char needle[256];
	const char *p;

	snprintf(needle, sizeof(needle), "\n%s ", series);
	p = strstr(text, needle);
	if (!p)
		fail_msg("no series %s", series);
	return strtoll(p + strlen(needle), NULL, 10);
}
