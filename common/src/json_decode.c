// SPDX-License-Identifier: GPL-2.0
/*
 * Strict JSON decoder building jansson values (json_decode.h). Recursive
 * descent over the buffer; strings without escapes are handed to jansson
 * straight from the input, the rest are decoded into one scratch buffer
 * that is never longer than the input.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/json_decode.h>
#include <twilight/util.h>

/* jansson's JSON_PARSER_MAX_DEPTH: every value, scalars included, counts. */
#define MAX_DEPTH 2048

__attribute__((format(printf, 3, 4))) static void
fail_at(struct twl_json_parser *ps, const char *at, const char *fmt, ...)
{
	struct twl_json_err *e = ps->err;
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	if (!e)
		return;
	e->offset = (size_t)(at - ps->buf);
	e->line = 1;
	e->column = 1;
	for (const char *q = ps->buf; q < at; q++) {
		if (*q == '\n') {
			e->line++;
			e->column = 1;
		} else {
			e->column++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

/* Skip whitespace: what twl_json_parser_peek() (json_decode.h) does first. */
static void skip_ws(struct twl_json_parser *ps)
{
	(void)twl_json_parser_peek(ps);
}

static bool is_digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t utf8_put(char *o, long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One \u escape at p (pointing at the 'u'), surrogate pairs joined. */
static long unicode_escape(struct twl_json_parser *ps, const char **pp)
{
	const char *p = *pp;
	long cp, lo;

	if (ps->end - p < 5 || (cp = hex4(p + 1)) < 0) {
		fail_at(ps, p, "invalid escape");
		return -1;
	}
	p += 5;
	if (cp >= 0xdc00 && cp <= 0xdfff) {
		fail_at(ps, p - 6, "invalid Unicode '\\u%04lX'", cp);
		return -1;
	}
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (ps->end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
		    (lo = hex4(p + 2)) < 0 || lo < 0xdc00 || lo > 0xdfff) {
			fail_at(ps, p - 6, "invalid Unicode '\\u%04lX'", cp);
			return -1;
		}
		cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
		p += 6;
	}
	if (cp == 0) {
		fail_at(ps, p - 6, "\\u0000 is not allowed");
		return -1;
	}
	*pp = p;
	return cp;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/*
 * The bytes of w (little-endian: the first byte lowest) that are '"',
 * '\\', a control character (< 0x20) or not ASCII (>= 0x80), each as its
 * high bit; 0 when there is none. Above the first such byte a borrow may
 * mark a byte that is none of these, but never below it, so the lowest
 * bit set is exactly the first one.
 */
static uint64_t word_special(uint64_t w)
{
	uint64_t quote = w ^ (ONES * '"'), bslash = w ^ (ONES * '\\');

	return (((quote - ONES) & ~quote) | ((bslash - ONES) & ~bslash) |
		((w - ONES * 0x20) & ~w) | w) &
	       HIGHS;
}

/*
 * Skip plain string bytes from p: ASCII a word at a time (a report is
 * mostly strings) straight to the first byte that is not plain ASCII,
 * then byte by byte up to the first '"', '\\', control character or the
 * end. *ascii turns false at a byte >= 0x80.
 */
static const char *scan_plain(const char *p, const char *end, bool *ascii)
{
	while (end - p >= 8) {
		uint64_t w, m;

		memcpy(&w, p, sizeof(w));
		m = word_special(w);
		if (m) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			p += (unsigned)__builtin_ctzll(m) / 8;
#endif
			break;
		}
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\' &&
	       (unsigned char)*p >= 0x20) {
		if ((unsigned char)*p >= 0x80)
			*ascii = false;
		p++;
	}
	return p;
}

/*
 * The escape whose backslash was just consumed, at *pp: its bytes go to
 * o + *n. 0, or -1 with the error set.
 */
static int decode_escape(struct twl_json_parser *ps, const char **pp, char *o,
			 size_t *n)
{
	const char *p = *pp;
	long cp;

	if (p >= ps->end) {
		fail_at(ps, p, "premature end of input");
		return -1;
	}
	switch (*p) {
	case '"':
	case '\\':
	case '/':
		o[(*n)++] = *p;
		break;
	case 'b':
		o[(*n)++] = '\b';
		break;
	case 'f':
		o[(*n)++] = '\f';
		break;
	case 'n':
		o[(*n)++] = '\n';
		break;
	case 'r':
		o[(*n)++] = '\r';
		break;
	case 't':
		o[(*n)++] = '\t';
		break;
	case 'u':
		cp = unicode_escape(ps, &p);
		if (cp < 0)
			return -1;
		*n += utf8_put(o + *n, cp);
		*pp = p;
		return 0;
	default:
		fail_at(ps, p, "invalid escape");
		return -1;
	}
	*pp = p + 1;
	return 0;
}

/*
 * The rest of a string with escapes: start is its first byte, p the first
 * byte scan_plain() stopped at. Decoded into the scratch buffer. Kept out
 * of line so that parse_string(), inlined into every caller, stays the
 * short plain-string path (inlined, the report fast path measured 8%
 * slower).
 */
__attribute__((noinline)) static int
parse_escaped(struct twl_json_parser *ps, const char *start, const char *p,
	      bool ascii, const char **out, size_t *len)
{
	size_t n;
	char *o;

	if (!ps->scratch) {
		ps->scratch = malloc((size_t)(ps->end - ps->buf) + 1);
		if (!ps->scratch) {
			fail_at(ps, p, "out of memory");
			return -1;
		}
	}
	o = ps->scratch;
	n = (size_t)(p - start);
	memcpy(o, start, n);
	for (;;) {
		unsigned char c;

		if (p >= ps->end) {
			fail_at(ps, p, "premature end of input");
			return -1;
		}
		c = (unsigned char)*p;
		if (c == '"')
			break;
		if (c < 0x20) {
			fail_at(ps, p, "control character 0x%x", c);
			return -1;
		}
		if (c != '\\') {
			if (c >= 0x80)
				ascii = false;
			o[n++] = (char)c;
			p++;
			continue;
		}
		p++;
		if (decode_escape(ps, &p, o, &n))
			return -1;
	}
	/* Escapes encode valid UTF-8 whose first byte is never a
	 * continuation byte, so checking the result checks the raw bytes. */
	if (!ascii && !twl_utf8_valid(o, n)) {
		fail_at(ps, start, "invalid UTF-8 in a string");
		return -1;
	}
	*out = o;
	*len = n;
	ps->p = p + 1;
	return 0;
}

/*
 * The string whose opening quote was just consumed: out and len point into
 * the input (no escapes) or into the scratch buffer (valid until the next
 * string). 0 or -1.
 */
static int parse_string(struct twl_json_parser *ps, const char **out,
			size_t *len)
{
	const char *start = ps->p, *p;
	bool ascii = true;

	p = scan_plain(start, ps->end, &ascii);
	if (p < ps->end && *p == '"') {
		if (!ascii && !twl_utf8_valid(start, (size_t)(p - start))) {
			fail_at(ps, start, "invalid UTF-8 in a string");
			return -1;
		}
		*out = start;
		*len = (size_t)(p - start);
		ps->p = p + 1;
		return 0;
	}
	return parse_escaped(ps, start, p, ascii, out, len);
}

/*
 * The integer s..p (a '-' first when neg) into *iv: 0, or -1 with the
 * error set when it does not fit json_int_t.
 */
static int int_value(struct twl_json_parser *ps, const char *s, const char *p,
		     bool neg, long long *iv)
{
	unsigned long long u = 0;
	unsigned long long lim = neg ? (unsigned long long)LLONG_MAX + 1 :
				       (unsigned long long)LLONG_MAX;
	/* Up to 18 digits always fit (10^18 - 1 < 2^63): no check per digit
	 * for the counts and times a report is made of. */
	bool check = p - (s + neg) > 18;

	for (const char *q = s + neg; q < p; q++) {
		unsigned dg = (unsigned)(*q - '0');

		if (check && u > (lim - dg) / 10) {
			fail_at(ps, s,
				neg ? "too big negative integer" :
				      "too big integer");
			return -1;
		}
		u = u * 10 + dg;
	}
	/* -(2^63) is representable; negate in unsigned first. */
	*iv = neg ? (long long)(0 - u) : (long long)u;
	return 0;
}

/* The real number s..p into *dv: 0, or -1 with the error set (rare in a
 * report: kept out of the integer path). */
__attribute__((noinline, cold)) static int
real_value(struct twl_json_parser *ps, const char *s, const char *p, double *dv)
{
	char small[128], *text;
	double d;

	if ((size_t)(p - s) < sizeof(small)) {
		text = small;
	} else {
		text = malloc((size_t)(p - s) + 1);
		if (!text) {
			fail_at(ps, s, "out of memory");
			return -1;
		}
	}
	memcpy(text, s, (size_t)(p - s));
	text[p - s] = '\0';
	errno = 0;
	d = strtod(text, NULL);
	if (text != small)
		free(text);
	if ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE) {
		fail_at(ps, s, "real number overflow");
		return -1;
	}
	*dv = d;
	return 0;
}

/*
 * The number at ps->p: an integer that fits json_int_t into *iv (*is_int
 * true), or else a finite real into *dv. 0, or -1 with the error set.
 */
static int lex_number(struct twl_json_parser *ps, bool *is_int, long long *iv,
		      double *dv)
{
	const char *s = ps->p, *p = ps->p, *end = ps->end;
	bool neg = false;

	*is_int = true;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p < end && *p == '0') {
		p++;
		if (is_digit(p, end))
			goto bad;
	} else if (is_digit(p, end)) {
		while (is_digit(p, end))
			p++;
	} else {
		goto bad;
	}
	if (p < end && *p == '.') {
		*is_int = false;
		if (!is_digit(++p, end))
			goto bad;
		while (is_digit(p, end))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*is_int = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!is_digit(p, end))
			goto bad;
		while (is_digit(p, end))
			p++;
	}
	ps->p = p;
	if (*is_int)
		return int_value(ps, s, p, neg, iv);
	return real_value(ps, s, p, dv);
bad:
	fail_at(ps, s, "invalid number");
	return -1;
}

static json_t *parse_number(struct twl_json_parser *ps)
{
	const char *s = ps->p;
	bool is_int;
	long long iv;
	double dv;
	json_t *v;

	if (lex_number(ps, &is_int, &iv, &dv))
		return NULL;
	v = is_int ? json_integer(iv) : json_real(dv);
	if (!v)
		fail_at(ps, s, "out of memory");
	return v;
}

static json_t *parse_value(struct twl_json_parser *ps, int depth);

static json_t *parse_object(struct twl_json_parser *ps, int depth)
{
	json_t *obj = json_object(), *v;
	char *kcopy = NULL;
	const char *key;
	size_t klen;

	if (!obj) {
		fail_at(ps, ps->p, "out of memory");
		return NULL;
	}
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return obj;
	}
	for (;;) {
		const char *kat;

		skip_ws(ps);
		kat = ps->p;
		if (ps->p >= ps->end || *ps->p != '"') {
			fail_at(ps, ps->p, "string or '}' expected");
			goto fail;
		}
		ps->p++;
		if (parse_string(ps, &key, &klen))
			goto fail;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			fail_at(ps, ps->p, "':' expected");
			goto fail;
		}
		ps->p++;
		if (json_object_getn(obj, key, klen)) {
			fail_at(ps, kat, "duplicate object key");
			goto fail;
		}
		/* A key in the scratch buffer would be overwritten by the
		 * value's strings: keep a copy. */
		if (key == ps->scratch) {
			kcopy = malloc(klen + 1);
			if (!kcopy) {
				fail_at(ps, kat, "out of memory");
				goto fail;
			}
			memcpy(kcopy, key, klen);
			key = kcopy;
		}
		v = parse_value(ps, depth + 1);
		if (v && json_object_setn_new_nocheck(obj, key, klen, v))
			fail_at(ps, kat, "out of memory");
		free(kcopy);
		kcopy = NULL;
		if (!v || ps->failed)
			goto fail;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return obj;
		}
		fail_at(ps, ps->p, "'}' expected");
		goto fail;
	}
fail:
	json_decref(obj);
	return NULL;
}

static json_t *parse_array(struct twl_json_parser *ps, int depth)
{
	json_t *arr = json_array(), *v;

	if (!arr) {
		fail_at(ps, ps->p, "out of memory");
		return NULL;
	}
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return arr;
	}
	for (;;) {
		v = parse_value(ps, depth + 1);
		if (!v)
			goto fail; /* parse_value said why */
		if (json_array_append_new(arr, v)) {
			fail_at(ps, ps->p, "out of memory");
			goto fail;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return arr;
		}
		fail_at(ps, ps->p, "']' expected");
		goto fail;
	}
fail:
	json_decref(arr);
	return NULL;
}

static bool literal(struct twl_json_parser *ps, const char *word, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static json_t *parse_value(struct twl_json_parser *ps, int depth)
{
	const char *s;
	size_t n;
	json_t *v;

	skip_ws(ps);
	if (depth > MAX_DEPTH) {
		fail_at(ps, ps->p, "maximum parsing depth reached");
		return NULL;
	}
	if (ps->p >= ps->end) {
		fail_at(ps, ps->p, "premature end of input");
		return NULL;
	}
	if ((*ps->p == '{' || *ps->p == '[') && depth > ps->max_nesting) {
		fail_at(ps, ps->p,
			"maximum nesting of arrays and objects reached");
		return NULL;
	}
	switch (*ps->p) {
	case '{':
		ps->p++;
		return parse_object(ps, depth);
	case '[':
		ps->p++;
		return parse_array(ps, depth);
	case '"':
		ps->p++;
		if (parse_string(ps, &s, &n))
			return NULL;
		v = json_stringn_nocheck(s, n);
		break;
	case 't':
		v = literal(ps, "true", 4) ? json_true() : NULL;
		break;
	case 'f':
		v = literal(ps, "false", 5) ? json_false() : NULL;
		break;
	case 'n':
		v = literal(ps, "null", 4) ? json_null() : NULL;
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
		v = NULL;
	}
	if (!v)
		fail_at(ps, ps->p, "invalid token");
	return v;
}

/* Contract: see json_decode.h. */
void twl_json_parser_init(struct twl_json_parser *ps, const char *buf,
			  size_t len, int max_nesting, struct twl_json_err *err)
{
	*ps = (struct twl_json_parser){ .buf = buf,
					.p = buf,
					.end = buf + len,
					.err = err,
					.max_nesting = max_nesting };
	if (err)
		memset(err, 0, sizeof(*err));
	if (!buf) {
		ps->buf = ps->p = ps->end = "";
		fail_at(ps, ps->p, "no input");
	}
}

/* Contract: see json_decode.h. */
void twl_json_parser_fini(struct twl_json_parser *ps)
{
	free(ps->scratch);
	ps->scratch = NULL;
}

/* Contract: see json_decode.h. */
int twl_json_parser_string(struct twl_json_parser *ps, const char **s,
			   size_t *len)
{
	if (!twl_json_parser_take(ps, '"')) {
		fail_at(ps, ps->p, "string expected");
		return -1;
	}
	return parse_string(ps, s, len);
}

/* Contract: see json_decode.h. */
int twl_json_parser_int(struct twl_json_parser *ps, long long *v)
{
	const char *s;
	bool is_int;
	double d;
	int c = twl_json_parser_peek(ps);

	if (c != '-' && (c < '0' || c > '9')) {
		fail_at(ps, ps->p, "number expected");
		return -1;
	}
	s = ps->p;
	if (lex_number(ps, &is_int, v, &d))
		return -1;
	if (!is_int) {
		fail_at(ps, s, "integer expected");
		return -1;
	}
	return 0;
}

/* Contract: see json_decode.h. */
int twl_json_parser_bool(struct twl_json_parser *ps, bool *v)
{
	int c = twl_json_parser_peek(ps);

	if (c == 't' && literal(ps, "true", 4)) {
		*v = true;
		return 0;
	}
	if (c == 'f' && literal(ps, "false", 5)) {
		*v = false;
		return 0;
	}
	fail_at(ps, ps->p, "true or false expected");
	return -1;
}

/* Contract: see json_decode.h. */
json_t *twl_json_parser_value(struct twl_json_parser *ps, int depth)
{
	return ps->failed ? NULL : parse_value(ps, depth);
}

/* Contract: see json_decode.h. */
bool twl_json_parser_at_end(struct twl_json_parser *ps)
{
	skip_ws(ps);
	return !ps->failed && ps->p == ps->end;
}

/* Contract: see json_decode.h. */
json_t *twl_json_decode_nested(const char *buf, size_t len, int max_nesting,
			       struct twl_json_err *err)
{
	struct twl_json_parser ps;
	json_t *doc = NULL;

	twl_json_parser_init(&ps, buf, len, max_nesting, err);
	if (ps.failed)
		return NULL;
	skip_ws(&ps);
	if (ps.p >= ps.end || (*ps.p != '{' && *ps.p != '[')) {
		fail_at(&ps, ps.p, "'[' or '{' expected");
		return NULL;
	}
	doc = parse_value(&ps, 1);
	if (doc) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			fail_at(&ps, ps.p, "end of file expected");
			json_decref(doc);
			doc = NULL;
		}
	}
	twl_json_parser_fini(&ps);
	return doc;
}

/* Contract: see json_decode.h. */
json_t *twl_json_decode(const char *buf, size_t len, struct twl_json_err *err)
{
	return twl_json_decode_nested(buf, len, MAX_DEPTH, err);
}
