// SPDX-License-Identifier: GPL-2.0
/*
 * The detector's scan: pages of hosts seen since the last scan and their
 * uses, then the fleet health's lists, each fact a key of alert_state
 * (migration 017); a key the store did not hold (or, for a use, held
 * with a last use older than the quiet window) is news.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alerts/alerts.h"
#include "alerts/detect.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

#define PAGE_HOSTS 1000
/* Reports committed while the last scan read: seen again, harmlessly. */
#define SCAN_SLACK 120

/* What one scan step checks: keys, their events, then the news raised. */
struct facts {
	size_t n, cap;
	struct twl_alert_kv *kv;
	char **keys;
	json_t **detail; /* the event's detail, one per key */
	const char **kind;
	int64_t *quiet; /* a use: news when the old value is older; else -1 */
};

static void facts_reset(struct facts *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->keys[i]);
		json_decref(f->detail[i]);
	}
	f->n = 0;
}

static void facts_free(struct facts *f)
{
	facts_reset(f);
	free(f->kv);
	free(f->keys);
	free(f->detail);
	free(f->kind);
	free(f->quiet);
}

static int facts_grow(struct facts *f)
{
	size_t cap = f->cap ? f->cap * 2 : 256;
	void *p[5];

	p[0] = realloc(f->kv, cap * sizeof(*f->kv));
	if (p[0])
		f->kv = p[0];
	p[1] = realloc(f->keys, cap * sizeof(*f->keys));
	if (p[1])
		f->keys = p[1];
	p[2] = realloc(f->detail, cap * sizeof(*f->detail));
	if (p[2])
		f->detail = p[2];
	p[3] = realloc(f->kind, cap * sizeof(*f->kind));
	if (p[3])
		f->kind = p[3];
	p[4] = realloc(f->quiet, cap * sizeof(*f->quiet));
	if (p[4])
		f->quiet = p[4];
	if (!p[0] || !p[1] || !p[2] || !p[3] || !p[4])
		return -ENOMEM;
	f->cap = cap;
	return 0;
}

/* Add fact @key (taken) of event @kind with @detail (taken). */
static int fact(struct facts *f, char *key, const char *kind, json_t *detail,
		int64_t value, int64_t quiet)
{
	size_t i = f->n;

	if (!key || !detail || (f->n == f->cap && facts_grow(f))) {
		free(key);
		json_decref(detail);
		return -ENOMEM;
	}
	memset(&f->kv[i], 0, sizeof(f->kv[i]));
	f->kv[i].key = key;
	f->kv[i].value = value;
	f->kv[i].keep_max = quiet >= 0;
	f->keys[i] = key;
	f->detail[i] = detail;
	f->kind[i] = kind;
	f->quiet[i] = quiet;
	f->n++;
	return 0;
}

static char *keyf(const char *a, const char *b, const char *c, const char *d)
{
	char *k = NULL;

	if (asprintf(&k, "%s|%s|%s|%s", a, b, c, d) < 0)
		return NULL;
	return k;
}

/* Record @f's facts; unless @quiet_scan, raise those that are news. */
static int facts_apply(struct twl_store *s, struct twl_alerts *a,
		       struct facts *f, int64_t now, bool quiet_scan)
{
	char dkey[600];
	size_t i;
	int rc;

	rc = twl_store_alert_swap(s, f->kv, f->n, now);
	for (i = 0; !rc && !quiet_scan && i < f->n; i++) {
		const struct twl_alert_kv *kv = &f->kv[i];

		if (kv->had && (f->quiet[i] < 0 || kv->old >= f->quiet[i]))
			continue;
		snprintf(dkey, sizeof(dkey), "%s|%" PRId64, kv->key, kv->value);
		twl_alert_raise(a, f->kind[i], dkey, now, f->detail[i]);
	}
	facts_reset(f);
	return rc;
}

/* The uses of one page of hosts as facts. */
static int use_facts(struct facts *f, json_t *doc, int64_t quiet_s)
{
	const char *which[] = { "hosts", "comms" },
		   *subj[] = { "host_id", "comm" };
	json_t *row;
	size_t i;
	int w, rc = 0;

	for (w = 0; w < 2 && !rc; w++) {
		json_array_foreach(json_object_get(doc, which[w]), i, row)
		{
			const char *feat = json_string_value(
				json_object_get(row, "feature"));
			const char *who = json_string_value(
				json_object_get(row, subj[w]));
			int64_t last = json_integer_value(
				json_object_get(row, "last"));

			rc = fact(f,
				  keyf("use", feat, w ? "comm" : "host", who),
				  "new_use",
				  json_pack("{s:s, s:s, s:I}", "feature", feat,
					    subj[w], who, "last_used",
					    (json_int_t)last),
				  last, last - quiet_s);
			if (rc)
				break;
		}
	}
	return rc;
}

/* Every page of hosts seen since @since: their uses. */
static int scan_uses(struct twl_store *s, struct twl_alerts *a,
		     const struct twl_detect_opts *o, int64_t since,
		     int64_t now, bool quiet_scan, struct facts *f)
{
	struct twl_alert_page p = { since, 0, "", PAGE_HOSTS };
	char after[128] = "";
	json_t *doc, *page, *last;
	size_t n;
	int rc;

	do {
		rc = twl_read_alert_uses(s, &p, &doc);
		if (rc)
			return rc;
		rc = use_facts(f, doc, (int64_t)o->new_days * 86400);
		if (!rc)
			rc = facts_apply(s, a, f, now, quiet_scan);
		page = json_object_get(doc, "page");
		n = json_array_size(page);
		last = json_array_get(page, n ? n - 1 : 0);
		snprintf(after, sizeof(after), "%s",
			 last ? json_string_value(
					json_object_get(last, "host_id")) :
				"");
		p.after_host = after;
		p.after_seen =
			json_integer_value(json_object_get(last, "last_seen"));
		json_decref(doc);
	} while (!rc && n == PAGE_HOSTS);
	return rc;
}

/* One health part's hosts as facts of event @kind, keyed by @member. */
static int health_facts(struct facts *f, json_t *health, const char *part,
			const char *kind, const char *member)
{
	json_t *h, *v;
	size_t i;
	int rc = 0;

	json_array_foreach(
		json_object_get(json_object_get(health, part), "hosts"), i, h)
	{
		const char *id =
			json_string_value(json_object_get(h, "host_id"));
		char *vs;

		v = json_object_get(h, member);
		vs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!id || !vs) {
			free(vs);
			return -ENOMEM;
		}
		rc = fact(f, keyf(kind, id, member, vs), kind,
			  json_pack("{s:s, s:O?, s:O?, s:O?}", "host_id", id,
				    "hostname", json_object_get(h, "hostname"),
				    "last_seen",
				    json_object_get(h, "last_seen"), member, v),
			  1, -1);
		free(vs);
		if (rc)
			break;
	}
	return rc;
}

static int scan_health(struct twl_store *s, struct twl_alerts *a,
		       const struct twl_detect_opts *o, int64_t now,
		       bool quiet_scan, struct facts *f)
{
	struct twl_read_filter flt = { .limit = TWL_READ_LIMIT_MAX };
	json_t *health;
	int rc;

	rc = twl_read_health(s, now, o->silent_after, &flt, &health);
	if (rc)
		return rc;
	rc = health_facts(f, health, "silent", "host_silent", "last_seen");
	if (!rc)
		rc = health_facts(f, health, "records_lost", "records_lost",
				  "records_lost");
	if (!rc)
		rc = health_facts(f, health, "probe_missing", "probe_lost",
				  "probe_missing");
	if (!rc)
		rc = facts_apply(s, a, f, now, quiet_scan);
	facts_reset(f);
	json_decref(health);
	return rc;
}

/*
 * The workloads marked migrated and seen configuring or listening again
 * since the status's date (twl_read_migration_reuse()): one fact per
 * status, so each is raised once; a status set again (a new date) is a
 * new fact. Bounded by the migration statuses the store caps.
 */
static int scan_reuse(struct twl_store *s, struct twl_alerts *a, int64_t now,
		      bool quiet_scan, struct facts *f)
{
	json_t *doc, *row;
	size_t i;
	int rc;

	rc = twl_read_migration_reuse(s, 0, &doc);
	if (rc)
		return rc;
	json_array_foreach(json_object_get(doc, "reused"), i, row)
	{
		const char *feat =
			json_string_value(json_object_get(row, "feature"));
		const char *wl =
			json_string_value(json_object_get(row, "workload"));
		char date[24];

		snprintf(date, sizeof(date), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(row, "date")));
		rc = fact(f,
			  keyf("reuse", feat ? feat : "", wl ? wl : "", date),
			  "migrated_used_again", json_deep_copy(row), 1, -1);
		if (rc)
			break;
	}
	if (!rc)
		rc = facts_apply(s, a, f, now, quiet_scan);
	facts_reset(f);
	json_decref(doc);
	return rc;
}

/* Contract: see detect.h. */
uint64_t twl_detect_ready_next(uint64_t start, uint64_t end)
{
	if (end < start + TWL_DETECT_READY_SLOW_MS)
		return end;
	return end + (end - start) * TWL_DETECT_READY_PACE;
}

/* Contract: see detect.h. */
int twl_alert_detect_scan(struct twl_store *s, struct twl_alerts *a,
			  const struct twl_detect_opts *o, int64_t now)
{
	struct twl_alert_kv scan = { .key = "scan", .value = now };
	struct facts f = { 0 };
	int64_t since;
	int rc;

	rc = twl_store_alert_swap(s, &scan, 1, now);
	if (rc)
		return rc;
	since = scan.had ? scan.old - SCAN_SLACK : 0;
	rc = scan_uses(s, a, o, since, now, !scan.had, &f);
	if (!rc)
		rc = scan_health(s, a, o, now, !scan.had, &f);
	if (!rc && !o->skip_readiness)
		rc = twl_alert_detect_readiness(s, a, o, now, !scan.had);
	if (!rc)
		rc = scan_reuse(s, a, now, !scan.had, &f);
	if (!rc)
		rc = twl_store_alert_prune(s, now - ((int64_t)o->new_days + 1) *
							      86400);
	if (rc && scan.had) {
		/* the next scan starts where this one did */
		scan.value = scan.old;
		twl_store_alert_swap(s, &scan, 1, now);
	}
	facts_free(&f);
	return rc;
}
