// SPDX-License-Identifier: GPL-2.0
/* Flattening a validated report for the storage layer (ingest.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <twilight/catalog.h>
#include <twilight/cgroup_class.h>
#include <twilight/match.h>

#include "store/ingest.h"

/* Contract: see ingest.h. */
const char *const twl_fact_controllers[] = { "memory", "cpuset", "freezer",
					     "blkio",  "cgroup", NULL };

/* o's string member k, or dflt when absent */
static const char *jstr_or(const json_t *o, const char *k, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : dflt;
}

static const char *jstr(const json_t *o, const char *k)
{
	return jstr_or(o, k, "");
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

/*
 * A warning of a feature the server's catalog lacks (catalog skew) is kept
 * as an unknown text with its feature id: its text normalised as the
 * agent normalises unknown[] texts, so that repeats of one message (other
 * pids, other numbers) add up in one row.
 */
static int skewed_warning(struct twl_ingest_warning *o)
{
	size_t len = strlen(o->text);

	if (twl_catalog_find(o->feature))
		return 0;
	o->unknown_text = malloc(len + 1);
	if (!o->unknown_text)
		return -ENOMEM;
	twl_normalize_digits(o->text, len, o->unknown_text, len + 1);
	return 0;
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
		o->boot_id = jstr_or(w, "boot_id", in->boot_id);
		o->kernel = jstr_or(w, "kernel", in->kernel);
		o->source = jstr_or(w, "source", NULL);
		o->kmsg_seq = jint(w, "kmsg_seq");
		o->mono_us = jint(w, "mono_us");
		o->time = jint(w, "time");
		o->level = jint(w, "level");
		in->n_warnings = i + 1; /* freed by twl_ingest_free from here */
		if (dump(json_object_get(w, "fields"), &o->fields_json) ||
		    skewed_warning(o))
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
		o->origin = jstr(u, "origin");
		o->boot_id = jstr_or(u, "boot_id", in->boot_id);
		o->kernel = jstr_or(u, "kernel", in->kernel);
		o->source = jstr_or(u, "source", NULL);
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

/*
 * The hash states after a key's leading fields (boot id; then feature,
 * file and op), kept for the next entry: a report's entries share a boot
 * and often a feature, and FNV-1a's byte-serial loop was 2% of the
 * server's CPU in bench/server-load. NULL fields: nothing kept.
 */
struct key_prefix {
	const char *boot_id, *feature, *file, *op;
	uint64_t after_boot, after_op;
};

/* The state after u's boot id, feature, file and op, from *p when it has it. */
static uint64_t key_prefix(uint64_t host, const struct twl_wire_usage *u,
			   struct key_prefix *p)
{
	if (!p->boot_id || strcmp(p->boot_id, u->boot_id)) {
		p->boot_id = u->boot_id;
		p->after_boot = fnv_str(host, u->boot_id);
		p->feature = NULL;
	}
	if (!p->feature || strcmp(p->feature, u->feature) ||
	    strcmp(p->file, u->file) || strcmp(p->op, u->op)) {
		p->feature = u->feature;
		p->file = u->file;
		p->op = u->op;
		p->after_op = fnv_str(
			fnv_str(fnv_str(p->after_boot, u->feature), u->file),
			u->op);
	}
	return p->after_op;
}

/* twl_usage_key_check() with host_id's part done once per report. */
static uint64_t key_check(uint64_t host, const struct twl_wire_usage *u,
			  struct key_prefix *p)
{
	uint64_t h = key_prefix(host, u, p), uid = (uint64_t)u->uid;

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
	struct key_prefix p = { 0 };

	return (int64_t)key_check(fnv_str(FNV_OFFSET, host_id), u, &p);
}

/* Contract: see ingest.h. */
int64_t twl_usage_key_hash(const char *host_id, const struct twl_wire_usage *u)
{
	uint64_t host = fnv_str(FNV_OFFSET, host_id);
	struct key_prefix p = { 0 };

	return key_hash(host, key_check(host, u, &p));
}

/* A target's kind as sent, or (absent) classified from its cgroup. */
static const char *kind_of(const char *sent, const char *cgroup)
{
	if (sent && sent[0])
		return sent;
	return twl_cgroup_kind_name(twl_cgroup_kind_of(cgroup));
}

static void prepare_usage(struct twl_ingest *in, const char *host_id)
{
	uint64_t host = fnv_str(FNV_OFFSET, host_id);
	struct key_prefix p = { 0 };

	in->usage = in->report.usage;
	in->n_usage = in->report.n_usage;
	for (size_t i = 0; i < in->n_usage; i++) {
		struct twl_wire_usage *u = &in->report.usage[i];
		uint64_t check = key_check(host, u, &p);

		u->target_kind = kind_of(u->target_kind, u->cgroup);
		in->usage_check[i] = (int64_t)check;
		in->usage_id[i] = key_hash(host, check);
	}
}

static void prepare_census(struct twl_ingest *in, const json_t *census)
{
	const json_t *arr = json_object_get(census, "knobs"), *k;
	size_t i;

	in->has_census = json_is_object(census);
	in->census_time = jint(census, "time");
	json_array_foreach(arr, i, k)
	{
		struct twl_ingest_knob *o = &in->knobs[i];

		o->feature = jstr(k, "feature");
		o->file = jstr(k, "file");
		o->cgroup = jstr(k, "cgroup");
		o->value = jstr(k, "value");
		o->target_kind = kind_of(jstr(k, "target_kind"), o->cgroup);
	}
	in->n_knobs = json_array_size(arr);
	arr = json_object_get(census, "runtimes");
	json_array_foreach(arr, i, k)
	{
		struct twl_ingest_runtime *o = &in->runtimes[i];

		if (i == TWL_WIRE_MAX_RUNTIMES)
			break; /* the validator's cap */
		o->name = jstr(k, "name");
		o->version = jstr(k, "version");
		o->cgroup_driver = jstr(k, "cgroup_driver");
		in->n_runtimes = i + 1;
	}
}

static void prepare_labels(struct twl_ingest *in, const json_t *host)
{
	json_t *labels = json_object_get(host, "labels"), *v;
	const char *key;

	in->has_labels = json_is_object(labels);
	json_object_foreach(labels, key, v)
	{
		if (in->n_labels == TWL_WIRE_MAX_LABELS)
			break; /* the validator's cap */
		in->labels[in->n_labels].key = key;
		in->labels[in->n_labels++].value = json_string_value(v);
	}
}

/* Set bit (TWL_FACT_*) of *facts when on. */
static void fact(int64_t *facts, int bit, bool on)
{
	if (on)
		*facts |= (int64_t)1 << bit;
}

/* health.controllers into facts: each controller's state bit. */
static void controller_facts(struct twl_ingest_coverage *c, const json_t *arr)
{
	static const char *const states[] = { "attached", "unavailable",
					      "not_built" };
	static const int base[] = { TWL_FACT_BPF_ATTACHED,
				    TWL_FACT_BPF_UNAVAILABLE,
				    TWL_FACT_BPF_NOT_BUILT };
	const json_t *x;
	size_t i, k, s;

	fact(&c->facts, TWL_FACT_CONTROLLERS, json_is_array(arr));
	json_array_foreach(arr, i, x)
	{
		const char *name = jstr(x, "name"), *state = jstr(x, "state");

		for (k = 0; k < TWL_FACT_N_CONTROLLERS; k++)
			if (!strcmp(name, twl_fact_controllers[k]))
				break;
		for (s = 0; k < TWL_FACT_N_CONTROLLERS && s < 3; s++)
			fact(&c->facts, base[s] + (int)k,
			     !strcmp(state, states[s]));
	}
}

/* health.boots into facts and counts; boot_id: the host's current boot. */
static void boot_facts(struct twl_ingest_coverage *c, const json_t *arr,
		       const char *boot_id)
{
	const json_t *b;
	size_t i;

	fact(&c->facts, TWL_FACT_BOOTS, json_is_array(arr));
	json_array_foreach(arr, i, b)
	{
		bool covered =
			json_is_true(json_object_get(b, "start_covered"));

		c->boots++;
		c->boots_uncovered += !covered;
		if (strcmp(jstr(b, "boot_id"), boot_id))
			continue;
		fact(&c->facts, TWL_FACT_BOOT_COVERED, covered);
		fact(&c->facts, TWL_FACT_BOOT_UNCOVERED, !covered);
		/* the agent read this boot's log from neither source */
		fact(&c->facts, TWL_FACT_NO_LOG_SOURCE,
		     !json_object_get(b, "first_kmsg_seq") &&
			     !json_object_get(b, "first_journal_us"));
	}
	fact(&c->facts, TWL_FACT_SOME_BOOT_UNCOVERED, c->boots_uncovered > 0);
}

/* The coverage facts of health (schema/migrations/014_host_coverage.sql). */
static void prepare_coverage(struct twl_ingest *in, const json_t *health)
{
	struct twl_ingest_coverage *c = &in->coverage;
	const json_t *probes = json_object_get(health, "probes"), *p;
	size_t i;

	c->catalog_version = in->catalog_version;
	c->records_lost = in->records_lost;
	c->journal_missed = jint(health, "journal_missed");
	c->journal_errors = jint(health, "journal_errors");
	c->entries_dropped = jint(health, "entries_dropped");
	json_array_foreach(probes, i, p)
		c->probes_not_built += !strcmp(jstr(p, "state"), "not_built");
	controller_facts(c, json_object_get(health, "controllers"));
	boot_facts(c, json_object_get(health, "boots"), in->boot_id);
	fact(&c->facts, TWL_FACT_RECORDS_LOST, c->records_lost > 0);
	fact(&c->facts, TWL_FACT_JOURNAL_MISSED, c->journal_missed > 0);
	fact(&c->facts, TWL_FACT_JOURNAL_ERRORS, c->journal_errors > 0);
	fact(&c->facts, TWL_FACT_ENTRIES_DROPPED, c->entries_dropped > 0);
	fact(&c->facts, TWL_FACT_PROBE_NOT_BUILT, c->probes_not_built > 0);
	fact(&c->facts, TWL_FACT_KEY_REJECTED, in->key_rejected);
	fact(&c->facts, TWL_FACT_PROBE_MISSING,
	     json_array_size(json_object_get(health, "probe_missing")) > 0);
	fact(&c->facts, TWL_FACT_MAP_OVERFLOW,
	     jint(health, "map_overflows") > 0);
}

/* host and health members into in. */
static void prepare_host(struct twl_ingest *in, const json_t *host,
			 const json_t *health)
{
	in->hostname = jstr(host, "hostname");
	in->kernel = jstr(host, "kernel");
	in->cgroup_mode = jstr(host, "cgroup_mode");
	in->agent_version = jstr(host, "agent_version");
	in->boot_id = jstr(host, "boot_id");
	in->catalog_version = jint(host, "catalog_version");
	in->records_lost = jint(health, "records_lost");
	in->key_rejected =
		json_is_true(json_object_get(health, "key_rejected"));
	prepare_labels(in, host);
	prepare_coverage(in, health);
}

/* One allocation: the struct, then its five arrays; NULL: no memory. */
static struct twl_ingest *ingest_alloc(size_t nw, size_t nu, size_t ng,
				       size_t nk)
{
	struct twl_ingest *in;

	in = calloc(1, sizeof(*in) + nw * sizeof(*in->warnings) +
			       nu * sizeof(*in->unknown) +
			       ng * sizeof(*in->usage_id) +
			       ng * sizeof(*in->usage_check) +
			       nk * sizeof(*in->knobs));
	if (!in)
		return NULL;
	in->warnings = (struct twl_ingest_warning *)(in + 1);
	in->unknown = (struct twl_ingest_unknown *)(in->warnings + nw);
	in->usage_id = (int64_t *)(in->unknown + nu);
	in->usage_check = in->usage_id + ng;
	in->knobs = (struct twl_ingest_knob *)(in->usage_check + ng);
	return in;
}

/* Contract: see ingest.h. */
int twl_ingest_prepare_report(struct twl_wire_report *r, const char *host_id,
			      struct twl_ingest **out)
{
	json_t *report = r->doc;
	const json_t *health = json_object_get(report, "health");
	const json_t *census = json_object_get(report, "census");
	const json_t *warnings = json_object_get(report, "warnings");
	const json_t *unknown = json_object_get(report, "unknown");
	struct twl_ingest *in;

	*out = NULL;
	in = ingest_alloc(json_array_size(warnings), json_array_size(unknown),
			  r->n_usage,
			  json_array_size(json_object_get(census, "knobs")));
	if (!in) {
		twl_wire_release(r);
		return -ENOMEM;
	}
	in->report = *r;
	memset(r, 0, sizeof(*r));
	in->batch_id = jstr(report, "batch_id");
	in->seq = jint(report, "seq");
	prepare_host(in, json_object_get(report, "host"), health);
	prepare_unknown(in, unknown);
	prepare_usage(in, host_id);
	prepare_census(in, census);
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

/* Clamp *t to max, noting it in @in. */
static void bound(struct twl_ingest *in, int64_t *t, int64_t max)
{
	if (*t <= max)
		return;
	if (*t > in->time_sent_max)
		in->time_sent_max = *t;
	in->times_clamped++;
	*t = max;
}

/* bound() for the wire's usage times (long long). */
static void bound_ll(struct twl_ingest *in, long long *t, int64_t max)
{
	int64_t v = *t;

	bound(in, &v, max);
	*t = v;
}

/* Contract: see ingest.h. */
int64_t twl_ingest_bound_times(struct twl_ingest *in, int64_t now)
{
	const int64_t max = now + TWL_INGEST_SKEW_S;

	for (size_t i = 0; i < in->n_warnings; i++)
		bound(in, &in->warnings[i].time, max);
	for (size_t i = 0; i < in->n_unknown; i++)
		bound(in, &in->unknown[i].time, max);
	for (size_t i = 0; i < in->n_usage; i++) {
		bound_ll(in, &in->report.usage[i].first_seen, max);
		bound_ll(in, &in->report.usage[i].last_seen, max);
	}
	if (in->has_census)
		bound(in, &in->census_time, max);
	return in->times_clamped;
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
	for (size_t i = 0; i < in->n_warnings; i++) {
		free(in->warnings[i].fields_json);
		free(in->warnings[i].unknown_text);
	}
	free(in->health_json);
	free(in->probe_missing_json);
	free(in->census_json);
	twl_wire_release(&in->report);
	free(in);
}

/* Contract: see ingest.h. */
bool twl_ingest_has_label(const struct twl_ingest *in, const char *key,
			  const char *value)
{
	for (size_t i = 0; i < in->n_labels; i++)
		if (!strcmp(in->labels[i].key, key) &&
		    !strcmp(in->labels[i].value, value))
			return true;
	return false;
}
