/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small utilities shared by agent and server: logging, capped buffers,
 * strict UTF-8 checking, random hex ids, SHA-256, atomic file writes.
 *
 * Conventions: functions that can fail return 0 or a negative errno and log
 * nothing; the caller logs once, with context.
 */
#ifndef TWILIGHT_UTIL_H
#define TWILIGHT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <syslog.h>

/*
 * twl_log_init - set the program name printed before each log line and the
 * least important priority still printed (LOG_ERR .. LOG_DEBUG). Before the
 * first call the name is "twilight" and the limit LOG_INFO. @prog is copied
 * (at most 31 bytes kept).
 */
void twl_log_init(const char *prog, int max_prio);

/*
 * twl_log - print one line "prog: level: message" to stderr when @prio is at
 * most the limit set by twl_log_init(). A trailing newline in @fmt is not
 * needed (one is added). Lines are capped at 1024 bytes.
 */
void twl_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * twl_utf8_valid - true when @s[0..@len) is valid UTF-8 text: shortest-form
 * sequences only (no overlongs), no UTF-16 surrogates (U+D800..U+DFFF), no
 * code point above U+10FFFF, no truncated sequence, and no NUL byte.
 */
bool twl_utf8_valid(const char *s, size_t len);

/*
 * twl_utf8_seq_len - length (1..4) of the one valid UTF-8 sequence that
 * starts at @s, looking at no more than @n bytes (@n >= 1); 0 when that
 * sequence is invalid or truncated, or @s[0] is NUL. For walking text
 * character by character (wrapping, truncating without cutting a
 * character).
 */
size_t twl_utf8_seq_len(const char *s, size_t n);

/*
 * twl_strip - remove white space (isspace) at both ends of the
 * NUL-terminated @s in place; returns the first non-space character.
 */
char *twl_strip(char *s);

/*
 * twl_uri_redact - @uri as it may be shown (a log line, a printed
 * configuration), in @out (@cap bytes): a password in its user part
 * (scheme://user:PASSWORD@host/...) replaced by "***", and so is the
 * value of a password= parameter. Anything else is copied as it is.
 */
void twl_uri_redact(const char *uri, char *out, size_t cap);

/*
 * Capped growable byte buffer. data is NULL until the first append and is
 * always NUL-terminated afterwards (the NUL is not counted in len, and is
 * not counted against max). Never grows past max bytes of content.
 */
struct twl_buf {
	char *data;
	size_t len, cap, max;
};

/* twl_buf_init - make @b an empty buffer that holds at most @max bytes. */
void twl_buf_init(struct twl_buf *b, size_t max);

/*
 * twl_buf_append - append @n bytes from @p. Returns 0, -E2BIG when the
 * content would exceed max, or -ENOMEM. On error the buffer is unchanged
 * (nothing partial is appended).
 */
int twl_buf_append(struct twl_buf *b, const void *p, size_t n);

/*
 * twl_buf_printf - append printf-formatted text. Same return values and
 * all-or-nothing behaviour as twl_buf_append(); -EINVAL on a format error.
 */
int twl_buf_printf(struct twl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* twl_buf_reset - empty @b but keep its memory for reuse. */
void twl_buf_reset(struct twl_buf *b);

/* twl_buf_fini - free the memory of @b (NULL-safe) and leave it empty. */
void twl_buf_fini(struct twl_buf *b);

/*
 * twl_buf_reserve - make room now for @n more content bytes, in one
 * allocation of exactly that size, so that appending them does not
 * reallocate (a body of known length: one malloc instead of a chain of
 * doubling reallocs). @cap bounds what a claimed size that is not yet
 * backed by data (a Content-Length) may reserve: over @cap nothing is
 * reserved and appends grow the buffer as usual. Returns 0 (also when
 * nothing needed reserving), -E2BIG when @n more bytes would exceed max
 * (nothing reserved), or -ENOMEM. The content is unchanged; after a
 * reservation data is non-NULL and NUL-terminated.
 */
int twl_buf_reserve(struct twl_buf *b, size_t n, size_t cap);

/*
 * twl_random_hex - fill @out with 2 * @nbytes lowercase hex digits of
 * kernel randomness (getrandom) and a NUL; @out must hold 2 * @nbytes + 1
 * bytes. Returns 0 or a negative errno (-EINVAL for @nbytes 0 or > 256).
 */
int twl_random_hex(char *out, size_t nbytes);

/* twl_hex_encode - write @n bytes of @p as lowercase hex plus NUL into @out (2n+1 bytes). */
void twl_hex_encode(const void *p, size_t n, char *out);

/* twl_sha256_hex - SHA-256 of @p[0..@n) as 64 lowercase hex digits and a NUL. */
void twl_sha256_hex(const void *p, size_t n, char out[65]);

/*
 * twl_write_file_atomic - replace @path with @n bytes from @p so that a
 * crash leaves either the old or the new content: writes "@path.tmp.XXXXXX"
 * in the same directory with @mode, fsyncs it, renames it over @path and
 * fsyncs the directory. Returns 0 or a negative errno; the temporary file
 * is removed on failure.
 */
int twl_write_file_atomic(const char *path, const void *p, size_t n,
			  mode_t mode);

/*
 * twl_write_all - write all @n bytes of @p to @fd, retrying short writes
 * and EINTR. Returns 0 or a negative errno.
 */
int twl_write_all(int fd, const void *p, size_t n);

/*
 * twl_read_file - read all of @path into a new NUL-terminated buffer
 * (*@out, free() it) and its length (*@len, may be NULL). Returns 0,
 * -EFBIG when the file holds more than @max bytes, or another negative
 * errno. *@out is NULL on error.
 */
int twl_read_file(const char *path, size_t max, char **out, size_t *len);

/*
 * twl_parse_addr_port - parse "IPV4:PORT", "[IPV6]:PORT" or "IPV6:PORT"
 * (numeric addresses only, no names; port 0-65535) into @ss, zeroed
 * first; *@len gets the address's size unless @len is NULL. Returns 0 or
 * -EINVAL.
 */
int twl_parse_addr_port(const char *s, struct sockaddr_storage *ss,
			socklen_t *len);

/*
 * ---- Directories, text copies and the monotonic clock, one
 * implementation for agent and server (spool, BPF pin directory; server
 * answers and wire errors; the agent's timers). ----
 */

/*
 * twl_mkdir_p - create directory @path and each missing parent with
 * @mode (less the umask), like mkdir -p. An existing directory is fine;
 * an existing non-directory in the way is -ENOTDIR. Returns 0 or a
 * negative errno (-EINVAL for an empty @path, -ENOMEM).
 */
int twl_mkdir_p(const char *path, mode_t mode);

/*
 * twl_printable_copy - copy @len bytes of @in into @out (capacity @cap,
 * NUL-terminated when @cap > 0) with every byte that is not printable
 * ASCII (0x20..0x7e) replaced by '?', cut at @cap - 1 bytes: text from a
 * peer becomes safe to log and to put into JSON. Returns the number of
 * bytes written before the NUL.
 */
size_t twl_printable_copy(const char *in, size_t len, char *out, size_t cap);

/*
 * twl_mono_ms - CLOCK_MONOTONIC in milliseconds: deadlines and intervals
 * that wall-clock changes cannot move.
 */
uint64_t twl_mono_ms(void);

/* twl_mono_ns - CLOCK_MONOTONIC in nanoseconds (the kernel's clock). */
uint64_t twl_mono_ns(void);

/*
 * twl_boot_time_ns - when the machine booted, in Unix nanoseconds: the
 * real-time clock less the monotonic one, now. Kernel timestamps (kmsg,
 * BPF) are monotonic; adding one gives its wall-clock time.
 */
int64_t twl_boot_time_ns(void);

#endif /* TWILIGHT_UTIL_H */
