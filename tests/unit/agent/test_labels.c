// SPDX-License-Identifier: GPL-2.0
/* The operator's labels (agent/labels.c) against the wire's host.labels rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "labels.h"

/* Each rule of host.labels, with the item it names and why. */
static void test_labels_check(void **state)
{
	static const struct {
		const char *items[3];
		int bad; /* index of the bad item, -1: none */
		const char *why;
	} t[] = {
		{ { "team=payments", "env=prod", "k8s.io-zone_1=eu-west-1a" },
		  -1,
		  NULL },
		{ { "a=A-Za_z.0:9/x@y+z" }, -1, NULL },
		{ { "team=payments", "Env=prod" }, 1, "label name \"Env\"" },
		{ { "_team=x" }, 0, "a lowercase letter or digit" },
		{ { "=x" }, 0, "label name \"\"" },
		{ { "team" }, 0, "\"team\" is not name=value" },
		{ { "team=" }, 0, "label value \"\" of team" },
		{ { "team=pay ments" }, 0, "label value \"pay ments\"" },
		{ { "team=a=b" }, 0, "label value \"a=b\"" },
		{ { "team=caf\xc3\xa9" }, 0, "label value" },
		{ { "team=a", "env=b", "team=c" },
		  2,
		  "\"team\" is given twice" },
		{ { "abcdefghijklmnopqrstuvwxyz0123456=x" }, 0, "1..32 bytes" },
		{ { "abcdefghijklmnopqrstuvwxyz012345=x" }, -1, NULL },
		{ { "v=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" },
		  0,
		  "1..64 bytes" },
	};
	struct twl_labels l;
	char why[256];
	size_t i, k;
	json_t *o;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&l, 0, sizeof(l));
		for (k = 0; k < 3 && t[i].items[k]; k++)
			snprintf(l.item[k], sizeof(l.item[k]), "%s",
				 t[i].items[k]);
		l.n = k;
		why[0] = '\0';
		if (twl_labels_check(&l, why, sizeof(why)) != t[i].bad)
			fail_msg("case %zu: %s", i, why);
		if (t[i].why && !strstr(why, t[i].why))
			fail_msg("case %zu: \"%s\" does not say %s", i, why,
				 t[i].why);
		/* The JSON has exactly the good items. */
		o = twl_labels_to_json(&l);
		assert_non_null(o);
		assert_int_equal(json_object_size(o),
				 t[i].bad < 0 ? l.n : l.n - 1);
		json_decref(o);
	}
	assert_int_equal(twl_labels_check(NULL, why, sizeof(why)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
