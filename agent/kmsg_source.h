/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmsg_source: where kernel log records come from.
 *
 * A character device (/dev/kmsg) is read one record per read() with a
 * buffer larger than any record; anything else (a saved dump, a FIFO) is
 * read as lines, the form (/dev/kmsg records, dmesg, dmesg -r) detected
 * from the first recognisable line. Dictionary lines (starting with a
 * space) belong to the record before them and are skipped. The fd is
 * non-blocking: the caller sleeps in poll() until it is readable, then
 * calls twl_kmsg_source_next() until it returns 0.
 *
 * Lost records: /dev/kmsg fails a read with EPIPE when the kernel
 * overwrote records the reader had not read yet, then continues with the
 * oldest record still there. The loss is counted from the sequence gap
 * (struct twl_seq_track), which also counts records overwritten while the
 * agent was not running (gap after the resume point).
 */
#ifndef TWL_AGENT_KMSG_SOURCE_H
#define TWL_AGENT_KMSG_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kmsg_parse.h"

/* Read buffer: at least one whole record plus room for dictionary lines. */
#define TWL_KMSG_READ_BUF (2 * TWL_KMSG_RECORD_MAX)
/* Line mode reads files in larger chunks (fewer syscalls); a longer line is dropped. */
#define TWL_KMSG_LINE_BUF (8 * TWL_KMSG_RECORD_MAX)

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
	TWL_SRC_LINES, /* newline-separated text (files, FIFOs) */
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
	enum twl_kmsg_format format; /* detected form (lines mode) */
};

struct twl_kmsg_source;

/*
 * twl_kmsg_source_open - open @path read-only and non-blocking: a character
 * device in record mode, a FIFO or regular file in line mode (a FIFO open
 * waits for its writer). Returns NULL with errno set.
 */
struct twl_kmsg_source *twl_kmsg_source_open(const char *path);

/*
 * twl_kmsg_source_new - a source in @mode that reads through @ops with
 * @ctx (tests drive EPIPE and gaps this way). The fd is -1. NULL + errno.
 */
struct twl_kmsg_source *
twl_kmsg_source_new(enum twl_kmsg_mode mode,
		    const struct twl_kmsg_source_ops *ops, void *ctx);

/* twl_kmsg_source_free - close and free; NULL-safe. */
void twl_kmsg_source_free(struct twl_kmsg_source *s);

/* twl_kmsg_source_fd - the fd to poll for POLLIN, or -1. */
int twl_kmsg_source_fd(const struct twl_kmsg_source *s);

/* twl_kmsg_source_resume - skip records with seq <= @last_seq (see seq_track). */
void twl_kmsg_source_resume(struct twl_kmsg_source *s, uint64_t last_seq);

/*
 * twl_kmsg_source_next - the next new record into @rec. Returns 1 with a
 * record, 0 when nothing is available now (poll the fd), -ENODATA at end of
 * input (file read through, FIFO writers gone), or another negative errno
 * from read(). Records that fail to parse are counted and skipped; records
 * of every facility are returned (the caller filters).
 */
int twl_kmsg_source_next(struct twl_kmsg_source *s,
			 struct twl_kmsg_record *rec);

/* twl_kmsg_source_stats - copy the counters into @st. */
void twl_kmsg_source_stats(const struct twl_kmsg_source *s,
			   struct twl_kmsg_source_stats *st);

#endif /* TWL_AGENT_KMSG_SOURCE_H */
