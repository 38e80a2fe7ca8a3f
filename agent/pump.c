// SPDX-License-Identifier: GPL-2.0
/* The agent's processing core (see pump.h). */
#include "pump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <twilight/match.h>
#include <twilight/util.h>

struct twl_pump {
	struct twl_pump_cfg cfg;
	struct twl_kmsg_source *src;
	struct twl_report *rep;
	struct twl_state saved; /* as on disk */
	bool have_pending_seq;
	uint64_t pending_seq; /* highest kmsg seq read into the current batch */
	struct twl_pump_stats st;
	json_t *usage_pending; /* collected usage not yet in a batch */
	/* Counters of sources replaced earlier (health is cumulative). */
	uint64_t old_lost, old_parse;
	struct twl_kmsg_record rec;
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
	if (!p->rep || !p->usage_pending) {
		twl_report_free(p->rep);
		json_decref(p->usage_pending);
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

void twl_pump_set_source(struct twl_pump *p, struct twl_kmsg_source *src)
{
	source_counters(p, &p->old_lost, &p->old_parse);
	p->src = src;
	if (!src)
		return;
	if (p->have_pending_seq)
		twl_kmsg_source_resume(src, p->pending_seq);
	else if (p->saved.have_last_seq)
		twl_kmsg_source_resume(src, p->saved.last_seq);
}

/* Add @rec to the current batch: 0, -ENOSPC (batch full), -ENOMEM. */
static int classify_add(struct twl_pump *p, const struct twl_kmsg_record *rec)
{
	struct twl_match m;

	/* Facility 0 only: user space can never log as the kernel. */
	if (rec->facility > 0) {
		p->st.ignored++;
		return 0;
	}
	if (twl_match_text(rec->text, rec->text_len, &m) == 1) {
		int ret = twl_report_add_warning(
			p->rep, rec, &m, twl_pump_time_of(rec->mono_us));

		if (!ret) {
			p->st.warnings++;
			if (p->cfg.on_warning)
				p->cfg.on_warning(p->cfg.hook_ctx,
						  m.feature->id, rec->mono_us);
		}
		return ret;
	}
	if (twl_text_mentions_deprecation(rec->text, rec->text_len)) {
		int ret = twl_report_add_unknown(
			p->rep, rec, twl_pump_time_of(rec->mono_us));

		if (!ret)
			p->st.unknown++;
		return ret;
	}
	p->st.ignored++;
	return 0;
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
		ret = classify_add(p, &p->rec);
		if (ret == -ENOSPC) {
			if (p->cfg.single_batch) {
				/* Keep the record for a later read: un-count it. */
				return -ENOSPC;
			}
			ret = twl_pump_flush(p, false);
			if (ret < 0) {
				/* The sink failed; this record is re-read after restart. */
				return ret;
			}
			ret = classify_add(p, &p->rec);
		}
		if (ret)
			return ret;
		if (p->rec.has_seq) {
			p->have_pending_seq = true;
			p->pending_seq = p->rec.seq;
		}
	}
}

static void fill_health(struct twl_pump *p, struct twl_health *h)
{
	memset(h, 0, sizeof(*h));
	if (p->cfg.sender_health)
		p->cfg.sender_health(p->cfg.sender_ctx, h);
	source_counters(p, &h->records_lost, &h->parse_failures);
	p->st.records_lost = h->records_lost;
	p->st.parse_failures = h->parse_failures;
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

static int flush_one(struct twl_pump *p, bool force)
{
	struct twl_state next = p->saved;
	json_t *doc;
	char *text;
	int ret;

	if (p->have_pending_seq) {
		next.have_last_seq = true;
		next.last_seq = p->pending_seq;
	}
	if (!force && !twl_report_count(p->rep) &&
	    !twl_report_has_census(p->rep)) {
		if (next.have_last_seq == p->saved.have_last_seq &&
		    next.last_seq == p->saved.last_seq)
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
