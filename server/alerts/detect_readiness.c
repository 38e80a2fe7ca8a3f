// SPDX-License-Identifier: GPL-2.0
/*
 * The detector's readiness step: per upgrade target (shipped, and those
 * in the data directory), the hosts that would break, compared with the
 * count of the last scan; more is an event ("readiness_worse").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "alerts/alerts.h"
#include "alerts/detect.h"
#include "readiness/target.h"
#include "readiness/target_dir.h"
#include "store/store_alerts.h"
#include "store/store_read.h"

/* Hosts seen in this many days count, as the readiness API's default. */
#define READY_DAYS 30

/* The hosts that would break on target @t, from the store at @now. */
static int breaking(struct twl_store *s, const json_t *t, int64_t now,
		    int64_t *count)
{
	json_t *plan = twl_target_plan(t), *removed = json_array(), *v, *doc;
	struct twl_readiness_query q = { .since = now - READY_DAYS * 86400,
					 .limit = 1 };
	char *rj = NULL, *ij = NULL;
	size_t i;
	int rc = -ENOMEM;

	if (!plan || !removed)
		goto out;
	json_array_foreach(json_object_get(plan, "removed"), i, v)
	{
		if (json_array_append(removed, json_object_get(v, "id")))
			goto out;
	}
	rj = json_dumps(removed, JSON_COMPACT);
	ij = json_dumps(json_object_get(plan, "interfaces"), JSON_COMPACT);
	if (!rj || !ij)
		goto out;
	q.removed_json = rj;
	q.interfaces_json = ij;
	rc = twl_read_readiness(s, &q, &doc);
	if (!rc) {
		*count = json_integer_value(json_object_get(
			json_object_get(doc, "breaks"), "count"));
		json_decref(doc);
	}
out:
	free(rj);
	free(ij);
	json_decref(plan);
	json_decref(removed);
	return rc;
}

/* Raise "readiness_worse" for target @name: @now breaking, @before. */
static void worse(struct twl_alerts *a, const char *name, int64_t now_n,
		  int64_t before, int64_t now)
{
	json_t *d = json_pack("{s:s, s:I, s:I}", "target", name, "breaks",
			      (json_int_t)now_n, "before", (json_int_t)before);
	char key[300];

	snprintf(key, sizeof(key), "ready|%s|%" PRId64, name, now_n);
	if (d)
		twl_alert_raise(a, "readiness_worse", key, now, d);
	json_decref(d);
}

/*
 * The hosts that would break on target @t named @name: the count of the
 * answer @o keeps for it, else counted in @s. On a large fleet the
 * readiness page's answer is kept and computed ahead (answer_cache.h),
 * so the step reads it instead of computing it a second time.
 */
static int breaks(struct twl_store *s, const struct twl_detect_opts *o,
		  const json_t *t, const char *name, int64_t now,
		  int64_t *count)
{
	int rc = o->kept_breaks ? o->kept_breaks(o->kept_ctx, name, count) :
				  -ENOENT;

	return rc == -ENOENT ? breaking(s, t, now, count) : rc;
}

/* Contract: see detect.h. */
int twl_alert_detect_readiness(struct twl_store *s, struct twl_alerts *a,
			       const struct twl_detect_opts *o, int64_t now,
			       bool quiet_scan)
{
	const char *data_dir = o->data_dir;
	json_t *targets = NULL, *errors = NULL, *t;
	struct twl_alert_kv kv = { 0 };
	struct twl_alerts_ready *ready;
	size_t i, n = 0;
	char key[300];
	int rc = 0;

	if (data_dir) {
		rc = twl_targets_load(data_dir, &targets, &errors);
		json_decref(errors);
		if (rc)
			return rc;
	} else {
		errors = twl_targets_shipped();
		if (!errors)
			return -ENOMEM;
		targets = json_incref(json_object_get(errors, "targets"));
		json_decref(errors);
	}
	ready = calloc(TWL_ALERTS_READY_MAX, sizeof(*ready));
	if (!ready) {
		json_decref(targets);
		return -ENOMEM;
	}
	json_array_foreach(targets, i, t)
	{
		const char *name =
			json_string_value(json_object_get(t, "name"));

		if (!name || !twl_target_name_ok(name))
			continue;
		rc = breaks(s, o, t, name, now, &kv.value);
		if (rc)
			break;
		if (n < TWL_ALERTS_READY_MAX) {
			snprintf(ready[n].target, sizeof(ready[n].target), "%s",
				 name);
			ready[n++].breaks = kv.value;
		}
		snprintf(key, sizeof(key), "ready|%s", name);
		kv.key = key;
		rc = twl_store_alert_swap(s, &kv, 1, now);
		if (rc)
			break;
		if (!quiet_scan && kv.had && kv.value > kv.old)
			worse(a, name, kv.value, kv.old, now);
	}
	if (!rc)
		twl_alerts_set_ready(a, ready, n);
	free(ready);
	json_decref(targets);
	return rc;
}
