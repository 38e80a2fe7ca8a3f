/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON decoder that builds jansson values, for the server's
 * ingest path.
 *
 * Why not json_loadb(): jansson's decoder reads its input one character at
 * a time through a callback and was measured at about 180 us for an
 * 8.5 KB agent report on the 2-core reference machine, the largest single
 * cost of ingest (bench/README.md). This decoder scans the buffer
 * directly and produces the same jansson tree in about a third of that;
 * everything downstream (validator, store) keeps using jansson.
 *
 * Contract: accepts and rejects exactly what
 * json_loadb(buf, len, JSON_REJECT_DUPLICATES, ...) does (RFC 8259 text,
 * an object or array at the top, strict UTF-8, no \u0000, no duplicate
 * member names, integers that fit json_int_t, reals that do not overflow,
 * at most 2048 levels of nesting), and the trees are json_equal().
 * One deliberate difference: jansson 2.14 skips a single NUL byte right
 * after a number or a literal (its stream buffer takes the NUL that
 * lexer pushed back for "empty" and reads on), so it accepts [1\0] and
 * {"a":true\0}; this decoder rejects every NUL outside a string.
 * tests/fuzz/wire/fuzz_json_decode.c checks that differentially against
 * jansson; tests/unit/common/test_json_decode.c holds the edge cases.
 */
#ifndef TWILIGHT_JSON_DECODE_H
#define TWILIGHT_JSON_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct twl_json_err {
	int line, column; /* 1-based, of the offending byte */
	size_t offset;
	char text[96];
};

/*
 * twl_json_decode - decode len bytes of buf (no NUL terminator needed).
 * Returns a new reference, or NULL with err filled (err may be NULL).
 */
json_t *twl_json_decode(const char *buf, size_t len, struct twl_json_err *err);

/*
 * twl_json_decode_nested - twl_json_decode() that also fails when arrays
 * and objects nest deeper than max_nesting (the outermost counts as 1):
 * lets a caller with a tighter bound than jansson's skip its own scan.
 */
json_t *twl_json_decode_nested(const char *buf, size_t len, int max_nesting,
			       struct twl_json_err *err);

/*
 * The same decoder, positioned in a buffer, for a caller that walks the
 * known structure of a document itself (the report fast path in
 * wire_decode.c) and hands the rest to twl_json_parser_value(). Every
 * call skips leading whitespace; after the first failure every call
 * fails and *err (if given) holds the first error. Members are private.
 */
struct twl_json_parser {
	const char *buf, *p, *end;
	char *scratch; /* len + 1 bytes, allocated on the first escape */
	struct twl_json_err *err;
	int max_nesting; /* arrays and objects, the outermost one = 1 */
	bool failed;
};

/* Start at buf[0]; buf NULL fails. Release with twl_json_parser_fini(). */
void twl_json_parser_init(struct twl_json_parser *ps, const char *buf,
			  size_t len, int max_nesting,
			  struct twl_json_err *err);
void twl_json_parser_fini(struct twl_json_parser *ps);

/*
 * The next byte, not consumed; -1 at the end or after a failure. Inline,
 * as twl_json_parser_take(): the report fast path calls them about 800
 * times per report.
 */
static inline int twl_json_parser_peek(struct twl_json_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' ||
				   *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
	return ps->failed || ps->p >= ps->end ? -1 : (unsigned char)*ps->p;
}

/* Consume ch if it is next; false (no failure recorded) if not. */
static inline bool twl_json_parser_take(struct twl_json_parser *ps, char ch)
{
	if (twl_json_parser_peek(ps) != (unsigned char)ch)
		return false;
	ps->p++;
	return true;
}

/*
 * A string: *s and *len point into the input or into scratch space that
 * the next string overwrites; never NUL-terminated. Valid UTF-8 without
 * NUL bytes. 0 or -1.
 */
int twl_json_parser_string(struct twl_json_parser *ps, const char **s,
			   size_t *len);

/* A number without fraction or exponent that fits in *v. 0 or -1. */
int twl_json_parser_int(struct twl_json_parser *ps, long long *v);

/* The literal true or false. 0 or -1. */
int twl_json_parser_bool(struct twl_json_parser *ps, bool *v);

/*
 * Any value, as twl_json_decode() builds it; depth is its level (the
 * document itself is 1). A new reference, or NULL.
 */
json_t *twl_json_parser_value(struct twl_json_parser *ps, int depth);

/* True when only whitespace is left (and nothing failed). */
bool twl_json_parser_at_end(struct twl_json_parser *ps);

#endif /* TWILIGHT_JSON_DECODE_H */
