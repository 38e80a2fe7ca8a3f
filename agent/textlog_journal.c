// SPDX-License-Identifier: GPL-2.0
/*
 * Journal entries as fields (textlog.h): from journalctl -o json lines,
 * export records (textlog_reader.c feeds them) and sd-journal (journal.c),
 * classified by one set of rules.
 */
#include "textlog_int.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>
#include <twilight/json_decode.h>

/* MESSAGE_ID of journald's "Missed N kernel messages" (SD_MESSAGE_JOURNAL_MISSED). */
#define JOURNAL_MISSED_ID "e9bf28e6e834481bb6f48f548ad13606"

void twl_jfields_reset(struct twl_jfields *f)
{
	/* The message buffer is left as is: message_len says it is empty. */
	memset(f, 0, offsetof(struct twl_jfields, message));
	memset(&f->transport, 0,
	       sizeof(*f) - offsetof(struct twl_jfields, transport));
	f->priority = -1;
	f->facility = -1;
}

static bool key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && !memcmp(key, name, klen);
}

/* A short decimal field value; -1 when malformed or above @max. */
static long small_number(const char *v, size_t n, long max)
{
	uint64_t x;
	size_t i = 0;

	if (twl_kmsg_parse_u64(v, n, &i, &x) || i != n || x > (uint64_t)max)
		return -1;
	return (long)x;
}

static void copy_str(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* 32 hex digits, lowercased; false when not a boot id. */
static bool copy_id(char dst[33], const char *v, size_t n)
{
	size_t i;

	if (n != 32)
		return false;
	for (i = 0; i < 32; i++) {
		char c = v[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		dst[i] = c;
	}
	dst[32] = '\0';
	return true;
}

static void add_message(struct twl_jfields *f, const char *val, size_t vlen)
{
	if (f->has_message)
		return; /* a second MESSAGE value: the first one counts */
	f->has_message = true;
	if (vlen > TWL_KMSG_TEXT_MAX) {
		f->message_err = -E2BIG;
		return;
	}
	memcpy(f->message, val, vlen);
	f->message[vlen] = '\0';
	f->message_len = vlen;
}

static void add_u64(bool *has, uint64_t *dst, unsigned *bad, const char *v,
		    size_t n)
{
	size_t i = 0;

	if (twl_kmsg_parse_u64(v, n, &i, dst) || i != n) {
		(*bad)++;
		return;
	}
	*has = true;
}

bool twl_jfields_key_valid(const char *key, size_t klen)
{
	size_t i;

	if (!klen || (key[0] >= '0' && key[0] <= '9'))
		return false;
	for (i = 0; i < klen; i++)
		if (!((key[i] >= 'A' && key[i] <= 'Z') || key[i] == '_' ||
		      (key[i] >= '0' && key[i] <= '9')))
			return false;
	return true;
}

int twl_jfields_add(struct twl_jfields *f, const char *key, size_t klen,
		    const char *val, size_t vlen)
{
	if (!twl_jfields_key_valid(key, klen))
		return -EINVAL;
	if (key_is(key, klen, "MESSAGE")) {
		add_message(f, val, vlen);
	} else if (key_is(key, klen, "_TRANSPORT")) {
		copy_str(f->transport, sizeof(f->transport), val, vlen);
	} else if (key_is(key, klen, "SYSLOG_IDENTIFIER")) {
		copy_str(f->identifier, sizeof(f->identifier), val, vlen);
	} else if (key_is(key, klen, "_HOSTNAME")) {
		copy_str(f->host, sizeof(f->host), val, vlen);
	} else if (key_is(key, klen, "_BOOT_ID")) {
		if (!copy_id(f->boot_id, val, vlen))
			f->bad_fields++;
	} else if (key_is(key, klen, "PRIORITY")) {
		f->priority = (int)small_number(val, vlen, 7);
	} else if (key_is(key, klen, "SYSLOG_FACILITY")) {
		f->facility = (int)small_number(val, vlen, 23);
		f->bad_facility = f->facility < 0;
	} else if (key_is(key, klen, "_PID")) {
		f->has_pid = true;
	} else if (key_is(key, klen, "_SOURCE_MONOTONIC_TIMESTAMP")) {
		add_u64(&f->has_source_mono, &f->source_mono, &f->bad_fields,
			val, vlen);
	} else if (key_is(key, klen, "__REALTIME_TIMESTAMP")) {
		add_u64(&f->has_realtime, &f->realtime, &f->bad_fields, val,
			vlen);
	} else if (key_is(key, klen, "MESSAGE_ID")) {
		f->missed_id = key_is(val, vlen, JOURNAL_MISSED_ID);
	}
	return 0;
}

/* "Missed N kernel messages": N, or 0 when the text says otherwise. */
static uint64_t missed_count(const struct twl_jfields *f)
{
	static const char pre[] = "Missed ", post[] = " kernel messages";
	size_t i = sizeof(pre) - 1;
	uint64_t n;

	if (f->message_len < sizeof(pre) - 1 ||
	    memcmp(f->message, pre, sizeof(pre) - 1) ||
	    twl_kmsg_parse_u64(f->message, f->message_len, &i, &n) ||
	    f->message_len - i != sizeof(post) - 1 ||
	    memcmp(f->message + i, post, sizeof(post) - 1))
		return 0;
	return n;
}

/* The kind of entry @f is; *@verified for a journal-verified kernel record. */
static enum twl_log_kind entry_kind(const struct twl_jfields *f, bool *verified)
{
	*verified = false;
	if (f->missed_id)
		return TWL_LINE_MISSED;
	if (f->transport[0]) {
		if (strcmp(f->transport, "kernel"))
			return TWL_LINE_OTHER;
		/* journald always writes a valid facility: any other is not its. */
		if (f->facility > 0 || f->bad_facility)
			return TWL_LINE_USER_KMSG;
		*verified = f->facility == 0 && !f->bad_fields;
		return TWL_LINE_RECORD;
	}
	/* No _TRANSPORT (a trimmed export): the identifier journald gives the kernel. */
	if (!strcmp(f->identifier, "kernel") && !f->has_pid &&
	    f->facility <= 0 && !f->bad_facility)
		return TWL_LINE_RECORD;
	return TWL_LINE_OTHER;
}

int twl_jfields_classify(const struct twl_jfields *f, enum twl_log_format fmt,
			 struct twl_log_record *out, struct twl_log_parse *res)
{
	bool verified;

	res->kind = entry_kind(f, &verified);
	if (res->kind == TWL_LINE_MISSED)
		res->missed = missed_count(f);
	if (res->kind != TWL_LINE_RECORD)
		return 0;
	if (!f->has_message)
		return tl_fail(res, -EINVAL, "kernel entry without MESSAGE");
	if (f->message_omitted)
		return tl_fail(res, -EINVAL,
			       "MESSAGE omitted (too long for journalctl "
			       "without --all)");
	if (f->message_err)
		return tl_fail(res, f->message_err, "MESSAGE too long");
	if (memchr(f->message, '\0', f->message_len))
		return tl_fail(res, -EINVAL, "NUL byte in MESSAGE");
	tl_record_reset(out, fmt);
	memcpy(out->k.text, f->message, f->message_len + 1);
	out->k.text_len = f->message_len;
	out->verified = verified;
	out->facility_verified = verified;
	out->k.facility = f->facility;
	out->k.level = f->priority >= 0 ? f->priority : 0;
	out->has_level = f->priority >= 0;
	out->has_mono = f->has_source_mono;
	out->k.mono_us = f->source_mono;
	out->has_wall = f->has_realtime && f->realtime <= INT64_MAX;
	out->wall_us = (int64_t)f->realtime;
	memcpy(out->host, f->host, sizeof(out->host));
	memcpy(out->boot_id, f->boot_id, sizeof(out->boot_id));
	return 0;
}

/* A JSON array of byte values (journalctl's form of non-UTF-8 data). */
static int json_bytes(json_t *arr, char *buf, size_t cap, size_t *n)
{
	size_t i;
	json_t *v;

	*n = 0;
	json_array_foreach(arr, i, v)
	{
		json_int_t b;

		if (!json_is_integer(v))
			return -EINVAL;
		b = json_integer_value(v);
		if (b < 0 || b > 255)
			return -EINVAL;
		if (*n >= cap)
			return -E2BIG;
		buf[(*n)++] = (char)b;
	}
	return 0;
}

/* One member value that is not a plain string. */
static int json_other(struct twl_jfields *f, const char *key, size_t klen,
		      json_t *v)
{
	char buf[TWL_KMSG_TEXT_MAX + 1];
	size_t n;
	int ret;

	/* Several values: an array of them; MESSAGE takes the first. */
	if (json_is_array(v) && json_array_size(v) &&
	    !json_is_integer(json_array_get(v, 0)))
		v = json_array_get(v, 0);
	if (json_is_null(v)) {
		if (key_is(key, klen, "MESSAGE") && !f->has_message)
			f->has_message = f->message_omitted = true;
		return 0;
	}
	if (json_is_string(v))
		return twl_jfields_add(f, key, klen, json_string_value(v),
				       json_string_length(v));
	if (!json_is_array(v))
		return -EINVAL;
	ret = json_bytes(v, buf, sizeof(buf), &n);
	if (ret == -E2BIG && key_is(key, klen, "MESSAGE") && !f->has_message) {
		f->has_message = true;
		f->message_err = -E2BIG;
		return 0;
	}
	return ret ? ret : twl_jfields_add(f, key, klen, buf, n);
}

/*
 * One "key": value member. The key is copied (the next string may reuse the
 * parser's scratch space); a key too long for any field twilight reads is
 * skipped with its value.
 */
static int json_member(struct twl_jfields *f, struct twl_json_parser *ps)
{
	char key[64];
	const char *s;
	size_t n, klen;
	bool skip;
	json_t *v;
	int ret;

	if (twl_json_parser_string(ps, &s, &n))
		return -EINVAL;
	skip = n >= sizeof(key);
	klen = skip ? 0 : n;
	memcpy(key, s, klen);
	if (!twl_json_parser_take(ps, ':'))
		return -EINVAL;
	if (twl_json_parser_peek(ps) == '"') {
		if (twl_json_parser_string(ps, &s, &n))
			return -EINVAL;
		return skip ? 0 : twl_jfields_add(f, key, klen, s, n);
	}
	v = twl_json_parser_value(ps, 2);
	if (!v)
		return -EINVAL;
	ret = skip ? 0 : json_other(f, key, klen, v);
	json_decref(v);
	return ret;
}

int twl_jfields_from_json(struct twl_jfields *f, const char *line, size_t len,
			  const char **why)
{
	struct twl_json_parser ps;
	int ret = -EINVAL;

	twl_jfields_reset(f);
	*why = "not a JSON object";
	twl_json_parser_init(&ps, line, len, 4, NULL);
	if (!twl_json_parser_take(&ps, '{'))
		goto out;
	if (!twl_json_parser_take(&ps, '}')) {
		do {
			if (json_member(f, &ps)) {
				*why = "bad member in a journal JSON object";
				goto out;
			}
		} while (twl_json_parser_take(&ps, ','));
		if (!twl_json_parser_take(&ps, '}'))
			goto out;
	}
	if (twl_json_parser_at_end(&ps))
		ret = 0;
out:
	twl_json_parser_fini(&ps);
	return ret;
}

int tl_parse_json(const char *line, size_t len, struct twl_log_record *out,
		  struct twl_log_parse *res)
{
	struct twl_jfields f;
	const char *why;

	if (twl_jfields_from_json(&f, line, len, &why))
		return tl_fail(res, -EINVAL, why);
	return twl_jfields_classify(&f, TWL_LOG_JOURNAL_JSON, out, res);
}
