/* SPDX-License-Identifier: GPL-2.0 */
/*
 * textlog: kernel records from saved text logs (dmesg in its forms,
 * journalctl output, syslog files, journal JSON and export files, plain or
 * gzip-compressed), for backfilling warnings that left the kmsg ring buffer
 * long ago.
 *
 * The form is detected per FILE from its first lines (textlog_detect.c) and
 * every line is then parsed in that one form: a JSON-shaped line inside a
 * syslog file is a line that cannot be placed, never a kernel record.
 *
 * What counts as the kernel's own line:
 *   - dmesg forms: every record (they hold only the kernel's buffer); -x and
 *     -r say the facility, and a record of another facility (a user-space
 *     write to /dev/kmsg) is not the kernel's;
 *   - syslog and journalctl short forms: the syslog tag "kernel:" exactly.
 *     "kernel[123]:" is a process that calls itself kernel (the kernel's
 *     records carry no pid, and journalctl prints a pid only when the entry
 *     has _PID); "containerd[1234]: ...soft_limit..." quotes a warning and is
 *     not one;
 *   - journal JSON / export: _TRANSPORT=kernel with SYSLOG_FACILITY=0 (the
 *     only records that are "verified"); _TRANSPORT=kernel with another
 *     facility is a user-space write to /dev/kmsg (systemd's early logs,
 *     or "<14>kernel: ..." spoofing the kernel, which journald shows as
 *     SYSLOG_IDENTIFIER=kernel); entries
 *     without _TRANSPORT count when SYSLOG_IDENTIFIER=kernel, without _PID
 *     and facility 0 or absent, unverified.
 * Records from any other file are "unverified": text can be written by
 * anyone who can write a log line.
 *
 * Wall-clock times without a year (RFC 3164 syslog, journalctl short and
 * short-precise: "Dec  4 05:00:01") are local time (TZ of this process) in
 * the latest year that does not put them more than a day after a reference
 * time, normally the file's mtime (the file was last written after its last
 * line): a file spanning New Year gets December lines in the previous year.
 * A file spanning more than a year gets older lines a year late; such
 * records say year_guessed.
 */
#ifndef TWL_AGENT_TEXTLOG_H
#define TWL_AGENT_TEXTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kmsg_parse.h"

/* Longest line kept (a longer one is a parse failure and skipped). */
#define TWL_LOG_LINE_MAX (64 * 1024)
/* Host names longer than this are cut (syslog FQDNs can be 255 bytes). */
#define TWL_LOG_HOST_MAX 255
/* Lines looked at to detect a file's form. */
#define TWL_LOG_SAMPLE_LINES 32

/*
 * Input formats. Every one names its wire `source` value
 * (twl_log_format_source()); DMESG_T is dmesg -t and is sent as "dmesg".
 */
enum twl_log_format {
	TWL_LOG_NONE = 0,
	TWL_LOG_KMSG, /* /dev/kmsg record dump: "4,812,3018562,-;text" */
	TWL_LOG_JOURNAL, /* read through sd-journal (journal.c) */
	TWL_LOG_JOURNAL_JSON, /* journalctl -o json: one object a line */
	TWL_LOG_JOURNAL_EXPORT, /* journalctl -o export: KEY=VALUE, blank line */
	TWL_LOG_DMESG, /* dmesg: "[    3.018562] text" */
	TWL_LOG_DMESG_T, /* dmesg -t: "text" */
	TWL_LOG_DMESG_RAW, /* dmesg -r: "<4>[    3.018562] text" */
	TWL_LOG_DMESG_X, /* dmesg -x: "kern  :warn  : [    3.018562] text" */
	TWL_LOG_JCTL_SHORT, /* "Dec 04 05:00:01 web01 kernel: text" */
	TWL_LOG_JCTL_ISO, /* "2026-12-04T05:00:01+0000 web01 kernel: text" */
	TWL_LOG_JCTL_PRECISE, /* "Dec 04 05:00:01.018602 web01 kernel: text" */
	TWL_LOG_JCTL_MONOTONIC, /* "[    3.018562] web01 kernel: text" */
	TWL_LOG_SYSLOG_RFC3164, /* "Dec  4 05:00:01 web01 kernel: [ 3.0] text" */
	TWL_LOG_SYSLOG_RFC5424, /* ISO time + host + tag, or "<4>1 TS HOST APP - - -" */
	TWL_LOG_FORMAT_COUNT
};

/* twl_log_format_source - the wire `source` name of @f ("" for NONE). */
const char *twl_log_format_source(enum twl_log_format f);

/* twl_log_format_name - how a person knows @f ("dmesg -t", "journalctl -o short"). */
const char *twl_log_format_name(enum twl_log_format f);

/*
 * One record. k carries text (decoded, NUL-terminated, at most
 * TWL_KMSG_TEXT_MAX bytes), level, facility (-1 when the input has none)
 * and mono_us as kmsg_parse does; k.format is TWL_FMT_KMSG, _DMESG or
 * _DMESG_RAW for those forms and TWL_FMT_UNKNOWN for the others: the origin
 * of a text-log record is twl_log_origin(), never twl_kmsg_origin().
 */
struct twl_log_record {
	struct twl_kmsg_record k;
	enum twl_log_format format;
	bool has_level; /* k.level is from the input */
	bool facility_verified; /* k.facility is the kernel's (journal) */
	bool has_mono; /* k.mono_us: the kernel's own timestamp */
	bool has_wall; /* wall_us is set */
	bool year_guessed; /* wall_us's year was inferred (see above) */
	bool verified; /* journal record: _TRANSPORT=kernel, facility 0 */
	int64_t wall_us; /* microseconds since the epoch, UTC */
	unsigned long line; /* first line of the record in its file (1-based) */
	char host[TWL_LOG_HOST_MAX + 1]; /* "" when the line names none */
	char boot_id[33]; /* 32 lowercase hex digits, or "" */
};

/* twl_log_origin - wire `origin`: "journal" for a verified record, else "unverified". */
const char *twl_log_origin(const struct twl_log_record *r);

/*
 * twl_log_kernel_release - for a record's @text "Linux version 6.12.0 ...",
 * the release ("6.12.0", cut to @cap - 1 bytes) into @out; false (and
 * @out untouched) for any other text.
 */
bool twl_log_kernel_release(const char *text, char *out, size_t cap);

/* What one line (or export/JSON entry) turned out to be. */
enum twl_log_kind {
	TWL_LINE_RECORD = 1, /* a kernel record: the output is filled */
	TWL_LINE_OTHER, /* well-formed, but not the kernel's (another tag) */
	TWL_LINE_USER_KMSG, /* _TRANSPORT=kernel, facility != 0: user space wrote it */
	TWL_LINE_META, /* journalctl "-- ... --" line; a "-- Boot ID --" sets boot_id */
	TWL_LINE_MISSED, /* journald's "Missed N kernel messages" (N in missed) */
	TWL_LINE_SKIP, /* blank, or a /dev/kmsg dictionary line */
};

/*
 * Per-file context: the reference time for yearless stamps (see above) and
 * the parsers' memory of the last local hour converted (mktime() per line
 * would cost more than the rest of the parse). Zero it, set ref.
 */
struct twl_log_ctx {
	time_t ref; /* normally the file's mtime */
	struct {
		time_t ref;
		int key; /* month, day and hour + 1; 0: nothing yet */
		int64_t base_s; /* that hour's start, seconds since the epoch */
	} hour;
};

/*
 * Result of one line parse: the kind, where the text began in the line
 * (continuation lines of dmesg and journalctl are indented that far), the
 * count of a MISSED entry and why a line failed.
 */
struct twl_log_parse {
	enum twl_log_kind kind;
	size_t text_col;
	uint64_t missed;
	unsigned evidence; /* hints for twl_log_detect() (textlog_int.h) */
	const char *why; /* static text, set on failure */
};

/*
 * twl_log_parse_line - parse one line (no newline, CR already removed) of
 * form @f into @out. JOURNAL_EXPORT is not line-based (see
 * struct twl_jfields below) and is -EINVAL here. Returns 0 with @res->kind
 * set (@out is filled for RECORD; for META only boot_id may change), or
 * -EINVAL (the line cannot be placed; @res->why says why) or -E2BIG (text
 * over TWL_KMSG_TEXT_MAX). @ctx is read and its hour memory updated.
 */
int twl_log_parse_line(enum twl_log_format f, const char *line, size_t len,
		       struct twl_log_ctx *ctx, struct twl_log_record *out,
		       struct twl_log_parse *res);

/*
 * twl_log_detect - the form of a file whose first non-blank lines are
 * @lines[0..@n) (lengths in @lens, no newlines): the form that parses the
 * most of them (at least half), ties broken by evidence (journalctl's
 * "-- ... --" lines, a kernel "[ t ]" stamp after "kernel:", a zero-padded
 * day, a "+hhmm" offset) and then by specificity; TWL_LOG_DMESG_T when no
 * form fits (dmesg -t lines are free text); TWL_LOG_NONE when @n is 0.
 */
enum twl_log_format twl_log_detect(const char *const *lines, const size_t *lens,
				   size_t n);

/*
 * Journal entry fields, filled one KEY=VALUE at a time from a JSON object, an
 * export record or sd_journal_enumerate_data(), then classified. Only the
 * fields twilight needs are kept; MESSAGE may hold any bytes.
 */
struct twl_jfields {
	bool has_message, message_omitted;
	int message_err; /* -E2BIG: MESSAGE over TWL_KMSG_TEXT_MAX */
	size_t message_len;
	char message[TWL_KMSG_TEXT_MAX + 1];
	char transport[16]; /* "" when absent */
	char identifier[32];
	char boot_id[33];
	char host[TWL_LOG_HOST_MAX + 1];
	int priority, facility; /* -1 when absent or malformed */
	bool has_pid, has_source_mono, has_realtime, missed_id, bad_facility;
	uint64_t source_mono, realtime;
	unsigned bad_fields; /* a known field with a malformed value */
};

/* twl_jfields_reset - forget every field. */
void twl_jfields_reset(struct twl_jfields *f);

/* twl_jfields_key_valid - @key is a journal field name: [A-Z0-9_], no leading digit. */
bool twl_jfields_key_valid(const char *key, size_t klen);

/*
 * twl_jfields_add - take field @key (@klen bytes) = @val (@vlen bytes, any
 * bytes). Unknown keys are ignored. Returns 0, or -EINVAL when @key is not
 * a journal field name ([A-Z0-9_], not starting with a digit).
 */
int twl_jfields_add(struct twl_jfields *f, const char *key, size_t klen,
		    const char *val, size_t vlen);

/*
 * twl_jfields_classify - what the entry is (rules at the top of this file)
 * and, for a RECORD, the record in @out (format @fmt; verified for
 * _TRANSPORT=kernel with SYSLOG_FACILITY=0). Returns 0 with @res->kind set,
 * -EINVAL (no MESSAGE, MESSAGE omitted by journalctl, NUL in MESSAGE; @res->why
 * says which) or -E2BIG.
 */
int twl_jfields_classify(const struct twl_jfields *f, enum twl_log_format fmt,
			 struct twl_log_record *out, struct twl_log_parse *res);

/*
 * twl_jfields_from_json - fill @f from one journalctl -o json line. String
 * values, byte arrays (journalctl's form of non-UTF-8 data) and null
 * (omitted: too large) are understood; a field with several values is an
 * array of them and only MESSAGE's first is used. Returns 0, or -EINVAL
 * (not a JSON object; @why says why).
 */
int twl_jfields_from_json(struct twl_jfields *f, const char *line, size_t len,
			  const char **why);

/* ---- Reading files (textlog_reader.c) ---- */

/* Counters of one reader. */
struct twl_log_stats {
	uint64_t lines; /* newline-terminated lines (and a last unterminated one) */
	uint64_t records; /* kernel records returned */
	uint64_t other; /* well-formed lines of other programs / facilities */
	uint64_t user_kmsg; /* journal: kernel transport, facility != 0 (user space) */
	uint64_t missed; /* journald's "Missed N kernel messages", summed */
	uint64_t failures; /* lines that could not be placed (each reported) */
};

struct twl_log_reader_opts {
	enum twl_log_format format; /* TWL_LOG_NONE: detect */
	time_t ref; /* reference for yearless stamps; 0: the file's mtime */
	/* Called once per failure: file, 1-based line, -errno, why (static). */
	void (*on_failure)(void *ctx, const char *path, unsigned long line,
			   int err, const char *why);
	/*
	 * Optional: called for each well-formed line of a line-based form
	 * that is not the kernel's (counted in other), with what was parsed
	 * of it: a /dev/kmsg dump's user-space records keep their sequence
	 * numbers this way, so a reader can tell them from lost records.
	 */
	void (*on_other)(void *ctx, const struct twl_log_record *rec);
	void *ctx;
};

struct twl_log_reader;

/*
 * twl_log_reader_open - open @path (plain or gzip, told apart by gzip's
 * magic bytes; gzip members are inflated with zlib) and detect its form from its first TWL_LOG_SAMPLE_LINES
 * lines unless @o->format names one. @o may be NULL. NULL + errno (open(2)
 * errors, ENOMEM).
 */
struct twl_log_reader *twl_log_reader_open(const char *path,
					   const struct twl_log_reader_opts *o);

/* twl_log_reader_free - close and free; NULL-safe. */
void twl_log_reader_free(struct twl_log_reader *r);

/*
 * twl_log_reader_next - the next kernel record into @rec. Returns 1, or
 * -ENODATA at the end of the file, or the error that stopped reading
 * (-EIO: truncated or corrupt gzip, a read error; twl_log_reader_error()
 * says more). Every record before the bad spot has been returned first;
 * lines that cannot be placed are counted, reported through on_failure
 * and skipped. After an error or the end, every call returns the same.
 */
int twl_log_reader_next(struct twl_log_reader *r, struct twl_log_record *rec);

/* twl_log_reader_format - the form being read (detected or given). */
enum twl_log_format twl_log_reader_format(const struct twl_log_reader *r);

/* twl_log_reader_stats - the counters so far. */
void twl_log_reader_stats(const struct twl_log_reader *r,
			  struct twl_log_stats *st);

/*
 * twl_log_reader_error - what stopped reading (zlib's message or strerror)
 * and the line it happened on; "" while nothing did.
 */
const char *twl_log_reader_error(const struct twl_log_reader *r,
				 unsigned long *line);

/*
 * twl_log_count_file - read all of @path (form @format or detected) and
 * fill @st and *@fmt_out (may be NULL): the benchmark's parse-throughput
 * hook. Returns 0 at a clean end, else the error of open or read (-errno).
 */
int twl_log_count_file(const char *path, enum twl_log_format format,
		       struct twl_log_stats *st, enum twl_log_format *fmt_out);

#endif /* TWL_AGENT_TEXTLOG_H */
