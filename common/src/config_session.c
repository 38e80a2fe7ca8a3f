// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration sessions: the tables joined, where each option was set,
 * the messages, and "key = value" files.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "config_internal.h"

#define LINE_MAX_BYTES (4096 + 128)

/* Contract: see config.h. */
struct twl_cfg *twl_cfg_new(const char *prog)
{
	struct twl_cfg *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->prog, sizeof(p->prog), "%s", prog ? prog : "twilight");
	return p;
}

/* Contract: see config.h. */
void twl_cfg_free(struct twl_cfg *p)
{
	free(p);
}

/* Contract: see config.h. */
int twl_cfg_add(struct twl_cfg *p, const struct twl_cfg_opt *opts, size_t n,
		void *obj)
{
	if (p->nsec >= TWL_CFG_MAX_SECTIONS || p->nopts + n > TWL_CFG_MAX_OPTS)
		return -E2BIG;
	p->sec[p->nsec].opts = opts;
	p->sec[p->nsec].n = n;
	p->sec[p->nsec].obj = obj;
	p->nsec++;
	p->nopts += n;
	return 0;
}

static bool name_is(const char *name, const char *key, size_t len)
{
	return name && strlen(name) == len && !memcmp(name, key, len);
}

/* Contract: see config_internal.h. */
bool cfg_find(struct twl_cfg *p, const char *key, size_t len,
	      struct cfg_found *f)
{
	size_t s, i, idx = 0;

	for (s = 0; s < p->nsec; s++) {
		for (i = 0; i < p->sec[s].n; i++, idx++) {
			const struct twl_cfg_opt *o = &p->sec[s].opts[i];
			bool alias = name_is(o->alias, key, len);

			if (!alias && !name_is(o->name, key, len))
				continue;
			f->o = o;
			f->obj = p->sec[s].obj;
			f->idx = idx;
			f->alias = alias;
			return true;
		}
	}
	return false;
}

/* Contract: see config_internal.h. */
bool cfg_find_short(struct twl_cfg *p, char c, struct cfg_found *f)
{
	size_t s, i, idx = 0;

	for (s = 0; s < p->nsec; s++) {
		for (i = 0; i < p->sec[s].n; i++, idx++) {
			if (!c || p->sec[s].opts[i].short_name != c)
				continue;
			f->o = &p->sec[s].opts[i];
			f->obj = p->sec[s].obj;
			f->idx = idx;
			f->alias = false;
			return true;
		}
	}
	return false;
}

__attribute__((format(printf, 6, 0))) static void
vmsg(struct twl_cfg *p, unsigned line, bool flag, bool note, const char *key,
     const char *fmt, va_list ap)
{
	struct twl_cfg_msg *m;

	if (!note)
		p->n_errors++;
	if (p->n_msgs >= TWL_CFG_MAX_MSGS) {
		p->dropped++;
		return;
	}
	m = &p->msgs[p->n_msgs++];
	m->line = line;
	m->flag = flag;
	m->note = note;
	snprintf(m->key, sizeof(m->key), "%s", key ? key : "");
	vsnprintf(m->text, sizeof(m->text), fmt, ap);
}

/* Contract: see config_internal.h. */
void cfg_msg(struct twl_cfg *p, unsigned line, bool flag, bool note,
	     const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(p, line, flag, note, key, fmt, ap);
	va_end(ap);
}

/* Contract: see config.h. */
void twl_cfg_error(struct twl_cfg *p, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(p, 0, false, false, key, fmt, ap);
	va_end(ap);
}

/* Contract: see config.h. */
bool twl_cfg_failed(const struct twl_cfg *p)
{
	return p->n_errors != 0;
}

/* Contract: see config_internal.h. */
int cfg_apply(struct twl_cfg *p, const struct cfg_found *f, const char *value,
	      enum cfg_src src, unsigned line, const char *key)
{
	struct twl_cfg_state *st = &p->st[f->idx];
	const struct twl_cfg_opt *o = f->o;
	bool flag = src == CFG_SRC_FLAG, replace;
	size_t *count = (size_t *)((char *)f->obj + o->count_off), was = 0;
	char why[256];
	int ret;

	if (f->alias && !st->noted) {
		cfg_msg(p, line, flag, true, key,
			"deprecated spelling: write %s%s (the old one still works)",
			flag ? "--" : "", o->name);
		st->noted = true;
	}
	/* A list from a new source replaces the items of the one before. */
	replace = o->type == TWL_CFG_LIST && src != CFG_SRC_PROGRAM &&
		  st->list_src != src;
	if (replace) {
		was = *count;
		*count = 0;
	}
	ret = cfg_store(o, f->obj, value, why, sizeof(why));
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		if (replace)
			*count = was; /* nothing lost on bad input */
		if (o->flags & TWL_CFG_SECRET)
			cfg_msg(p, line, flag, false, key, "bad %s: %s",
				cfg_type_name(o), why);
		else
			cfg_msg(p, line, flag, false, key,
				"bad %s \"%.80s\": %s", cfg_type_name(o), value,
				why);
		return -EINVAL;
	}
	if (replace)
		st->list_src = (unsigned char)src;
	st->from_file |= src == CFG_SRC_FILE;
	st->from_flag |= flag;
	if (src == CFG_SRC_FILE)
		st->line = line;
	return 0;
}

/* Contract: see config.h. */
int twl_cfg_set(struct twl_cfg *p, const char *key, const char *value)
{
	struct cfg_found f;

	if (!cfg_find(p, key, strlen(key), &f)) {
		cfg_msg(p, 0, false, false, key,
			"unknown option (see %s --help)", p->prog);
		return -ENOENT;
	}
	return cfg_apply(p, &f, value, CFG_SRC_PROGRAM, 0, key);
}

/* Split "key = value" in @line (modified); NULL key: why in *@why. */
static char *split_line(char *line, char **val, const char **why)
{
	char *key = twl_strip(line), *eq, *v;
	size_t vl;

	eq = strchr(key, '=');
	if (!eq) {
		*why = "expected \"key = value\"";
		return NULL;
	}
	*eq = '\0';
	key = twl_strip(key);
	v = twl_strip(eq + 1);
	if (v[0] == '"') {
		vl = strlen(v);
		if (vl < 2 || v[vl - 1] != '"') {
			*why = "unterminated quoted value";
			*val = key; /* the key, for the message */
			return NULL;
		}
		v[vl - 1] = '\0';
		v++;
	}
	*val = v;
	return key;
}

/* One line of a file (NUL-terminated copy in @line). */
static int parse_line(struct twl_cfg *p, char *line, unsigned lineno)
{
	const char *why = NULL;
	struct cfg_found f;
	char *key, *val = NULL, *s = twl_strip(line);

	if (!*s || *s == '#' || *s == ';')
		return 0;
	key = split_line(s, &val, &why);
	if (!key) {
		if (val)
			cfg_msg(p, lineno, false, false, val, "%s", why);
		else
			cfg_msg(p, lineno, false, false, "",
				"%s, got \"%.60s\"", why, s);
		return -EINVAL;
	}
	if (!cfg_find(p, key, strlen(key), &f)) {
		cfg_msg(p, lineno, false, false, key,
			"unknown option (see %s --help)", p->prog);
		return -EINVAL;
	}
	if (f.o->flags & TWL_CFG_CLI) {
		cfg_msg(p, lineno, false, false, key,
			"can only be given on the command line (--%s)",
			f.o->name);
		return -EINVAL;
	}
	if (p->st[f.idx].line && f.o->type != TWL_CFG_LIST) {
		cfg_msg(p, lineno, false, false, key,
			"set twice (first on line %u)", p->st[f.idx].line);
		return -EINVAL;
	}
	return cfg_apply(p, &f, val, CFG_SRC_FILE, lineno, key);
}

/* Contract: see config.h. */
int twl_cfg_parse_text(struct twl_cfg *p, const char *file, const char *text,
		       size_t len)
{
	size_t before = p->n_errors, pos = 0, i;
	char *line = malloc(LINE_MAX_BYTES);
	unsigned lineno = 0;
	int ret = 0;

	if (!line)
		return -ENOMEM;
	snprintf(p->file, sizeof(p->file), "%s", file);
	for (i = 0; i < TWL_CFG_MAX_OPTS; i++)
		p->st[i].line = 0;
	while (pos < len && ret != -ENOMEM) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		lineno++;
		if (n >= LINE_MAX_BYTES)
			cfg_msg(p, lineno, false, false, "",
				"line longer than %d bytes",
				LINE_MAX_BYTES - 1);
		else if (memchr(text + pos, '\0', n))
			cfg_msg(p, lineno, false, false, "",
				"line contains a NUL byte");
		else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			ret = parse_line(p, line, lineno);
		}
		pos += n + 1;
	}
	free(line);
	if (ret == -ENOMEM)
		return ret;
	return p->n_errors != before ? -EINVAL : 0;
}

/* Contract: see config.h. */
int twl_cfg_load_file(struct twl_cfg *p, const char *path, size_t max,
		      bool must_exist)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = twl_read_file(path, max, &text, &len);
	if (ret == -ENOENT && !must_exist)
		return 0;
	if (ret) {
		snprintf(p->file, sizeof(p->file), "%s", path);
		if (ret == -EFBIG)
			cfg_msg(p, 0, false, false, "",
				"cannot read the config file: larger than %zu KiB",
				max / 1024);
		else
			cfg_msg(p, 0, false, false, "",
				"cannot read the config file: %s",
				strerror(-ret));
		return ret;
	}
	ret = twl_cfg_parse_text(p, path, text, len);
	free(text);
	return ret;
}

static bool unset(const struct twl_cfg_opt *o, const void *obj)
{
	const void *f = cfg_field(o, obj);

	if (o->type == TWL_CFG_LIST)
		return !*(const size_t *)((const char *)obj + o->count_off);
	if (o->kind == TWL_CFG_K_BUF)
		return !*(const char *)f;
	if (cfg_is_text(o))
		return !*(const char *const *)f;
	return false;
}

/* Contract: see config.h. */
int twl_cfg_check(struct twl_cfg *p)
{
	size_t before = p->n_errors, s, i;
	char why[256];

	for (s = 0; s < p->nsec; s++) {
		for (i = 0; i < p->sec[s].n; i++) {
			const struct twl_cfg_opt *o = &p->sec[s].opts[i];
			void *obj = p->sec[s].obj;

			if ((o->flags & TWL_CFG_REQUIRED) && unset(o, obj))
				twl_cfg_error(p, o->name,
					      "required but not set");
			else if (cfg_check_stored(o, obj, why, sizeof(why)))
				twl_cfg_error(p, o->name, "%s", why);
		}
	}
	return p->n_errors != before ? -EINVAL : 0;
}

/* Contract: see config.h. */
bool twl_cfg_given(const struct twl_cfg *p, const char *name)
{
	struct cfg_found f;

	if (!cfg_find((struct twl_cfg *)p, name, strlen(name), &f))
		return false;
	return p->st[f.idx].from_file || p->st[f.idx].from_flag;
}

/* Contract: see config.h. */
void twl_cfg_print_msgs(FILE *f, const struct twl_cfg *p)
{
	const char *where = p->file[0] ? p->file : p->prog;
	size_t i;

	for (i = 0; i < p->n_msgs; i++) {
		const struct twl_cfg_msg *m = &p->msgs[i];

		if (m->flag)
			fprintf(f, "%s: command line: ", p->prog);
		else if (m->line)
			fprintf(f, "%s:%u: ", where, m->line);
		else
			fprintf(f, "%s: ", where);
		if (m->note)
			fprintf(f, "note: ");
		if (m->key[0])
			fprintf(f, "%s%s: ",
				m->flag && m->key[0] != '-' ? "--" : "",
				m->key);
		fprintf(f, "%s\n", m->text);
	}
	if (p->dropped)
		fprintf(f, "%s: %zu more messages not shown\n", where,
			p->dropped);
}
