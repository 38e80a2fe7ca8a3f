// SPDX-License-Identifier: GPL-2.0
/* Kernel log record source: /dev/kmsg, saved logs and FIFOs (see kmsg_source.h). */
#include "kmsg_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct twl_kmsg_source {
	enum twl_kmsg_mode mode;
	int fd;
	const struct twl_kmsg_source_ops *ops;
	void *ctx;
	char *path;
	struct twl_log_reader *log; /* TWL_SRC_TEXTLOG */
	void (*on_skip)(void *ctx, const struct twl_log_record *rec);
	void *skip_ctx;
	struct twl_seq_track seq;
	struct twl_kmsg_source_stats st;
	size_t n_failures;
	struct twl_kmsg_failure failures[TWL_KMSG_FAILURES_KEPT];
	bool eof;
	bool discarding; /* dropping the rest of an over-long line */
	unsigned long lineno; /* lines consumed (line mode) */
	size_t start, end; /* unconsumed bytes in buf (line mode) */
	char buf[TWL_KMSG_LINE_BUF + 1];
};

void twl_seq_track_init(struct twl_seq_track *t)
{
	memset(t, 0, sizeof(*t));
}

void twl_seq_track_resume(struct twl_seq_track *t, uint64_t last)
{
	t->have_floor = true;
	t->floor = last;
	t->have_next = false;
}

bool twl_seq_track_accept(struct twl_seq_track *t, uint64_t seq)
{
	if (t->have_floor && seq <= t->floor)
		return false;
	if (t->have_next && seq > t->next)
		t->lost += seq - t->next;
	else if (!t->have_next && t->have_floor && seq > t->floor + 1)
		t->lost += seq - t->floor - 1;
	t->next = seq + 1;
	t->have_next = true;
	return true;
}

static ssize_t fd_read(void *ctx, char *buf, size_t cap)
{
	struct twl_kmsg_source *s = ctx;
	ssize_t n;

	do {
		n = read(s->fd, buf, cap);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

static const struct twl_kmsg_source_ops fd_ops = { .read = fd_read };

struct twl_kmsg_source *
twl_kmsg_source_new(enum twl_kmsg_mode mode,
		    const struct twl_kmsg_source_ops *ops, void *ctx)
{
	struct twl_kmsg_source *s;

	if (!ops || !ops->read || mode == TWL_SRC_TEXTLOG) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->mode = mode;
	s->fd = -1;
	s->ops = ops;
	s->ctx = ctx;
	twl_seq_track_init(&s->seq);
	return s;
}

/* Count a failure; keep the first ones with their line and reason. */
static void add_failure(struct twl_kmsg_source *s, unsigned long line, int err,
			const char *why)
{
	struct twl_kmsg_failure *f;

	s->st.parse_failures++;
	if (s->n_failures == TWL_KMSG_FAILURES_KEPT)
		return;
	f = &s->failures[s->n_failures++];
	f->line = line;
	f->err = err;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

static void log_failure(void *ctx, const char *path, unsigned long line,
			int err, const char *why)
{
	add_failure(ctx, line, err, why);
}

static void note_seq(struct twl_kmsg_source *s, uint64_t seq)
{
	if (!s->st.have_first_seq) {
		s->st.have_first_seq = true;
		s->st.first_seq = seq;
	}
}

/* A user-space record of a dump: its seq is neither new nor lost. */
static void log_other(void *ctx, const struct twl_log_record *rec)
{
	struct twl_kmsg_source *s = ctx;

	if (!rec->k.has_seq)
		return;
	note_seq(s, rec->k.seq);
	if (!twl_seq_track_accept(&s->seq, rec->k.seq))
		s->st.skipped++;
}

/* A regular file: a saved log, its form detected by textlog. */
static int open_textlog(struct twl_kmsg_source *s, const char *path)
{
	struct twl_log_reader_opts o = { .on_failure = log_failure,
					 .on_other = log_other,
					 .ctx = s };

	s->log = twl_log_reader_open(path, &o);
	if (!s->log)
		return -errno;
	s->mode = TWL_SRC_TEXTLOG;
	s->st.format = twl_log_reader_format(s->log);
	return 0;
}

/* A character device or a FIFO: non-blocking reads from @fd. */
static int open_fd(struct twl_kmsg_source *s, int fd, bool chr)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	s->mode = chr ? TWL_SRC_RECORDS : TWL_SRC_LINES;
	s->fd = fd;
	return 0;
}

struct twl_kmsg_source *twl_kmsg_source_open(const char *path)
{
	struct twl_kmsg_source *s = NULL;
	struct stat stb;
	int fd, ret = 0;

	/* A FIFO is opened blocking so that open() waits for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &stb) < 0)
		ret = -errno;
	else if (S_ISDIR(stb.st_mode))
		ret = -EISDIR;
	if (!ret) {
		s = twl_kmsg_source_new(TWL_SRC_LINES, &fd_ops, NULL);
		ret = s ? 0 : -errno;
	}
	if (!ret) {
		s->ctx = s;
		s->path = strdup(path);
		ret = s->path ? 0 : -ENOMEM;
	}
	if (!ret && S_ISREG(stb.st_mode)) {
		close(fd);
		fd = -1;
		ret = open_textlog(s, path);
	} else if (!ret) {
		ret = open_fd(s, fd, S_ISCHR(stb.st_mode));
		if (!ret)
			fd = -1; /* the source owns it now */
	}
	if (fd >= 0)
		close(fd);
	if (ret) {
		twl_kmsg_source_free(s);
		errno = -ret;
		return NULL;
	}
	return s;
}

void twl_kmsg_source_free(struct twl_kmsg_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	twl_log_reader_free(s->log);
	free(s->path);
	free(s);
}

int twl_kmsg_source_fd(const struct twl_kmsg_source *s)
{
	return s->fd;
}

const char *twl_kmsg_source_path(const struct twl_kmsg_source *s)
{
	return s->path ? s->path : "";
}

void twl_kmsg_source_on_skip(struct twl_kmsg_source *s,
			     void (*fn)(void *ctx,
					const struct twl_log_record *rec),
			     void *ctx)
{
	s->on_skip = fn;
	s->skip_ctx = ctx;
}

size_t twl_kmsg_source_failures(const struct twl_kmsg_source *s,
				const struct twl_kmsg_failure **out)
{
	*out = s->failures;
	return s->n_failures;
}

void twl_kmsg_source_resume(struct twl_kmsg_source *s, uint64_t last_seq)
{
	twl_seq_track_resume(&s->seq, last_seq);
}

void twl_kmsg_source_stats(const struct twl_kmsg_source *s,
			   struct twl_kmsg_source_stats *st)
{
	*st = s->st;
	st->lost = s->seq.lost;
}

/*
 * Account for a parsed record: 1 = deliver it, 0 = already handled before
 * the resume point.
 */
static int accept_record(struct twl_kmsg_source *s,
			 const struct twl_log_record *rec)
{
	if (rec->k.has_seq) {
		note_seq(s, rec->k.seq);
		if (!twl_seq_track_accept(&s->seq, rec->k.seq)) {
			s->st.skipped++;
			if (s->on_skip)
				s->on_skip(s->skip_ctx, rec);
			return 0;
		}
		if (!s->st.have_last_seq || rec->k.seq > s->st.last_seq)
			s->st.last_seq = rec->k.seq;
		s->st.have_last_seq = true;
	}
	s->st.records++;
	return 1;
}

/* The parts of @rec beyond rec->k for a record parsed by kmsg_parse.c. */
static void wrap_record(struct twl_log_record *rec, unsigned long line)
{
	static const enum twl_log_format forms[] = {
		[TWL_FMT_UNKNOWN] = TWL_LOG_NONE,
		[TWL_FMT_KMSG] = TWL_LOG_KMSG,
		[TWL_FMT_DMESG] = TWL_LOG_DMESG,
		[TWL_FMT_DMESG_RAW] = TWL_LOG_DMESG_RAW,
	};
	enum twl_kmsg_format f = rec->k.format;

	rec->format = (unsigned)f < 4 ? forms[f] : TWL_LOG_NONE;
	rec->has_level = f == TWL_FMT_KMSG || f == TWL_FMT_DMESG_RAW;
	rec->facility_verified = false;
	rec->has_mono = true;
	rec->has_wall = false;
	rec->year_guessed = false;
	rec->verified = false;
	rec->wall_us = 0;
	rec->line = line;
	rec->host[0] = '\0';
	rec->boot_id[0] = '\0';
}

static int next_record_mode(struct twl_kmsg_source *s,
			    struct twl_log_record *rec)
{
	for (;;) {
		ssize_t n;

		if (s->eof)
			return -ENODATA;
		n = s->ops->read(s->ctx, s->buf, TWL_KMSG_READ_BUF);
		if (n == -EAGAIN)
			return 0;
		if (n == -EPIPE) {
			/* Overwritten: the gap in seq numbers says how many. */
			s->st.epipe++;
			continue;
		}
		if (n < 0)
			return (int)n;
		if (n == 0) {
			s->eof = true;
			return -ENODATA;
		}
		if (twl_kmsg_parse_record(s->buf, (size_t)n, &rec->k)) {
			add_failure(s, 0, -EINVAL,
				    "malformed /dev/kmsg record");
			continue;
		}
		wrap_record(rec, 0);
		s->st.format = TWL_LOG_KMSG;
		if (accept_record(s, rec))
			return 1;
	}
}

/* Handle one complete line; 1 = @rec holds a new record. */
static int handle_line(struct twl_kmsg_source *s, const char *line, size_t len,
		       struct twl_log_record *rec)
{
	enum twl_kmsg_format fmt = TWL_FMT_UNKNOWN;

	s->lineno++;
	if (len && line[len - 1] == '\r')
		len--;
	/* Blank lines and dictionary/continuation lines of the previous record. */
	if (!len || line[0] == ' ' || line[0] == '\t')
		return 0;
	if (s->st.format == TWL_LOG_KMSG)
		fmt = TWL_FMT_KMSG;
	else if (s->st.format == TWL_LOG_DMESG)
		fmt = TWL_FMT_DMESG;
	else
		fmt = twl_kmsg_detect(line, len);
	if (fmt == TWL_FMT_DMESG && line[0] == '<')
		fmt = TWL_FMT_DMESG_RAW;
	else if (fmt == TWL_FMT_DMESG_RAW && line[0] == '[')
		fmt = TWL_FMT_DMESG;
	if (fmt == TWL_FMT_UNKNOWN ||
	    twl_kmsg_parse_line(fmt, line, len, &rec->k)) {
		add_failure(s, s->lineno, -EINVAL,
			    "not a /dev/kmsg record or a dmesg line");
		return 0;
	}
	if (s->st.format == TWL_LOG_NONE)
		s->st.format = fmt == TWL_FMT_KMSG ? TWL_LOG_KMSG :
						     TWL_LOG_DMESG;
	wrap_record(rec, s->lineno);
	return accept_record(s, rec);
}

static int next_line_mode(struct twl_kmsg_source *s, struct twl_log_record *rec)
{
	for (;;) {
		char *nl = memchr(s->buf + s->start, '\n', s->end - s->start);
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - (s->buf + s->start));
			const char *line = s->buf + s->start;

			s->start += len + 1;
			if (s->discarding) {
				s->discarding = false;
				s->lineno++;
				continue;
			}
			if (handle_line(s, line, len, rec))
				return 1;
			continue;
		}
		if (s->eof) {
			/* A last line without a newline still counts. */
			if (s->end > s->start && !s->discarding) {
				size_t len = s->end - s->start;
				const char *line = s->buf + s->start;

				s->start = s->end;
				if (handle_line(s, line, len, rec))
					return 1;
			}
			s->start = s->end = 0;
			return -ENODATA;
		}
		/* Compact, then make room; an over-long line is dropped. */
		if (s->start) {
			memmove(s->buf, s->buf + s->start, s->end - s->start);
			s->end -= s->start;
			s->start = 0;
		}
		if (s->end == TWL_KMSG_LINE_BUF) {
			if (!s->discarding)
				add_failure(s, s->lineno + 1, -E2BIG,
					    "line longer than the read buffer");
			s->discarding = true;
			s->end = 0;
		}
		n = s->ops->read(s->ctx, s->buf + s->end,
				 TWL_KMSG_LINE_BUF - s->end);
		if (n == -EAGAIN)
			return 0;
		if (n == -EPIPE) {
			s->st.epipe++;
			continue;
		}
		if (n < 0)
			return (int)n;
		if (n == 0)
			s->eof = true;
		s->end += (size_t)n;
	}
}

/* A saved log: its kernel records; a read error ends it as a failure. */
static int next_textlog(struct twl_kmsg_source *s, struct twl_log_record *rec)
{
	for (;;) {
		int ret = twl_log_reader_next(s->log, rec);
		unsigned long line;
		const char *why;

		if (ret == 1) {
			if (accept_record(s, rec))
				return 1;
			continue;
		}
		if (ret != -ENODATA && !s->st.read_error) {
			why = twl_log_reader_error(s->log, &line);
			s->st.read_error = ret;
			add_failure(s, line, ret,
				    *why ? why :
					   "read error: the rest of the "
					   "file is not read");
		}
		return -ENODATA;
	}
}

int twl_kmsg_source_next(struct twl_kmsg_source *s, struct twl_log_record *rec)
{
	if (s->mode == TWL_SRC_TEXTLOG)
		return next_textlog(s, rec);
	if (s->mode == TWL_SRC_RECORDS)
		return next_record_mode(s, rec);
	return next_line_mode(s, rec);
}
