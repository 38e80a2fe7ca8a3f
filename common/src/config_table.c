// SPDX-License-Identifier: GPL-2.0
/* Option tables without a session: defaults, freeing, and self-checks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

/* Contract: see config.h. */
int twl_cfg_defaults(const struct twl_cfg_opt *opts, size_t n, void *obj)
{
	char why[256];
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (!opts[i].def)
			continue;
		if (opts[i].type == TWL_CFG_LIST)
			cfg_list_clear(&opts[i], obj);
		ret = cfg_store(&opts[i], obj, opts[i].def, why, sizeof(why));
		if (ret)
			return ret == -ENOMEM ? ret : -EINVAL;
	}
	return 0;
}

/* Contract: see config.h. */
void twl_cfg_free_fields(const struct twl_cfg_opt *opts, size_t n, void *obj)
{
	size_t i;

	if (!obj)
		return;
	for (i = 0; i < n; i++) {
		void *f = cfg_field(&opts[i], obj);

		if (opts[i].kind == TWL_CFG_K_HEAP) {
			free(*(char **)f);
			*(char **)f = NULL;
		} else if (opts[i].kind == TWL_CFG_K_ARGV) {
			*(const char **)f = NULL;
		}
	}
}

static void add_why(char *why, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_why(char *why, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;

	if (*len >= cap)
		return;
	va_start(ap, fmt);
	*len += (size_t)vsnprintf(why + *len, cap - *len, fmt, ap);
	va_end(ap);
}

static bool kebab(const char *s)
{
	if (!s || !*s || *s == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

/* Does the storage of @o fit its type? */
static bool kind_fits(const struct twl_cfg_opt *o)
{
	switch (o->type) {
	case TWL_CFG_BOOL:
		return o->kind == TWL_CFG_K_BOOL;
	case TWL_CFG_UINT:
	case TWL_CFG_SIZE:
	case TWL_CFG_SECONDS:
	case TWL_CFG_MILLIS:
		return o->kind == TWL_CFG_K_U32 || o->kind == TWL_CFG_K_U64;
	case TWL_CFG_DOUBLE:
		return o->kind == TWL_CFG_K_DOUBLE;
	case TWL_CFG_CHOICE:
		return o->choices && o->kind != TWL_CFG_K_ARGV &&
		       o->kind != TWL_CFG_K_LIST && o->kind != TWL_CFG_K_BOOL &&
		       o->kind != TWL_CFG_K_DOUBLE;
	case TWL_CFG_LIST:
		return o->kind == TWL_CFG_K_LIST && o->item_size &&
		       o->size >= o->item_size;
	default:
		return cfg_is_text(o) &&
		       (o->kind != TWL_CFG_K_ARGV || (o->flags & TWL_CFG_CLI));
	}
}

/* One row's own problems. */
static void check_row(const struct twl_cfg_opt *o, char *why, size_t cap,
		      size_t *len)
{
	size_t need = o->off + o->size;
	char err[256];
	void *obj;

	if (!kebab(o->name))
		add_why(why, cap, len, "%s: not a kebab-case name\n",
			o->name ? o->name : "(null)");
	if (!kind_fits(o))
		add_why(why, cap, len, "%s: its field does not fit a %s\n",
			o->name, cfg_type_name(o));
	if (!o->help || !*o->help)
		add_why(why, cap, len, "%s: no help text\n", o->name);
	if ((o->flags & TWL_CFG_SWITCH) && !o->implied)
		add_why(why, cap, len, "%s: a switch without .implied\n",
			o->name);
	if (!o->def || o->kind == TWL_CFG_K_ARGV || !kind_fits(o))
		return;
	/* The default must parse: store it into a scratch struct. */
	if (o->type == TWL_CFG_LIST && o->count_off + sizeof(size_t) > need)
		need = o->count_off + sizeof(size_t);
	obj = calloc(1, need);
	if (!obj) {
		add_why(why, cap, len, "%s: out of memory\n", o->name);
		return;
	}
	if (cfg_store(o, obj, o->def, err, sizeof(err)))
		add_why(why, cap, len, "%s: default \"%s\": %s\n", o->name,
			o->def, err);
	if (o->kind == TWL_CFG_K_HEAP)
		free(*(char **)cfg_field(o, obj));
	free(obj);
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Contract: see config.h. */
int twl_cfg_check_table(const struct twl_cfg_opt *opts, size_t n, char *why,
			size_t cap)
{
	size_t i, j, len = 0;

	why[0] = '\0';
	for (i = 0; i < n; i++) {
		check_row(&opts[i], why, cap, &len);
		for (j = 0; j < i; j++) {
			if (same(opts[i].name, opts[j].name) ||
			    same(opts[i].name, opts[j].alias) ||
			    same(opts[i].alias, opts[j].name) ||
			    same(opts[i].alias, opts[j].alias))
				add_why(why, cap, &len,
					"%s: name or alias also used by %s\n",
					opts[i].name, opts[j].name);
			if (opts[i].short_name &&
			    opts[i].short_name == opts[j].short_name)
				add_why(why, cap, &len,
					"%s: -%c also used by %s\n",
					opts[i].name, opts[i].short_name,
					opts[j].name);
		}
	}
	return len ? -EINVAL : 0;
}
