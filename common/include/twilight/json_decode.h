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
 * jansson; tests/unit/wire/test_json_decode.c holds the edge cases.
 */
#ifndef TWILIGHT_JSON_DECODE_H
#define TWILIGHT_JSON_DECODE_H

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

#endif /* TWILIGHT_JSON_DECODE_H */
