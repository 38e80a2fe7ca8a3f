// SPDX-License-Identifier: GPL-2.0
/* Kernel log record source: /dev/kmsg, dump files and FIFOs (see kmsg_source.h). */
#include "kmsg_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct twl_kmsg_source {
	enum twl_kmsg_mode mode;
	int fd;
	const struct twl_kmsg_source_ops *ops;
	void *ctx;
	struct twl_seq_track seq;
	struct twl_kmsg_source_stats st;
	bool eof;
	bool discarding; /* dropping the rest of an over-long line */
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

	if (!ops || !ops->read) {
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

struct twl_kmsg_source *twl_kmsg_source_open(const char *path)
{
	struct twl_kmsg_source *s = NULL;
	struct stat stb;
	int fd, flags, err;

	/* A FIFO is opened blocking so that open() waits for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &stb) < 0)
		goto fail;
	if (S_ISDIR(stb.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		goto fail;
	s = twl_kmsg_source_new(S_ISCHR(stb.st_mode) ? TWL_SRC_RECORDS :
						       TWL_SRC_LINES,
				&fd_ops, NULL);
	if (!s)
		goto fail;
	s->ctx = s;
	s->fd = fd;
	return s;
fail:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

void twl_kmsg_source_free(struct twl_kmsg_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

int twl_kmsg_source_fd(const struct twl_kmsg_source *s)
{
	return s->fd;
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
			 const struct twl_kmsg_record *rec)
{
	if (rec->has_seq) {
		if (!twl_seq_track_accept(&s->seq, rec->seq)) {
			s->st.skipped++;
			return 0;
		}
		if (!s->st.have_last_seq || rec->seq > s->st.last_seq)
			s->st.last_seq = rec->seq;
		s->st.have_last_seq = true;
	}
	s->st.records++;
	return 1;
}

static int next_record_mode(struct twl_kmsg_source *s,
			    struct twl_kmsg_record *rec)
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
		if (twl_kmsg_parse_record(s->buf, (size_t)n, rec)) {
			s->st.parse_failures++;
			continue;
		}
		if (accept_record(s, rec))
			return 1;
	}
}

/* Handle one complete line; 1 = @rec holds a new record. */
static int handle_line(struct twl_kmsg_source *s, const char *line, size_t len,
		       struct twl_kmsg_record *rec)
{
	enum twl_kmsg_format fmt;

	if (len && line[len - 1] == '\r')
		len--;
	/* Blank lines and dictionary/continuation lines of the previous record. */
	if (!len || line[0] == ' ' || line[0] == '\t')
		return 0;
	fmt = s->st.format;
	if (fmt == TWL_FMT_UNKNOWN)
		fmt = twl_kmsg_detect(line, len);
	if (fmt == TWL_FMT_DMESG && line[0] == '<')
		fmt = TWL_FMT_DMESG_RAW;
	else if (fmt == TWL_FMT_DMESG_RAW && line[0] == '[')
		fmt = TWL_FMT_DMESG;
	if (fmt == TWL_FMT_UNKNOWN ||
	    twl_kmsg_parse_line(fmt, line, len, rec)) {
		s->st.parse_failures++;
		return 0;
	}
	if (s->st.format == TWL_FMT_UNKNOWN)
		s->st.format = fmt == TWL_FMT_DMESG_RAW ? TWL_FMT_DMESG : fmt;
	return accept_record(s, rec);
}

static int next_line_mode(struct twl_kmsg_source *s,
			  struct twl_kmsg_record *rec)
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
				s->st.parse_failures++;
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

int twl_kmsg_source_next(struct twl_kmsg_source *s, struct twl_kmsg_record *rec)
{
	if (s->mode == TWL_SRC_RECORDS)
		return next_record_mode(s, rec);
	return next_line_mode(s, rec);
}
