// SPDX-License-Identifier: GPL-2.0
/*
 * Batch collection, the wire-format document, and splitting a document
 * in two for a server that refuses it as too large (see report.h).
 */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/util.h>
#include <twilight/wire.h>

struct unknown_entry {
	char text[TWL_WIRE_MAX_STR + 1];
	uint64_t seq, mono_us;
	int64_t time;
	uint64_t count;
	const char *origin, *source;
	char boot_id[TWL_WIRE_MAX_ID + 1]; /* "": this boot */
	char kernel[TWL_WIRE_MAX_SHORT + 1];
};

struct twl_report {
	json_t *warnings;
	json_t *usage;
	size_t n_unknown;
	struct unknown_entry unknown[TWL_WIRE_MAX_UNKNOWN];
	json_t *census;
};

/* Contract: see report.h. */
struct twl_report *twl_report_new(void)
{
	struct twl_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->warnings = json_array();
	r->usage = json_array();
	if (!r->warnings || !r->usage) {
		json_decref(r->warnings);
		json_decref(r->usage);
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/* Contract: see report.h. */
void twl_report_free(struct twl_report *r)
{
	if (!r)
		return;
	json_decref(r->warnings);
	json_decref(r->usage);
	json_decref(r->census);
	free(r);
}

/* Contract: see report.h. */
void twl_report_reset(struct twl_report *r)
{
	json_array_clear(r->warnings);
	json_array_clear(r->usage);
	r->n_unknown = 0;
	json_decref(r->census);
	r->census = NULL;
}

/* Contract: see report.h. */
size_t twl_text_sanitize(const char *in, size_t len, char *out, size_t cap)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	if (!cap)
		return 0;
	while (i < len) {
		size_t n = twl_utf8_seq_len((const char *)s + i, len - i);

		if (!n) {
			if (o + 1 >= cap)
				break;
			out[o++] = '?';
			i++;
			continue;
		}
		if (o + n >= cap)
			break;
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return o;
}

static json_int_t wire_int(uint64_t v)
{
	return v > (uint64_t)TWL_WIRE_MAX_INT ? TWL_WIRE_MAX_INT :
						(json_int_t)v;
}

static json_int_t wire_time(int64_t t)
{
	return t < 0 ? 0 : wire_int((uint64_t)t);
}

/* A record of another boot: the kernel that boot ran, "unknown" when not held. */
static const char *boot_kernel(const struct twl_report_rec *at)
{
	return at->kernel && *at->kernel ? at->kernel : "unknown";
}

/* The members saying where a record is from: its boot (another one), source, origin. */
static int set_from(json_t *w, const struct twl_report_rec *at)
{
	char v[TWL_WIRE_MAX_ID + 1];

	if (at->boot_id && *at->boot_id) {
		twl_text_sanitize(at->boot_id, strlen(at->boot_id), v,
				  sizeof(v));
		if (json_object_set_new(w, "boot_id", json_string(v)))
			return -ENOMEM;
		twl_text_sanitize(boot_kernel(at), strlen(boot_kernel(at)), v,
				  TWL_WIRE_MAX_SHORT + 1);
		if (json_object_set_new(w, "kernel", json_string(v)))
			return -ENOMEM;
	}
	if (at->source && *at->source &&
	    json_object_set_new(w, "source", json_string(at->source)))
		return -ENOMEM;
	return json_object_set_new(w, "origin", json_string(at->origin)) ?
		       -ENOMEM :
		       0;
}

/* The matched fields as a JSON object, capped at the wire's limits; NULL on ENOMEM. */
static json_t *fields_json(const struct twl_match *m)
{
	json_t *fields = json_object();
	size_t i;

	for (i = 0; fields && i < m->n_fields && i < TWL_WIRE_MAX_FIELDS; i++) {
		char v[TWL_WIRE_MAX_FIELD_VALUE + 1];
		char k[TWL_WIRE_MAX_FIELD_NAME + 1];

		twl_text_sanitize(m->fields[i].name, strlen(m->fields[i].name),
				  k, sizeof(k));
		twl_text_sanitize(m->fields[i].value,
				  strlen(m->fields[i].value), v, sizeof(v));
		if (json_object_set_new(fields, k, json_string(v))) {
			json_decref(fields);
			return NULL;
		}
	}
	return fields;
}

/* Contract: see report.h. */
int twl_report_add_warning(struct twl_report *r,
			   const struct twl_kmsg_record *rec,
			   const struct twl_match *m,
			   const struct twl_report_rec *at)
{
	char text[TWL_WIRE_MAX_STR + 1];
	json_t *w, *fields = NULL;
	int level = rec->level;

	if (json_array_size(r->warnings) >= TWL_WIRE_MAX_WARNINGS)
		return -ENOSPC;
	/* Plain dmesg has no priority: the catalog knows what the kernel uses. */
	if (rec->facility < 0 && m->message < m->feature->n_messages)
		level = m->feature->messages[m->message].level;
	twl_text_sanitize(rec->text, rec->text_len, text, sizeof(text));
	if (m->n_fields && !(fields = fields_json(m)))
		return -ENOMEM;
	w = json_pack("{s:s, s:s, s:I, s:I, s:I, s:i}", "feature",
		      m->feature->id, "text", text, "kmsg_seq",
		      wire_int(rec->seq), "mono_us", wire_int(rec->mono_us),
		      "time", wire_time(at->time), "level", level);
	if (!w || (fields && json_object_set_new(w, "fields", fields)) ||
	    set_from(w, at)) {
		if (!w)
			json_decref(fields);
		json_decref(w);
		return -ENOMEM;
	}
	if (json_array_append_new(r->warnings, w))
		return -ENOMEM;
	return 0;
}

/* Contract: see report.h. */
int twl_report_add_unknown(struct twl_report *r,
			   const struct twl_kmsg_record *rec,
			   const struct twl_report_rec *at)
{
	char norm[TWL_KMSG_TEXT_MAX + 1], clean[TWL_WIRE_MAX_STR + 1];
	const char *boot = at->boot_id ? at->boot_id : "";
	struct unknown_entry *e;
	size_t n, i;

	n = twl_normalize_digits(rec->text, rec->text_len, norm, sizeof(norm));
	/* Trailing whitespace carries no meaning (matcher ignores it too). */
	while (n && (norm[n - 1] == ' ' || norm[n - 1] == '\n' ||
		     norm[n - 1] == '\t' || norm[n - 1] == '\r'))
		norm[--n] = '\0';
	twl_text_sanitize(norm, n, clean, sizeof(clean));
	for (i = 0; i < r->n_unknown; i++) {
		e = &r->unknown[i];
		if (strcmp(e->text, clean))
			continue;
		if (strncmp(e->boot_id, boot, sizeof(e->boot_id) - 1))
			return -ENOSPC; /* another boot's: in the next batch */
		e->count++;
		return 0;
	}
	if (r->n_unknown >= TWL_WIRE_MAX_UNKNOWN)
		return -ENOSPC;
	e = &r->unknown[r->n_unknown++];
	memcpy(e->text, clean, sizeof(e->text));
	e->seq = rec->seq;
	e->mono_us = rec->mono_us;
	e->time = at->time;
	e->count = 1;
	e->origin = at->origin;
	e->source = at->source;
	twl_text_sanitize(boot, strlen(boot), e->boot_id, sizeof(e->boot_id));
	e->kernel[0] = '\0';
	if (*boot)
		twl_text_sanitize(boot_kernel(at), strlen(boot_kernel(at)),
				  e->kernel, sizeof(e->kernel));
	return 0;
}

/* Contract: see report.h. */
int twl_report_add_usage(struct twl_report *r, json_t *entry)
{
	if (json_array_size(r->usage) >= TWL_WIRE_MAX_USAGE)
		return -ENOSPC;
	return json_array_append(r->usage, entry) ? -ENOMEM : 0;
}

/* Contract: see report.h. */
void twl_report_set_census(struct twl_report *r, json_t *census)
{
	json_decref(r->census);
	r->census = census;
}

/* Contract: see report.h. */
bool twl_report_has_census(const struct twl_report *r)
{
	return r->census != NULL;
}

/* Contract: see report.h. */
size_t twl_report_count(const struct twl_report *r)
{
	return json_array_size(r->warnings) + r->n_unknown +
	       json_array_size(r->usage);
}

/*
 * A record's boot (wire v2) when it has none yet: @id's, the boot the
 * agent runs in (/dev/kmsg holds only it; a saved log's records whose
 * boot the log does not name are taken for it, as wire v1 took them).
 */
static int set_boot(json_t *rec, const struct twl_identity *id)
{
	if (json_object_get(rec, "boot_id"))
		return 0;
	return json_object_set_new(rec, "boot_id", json_string(id->boot_id)) ||
	       json_object_set_new(rec, "kernel", json_string(id->kernel));
}

/* warnings[]: the batch's warnings (copies), each with its boot. */
static json_t *warnings_json(const struct twl_report *r,
			     const struct twl_identity *id)
{
	json_t *out = json_array(), *w, *c;
	size_t i;

	json_array_foreach(r->warnings, i, w)
	{
		c = json_copy(w);
		if (!out || !c || set_boot(c, id) ||
		    json_array_append_new(out, c)) {
			json_decref(c);
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* One unknown[] entry, with its boot and source. */
static json_t *unknown_one(const struct unknown_entry *e)
{
	struct twl_report_rec at = { .boot_id = e->boot_id,
				     .kernel = e->kernel,
				     .source = e->source,
				     .origin = e->origin };
	json_t *u = json_pack("{s:s, s:I, s:I, s:I, s:I}", "text", e->text,
			      "kmsg_seq", wire_int(e->seq), "mono_us",
			      wire_int(e->mono_us), "time", wire_time(e->time),
			      "count", wire_int(e->count));

	if (u && set_from(u, &at)) {
		json_decref(u);
		return NULL;
	}
	return u;
}

/* unknown[]: one entry per distinct text, each with its boot. */
static json_t *unknown_json(const struct twl_report *r,
			    const struct twl_identity *id)
{
	json_t *unknown = json_array();
	size_t i;

	for (i = 0; unknown && i < r->n_unknown; i++) {
		json_t *u = unknown_one(&r->unknown[i]);

		if (!u || set_boot(u, id) ||
		    json_array_append_new(unknown, u)) {
			json_decref(u);
			json_decref(unknown);
			return NULL;
		}
	}
	return unknown;
}

/* host: who sends, with the operator's labels when there are any. */
static json_t *host_json(const struct twl_identity *id)
{
	json_t *host, *labels;

	host = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "host_id",
			 id->host_id, "hostname", id->hostname, "boot_id",
			 id->boot_id, "kernel", id->kernel, "cgroup_mode",
			 id->cgroup_mode, "agent_version", TWL_AGENT_VERSION,
			 "catalog_version", (json_int_t)twl_catalog_version());
	if (!host || !id->labels || !id->labels->n)
		return host;
	labels = twl_labels_to_json(id->labels);
	if (!labels || json_object_set_new(host, "labels", labels)) {
		json_decref(host);
		return NULL;
	}
	return host;
}

/* Contract: see report.h. */
json_t *twl_report_to_json(const struct twl_report *r,
			   const struct twl_report_meta *meta, json_t *health)
{
	json_t *host = host_json(meta->id), *warnings, *unknown;

	warnings = warnings_json(r, meta->id);
	unknown = unknown_json(r, meta->id);
	if (!host || !warnings || !unknown) {
		json_decref(host);
		json_decref(warnings);
		json_decref(unknown);
		return NULL;
	}
	return json_pack("{s:i, s:s, s:I, s:I, s:o, s:o, s:o, s:O, s:O, s:o}",
			 "v", TWL_WIRE_VERSION, "batch_id", meta->batch_id,
			 "seq", wire_int(meta->seq), "sent_time",
			 wire_time(meta->sent_time), "host", host, "warnings",
			 warnings, "unknown", unknown, "usage", r->usage,
			 "census", r->census ? r->census : json_null(),
			 "health",
			 health ? json_incref(health) : json_object());
}

/* ---- splitting a report for HTTP 413 ---- */

static const char *const split_arrays[] = { "warnings", "unknown", "usage" };

static int half_id(const char *orig, const char *suffix, char out[33])
{
	char buf[160], hex[65];
	int n = snprintf(buf, sizeof(buf), "%s%s", orig, suffix);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	twl_sha256_hex(buf, (size_t)n, hex);
	memcpy(out, hex, 32);
	out[32] = 0;
	return 0;
}

/*
 * Build one half: a copy of @doc whose arrays keep only the elements with a
 * global index in [@lo, @hi) (order: warnings, unknown, usage, census).
 */
static char *make_half(json_t *doc, size_t lo, size_t hi, const char *bid)
{
	json_t *h = json_deep_copy(doc), *census;
	size_t base = 0;
	char *out = NULL;

	if (!h)
		return NULL;
	for (size_t k = 0; k < 3; k++) {
		json_t *arr = json_object_get(h, split_arrays[k]);
		json_t *keep = json_array();
		size_t n = json_array_size(arr);

		if (!keep)
			goto out;
		for (size_t i = 0; i < n; i++)
			if (base + i >= lo && base + i < hi)
				json_array_append(keep, json_array_get(arr, i));
		base += n;
		if (arr && json_object_set_new(h, split_arrays[k], keep))
			goto out;
		if (!arr)
			json_decref(keep);
	}
	census = json_object_get(h, "census");
	if (json_is_object(census)) {
		json_t *knobs = json_object_get(census, "knobs");
		size_t n = json_array_size(knobs);

		if (n) {
			json_t *keep = json_array();
			bool any = false;

			if (!keep)
				goto out;
			for (size_t i = 0; i < n; i++)
				if (base + i >= lo && base + i < hi) {
					json_array_append(
						keep, json_array_get(knobs, i));
					any = true;
				}
			if (json_object_set_new(census, "knobs", keep))
				goto out;
			if (!any &&
			    json_object_set_new(h, "census", json_null()))
				goto out;
		} else if (!(base >= lo && base < hi)) {
			if (json_object_set_new(h, "census", json_null()))
				goto out;
		}
	}
	if (json_object_set_new(h, "batch_id", json_string(bid)))
		goto out;
	out = json_dumps(h, JSON_COMPACT);
out:
	json_decref(h);
	return out;
}

/* Contract: see report.h. */
int twl_report_split(const char *json, size_t len, char **a, char **b)
{
	json_t *doc, *census;
	const char *bid;
	char ida[33], idb[33];
	size_t total = 0;
	int ret;

	*a = *b = NULL;
	doc = json_loadb(json, len, 0, NULL);
	if (!json_is_object(doc)) {
		ret = -EINVAL;
		goto out;
	}
	bid = json_string_value(json_object_get(doc, "batch_id"));
	if (!bid || half_id(bid, "/a", ida) || half_id(bid, "/b", idb)) {
		ret = -EINVAL;
		goto out;
	}
	for (size_t k = 0; k < 3; k++)
		total += json_array_size(json_object_get(doc, split_arrays[k]));
	census = json_object_get(doc, "census");
	if (json_is_object(census)) {
		size_t nk = json_array_size(json_object_get(census, "knobs"));

		total += nk ? nk : 1;
	}
	if (total < 2) {
		ret = -E2BIG;
		goto out;
	}
	*a = make_half(doc, 0, total / 2, ida);
	*b = make_half(doc, total / 2, total, idb);
	if (!*a || !*b) {
		free(*a);
		free(*b);
		*a = *b = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}
