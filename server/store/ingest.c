// SPDX-License-Identifier: GPL-2.0
/* Flattening a validated report for the storage layer (ingest.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/match.h>

#include "store/ingest.h"

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "";
}

static int64_t jint(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Compact, key-sorted JSON text of v; *out NULL for absent or null. */
static int dump(const json_t *v, char **out)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	*out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	return *out ? 0 : -ENOMEM;
}

static int prepare_warnings(struct twl_ingest *in, const json_t *arr)
{
	const json_t *w;
	size_t i;

	json_array_foreach(arr, i, w)
	{
		struct twl_ingest_warning *o = &in->warnings[i];

		o->feature = jstr(w, "feature");
		o->text = jstr(w, "text");
		o->origin = jstr(w, "origin");
		o->kmsg_seq = jint(w, "kmsg_seq");
		o->mono_us = jint(w, "mono_us");
		o->time = jint(w, "time");
		o->level = jint(w, "level");
		in->n_warnings = i + 1; /* freed by twl_ingest_free from here */
		if (dump(json_object_get(w, "fields"), &o->fields_json))
			return -ENOMEM;
	}
	return 0;
}

static void prepare_unknown(struct twl_ingest *in, const json_t *arr)
{
	const json_t *u;
	size_t i;

	json_array_foreach(arr, i, u)
	{
		struct twl_ingest_unknown *o = &in->unknown[i];
		struct twl_match m;

		o->text = jstr(u, "text");
		o->kmsg_seq = jint(u, "kmsg_seq");
		o->time = jint(u, "time");
		o->count = jint(u, "count");
		/*
		 * The server's catalog may be newer than the agent's. unknown[]
		 * texts have their digits replaced by '#', so match with the
		 * normalising matcher (a catalog digit matches '#').
		 */
		o->matched = twl_match_normalized(o->text, strlen(o->text),
						  &m) == 1 ?
				     m.feature->id :
				     NULL;
	}
	in->n_unknown = json_array_size(arr);
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * FNV_PRIME;
	return h * FNV_PRIME; /* the 0 byte that ends the field */
}

/* twl_usage_key_check() with host_id's part done once per report. */
static uint64_t key_check(uint64_t host, const struct twl_wire_usage *u)
{
	uint64_t h = host, uid = (uint64_t)u->uid;

	h = fnv_str(h, u->boot_id);
	h = fnv_str(h, u->feature);
	h = fnv_str(h, u->file);
	h = fnv_str(h, u->op);
	h = fnv_str(h, u->cgroup);
	h = fnv_str(h, u->comm);
	h = fnv_str(h, u->writer_cgroup);
	for (int i = 0; i < 8; i++, uid >>= 8)
		h = (h ^ (uid & 0xff)) * FNV_PRIME;
	return h;
}

/* twl_usage_key_hash() from host_id's hash and the key's check. */
static int64_t key_hash(uint64_t host, uint64_t check)
{
	/*
	 * The high 40 bits are host_id's alone, so that a host's rows sit
	 * together in the table's B-tree and a report dirties few pages.
	 */
	return (int64_t)((host & ~0xffffffULL) | (check & 0xffffffULL));
}

/* Contract: see ingest.h. */
int64_t twl_usage_key_check(const char *host_id, const struct twl_wire_usage *u)
{
	return (int64_t)key_check(fnv_str(FNV_OFFSET, host_id), u);
}

/* Contract: see ingest.h. */
int64_t twl_usage_key_hash(const char *host_id, const struct twl_wire_usage *u)
{
	uint64_t host = fnv_str(FNV_OFFSET, host_id);

	return key_hash(host, key_check(host, u));
}

static void prepare_usage(struct twl_ingest *in, const char *host_id)
{
	uint64_t host = fnv_str(FNV_OFFSET, host_id);

	in->usage = in->report.usage;
	in->n_usage = in->report.n_usage;
	for (size_t i = 0; i < in->n_usage; i++) {
		uint64_t check = key_check(host, &in->usage[i]);

		in->usage_check[i] = (int64_t)check;
		in->usage_id[i] = key_hash(host, check);
	}
}

static void prepare_knobs(struct twl_ingest *in, const json_t *arr)
{
	const json_t *k;
	size_t i;

	json_array_foreach(arr, i, k)
	{
		struct twl_ingest_knob *o = &in->knobs[i];

		o->feature = jstr(k, "feature");
		o->file = jstr(k, "file");
		o->cgroup = jstr(k, "cgroup");
		o->value = jstr(k, "value");
	}
	in->n_knobs = json_array_size(arr);
}

/* Contract: see ingest.h. */
int twl_ingest_prepare_report(struct twl_wire_report *r, const char *host_id,
			      struct twl_ingest **out)
{
	json_t *report = r->doc;
	const json_t *host = json_object_get(report, "host");
	const json_t *health = json_object_get(report, "health");
	const json_t *census = json_object_get(report, "census");
	const json_t *warnings = json_object_get(report, "warnings");
	const json_t *unknown = json_object_get(report, "unknown");
	const json_t *knobs = json_object_get(census, "knobs");
	size_t nw = json_array_size(warnings), nu = json_array_size(unknown);
	size_t ng = r->n_usage, nk = json_array_size(knobs);
	struct twl_ingest *in;

	*out = NULL;
	/* One allocation: the struct, then its five arrays. */
	in = calloc(1, sizeof(*in) + nw * sizeof(*in->warnings) +
			       nu * sizeof(*in->unknown) +
			       ng * sizeof(*in->usage_id) +
			       ng * sizeof(*in->usage_check) +
			       nk * sizeof(*in->knobs));
	if (!in) {
		twl_wire_release(r);
		return -ENOMEM;
	}
	in->warnings = (struct twl_ingest_warning *)(in + 1);
	in->unknown = (struct twl_ingest_unknown *)(in->warnings + nw);
	in->usage_id = (int64_t *)(in->unknown + nu);
	in->usage_check = in->usage_id + ng;
	in->knobs = (struct twl_ingest_knob *)(in->usage_check + ng);
	in->report = *r;
	memset(r, 0, sizeof(*r));
	in->batch_id = jstr(report, "batch_id");
	in->seq = jint(report, "seq");
	in->hostname = jstr(host, "hostname");
	in->kernel = jstr(host, "kernel");
	in->cgroup_mode = jstr(host, "cgroup_mode");
	in->agent_version = jstr(host, "agent_version");
	in->boot_id = jstr(host, "boot_id");
	in->catalog_version = jint(host, "catalog_version");
	in->records_lost = jint(health, "records_lost");
	in->key_rejected =
		json_is_true(json_object_get(health, "key_rejected"));
	in->has_census = json_is_object(census);
	in->census_time = jint(census, "time");
	prepare_unknown(in, unknown);
	prepare_usage(in, host_id);
	prepare_knobs(in, knobs);
	if (dump(health, &in->health_json) ||
	    dump(json_object_get(health, "probe_missing"),
		 &in->probe_missing_json) ||
	    dump(census, &in->census_json) || prepare_warnings(in, warnings)) {
		twl_ingest_free(in);
		return -ENOMEM;
	}
	*out = in;
	return 0;
}

/* Contract: see ingest.h. */
int twl_ingest_prepare(json_t *report, const char *host_id,
		       struct twl_ingest **out)
{
	struct twl_wire_report r;

	*out = NULL;
	if (twl_wire_from_doc(report, &r))
		return -ENOMEM;
	return twl_ingest_prepare_report(&r, host_id, out);
}

/* Contract: see ingest.h. */
uint64_t twl_ingest_rows(const struct twl_ingest *in)
{
	return in->n_warnings + in->n_unknown + in->n_usage + in->n_knobs;
}

/* Contract: see ingest.h. */
void twl_ingest_free(struct twl_ingest *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_warnings; i++)
		free(in->warnings[i].fields_json);
	free(in->health_json);
	free(in->probe_missing_json);
	free(in->census_json);
	twl_wire_release(&in->report);
	free(in);
}
