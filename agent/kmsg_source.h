/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmsg_source: where kernel log records come from.
 *
 * A character device (/dev/kmsg) is read one record per read() with a
 * buffer larger than any record. A regular file is a saved log in any form
 * textlog.h reads (/dev/kmsg dumps, dmesg in its forms, journalctl output,
 * syslog files, journal JSON and export files, plain or gzip), detected
 * from its first lines; only the kernel's own records come out of it. A
 * FIFO is read as lines, the form (/dev/kmsg records, dmesg, dmesg -r)
 * detected from the first recognisable line; dictionary lines (starting
 * with a space) belong to the record before them and are skipped. The fd
 * is non-blocking: the caller sleeps in poll() until it is readable, then
 * calls twl_kmsg_source_next() until it returns 0 (a regular file has no
 * fd to poll: it is read through).
 *
 * Every record comes out as a struct twl_log_record: its form (wire
 * `source`), its boot when the input names one ("" for the boot being
 * read) and whatever times the form carries.
 *
 * Lost records: /dev/kmsg fails a read with EPIPE when the kernel
 * overwrote records the reader had not read yet, then continues with the
 * oldest record still there. The loss is counted from the sequence gap
 * (struct twl_seq_track), which also counts records overwritten while the
 * agent was not running (gap after the resume point).
 *
 * Lines that cannot be placed are counted; the first
 * TWL_KMSG_FAILURES_KEPT are kept with their line numbers for the person
 * reading the summary.
 */
#ifndef TWL_AGENT_KMSG_SOURCE_H
#define TWL_AGENT_KMSG_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kmsg_parse.h"
#include "textlog.h"

/* Read buffer: at least one whole record plus room for dictionary lines. */
#define TWL_KMSG_READ_BUF (2 * TWL_KMSG_RECORD_MAX)
/* Line mode reads FIFOs in larger chunks (fewer syscalls); a longer line is dropped. */
#define TWL_KMSG_LINE_BUF (8 * TWL_KMSG_RECORD_MAX)
/* Failures kept with their line numbers (the rest are only counted). */
#define TWL_KMSG_FAILURES_KEPT 8

/*
 * Sequence tracking, pure: decides which records are new and how many were
 * lost. floor = last sequence number already handled (resume point).
 */
struct twl_seq_track {
	bool have_floor, have_next;
	uint64_t floor, next;
	uint64_t lost;
};

/* twl_seq_track_init - nothing handled yet, nothing lost. */
void twl_seq_track_init(struct twl_seq_track *t);

/*
 * twl_seq_track_resume - records with seq <= @last were handled by an
 * earlier run on this boot: skip them; a gap after @last counts as lost.
 */
void twl_seq_track_resume(struct twl_seq_track *t, uint64_t last);

/*
 * twl_seq_track_accept - account for a record with sequence @seq. Returns
 * false when it was already handled (skip it), true when it is new; a gap
 * between the previous record (or the resume point) and @seq is added to
 * lost.
 */
bool twl_seq_track_accept(struct twl_seq_track *t, uint64_t seq);

enum twl_kmsg_mode {
	TWL_SRC_RECORDS, /* one record per read() (/dev/kmsg) */
	TWL_SRC_LINES, /* newline-separated kmsg or dmesg text (FIFOs) */
	TWL_SRC_TEXTLOG, /* a saved log file through textlog.h */
};

/* A line that could not be placed. */
struct twl_kmsg_failure {
	unsigned long line; /* 1-based; 0 for a /dev/kmsg record */
	int err; /* -errno */
	char why[128];
};

/*
 * How the source reads bytes. read() returns the number of bytes read,
 * 0 at end of input, -EAGAIN when nothing is available now, -EPIPE when
 * records were overwritten (the next read continues), or another -errno.
 */
struct twl_kmsg_source_ops {
	ssize_t (*read)(void *ctx, char *buf, size_t cap);
};

struct twl_kmsg_source_stats {
	uint64_t records; /* records returned by twl_kmsg_source_next() */
	uint64_t skipped; /* records already handled before the resume point */
	uint64_t lost; /* records overwritten before they were read */
	uint64_t epipe; /* EPIPE read errors seen */
	uint64_t parse_failures; /* records/lines that could not be parsed */
	bool have_last_seq; /* a record with a sequence number was seen */
	uint64_t last_seq; /* highest handled sequence number */
	bool have_first_seq; /* first_seq is known */
	uint64_t first_seq; /* the first sequence number seen (skipped or not) */
	enum twl_log_format format; /* the form read (detected) */
	int read_error; /* -errno that ended a file early, or 0 */
};

struct twl_kmsg_source;

/*
 * twl_kmsg_source_open - open @path read-only: a character device in
 * record mode, a regular file through textlog (its form detected now), a
 * FIFO in line mode (its open waits for a writer; then non-blocking).
 * Returns NULL with errno set.
 */
struct twl_kmsg_source *twl_kmsg_source_open(const char *path);

/*
 * twl_kmsg_source_new - a source in @mode (RECORDS or LINES) that reads
 * through @ops with @ctx (tests drive EPIPE and gaps this way). The fd is
 * -1. NULL + errno.
 */
struct twl_kmsg_source *
twl_kmsg_source_new(enum twl_kmsg_mode mode,
		    const struct twl_kmsg_source_ops *ops, void *ctx);

/* twl_kmsg_source_free - close and free; NULL-safe. */
void twl_kmsg_source_free(struct twl_kmsg_source *s);

/* twl_kmsg_source_fd - the fd to poll for POLLIN, or -1 (read it through). */
int twl_kmsg_source_fd(const struct twl_kmsg_source *s);

/* twl_kmsg_source_path - the path opened, "" for a source made with _new(). */
const char *twl_kmsg_source_path(const struct twl_kmsg_source *s);

/* twl_kmsg_source_resume - skip records with seq <= @last_seq (see seq_track). */
void twl_kmsg_source_resume(struct twl_kmsg_source *s, uint64_t last_seq);

/*
 * twl_kmsg_source_on_skip - call @fn(@ctx, record) for each record skipped
 * as handled before the resume point (the pump remembers their identities,
 * so that the journal's copy of one is not sent again after a restart).
 */
void twl_kmsg_source_on_skip(struct twl_kmsg_source *s,
			     void (*fn)(void *ctx,
					const struct twl_log_record *rec),
			     void *ctx);

/*
 * twl_kmsg_source_next - the next new record into @rec. Returns 1 with a
 * record, 0 when nothing is available now (poll the fd), -ENODATA at end of
 * input (file read through, or stopped by a read error it records as a
 * failure and in read_error; FIFO writers gone), or another negative
 * errno from read(). Records that fail to parse are counted and skipped.
 * /dev/kmsg and FIFOs return records of every facility (the caller
 * filters); a file returns only the kernel's.
 */
int twl_kmsg_source_next(struct twl_kmsg_source *s, struct twl_log_record *rec);

/* twl_kmsg_source_stats - copy the counters into @st. */
void twl_kmsg_source_stats(const struct twl_kmsg_source *s,
			   struct twl_kmsg_source_stats *st);

/*
 * twl_kmsg_source_failures - the first failures (at most
 * TWL_KMSG_FAILURES_KEPT, in order) into *@out; returns how many are kept.
 */
size_t twl_kmsg_source_failures(const struct twl_kmsg_source *s,
				const struct twl_kmsg_failure **out);

#endif /* TWL_AGENT_KMSG_SOURCE_H */
