// SPDX-License-Identifier: GPL-2.0
/* The journal as a source of the daemon (journal_source.h). */
#include "journal_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/util.h>

#include "record_dedup.h"

/* Journal files whose failure was logged already (by path hash). */
#define LOGGED_FILES 32

struct twl_jsource {
	struct twl_jsource_cfg cfg; /* state_dir and dir: own copies */
	char machine_id[33]; /* "" when the machine id file holds none */
	struct twl_journal *j; /* the open pass, or NULL */
	struct twl_journal_entry *e;
	struct twl_journal_state state; /* as of the last closed pass */
	bool dirty; /* commits not saved yet */
	bool unspooled; /* records taken since the last spooled batch */
	size_t n_boots;
	struct twl_journal_boot boots[TWL_JOURNAL_MAX_BOOTS];
	struct twl_jsource_stats st;
	size_t n_logged;
	uint64_t logged[LOGGED_FILES];
};

/* The machine id the journal's directory is named after, if the file has one. */
static void read_machine_id(struct twl_jsource *s)
{
	char *text = NULL;
	size_t len;

	if (!s->cfg.machine_id_path ||
	    twl_read_file(s->cfg.machine_id_path, 256, &text, &len))
		return;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (len == 32 && strspn(text, "0123456789abcdef") >= 32) {
		memcpy(s->machine_id, text, 32);
		s->machine_id[32] = '\0';
	}
	free(text);
}

struct twl_jsource *twl_jsource_new(const struct twl_jsource_cfg *cfg)
{
	struct twl_jsource *s;

	if (!cfg->step || !cfg->state_dir || !cfg->boot_id) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->e = malloc(sizeof(*s->e));
	if (!s->e) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->cfg = *cfg;
	s->cfg.state_dir = strdup(cfg->state_dir);
	s->cfg.dir = cfg->dir ? strdup(cfg->dir) : NULL;
	if (!s->cfg.state_dir || (cfg->dir && !s->cfg.dir)) {
		twl_jsource_free(s);
		errno = ENOMEM;
		return NULL;
	}
	read_machine_id(s);
	s->cfg.machine_id_path =
		NULL; /* read now: the config may be reloaded */
	s->st.state_load_error =
		twl_journal_state_load(cfg->state_dir, &s->state);
	return s;
}

void twl_jsource_free(struct twl_jsource *s)
{
	if (!s)
		return;
	twl_journal_free(s->j);
	free(s->e);
	free((char *)s->cfg.state_dir);
	free((char *)s->cfg.dir);
	free(s);
}

/* Save journal.json as committed so far. */
static void save(struct twl_jsource *s)
{
	const struct twl_journal_state *st = s->j ? twl_journal_state(s->j) :
						    &s->state;
	int ret = twl_journal_state_save(s->cfg.state_dir, st);

	if (ret) {
		s->st.state_save_failures++;
		s->st.last_state_error = ret;
		return;
	}
	s->dirty = false;
}

void twl_jsource_spooled(void *ctx)
{
	struct twl_jsource *s = ctx;

	s->unspooled = false;
	if (s->dirty)
		save(s);
}

/* FNV-1a of a path: which files were logged (a collision only skips a log line). */
static uint64_t path_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ULL;
	return h;
}

/* Log a skipped journal file once per path (the same files fail every pass). */
static void file_error(void *ctx, const char *path, int err)
{
	struct twl_jsource *s = ctx;
	uint64_t h = path_hash(path);
	size_t i;

	for (i = 0; i < s->n_logged; i++)
		if (s->logged[i] == h)
			return;
	if (s->n_logged < LOGGED_FILES)
		s->logged[s->n_logged++] = h;
	twl_log(LOG_WARNING,
		"journal: skipping %s: %s; the other files are read, this one is "
		"counted in health.journal_errors (journalctl --verify --file "
		"says more)",
		path, strerror(-err));
}

static int open_pass(struct twl_jsource *s)
{
	const char *dirs[2] = { s->cfg.dir, NULL };
	struct twl_journal_opts o = {
		.dirs = s->cfg.dir ? dirs : NULL,
		.machine_id = s->machine_id[0] ? s->machine_id : NULL,
		.current_boot = s->cfg.boot_id,
		.max_earlier_boots = s->cfg.max_earlier_boots,
		.state = &s->state,
		.on_file_error = file_error,
		.ctx = s,
	};

	s->j = twl_journal_open(&o);
	if (!s->j)
		return -errno;
	s->n_boots = twl_journal_boots(s->j, s->boots, TWL_JOURNAL_MAX_BOOTS);
	if (s->n_boots > TWL_JOURNAL_MAX_BOOTS)
		s->n_boots = TWL_JOURNAL_MAX_BOOTS;
	return 0;
}

/* The pass's counters into the totals; its state is the state from now on. */
static void close_pass(struct twl_jsource *s, bool done)
{
	struct twl_journal_stats js;

	twl_journal_stats(s->j, &js);
	s->st.records += js.records;
	s->st.missed += js.missed;
	s->st.file_errors = js.file_errors;
	s->st.read_errors = js.read_errors;
	s->st.passes += done;
	s->state = *twl_journal_state(s->j);
	twl_journal_free(s->j);
	s->j = NULL;
}

/* Hand one record to the pump: 0, or the pump's -errno. */
static int take(struct twl_jsource *s, struct twl_pump *p)
{
	const struct twl_journal_entry *e = s->e;
	/* This boot's records get the host's kernel from the pump. */
	int ret = twl_pump_add(p, &e->rec, e->kernel[0] ? e->kernel : NULL,
			       e->cursor[0] ? twl_dedup_place(e->cursor) : 0);

	if (ret < 0)
		return ret;
	s->unspooled |= ret > 0;
	return 0;
}

int twl_jsource_step(struct twl_jsource *s, struct twl_pump *p)
{
	unsigned n;
	int ret;

	if (!s->j) {
		ret = open_pass(s);
		s->st.open_error = ret;
		if (ret)
			return ret;
	}
	for (n = 0; n < s->cfg.step; n++) {
		ret = twl_journal_next(s->j, s->e);
		if (ret < 0) {
			close_pass(s, true);
			s->dirty = true; /* backfilled is set now */
			break;
		}
		if (s->e->kind == TWL_JOURNAL_RECORD && (ret = take(s, p))) {
			/* Not taken: the next pass reads it again from the last commit. */
			close_pass(s, false);
			return ret;
		}
		if (!twl_journal_commit(s->j, s->e))
			s->dirty = true;
	}
	/* Nothing taken waits in an unspooled batch: the commits are safe now. */
	if (s->dirty && !s->unspooled)
		save(s);
	return s->j ? 1 : 0;
}

/* The journal's view of one boot into health.boots. */
static void boot_health(const struct twl_journal_boot *jb, struct twl_health *h)
{
	struct twl_health_boot *b = twl_health_boot(h, jb->boot_id);

	if (!b)
		return;
	if (!b->kernel[0])
		snprintf(b->kernel, sizeof(b->kernel), "%s", jb->kernel);
	b->have_journal_us = true;
	b->first_journal_us = jb->first_mono_us;
	b->start_covered |= jb->start_covered;
}

void twl_jsource_health(void *ctx, struct twl_health *h)
{
	struct twl_jsource *s = ctx;
	struct twl_jsource_stats st;
	size_t i;

	for (i = 0; i < s->n_boots; i++)
		boot_health(&s->boots[i], h);
	twl_jsource_stats(s, &st);
	h->have_journal = true;
	h->journal_missed = st.missed;
	h->journal_errors = st.file_errors + st.read_errors;
}

void twl_jsource_stats(const struct twl_jsource *s,
		       struct twl_jsource_stats *st)
{
	struct twl_journal_stats js;

	*st = s->st;
	if (!s->j)
		return;
	/* The open pass counts too. */
	twl_journal_stats(s->j, &js);
	st->records += js.records;
	st->missed += js.missed;
	st->file_errors = js.file_errors;
	st->read_errors = js.read_errors;
}
