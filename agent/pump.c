// SPDX-License-Identifier: GPL-2.0
/* The agent's processing core (see pump.h). */
#include "pump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/match.h>
#include <twilight/util.h>

#include "record_dedup.h"

/* Other boots' kernel releases a saved log named ("Linux version"). */
#define KERNELS 16

struct twl_pump {
	struct twl_pump_cfg cfg;
	struct twl_kmsg_source *src;
	struct twl_report *rep;
	struct twl_dedup *seen; /* warnings and unknown texts sent */
	/* repeats numbered per source: the kmsg source's, twl_pump_add()'s */
	struct twl_dedup_run src_run, add_run;
	struct twl_state saved; /* as on disk */
	size_t next_kernel;
	struct {
		char boot_id[33], release[65];
	} kernels[KERNELS];
	bool have_pending_seq;
	uint64_t pending_seq; /* highest kmsg seq read into the current batch */
	struct twl_pump_stats st;
	json_t *usage_pending; /* collected usage not yet in a batch */
	/* Counters of sources replaced earlier (health is cumulative). */
	uint64_t old_lost, old_parse;
	struct twl_log_record rec;
};

int64_t twl_pump_time_of(uint64_t mono_us)
{
	int64_t now = (int64_t)time(NULL), t;

	if (mono_us > (uint64_t)INT64_MAX / 2)
		return now;
	t = (twl_boot_time_ns() / 1000 + (int64_t)mono_us) / 1000000;
	return t > now ? now : t;
}

struct twl_pump *twl_pump_new(const struct twl_pump_cfg *cfg,
			      const struct twl_state *st)
{
	struct twl_pump *p;

	if (!cfg->id || !cfg->sink) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cfg = *cfg;
	p->saved = *st;
	p->rep = twl_report_new();
	p->usage_pending = json_array();
	p->seen = twl_dedup_new(TWL_PUMP_DEDUP_CAP);
	if (!p->rep || !p->usage_pending || !p->seen) {
		twl_report_free(p->rep);
		json_decref(p->usage_pending);
		twl_dedup_free(p->seen);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void twl_pump_free(struct twl_pump *p)
{
	if (!p)
		return;
	twl_report_free(p->rep);
	json_decref(p->usage_pending);
	twl_dedup_free(p->seen);
	free(p);
}

static void source_counters(const struct twl_pump *p, uint64_t *lost,
			    uint64_t *parse)
{
	struct twl_kmsg_source_stats ss;

	*lost = p->old_lost;
	*parse = p->old_parse;
	if (p->src) {
		twl_kmsg_source_stats(p->src, &ss);
		*lost += ss.lost;
		*parse += ss.parse_failures;
	}
}

enum rec_class { C_IGNORED, C_WARNING, C_UNKNOWN };

/* Facility 0 only: user space can never log as the kernel. */
static enum rec_class classify(const struct twl_log_record *rec,
			       struct twl_match *m)
{
	if (rec->k.facility > 0)
		return C_IGNORED;
	if (twl_match_text(rec->k.text, rec->k.text_len, m) == 1)
		return C_WARNING;
	if (twl_text_mentions_deprecation(rec->k.text, rec->k.text_len))
		return C_UNKNOWN;
	return C_IGNORED;
}

static bool this_boot(const struct twl_pump *p,
		      const struct twl_log_record *rec)
{
	return !rec->boot_id[0] ||
	       twl_boot_id_same(rec->boot_id, p->cfg.id->boot_id);
}

/* The boot in a record's identity: this boot's id for this boot's records. */
static const char *identity_boot(const struct twl_pump *p,
				 const struct twl_log_record *rec)
{
	return this_boot(p, rec) ? p->cfg.id->boot_id : rec->boot_id;
}

/* A record's place in the kmsg source: sequence number + 1, or its line. */
static uint64_t src_place(const struct twl_log_record *rec)
{
	return rec->k.has_seq ? rec->k.seq + 1 : rec->line;
}

/* @rec's ordinal among its source's records with its boot, stamp and text. */
static uint32_t ordinal(struct twl_pump *p, struct twl_dedup_run *run,
			const struct twl_log_record *rec, uint64_t place)
{
	return twl_dedup_ordinal(run, identity_boot(p, rec), rec->k.mono_us,
				 rec->k.text, rec->k.text_len, place);
}

/* A record already handled on this boot (before the resume point): remember it. */
static void skipped(void *ctx, const struct twl_log_record *rec)
{
	struct twl_pump *p = ctx;
	struct twl_match m;

	if (classify(rec, &m) != C_IGNORED && rec->has_mono)
		twl_dedup_seen(p->seen, identity_boot(p, rec), rec->k.mono_us,
			       ordinal(p, &p->src_run, rec, src_place(rec)),
			       rec->k.text, rec->k.text_len);
}

void twl_pump_set_source(struct twl_pump *p, struct twl_kmsg_source *src)
{
	source_counters(p, &p->old_lost, &p->old_parse);
	p->src = src;
	memset(&p->src_run, 0, sizeof(p->src_run));
	if (!src)
		return;
	twl_kmsg_source_on_skip(src, skipped, p);
	if (p->have_pending_seq)
		twl_kmsg_source_resume(src, p->pending_seq);
	else if (p->saved.have_last_seq)
		twl_kmsg_source_resume(src, p->saved.last_seq);
}

/* Remember the release of another boot's "Linux version" record. */
static void note_kernel(struct twl_pump *p, const struct twl_log_record *rec)
{
	char rel[65];
	size_t i;

	if (this_boot(p, rec) ||
	    !twl_log_kernel_release(rec->k.text, rel, sizeof(rel)))
		return;
	for (i = 0; i < KERNELS; i++)
		if (!strcmp(p->kernels[i].boot_id, rec->boot_id))
			break;
	if (i == KERNELS) {
		i = p->next_kernel;
		p->next_kernel = (p->next_kernel + 1) % KERNELS;
	}
	snprintf(p->kernels[i].boot_id, sizeof(p->kernels[i].boot_id), "%s",
		 rec->boot_id);
	memcpy(p->kernels[i].release, rel, sizeof(rel));
}

/* The release of @rec's boot as a saved log named it; NULL when not. */
static const char *kernel_of(const struct twl_pump *p,
			     const struct twl_log_record *rec)
{
	size_t i;

	for (i = 0; i < KERNELS; i++)
		if (p->kernels[i].boot_id[0] &&
		    !strcmp(p->kernels[i].boot_id, rec->boot_id))
			return p->kernels[i].release;
	return NULL;
}

/* Where @rec comes from and when, for its wire members. */
static void rec_meta(const struct twl_pump *p, const struct twl_log_record *rec,
		     const char *kernel, struct twl_report_rec *at)
{
	const char *source = twl_log_format_source(rec->format);

	at->boot_id = this_boot(p, rec) ? NULL : rec->boot_id;
	at->kernel = kernel;
	at->source = *source ? source : NULL;
	at->origin = rec->verified ? "journal" : twl_kmsg_origin(&rec->k);
	/* A record without a wall-clock time: this boot's start + its stamp. */
	at->time = rec->has_wall ? rec->wall_us / 1000000 :
				   twl_pump_time_of(rec->k.mono_us);
}

/* Into the batch: 0, -ENOSPC (batch full), -ENOMEM. */
static int add_class(struct twl_pump *p, const struct twl_log_record *rec,
		     enum rec_class c, const struct twl_match *m,
		     const struct twl_report_rec *at)
{
	int ret;

	if (c == C_UNKNOWN) {
		ret = twl_report_add_unknown(p->rep, &rec->k, at);
		p->st.unknown += !ret;
		return ret;
	}
	ret = twl_report_add_warning(p->rep, &rec->k, m, at);
	if (ret)
		return ret;
	p->st.warnings++;
	/* Only this boot's warnings: the BPF cross-check is about it. */
	if (p->cfg.on_warning && !at->boot_id)
		p->cfg.on_warning(p->cfg.hook_ctx, m->feature->id,
				  rec->k.mono_us);
	return 0;
}

/*
 * Classify @rec and add it to the batch, flushing a full batch first: 1
 * taken, 0 not one to send, -ENOSPC (single batch full), -errno.
 */
static int add_record(struct twl_pump *p, const struct twl_log_record *rec,
		      const char *kernel, struct twl_dedup_run *run,
		      uint64_t place)
{
	const char *boot = identity_boot(p, rec);
	enum rec_class c;
	struct twl_report_rec at;
	struct twl_match m;
	uint32_t ord;
	int ret;

	note_kernel(p, rec);
	c = classify(rec, &m);
	if (c == C_IGNORED) {
		p->st.ignored++;
		return 0;
	}
	/* Records without the kernel's stamp cannot be told apart: all are sent. */
	ord = rec->has_mono ? ordinal(p, run, rec, place) : 0;
	if (rec->has_mono && twl_dedup_has(p->seen, boot, rec->k.mono_us, ord,
					   rec->k.text, rec->k.text_len)) {
		p->st.duplicates++;
		return 0;
	}
	rec_meta(p, rec, kernel ? kernel : kernel_of(p, rec), &at);
	ret = add_class(p, rec, c, &m, &at);
	if (ret == -ENOSPC && !p->cfg.single_batch) {
		ret = twl_pump_flush(p, false);
		if (ret < 0)
			return ret; /* the sink failed: the record is not taken */
		ret = add_class(p, rec, c, &m, &at);
	}
	if (ret)
		return ret;
	if (rec->has_mono)
		twl_dedup_seen(p->seen, boot, rec->k.mono_us, ord, rec->k.text,
			       rec->k.text_len);
	return 1;
}

int twl_pump_add(struct twl_pump *p, const struct twl_log_record *rec,
		 const char *kernel, uint64_t place)
{
	return add_record(p, rec, kernel, &p->add_run, place);
}

int twl_pump_drain(struct twl_pump *p)
{
	int ret;

	if (!p->src)
		return -ENODATA;
	for (;;) {
		ret = twl_kmsg_source_next(p->src, &p->rec);
		if (ret <= 0)
			return ret;
		/* This boot's records carry host.kernel; others what the log says. */
		ret = add_record(p, &p->rec,
				 this_boot(p, &p->rec) ? p->cfg.id->kernel :
							 NULL,
				 &p->src_run, src_place(&p->rec));
		if (ret < 0) {
			/* Kept for a later read (the sink failed: re-read after a restart). */
			return ret;
		}
		if (p->rec.k.has_seq) {
			p->have_pending_seq = true;
			p->pending_seq = p->rec.k.seq;
		}
	}
}

/* health.boots: this boot as the live kernel log shows it. */
static void live_boot(struct twl_pump *p, struct twl_health *h)
{
	struct twl_health_boot *b = twl_health_boot(h, p->cfg.id->boot_id);
	struct twl_kmsg_source_stats ss = { 0 };

	if (!b)
		return;
	snprintf(b->kernel, sizeof(b->kernel), "%s", p->cfg.id->kernel);
	if (p->src)
		twl_kmsg_source_stats(p->src, &ss);
	if (p->saved.have_first_seq) {
		b->have_kmsg_seq = true;
		b->first_kmsg_seq = p->saved.first_seq;
	} else if (ss.have_first_seq) {
		b->have_kmsg_seq = true;
		b->first_kmsg_seq = ss.first_seq;
	}
	/* Sequence numbers start at 0 each boot: 0 is the boot's first record. */
	b->start_covered |= b->have_kmsg_seq && b->first_kmsg_seq == 0;
}

static void fill_health(struct twl_pump *p, struct twl_health *h)
{
	memset(h, 0, sizeof(*h));
	if (p->cfg.sender_health)
		p->cfg.sender_health(p->cfg.sender_ctx, h);
	source_counters(p, &h->records_lost, &h->parse_failures);
	p->st.records_lost = h->records_lost;
	p->st.parse_failures = h->parse_failures;
	if (p->cfg.live)
		live_boot(p, h);
	if (p->cfg.source_health)
		p->cfg.source_health(p->cfg.source_ctx, h);
}

void twl_pump_health(struct twl_pump *p, struct twl_health *h)
{
	fill_health(p, h);
}

static json_t *build(struct twl_pump *p, uint64_t seq)
{
	struct twl_report_meta meta;
	struct twl_health h;
	char batch_id[33];
	json_t *health, *doc;
	struct timespec now;

	if (twl_random_hex(batch_id, 16))
		return NULL;
	fill_health(p, &h);
	health = twl_health_to_json(&h);
	if (!health)
		return NULL;
	if (p->cfg.health_extra)
		p->cfg.health_extra(p->cfg.hook_ctx, health);
	clock_gettime(CLOCK_REALTIME, &now);
	meta.id = p->cfg.id;
	meta.seq = seq;
	meta.batch_id = batch_id;
	meta.sent_time = now.tv_sec;
	doc = twl_report_to_json(p->rep, &meta, health);
	json_decref(health);
	return doc;
}

json_t *twl_pump_document(struct twl_pump *p)
{
	return build(p, p->saved.host_seq + 1);
}

static int save_state(struct twl_pump *p, const struct twl_state *next)
{
	int ret;

	if (!p->cfg.state_dir) {
		p->saved = *next;
		return 0;
	}
	ret = twl_state_save(p->cfg.state_dir, next);
	if (!ret)
		p->saved = *next;
	return ret;
}

/* Move pending usage into the report until it is full. */
static int move_usage(struct twl_pump *p)
{
	size_t i, n = json_array_size(p->usage_pending);
	json_t *rest;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ret = twl_report_add_usage(p->rep,
					   json_array_get(p->usage_pending, i));
		if (ret)
			break;
	}
	if (ret && ret != -ENOSPC)
		return ret;
	if (i == n) {
		json_array_clear(p->usage_pending);
		return 0;
	}
	rest = json_array();
	if (!rest)
		return -ENOMEM;
	for (; i < n; i++)
		if (json_array_append(rest,
				      json_array_get(p->usage_pending, i))) {
			json_decref(rest);
			return -ENOMEM;
		}
	json_decref(p->usage_pending);
	p->usage_pending = rest;
	return 0;
}

static int flush_one(struct twl_pump *p, bool force);

int twl_pump_flush(struct twl_pump *p, bool force)
{
	int ret, sent = 0;

	if (p->cfg.collect_usage &&
	    p->cfg.collect_usage(p->cfg.hook_ctx, p->usage_pending) < 0)
		p->st.usage_failures++;
	do {
		ret = move_usage(p);
		if (ret)
			return ret;
		ret = flush_one(p, force && !sent);
		if (ret < 0)
			return ret;
		sent += ret;
	} while (ret > 0 && json_array_size(p->usage_pending));
	return sent;
}

/* The state once the records read so far are handled. */
static void next_state(const struct twl_pump *p, struct twl_state *next)
{
	struct twl_kmsg_source_stats ss;

	*next = p->saved;
	if (p->have_pending_seq) {
		next->have_last_seq = true;
		next->last_seq = p->pending_seq;
	}
	if (!next->have_first_seq && p->src) {
		twl_kmsg_source_stats(p->src, &ss);
		next->have_first_seq = ss.have_first_seq;
		next->first_seq = ss.first_seq;
	}
}

static bool state_moved(const struct twl_state *a, const struct twl_state *b)
{
	return a->have_last_seq != b->have_last_seq ||
	       a->last_seq != b->last_seq ||
	       a->have_first_seq != b->have_first_seq ||
	       a->first_seq != b->first_seq;
}

static int flush_one(struct twl_pump *p, bool force)
{
	struct twl_state next;
	json_t *doc;
	char *text;
	int ret;

	next_state(p, &next);
	if (!force && !twl_report_count(p->rep) &&
	    !twl_report_has_census(p->rep)) {
		if (!state_moved(&next, &p->saved))
			return 0;
		ret = save_state(p, &next);
		if (ret) {
			p->st.state_save_failures++;
			p->st.last_state_error = ret;
		}
		return 0;
	}
	next.host_seq = p->saved.host_seq + 1;
	doc = build(p, next.host_seq);
	if (!doc)
		return -ENOMEM;
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	ret = p->cfg.sink(p->cfg.sink_ctx, text, strlen(text));
	free(text);
	if (ret)
		return ret < 0 ? ret : -EIO;
	p->st.batches++;
	twl_report_reset(p->rep);
	/*
	 * The batch is durable: now the state may move past its records. If
	 * this save fails the batch is sent again after a restart (same
	 * records, new batch id): a duplicate, never a loss.
	 */
	ret = save_state(p, &next);
	if (ret) {
		/* Still advance in memory so the next batch gets a new seq. */
		p->saved = next;
		p->st.state_save_failures++;
		p->st.last_state_error = ret;
	}
	if (p->cfg.on_spooled)
		p->cfg.on_spooled(p->cfg.source_ctx);
	return 1;
}

void twl_pump_set_census(struct twl_pump *p, json_t *census)
{
	twl_report_set_census(p->rep, census);
}

void twl_pump_stats(const struct twl_pump *p, struct twl_pump_stats *st)
{
	*st = p->st;
	source_counters(p, &st->records_lost, &st->parse_failures);
}

const struct twl_state *twl_pump_state(const struct twl_pump *p)
{
	return &p->saved;
}
