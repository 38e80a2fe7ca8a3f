// SPDX-License-Identifier: GPL-2.0
/* Agent health (see health.h). */
#include "health.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <twilight/util.h>
#include <twilight/wire.h>

#include "record_dedup.h"

/* Value of a "Key:   123 kB" line, or -1. */
static long status_value(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key), pos = 0;

	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		if (n > klen && !memcmp(line, key, klen) && line[klen] == ':') {
			char buf[32];
			size_t i = klen + 1, o = 0;

			while (i < n && (line[i] == ' ' || line[i] == '\t'))
				i++;
			while (i < n && line[i] >= '0' && line[i] <= '9' &&
			       o < sizeof(buf) - 1)
				buf[o++] = line[i++];
			buf[o] = '\0';
			return o ? strtol(buf, NULL, 10) : -1;
		}
		pos += n + 1;
	}
	return -1;
}

struct twl_health_boot *twl_health_boot(struct twl_health *h,
					const char *boot_id)
{
	struct twl_health_boot *b;
	size_t i;

	for (i = 0; i < h->n_boots; i++)
		if (twl_boot_id_same(h->boots[i].boot_id, boot_id))
			return &h->boots[i];
	if (h->n_boots == TWL_HEALTH_MAX_BOOTS)
		return NULL;
	b = &h->boots[h->n_boots++];
	memset(b, 0, sizeof(*b));
	snprintf(b->boot_id, sizeof(b->boot_id), "%s", boot_id);
	return b;
}

int twl_health_parse_status(const char *text, size_t len, long *rss_kb,
			    long *rss_anon_kb)
{
	*rss_kb = status_value(text, len, "VmRSS");
	*rss_anon_kb = status_value(text, len, "RssAnon");
	return (*rss_kb < 0 && *rss_anon_kb < 0) ? -ENODATA : 0;
}

int twl_health_self(const char *status_path, long *rss_kb, long *rss_anon_kb,
		    long *cpu_ms)
{
	struct rusage ru;
	char *text = NULL;
	size_t len;
	int ret;

	*rss_kb = *rss_anon_kb = *cpu_ms = -1;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		*cpu_ms =
			(long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
			(long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) /
				1000;
	ret = twl_read_file(status_path, 64 * 1024, &text, &len);
	if (ret)
		return ret;
	ret = twl_health_parse_status(text, len, rss_kb, rss_anon_kb);
	free(text);
	return ret;
}

static json_int_t cap_int(uint64_t v)
{
	return v > (uint64_t)TWL_WIRE_MAX_INT ? TWL_WIRE_MAX_INT :
						(json_int_t)v;
}

/* boots[]: one object per boot, the members known. */
static json_t *boots_json(const struct twl_health *h)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < h->n_boots; i++) {
		const struct twl_health_boot *b = &h->boots[i];
		json_t *o = json_pack("{s:s, s:b}", "boot_id", b->boot_id,
				      "start_covered", b->start_covered);
		int bad = !o;

		if (o && b->kernel[0])
			bad |= json_object_set_new(o, "kernel",
						   json_string(b->kernel));
		if (o && b->have_kmsg_seq)
			bad |= json_object_set_new(
				o, "first_kmsg_seq",
				json_integer(cap_int(b->first_kmsg_seq)));
		if (o && b->have_journal_us)
			bad |= json_object_set_new(
				o, "first_journal_us",
				json_integer(cap_int(b->first_journal_us)));
		if (bad || json_array_append_new(arr, o)) {
			json_decref(bad ? o : NULL);
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* The members of the log sources: boots[], the journal's counters. */
static int sources_json(json_t *o, const struct twl_health *h)
{
	int bad = 0;

	if (h->n_boots)
		bad |= json_object_set_new(o, "boots", boots_json(h));
	if (h->have_journal) {
		bad |= json_object_set_new(
			o, "journal_missed",
			json_integer(cap_int(h->journal_missed)));
		bad |= json_object_set_new(
			o, "journal_errors",
			json_integer(cap_int(h->journal_errors)));
	}
	return bad;
}

json_t *twl_health_to_json(const struct twl_health *h)
{
	long rss, anon, cpu;
	json_t *o;
	int ok = 0;

	o = json_object();
	if (!o)
		return NULL;
	ok |= json_object_set_new(o, "records_lost",
				  json_integer(cap_int(h->records_lost)));
	ok |= json_object_set_new(o, "parse_failures",
				  json_integer(cap_int(h->parse_failures)));
	ok |= sources_json(o, h);
	if (h->have_sender) {
		char err[256];
		size_t n;

		snprintf(err, sizeof(err), "%s", h->last_error);
		n = strlen(err);
		/* Error texts come from libraries: keep them valid UTF-8. */
		while (n && !twl_utf8_valid(err, n))
			err[--n] = '\0';
		ok |= json_object_set_new(
			o, "spool_bytes",
			json_integer(cap_int(h->spool_bytes)));
		ok |= json_object_set_new(
			o, "spool_files",
			json_integer(cap_int(h->spool_files)));
		ok |= json_object_set_new(
			o, "spool_dropped",
			json_integer(cap_int(h->spool_dropped)));
		ok |= json_object_set_new(
			o, "send_failures",
			json_integer(cap_int(h->send_failures)));
		ok |= json_object_set_new(o, "last_error", json_string(err));
		ok |= json_object_set_new(o, "key_rejected",
					  json_boolean(h->key_rejected));
	}
	twl_health_self("/proc/self/status", &rss, &anon, &cpu);
	if (rss >= 0)
		ok |= json_object_set_new(o, "rss_kb", json_integer(rss));
	if (anon >= 0)
		ok |= json_object_set_new(o, "rss_anon_kb", json_integer(anon));
	if (cpu >= 0)
		ok |= json_object_set_new(o, "cpu_ms", json_integer(cpu));
	if (ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
