// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a text log file (textlog.h): its bytes from textlog_input.c
 * (plain or gzip), a bounded line buffer, continuation lines of
 * dmesg and journalctl, the binary fields of export files, and every line
 * that cannot be placed reported with its number.
 */
#include "textlog_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Room for two longest lines: one is always whole after compaction. */
#define RD_BUF (2 * TWL_LOG_LINE_MAX)

struct twl_log_reader {
	struct tl_input *in;
	char *path;
	enum twl_log_format fmt;
	bool cont; /* indented lines continue the record before them */
	struct twl_log_ctx ctx;
	struct twl_log_reader_opts o;
	struct twl_log_stats st;
	unsigned long lineno; /* lines consumed so far */
	int err; /* read error, latched; reported once the lines before it are done */
	int final; /* after the end: -ENODATA or the error */
	bool eof, discarding;
	unsigned long errline;
	char errmsg[160];
	/* Continuation forms: the record waiting for its indented lines. */
	bool have_pending;
	size_t pending_col;
	struct twl_log_record *pend, *scratch, recs[2];
	char boot_id[33]; /* journalctl's last "-- Boot ID --" */
	/* Export: the entry being read. */
	bool jf_open;
	unsigned long jf_line;
	struct twl_jfields jf;
	size_t start, end; /* unconsumed bytes in buf */
	char buf[RD_BUF + 1];
};

static void failure(struct twl_log_reader *r, unsigned long line, int err,
		    const char *why)
{
	r->st.failures++;
	if (r->o.on_failure)
		r->o.on_failure(r->o.ctx, r->path, line, err, why);
}

/* Latch a read error (reported once the lines before it are done). */
static int set_error(struct twl_log_reader *r, int err, const char *msg)
{
	r->err = err;
	r->errline = r->lineno + 1;
	snprintf(r->errmsg, sizeof(r->errmsg), "%s", msg);
	return err;
}

/* Compact, then read more; the number of bytes read, 0 at the end or when full. */
static int fill(struct twl_log_reader *r)
{
	const char *msg = "";
	size_t got;
	int ret;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->err)
		return r->err;
	if (r->eof || r->end == RD_BUF)
		return 0;
	ret = tl_input_read(r->in, r->buf + r->end, RD_BUF - r->end, &got,
			    &msg);
	if (ret)
		return set_error(r, ret, msg);
	if (!got)
		r->eof = true;
	r->end += got;
	return (int)got;
}

/*
 * The next line into *@line and *@len (CR removed): 1, 0 at the end, or the
 * latched error once every line before it was returned.
 */
static int get_line(struct twl_log_reader *r, const char **line, size_t *len)
{
	for (;;) {
		char *p = r->buf + r->start;
		char *nl = memchr(p, '\n', r->end - r->start);
		int ret;

		if (nl) {
			*line = p;
			*len = (size_t)(nl - p);
			r->start += *len + 1;
			r->lineno++;
			r->st.lines++;
			if (r->discarding) {
				r->discarding = false;
				continue;
			}
			if (*len && p[*len - 1] == '\r')
				(*len)--;
			return 1;
		}
		if (r->end - r->start >= TWL_LOG_LINE_MAX && !r->discarding) {
			failure(r, r->lineno + 1, -E2BIG,
				"line longer than 64 KiB");
			r->discarding = true;
		}
		if (r->discarding)
			r->start = r->end;
		if (r->eof || r->err) {
			if (r->end > r->start && !r->discarding) {
				/* A last line without its newline. */
				*line = p;
				*len = r->end - r->start;
				r->start = r->end;
				r->lineno++;
				r->st.lines++;
				if (!r->err)
					return 1;
				failure(r, r->lineno, r->err,
					"line cut short by a read error");
				r->errline = r->lineno;
				return r->err;
			}
			r->errline = r->lineno + 1;
			return r->err;
		}
		ret = fill(r);
		if (ret < 0 && r->end == r->start) {
			r->errline = r->lineno + 1;
			return ret;
		}
	}
}

/* Copy a record without the unused part of its text buffer. */
static void copy_record(struct twl_log_record *dst,
			const struct twl_log_record *src)
{
	memcpy(&dst->k, &src->k,
	       offsetof(struct twl_kmsg_record, text) + src->k.text_len + 1);
	memcpy((char *)dst + sizeof(dst->k), (const char *)src + sizeof(src->k),
	       sizeof(*dst) - sizeof(dst->k));
}

/* Hand out the pending record, if any: 1 when @rec got it. */
static int flush_pending(struct twl_log_reader *r, struct twl_log_record *rec)
{
	if (!r->have_pending)
		return 0;
	r->have_pending = false;
	copy_record(rec, r->pend);
	r->st.records++;
	return 1;
}

static bool is_dmesg(enum twl_log_format f)
{
	return f == TWL_LOG_DMESG || f == TWL_LOG_DMESG_T ||
	       f == TWL_LOG_DMESG_RAW || f == TWL_LOG_DMESG_X;
}

static bool is_jctl(enum twl_log_format f)
{
	return f == TWL_LOG_JCTL_SHORT || f == TWL_LOG_JCTL_ISO ||
	       f == TWL_LOG_JCTL_PRECISE || f == TWL_LOG_JCTL_MONOTONIC;
}

/* An indented line: the next line of the pending record's text. */
static void append_cont(struct twl_log_reader *r, const char *line, size_t len)
{
	struct twl_kmsg_record *k = &r->pend->k;
	size_t skip = 0, room, n;
	int ret = -E2BIG;

	while (skip < len && skip < r->pending_col && line[skip] == ' ')
		skip++;
	line += skip;
	len -= skip;
	room = sizeof(k->text) - k->text_len - 1;
	if (room < 1)
		goto fail;
	if (!is_dmesg(r->fmt)) {
		ret = memchr(line, '\0', len) ? -EINVAL : -E2BIG;
		if (ret == -EINVAL || len >= room)
			goto fail;
		memcpy(k->text + k->text_len + 1, line, len);
		n = len;
	} else {
		ret = twl_kmsg_unescape(line, len, false,
					k->text + k->text_len + 1, room, &n);
		if (ret)
			goto fail;
	}
	k->text[k->text_len] = '\n';
	k->text_len += 1 + n;
	k->text[k->text_len] = '\0';
	return;
fail:
	failure(r, r->lineno, ret,
		ret == -E2BIG ? "continuation line makes the text too long" :
				"bad continuation line");
}

/* Count a non-record kind. */
static void count_kind(struct twl_log_reader *r,
		       const struct twl_log_parse *res,
		       const struct twl_log_record *out)
{
	if (res->kind == TWL_LINE_OTHER)
		r->st.other++;
	else if (res->kind == TWL_LINE_USER_KMSG)
		r->st.user_kmsg++;
	else if (res->kind == TWL_LINE_MISSED)
		r->st.missed += res->missed;
	else if (res->kind == TWL_LINE_META && out->boot_id[0])
		memcpy(r->boot_id, out->boot_id, sizeof(r->boot_id));
	else if (res->kind == TWL_LINE_META)
		r->boot_id[0] =
			'\0'; /* "-- Reboot --": the boot is not named */
}

/* One line of a line-based form; 1 when @rec holds a record. */
static int text_line(struct twl_log_reader *r, const char *line, size_t len,
		     struct twl_log_record *rec)
{
	struct twl_log_record *out = r->cont ? r->scratch : rec;
	struct twl_log_parse res;
	int ret;

	if (!len)
		return 0;
	if (r->cont && r->have_pending && (line[0] == ' ' || line[0] == '\t')) {
		append_cont(r, line, len);
		return 0;
	}
	ret = twl_log_parse_line(r->fmt, line, len, &r->ctx, out, &res);
	if (ret < 0) {
		failure(r, r->lineno, ret, res.why);
		return flush_pending(r, rec);
	}
	if (res.kind == TWL_LINE_SKIP)
		return 0;
	if (res.kind != TWL_LINE_RECORD) {
		count_kind(r, &res, out);
		if (res.kind == TWL_LINE_OTHER && r->o.on_other)
			r->o.on_other(r->o.ctx, out);
		return flush_pending(r, rec);
	}
	out->line = r->lineno;
	if (!out->boot_id[0])
		memcpy(out->boot_id, r->boot_id, sizeof(out->boot_id));
	if (!r->cont) {
		r->st.records++;
		return 1;
	}
	ret = flush_pending(r, rec);
	r->scratch = r->pend;
	r->pend = out;
	r->pending_col = res.text_col;
	r->have_pending = true;
	return ret;
}

/* Make @n unconsumed bytes available: 1, 0 when the input ends first, -errno. */
static int ensure(struct twl_log_reader *r, size_t n)
{
	while (r->end - r->start < n) {
		int ret;

		if (r->eof)
			return 0;
		ret = fill(r);
		if (ret < 0)
			return ret;
	}
	return 1;
}

static unsigned long count_newlines(const char *p, size_t n)
{
	unsigned long c = 0;
	const char *e = p + n;

	while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		c++;
		p++;
	}
	return c;
}

/* Skip @n bytes that do not fit the buffer (a huge binary field). */
static int skip_bytes(struct twl_log_reader *r, uint64_t n)
{
	while (n) {
		size_t take = r->end - r->start;
		int ret;

		if (take > n)
			take = (size_t)n;
		r->lineno += count_newlines(r->buf + r->start, take);
		r->start += take;
		n -= take;
		if (n && (ret = ensure(r, 1)) <= 0)
			return ret ? ret : -ENODATA;
	}
	return 0;
}

/*
 * An export binary field: "KEY\n", a little-endian 64-bit size, the data and
 * "\n". A value too large for the buffer is skipped (MESSAGE: too long).
 * Returns 0, or -errno when the input ends inside it (reading stops: the
 * rest of the file cannot be framed).
 */
static int export_binary(struct twl_log_reader *r, const char *line, size_t len)
{
	char key[64];
	unsigned char sz[8];
	uint64_t size = 0;
	int i, ret;

	if (len >= sizeof(key) || !twl_jfields_key_valid(line, len))
		return set_error(r, -EBADMSG, "bad field name in export data");
	memcpy(key, line, len);
	ret = ensure(r, 8);
	if (ret <= 0)
		goto cut;
	memcpy(sz, r->buf + r->start, 8);
	for (i = 7; i >= 0; i--)
		size = size << 8 | sz[i];
	r->lineno += count_newlines(r->buf + r->start, 8);
	r->start += 8;
	if (size >= RD_BUF) {
		if (len == 7 && !memcmp(key, "MESSAGE", 7) &&
		    !r->jf.has_message) {
			r->jf.has_message = true;
			r->jf.message_err = -E2BIG;
		}
		ret = skip_bytes(r, size);
		if (ret)
			goto cut;
	} else {
		ret = ensure(r, (size_t)size + 1);
		if (ret <= 0)
			goto cut;
		twl_jfields_add(&r->jf, key, len, r->buf + r->start,
				(size_t)size);
		r->lineno += count_newlines(r->buf + r->start, (size_t)size);
		r->start += (size_t)size;
	}
	ret = ensure(r, 1);
	if (ret <= 0)
		goto cut;
	if (r->buf[r->start] != '\n')
		return set_error(
			r, -EBADMSG,
			"export binary field not followed by a newline");
	r->start++;
	r->lineno++;
	return 0;
cut:
	return ret < 0 ? ret : set_error(r, -EBADMSG, "export data cut short");
}

/* The end of an export entry: 1 when @rec holds a record. */
static int export_end(struct twl_log_reader *r, struct twl_log_record *rec)
{
	struct twl_log_parse res = { 0 };
	int ret;

	if (!r->jf_open)
		return 0;
	r->jf_open = false;
	ret = twl_jfields_classify(&r->jf, TWL_LOG_JOURNAL_EXPORT, rec, &res);
	if (ret < 0) {
		failure(r, r->jf_line, ret, res.why);
		return 0;
	}
	if (res.kind != TWL_LINE_RECORD) {
		count_kind(r, &res, rec);
		return 0;
	}
	rec->line = r->jf_line;
	r->st.records++;
	return 1;
}

/* One line of an export file: 1 when @rec holds a record, -errno to stop. */
static int export_line(struct twl_log_reader *r, const char *line, size_t len,
		       struct twl_log_record *rec)
{
	const char *eq;

	if (!len)
		return export_end(r, rec);
	if (!r->jf_open) {
		twl_jfields_reset(&r->jf);
		r->jf_open = true;
		r->jf_line = r->lineno;
	}
	eq = memchr(line, '=', len);
	if (!eq)
		return export_binary(r, line, len);
	if (twl_jfields_add(&r->jf, line, (size_t)(eq - line), eq + 1,
			    len - (size_t)(eq + 1 - line)))
		failure(r, r->lineno, -EINVAL, "not a KEY=value export line");
	return 0;
}

/* The end of the input: the record still open, if any. */
static int finish(struct twl_log_reader *r, struct twl_log_record *rec)
{
	if (r->fmt == TWL_LOG_JOURNAL_EXPORT)
		return export_end(r, rec);
	return flush_pending(r, rec);
}

int twl_log_reader_next(struct twl_log_reader *r, struct twl_log_record *rec)
{
	for (;;) {
		const char *line = NULL;
		size_t len = 0;
		int ret;

		if (r->final)
			return r->final;
		ret = get_line(r, &line, &len);
		if (ret > 0) {
			ret = r->fmt == TWL_LOG_JOURNAL_EXPORT ?
				      export_line(r, line, len, rec) :
				      text_line(r, line, len, rec);
			if (ret > 0)
				return ret;
			if (ret == 0)
				continue;
		}
		r->final = ret ? ret : -ENODATA;
		if (finish(r, rec))
			return 1;
		return r->final;
	}
}

/* The first lines of the buffer that say what the file is. */
static enum twl_log_format detect(struct twl_log_reader *r)
{
	const char *lines[TWL_LOG_SAMPLE_LINES];
	size_t lens[TWL_LOG_SAMPLE_LINES], n = 0, i = 0;

	while (i < r->end && n < TWL_LOG_SAMPLE_LINES) {
		const char *p = r->buf + i;
		const char *nl = memchr(p, '\n', r->end - i);
		size_t len = nl ? (size_t)(nl - p) : r->end - i;

		if (!nl && !r->eof)
			break; /* a line cut by the buffer's end */
		i += len + 1;
		if (len && p[len - 1] == '\r')
			len--;
		/* Blank and indented (continuation, dictionary) lines say little. */
		if (!len || p[0] == ' ' || p[0] == '\t')
			continue;
		lines[n] = p;
		lens[n++] = len;
	}
	return twl_log_detect(lines, lens, n);
}

struct twl_log_reader *twl_log_reader_open(const char *path,
					   const struct twl_log_reader_opts *o)
{
	struct twl_log_reader *r;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	errno = 0;
	r = calloc(1, sizeof(*r));
	if (!r || fstat(fd, &st) || !(r->path = strdup(path)))
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (o)
		r->o = *o;
	r->ctx.ref = r->o.ref ? r->o.ref : st.st_mtime;
	r->in = tl_input_open(fd);
	if (!r->in)
		goto fail;
	fd = -1; /* r->in owns it now */
	r->pend = &r->recs[0];
	r->scratch = &r->recs[1];
	/* Read ahead for detection; an error stays latched for the reads. */
	while (fill(r) > 0)
		;
	r->fmt = r->o.format ? r->o.format : detect(r);
	r->cont = is_dmesg(r->fmt) || is_jctl(r->fmt);
	return r;
fail:
	err = errno ? errno : ENOMEM;
	if (fd >= 0)
		close(fd);
	twl_log_reader_free(r);
	errno = err;
	return NULL;
}

void twl_log_reader_free(struct twl_log_reader *r)
{
	if (!r)
		return;
	tl_input_close(r->in);
	free(r->path);
	free(r);
}

enum twl_log_format twl_log_reader_format(const struct twl_log_reader *r)
{
	return r->fmt;
}

void twl_log_reader_stats(const struct twl_log_reader *r,
			  struct twl_log_stats *st)
{
	*st = r->st;
}

const char *twl_log_reader_error(const struct twl_log_reader *r,
				 unsigned long *line)
{
	if (line)
		*line = r->err ? r->errline : 0;
	return r->err ? r->errmsg : "";
}

int twl_log_count_file(const char *path, enum twl_log_format format,
		       struct twl_log_stats *st, enum twl_log_format *fmt_out)
{
	struct twl_log_reader_opts o = { .format = format };
	struct twl_log_reader *r = twl_log_reader_open(path, &o);
	struct twl_log_record *rec;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!r)
		return -errno;
	rec = malloc(sizeof(*rec));
	if (!rec) {
		twl_log_reader_free(r);
		return -ENOMEM;
	}
	while ((ret = twl_log_reader_next(r, rec)) == 1)
		;
	twl_log_reader_stats(r, st);
	if (fmt_out)
		*fmt_out = r->fmt;
	free(rec);
	twl_log_reader_free(r);
	return ret == -ENODATA ? 0 : ret;
}
