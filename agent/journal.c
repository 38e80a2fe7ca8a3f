// SPDX-License-Identifier: GPL-2.0
/* Kernel records from the systemd journal, for backfill (journal.h). */
#include "journal_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* journald's "Missed N kernel messages" (SD_MESSAGE_JOURNAL_MISSED). */
#define MATCH_MISSED "MESSAGE_ID=e9bf28e6e834481bb6f48f548ad13606"
#define MATCH_KERNEL "_TRANSPORT=kernel"
/* Entries read from a boot's head looking for its "Linux version" line. */
#define HEAD_ENTRIES 8

struct jboot {
	struct twl_journal_boot pub;
	char cursor[TWL_JOURNAL_CURSOR_MAX]; /* resume after it; "" from the head */
};

struct twl_journal {
	sd_journal *j;
	struct jfiles files;
	struct twl_journal_state state;
	struct twl_journal_stats st;
	size_t n_boots, cur;
	struct jboot boots[TWL_JOURNAL_MAX_BOOTS];
	bool in_boot, resume,
		pending; /* pending: entries consumed since the last one out */
	char last_cursor[TWL_JOURNAL_CURSOR_MAX];
	struct twl_jfields jf;
};

/* A boot id as 32 lowercase hex digits (dashes dropped); false if not one. */
static bool norm_id(const char *in, size_t len, char out[33])
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		char c = in[i];

		if (c == '-')
			continue;
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (o == 32 ||
		    !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return o == 32;
}

/* Matches for @boot: its kernel entries (and journald's "Missed" notes if @missed). */
static int match_boot(sd_journal *j, const char *boot, bool missed)
{
	char m[48];
	int ret;

	sd_journal_flush_matches(j);
	snprintf(m, sizeof(m), "_BOOT_ID=%s", boot);
	ret = sd_journal_add_match(j, MATCH_KERNEL, 0);
	if (!ret && missed)
		ret = sd_journal_add_disjunction(j);
	if (!ret && missed)
		ret = sd_journal_add_match(j, MATCH_MISSED, 0);
	if (!ret)
		ret = sd_journal_add_conjunction(j);
	if (!ret)
		ret = sd_journal_add_match(j, m, 0);
	return ret;
}

/* The current entry's fields into @f (realtime from the entry itself). */
static void entry_fields(sd_journal *j, struct twl_jfields *f)
{
	const void *data;
	size_t len;

	twl_jfields_reset(f);
	SD_JOURNAL_FOREACH_DATA(j, data, len)
	{
		const char *eq = memchr(data, '=', len);

		if (eq)
			twl_jfields_add(
				f, data, (size_t)(eq - (const char *)data),
				eq + 1,
				len - (size_t)(eq + 1 - (const char *)data));
	}
	f->has_realtime = sd_journal_get_realtime_usec(j, &f->realtime) >= 0;
}

/* "Linux version 6.12.0 ..." of a verified record: the release into @b. */
static bool linux_version(const struct twl_jfields *f, struct jboot *b)
{
	struct twl_log_record rec;
	struct twl_log_parse res;

	if (twl_jfields_classify(f, TWL_LOG_JOURNAL, &rec, &res) ||
	    res.kind != TWL_LINE_RECORD || !rec.verified)
		return false;
	return twl_log_kernel_release(rec.k.text, b->pub.kernel,
				      sizeof(b->pub.kernel));
}

/*
 * Where the journal's view of @b starts: its first kernel entry and the
 * "Linux version" line among the first few. 1 when the boot has kernel
 * entries, 0 when not, -errno.
 */
static int boot_head(struct twl_journal *j, struct jboot *b)
{
	int ret, k;

	ret = match_boot(j->j, b->pub.boot_id, false);
	if (ret < 0 || (ret = sd_journal_seek_head(j->j)) < 0)
		return ret;
	for (k = 0; k < HEAD_ENTRIES; k++) {
		ret = sd_journal_next(j->j);
		if (ret <= 0)
			return k ? 1 : ret;
		entry_fields(j->j, &j->jf);
		if (k == 0) {
			uint64_t mono = 0;

			if (j->jf.has_source_mono)
				mono = j->jf.source_mono;
			else
				sd_journal_get_monotonic_usec(j->j, &mono,
							      NULL);
			b->pub.first_mono_us = mono;
			b->pub.first_wall_us = (int64_t)j->jf.realtime;
			b->pub.start_covered = mono == 0;
		}
		if (linux_version(&j->jf, b)) {
			b->pub.start_covered = true;
			break;
		}
	}
	return 1;
}

/* Candidates while choosing: every wanted boot and the newest others. */
struct choice {
	size_t n, others;
	struct jboot b[2 * TWL_JOURNAL_MAX_BOOTS + 1];
};

/* Add @b; an earlier boot nobody asked for replaces the oldest such one when @max are in. */
static void choice_add(struct choice *c, const struct jboot *b, bool wanted,
		       unsigned max)
{
	size_t i, old = c->n;

	if (wanted || c->others < max) {
		if (c->n == sizeof(c->b) / sizeof(c->b[0]))
			return;
		c->b[c->n++] = *b;
		c->others += !wanted;
		return;
	}
	/* The oldest other (not current, no cursor). */
	for (i = 0; i < c->n; i++)
		if (!c->b[i].pub.current && !c->b[i].cursor[0] &&
		    (old == c->n ||
		     c->b[i].pub.first_wall_us < c->b[old].pub.first_wall_us))
			old = i;
	if (old < c->n && c->b[old].pub.first_wall_us < b->pub.first_wall_us)
		c->b[old] = *b;
}

static int by_wall(const void *a, const void *b)
{
	const struct jboot *x = a, *y = b;

	return (x->pub.first_wall_us > y->pub.first_wall_us) -
	       (x->pub.first_wall_us < y->pub.first_wall_us);
}

/* The boot ids the journal holds (at most TWL_JOURNAL_MAX_UNIQUE). */
static int list_boot_ids(sd_journal *j, char (*ids)[33], size_t *n)
{
	const void *data;
	size_t len;
	int ret;

	*n = 0;
	ret = sd_journal_query_unique(j, "_BOOT_ID");
	if (ret < 0)
		return ret;
	SD_JOURNAL_FOREACH_UNIQUE(j, data, len)
	{
		if (*n == TWL_JOURNAL_MAX_UNIQUE)
			break;
		if (len > 9 && !memcmp(data, "_BOOT_ID=", 9) &&
		    norm_id((const char *)data + 9, len - 9, ids[*n]))
			(*n)++;
	}
	return 0;
}

/* Keep the newest TWL_JOURNAL_MAX_BOOTS, the current boot always among them. */
static void keep_newest(struct twl_journal *j, struct choice *c)
{
	size_t skip = 0, i;

	qsort(c->b, c->n, sizeof(c->b[0]), by_wall);
	while (c->n - skip > TWL_JOURNAL_MAX_BOOTS) {
		/* The current boot stays: the next oldest goes in its place. */
		if (c->b[skip].pub.current)
			c->b[skip + 1] = c->b[skip];
		skip++;
	}
	for (i = skip; i < c->n; i++)
		j->boots[j->n_boots++] = c->b[i];
}

/*
 * Choose the boots to read: the current one, every one with a saved
 * cursor, and on the first backfill the newest @max earlier ones.
 */
static int choose_boots(struct twl_journal *j, const char *current,
			unsigned max)
{
	char(*ids)[33] = malloc(TWL_JOURNAL_MAX_UNIQUE * sizeof(*ids));
	struct choice *c = calloc(1, sizeof(*c));
	size_t n, i;
	int ret = -ENOMEM;

	if (!ids || !c)
		goto out;
	if (j->state.backfilled)
		max = 0;
	ret = list_boot_ids(j->j, ids, &n);
	for (i = 0; !ret && i < n; i++) {
		const char *cur = twl_journal_state_cursor(&j->state, ids[i]);
		struct jboot b = { 0 };
		bool wanted;

		memcpy(b.pub.boot_id, ids[i], 33);
		b.pub.current = current && !strcmp(current, ids[i]);
		if (cur)
			snprintf(b.cursor, sizeof(b.cursor), "%s", cur);
		wanted = b.pub.current || cur;
		if (!wanted && !max)
			continue;
		/* A boot the journal cannot read is counted and left out. */
		ret = boot_head(j, &b);
		if (ret > 0)
			choice_add(c, &b, wanted, max);
		else if (ret < 0)
			j->st.read_errors++;
		ret = 0;
	}
	if (!ret)
		keep_newest(j, c);
out:
	free(ids);
	free(c);
	return ret;
}

/* Position at the start of boot j->cur: after its cursor, or its head. */
static int start_boot(struct twl_journal *j)
{
	struct jboot *b = &j->boots[j->cur];
	int ret = match_boot(j->j, b->pub.boot_id, true);

	if (ret < 0)
		return ret;
	j->pending = false;
	j->resume = b->cursor[0] != '\0';
	if (j->resume && sd_journal_seek_cursor(j->j, b->cursor) >= 0)
		return 0;
	/* A cursor sd-journal cannot read (not one of ours): from the head. */
	if (j->resume)
		j->st.read_errors++;
	j->resume = false;
	return sd_journal_seek_head(j->j);
}

static int get_cursor(sd_journal *j, char *out)
{
	char *c = NULL;
	int ret = sd_journal_get_cursor(j, &c);

	if (ret >= 0 && strlen(c) >= TWL_JOURNAL_CURSOR_MAX)
		ret = -E2BIG;
	if (ret >= 0)
		strcpy(out, c);
	free(c);
	return ret < 0 ? ret : 0;
}

/* The current entry: 1 when it is a record for @e, 0 when only counted. */
static int take_entry(struct twl_journal *j, struct twl_journal_entry *e)
{
	struct jboot *b = &j->boots[j->cur];
	struct twl_log_parse res = { 0 };
	int ret;

	if (get_cursor(j->j, j->last_cursor) < 0) {
		j->st.read_errors++;
		return 0;
	}
	j->pending = true;
	entry_fields(j->j, &j->jf);
	ret = twl_jfields_classify(&j->jf, TWL_LOG_JOURNAL, &e->rec, &res);
	if (ret < 0) {
		b->pub.failures++;
		j->st.failures++;
		return 0;
	}
	if (res.kind == TWL_LINE_MISSED) {
		b->pub.missed += res.missed;
		j->st.missed += res.missed;
	} else if (res.kind == TWL_LINE_USER_KMSG) {
		b->pub.user_kmsg++;
		j->st.user_kmsg++;
	}
	if (res.kind != TWL_LINE_RECORD)
		return 0;
	b->pub.records++;
	j->st.records++;
	j->pending = false;
	e->kind = TWL_JOURNAL_RECORD;
	if (!e->rec.boot_id[0])
		memcpy(e->rec.boot_id, b->pub.boot_id, 33);
	return 1;
}

/* Fill the parts of @e every kind has. */
static void entry_common(struct twl_journal *j, struct twl_journal_entry *e)
{
	const struct jboot *b = &j->boots[j->cur];

	memcpy(e->boot_id, b->pub.boot_id, sizeof(e->boot_id));
	memcpy(e->kernel, b->pub.kernel, sizeof(e->kernel));
	memcpy(e->cursor, j->last_cursor, sizeof(e->cursor));
}

/* The end of boot j->cur: 1 with a BOOT_END in @e when entries await a commit. */
static int end_boot(struct twl_journal *j, struct twl_journal_entry *e)
{
	int ret = 0;

	if (j->pending) {
		e->kind = TWL_JOURNAL_BOOT_END;
		entry_common(j, e);
		ret = 1;
	}
	j->in_boot = false;
	j->cur++;
	return ret;
}

int twl_journal_next(struct twl_journal *j, struct twl_journal_entry *e)
{
	for (;;) {
		int ret;

		if (j->cur >= j->n_boots) {
			/* No journal file could be read: earlier boots wait for one. */
			if (j->st.files)
				j->state.backfilled = true;
			return -ENODATA;
		}
		if (!j->in_boot) {
			if (start_boot(j) < 0) {
				j->st.read_errors++;
				j->cur++;
				continue;
			}
			j->in_boot = true;
		}
		ret = sd_journal_next(j->j);
		if (ret < 0)
			j->st.read_errors++;
		if (ret <= 0) {
			if (end_boot(j, e))
				return 1;
			continue;
		}
		/* After a saved cursor: its own entry was handled already. */
		if (j->resume) {
			j->resume = false;
			if (sd_journal_test_cursor(j->j,
						   j->boots[j->cur].cursor) > 0)
				continue;
		}
		if (take_entry(j, e)) {
			entry_common(j, e);
			return 1;
		}
	}
}

int twl_journal_commit(struct twl_journal *j, const struct twl_journal_entry *e)
{
	return twl_journal_state_set(&j->state, e->boot_id, e->cursor);
}

const struct twl_journal_state *twl_journal_state(const struct twl_journal *j)
{
	return &j->state;
}

size_t twl_journal_boots(const struct twl_journal *j,
			 struct twl_journal_boot *out, size_t cap)
{
	size_t i;

	for (i = 0; i < j->n_boots && i < cap; i++)
		out[i] = j->boots[i].pub;
	return j->n_boots;
}

void twl_journal_stats(const struct twl_journal *j,
		       struct twl_journal_stats *st)
{
	*st = j->st;
}

struct twl_journal *twl_journal_open(const struct twl_journal_opts *o)
{
	struct twl_journal *j;
	char current[33];
	int ret;

	if (o->current_boot &&
	    !norm_id(o->current_boot, strlen(o->current_boot), current)) {
		errno = EINVAL;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	if (o->state)
		j->state = *o->state;
	ret = jfiles_list(&j->files, o);
	if (!ret)
		ret = jfiles_open(&j->files, o, &j->st, &j->j);
	/* Data past a message's cap is never needed: less to decompress. */
	if (!ret && j->j)
		sd_journal_set_data_threshold(j->j, TWL_KMSG_TEXT_MAX + 64);
	if (!ret && j->j)
		ret = choose_boots(j, o->current_boot ? current : NULL,
				   o->max_earlier_boots);
	if (ret) {
		twl_journal_free(j);
		errno = -ret;
		return NULL;
	}
	return j;
}

void twl_journal_free(struct twl_journal *j)
{
	if (!j)
		return;
	sd_journal_close(j->j);
	jfiles_free(&j->files);
	free(j);
}
