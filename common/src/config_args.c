// SPDX-License-Identifier: GPL-2.0
/* Command-line flags: --key value, --key=value, -k value, --no-key. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

/* A flag as its argument names it: the option, and a value after '='. */
struct flag {
	struct cfg_found f;
	bool found, negated;
	const char *value;
	char key[64]; /* as written, for messages: "max-body", "-c" */
};

static void read_flag(struct twl_cfg *p, const char *a, struct flag *fl)
{
	const char *name = a + 2, *eq;
	size_t len;

	memset(fl, 0, sizeof(*fl));
	if (a[1] != '-') {
		snprintf(fl->key, sizeof(fl->key), "-%c", a[1]);
		fl->found = cfg_find_short(p, a[1], &fl->f);
		fl->value = a[2] ? a + 2 : NULL;
		return;
	}
	eq = strchr(name, '=');
	len = eq ? (size_t)(eq - name) : strlen(name);
	fl->value = eq ? eq + 1 : NULL;
	snprintf(fl->key, sizeof(fl->key), "%.*s", (int)len, name);
	fl->found = cfg_find(p, name, len, &fl->f);
	if (fl->found || len <= 3 || strncmp(name, "no-", 3))
		return;
	/* --no-KEY: false for a boolean that is not a switch. */
	fl->found = cfg_find(p, name + 3, len - 3, &fl->f) &&
		    fl->f.o->type == TWL_CFG_BOOL &&
		    !(fl->f.o->flags & TWL_CFG_SWITCH);
	fl->negated = fl->found;
}

/*
 * The flag at argv[*@i] (and its value, which may be the next argument).
 * Reports problems only when @apply.
 */
static int one_flag(struct twl_cfg *p, int argc, char **argv, int *i,
		    unsigned pass)
{
	const struct twl_cfg_opt *o;
	struct flag fl;
	bool apply, b;

	read_flag(p, argv[*i], &fl);
	if (!fl.found) {
		if (!(pass & TWL_CFG_PASS_LATE))
			return 0;
		cfg_msg(p, 0, true, false, fl.key,
			"unknown option (see %s --help)", p->prog);
		return -EINVAL;
	}
	o = fl.f.o;
	apply = pass & ((o->flags & TWL_CFG_EARLY) ? TWL_CFG_PASS_EARLY :
						     TWL_CFG_PASS_LATE);
	if ((o->flags & TWL_CFG_SWITCH) || fl.negated) {
		if (fl.value) {
			if (apply)
				cfg_msg(p, 0, true, false, fl.key,
					"takes no value");
			return apply ? -EINVAL : 0;
		}
		fl.value = fl.negated ? "false" : o->implied;
	} else if (!fl.value && o->type == TWL_CFG_BOOL) {
		/* --key alone is true; --key WORD takes a boolean word. */
		if (*i + 1 < argc && !twl_parse_bool(argv[*i + 1], &b))
			fl.value = argv[++*i];
		else
			fl.value = "true";
	} else if (!fl.value) {
		if (*i + 1 >= argc) {
			if (apply)
				cfg_msg(p, 0, true, false, fl.key,
					"needs a value");
			return apply ? -EINVAL : 0;
		}
		fl.value = argv[++*i];
	}
	if (!apply)
		return 0;
	return cfg_apply(p, &fl.f, fl.value, CFG_SRC_FLAG, 0, fl.key);
}

/* Contract: see config.h. */
int twl_cfg_args(struct twl_cfg *p, int argc, char **argv, unsigned pass,
		 char **rest, int *n_rest)
{
	size_t before = p->n_errors;
	bool positional_only = false;
	int i, nr = 0, ret = 0;

	for (i = 0; i < argc && ret != -ENOMEM; i++) {
		const char *a = argv[i];

		if (!positional_only && !strcmp(a, "--")) {
			positional_only = true;
		} else if (!positional_only && a[0] == '-' && a[1]) {
			ret = one_flag(p, argc, argv, &i, pass);
		} else if (!(pass & TWL_CFG_PASS_LATE)) {
			continue;
		} else if (rest) {
			rest[nr++] = argv[i];
		} else {
			cfg_msg(p, 0, true, false, "",
				"unexpected argument \"%.80s\" (see %s --help)",
				a, p->prog);
		}
	}
	if (n_rest && (pass & TWL_CFG_PASS_LATE))
		*n_rest = nr;
	if (ret == -ENOMEM)
		return ret;
	return p->n_errors != before ? -EINVAL : 0;
}
