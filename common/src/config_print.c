// SPDX-License-Identifier: GPL-2.0
/*
 * Documentation from the option tables: --help, the commented example
 * file, the effective values, and a manual page's option list.
 */
#include <stdio.h>
#include <string.h>

#include <twilight/util.h>

#include "config_internal.h"

#define HELP_WIDTH 79
#define FLAG_COLUMN 26

/*
 * Print @text word-wrapped: lines start with @prefix, the first continues
 * at column @col (what is already printed), all fit @width where possible.
 */
static void wrap(FILE *f, const char *text, const char *prefix, size_t col,
		 size_t width)
{
	size_t plen = strlen(prefix);

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > plen && col + 1 + w > width) {
			fprintf(f, "\n%s", prefix);
			col = plen;
		} else if (col > plen) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)w, text);
		col += w;
		text += w;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

/* The value's name: .arg, or one from the type. */
static const char *arg_name(const struct twl_cfg_opt *o)
{
	static const char *const names[] = {
		[TWL_CFG_STRING] = "STRING",   [TWL_CFG_PATH] = "PATH",
		[TWL_CFG_URL] = "URL",	       [TWL_CFG_BOOL] = "BOOL",
		[TWL_CFG_UINT] = "N",	       [TWL_CFG_DOUBLE] = "NUMBER",
		[TWL_CFG_SIZE] = "SIZE",       [TWL_CFG_SECONDS] = "DURATION",
		[TWL_CFG_MILLIS] = "DURATION", [TWL_CFG_CHOICE] = "WORD",
		[TWL_CFG_LIST] = "LIST",
	};

	if (o->arg)
		return o->arg;
	if ((size_t)o->type >= sizeof(names) / sizeof(names[0]))
		return "VALUE";
	return names[o->type];
}

static bool takes_value(const struct twl_cfg_opt *o)
{
	return !(o->flags & TWL_CFG_SWITCH) && o->type != TWL_CFG_BOOL;
}

/* The help text with its default and "Required." appended. */
static void full_help(const struct twl_cfg_opt *o, char *buf, size_t cap)
{
	size_t len = (size_t)snprintf(buf, cap, "%s", o->help);

	if (o->def && *o->def && len < cap && !(o->flags & TWL_CFG_SWITCH))
		len += (size_t)snprintf(buf + len, cap - len, " Default %s.",
					o->def);
	if ((o->flags & TWL_CFG_REQUIRED) && len < cap)
		snprintf(buf + len, cap - len, " Required.");
}

/* "-c, --config FILE", "    --listen ADDR", "    --limit-loopback[=BOOL]" */
static int flag_head(const struct twl_cfg_opt *o, char *buf, size_t cap)
{
	char sh[8] = "    ";
	const char *after = "";

	if (o->short_name)
		snprintf(sh, sizeof(sh), "-%c, ", o->short_name);
	if (o->type == TWL_CFG_BOOL && !(o->flags & TWL_CFG_SWITCH))
		after = "[=BOOL]";
	if (takes_value(o))
		return snprintf(buf, cap, "  %s--%s %s", sh, o->name,
				arg_name(o));
	return snprintf(buf, cap, "  %s--%s%s", sh, o->name, after);
}

/* Contract: see config.h. */
void twl_cfg_print_flags(FILE *f, const struct twl_cfg_opt *opts, size_t n)
{
	char head[128], help[2048];
	size_t i;

	for (i = 0; i < n; i++) {
		int len = flag_head(&opts[i], head, sizeof(head));

		full_help(&opts[i], help, sizeof(help));
		if (len + 1 >= FLAG_COLUMN)
			fprintf(f, "%s\n%*s", head, FLAG_COLUMN, "");
		else
			fprintf(f, "%-*s", FLAG_COLUMN, head);
		wrap(f, help, "                          ", FLAG_COLUMN,
		     HELP_WIDTH);
	}
}

/* Contract: see config.h. */
void twl_cfg_print_keys(FILE *f, const struct twl_cfg_opt *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct twl_cfg_opt *o = &opts[i];

		if (o->flags & TWL_CFG_CLI)
			continue;
		fprintf(f, "  %-20s %-8s default %s%s\n      ", o->name,
			cfg_type_name(o), o->def ? o->def : "(none)",
			o->flags & TWL_CFG_REQUIRED ? ", required" : "");
		wrap(f, o->help, "      ", 6, HELP_WIDTH);
	}
}

/* Contract: see config.h. */
void twl_cfg_print_example(FILE *f, const struct twl_cfg_opt *opts, size_t n)
{
	char help[2048];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct twl_cfg_opt *o = &opts[i];

		if (o->flags & TWL_CFG_CLI)
			continue;
		snprintf(help, sizeof(help), "%s (%s%s)", o->help,
			 cfg_type_name(o),
			 o->flags & TWL_CFG_REQUIRED ? ", required" : "");
		fprintf(f, "\n# ");
		wrap(f, help, "# ", 2, HELP_WIDTH);
		if (o->example)
			fprintf(f, "%s = %s\n", o->name, o->example);
		else
			fprintf(f, "#%s =%s%s\n", o->name, o->def ? " " : "",
				o->def ? o->def : "");
	}
}

/* Contract: see config.h. */
void twl_cfg_print_values(FILE *f, const struct twl_cfg_opt *opts, size_t n,
			  const void *obj)
{
	char buf[4096];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct twl_cfg_opt *o = &opts[i];

		if (o->flags & TWL_CFG_SWITCH)
			continue;
		cfg_format(o, obj, buf, sizeof(buf));
		if ((o->flags & TWL_CFG_SECRET) && buf[0])
			snprintf(buf, sizeof(buf), "(secret)");
		if (o->flags & TWL_CFG_URI) {
			char uri[sizeof(buf)];

			snprintf(uri, sizeof(uri), "%s", buf);
			twl_uri_redact(uri, buf, sizeof(buf));
		}
		fprintf(f, "%s = %s\n", o->name, buf);
	}
}

/*
 * @s for roff: '-' as \-, '\' as \e; a line never starts with '.' or '\'';
 * words with a '/' (paths, URLs) are not hyphenated.
 */
static void roff(FILE *f, const char *s, bool line_start)
{
	bool word_start = true;

	if (line_start && (*s == '.' || *s == '\''))
		fputs("\\&", f);
	for (; *s; s++) {
		if (word_start && *s != ' ' &&
		    strcspn(s, "/ ") < strcspn(s, " "))
			fputs("\\%", f);
		word_start = *s == ' ';
		if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\\')
			fputs("\\e", f);
		else
			fputc(*s, f);
	}
}

static void man_flag_head(FILE *f, const struct twl_cfg_opt *o)
{
	bool bool_opt = o->type == TWL_CFG_BOOL && !(o->flags & TWL_CFG_SWITCH);

	if (takes_value(o) && !o->short_name) {
		fputs(".BI \\-\\-", f);
		roff(f, o->name, false);
		fprintf(f, " \" %s\"\n", arg_name(o));
		return;
	}
	fputs(o->short_name || bool_opt ? ".BR " : ".B ", f);
	if (o->short_name)
		fprintf(f, "\\-%c \", \" ", o->short_name);
	fputs("\\-\\-", f);
	roff(f, o->name, false);
	if (takes_value(o))
		fprintf(f, " \" \\fI%s\\fR\"", arg_name(o));
	else if (bool_opt)
		fputs(" \" [\\fIbool\\fR]\"", f);
	fputc('\n', f);
}

/* Contract: see config.h. */
void twl_cfg_print_man(FILE *f, const struct twl_cfg_opt *opts, size_t n,
		       bool flags)
{
	char help[2048];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct twl_cfg_opt *o = &opts[i];

		if (!flags && (o->flags & TWL_CFG_CLI))
			continue;
		fputs(".TP\n", f);
		if (flags) {
			man_flag_head(f, o);
		} else {
			fputs(".BI ", f);
			roff(f, o->name, false);
			fprintf(f, " \" %s\"\n", cfg_type_name(o));
		}
		full_help(o, help, sizeof(help));
		roff(f, help, true);
		fputc('\n', f);
	}
}
