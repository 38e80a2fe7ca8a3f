/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The storage of alerts (schema/migrations/017_webhooks.sql): webhooks
 * an admin configured, the delivery log, and what the alert detector saw
 * at its last scan (server/alerts/). Writes are short transactions on the
 * writer connection, between the ingest writer's group commits; reads are
 * read transactions of their own. Every function: 0 or a negative errno.
 */
#ifndef TWL_SERVER_STORE_ALERTS_H
#define TWL_SERVER_STORE_ALERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct twl_store;

#define TWL_STORE_MAX_WEBHOOKS 64
/* Delivery log rows kept; the oldest go first. */
#define TWL_STORE_MAX_DELIVERIES 10000

/*
 * twl_store_webhook_add - store webhook @url signed with @secret, made by
 * @author at @now; its id in *@id. -EDQUOT past TWL_STORE_MAX_WEBHOOKS.
 */
int twl_store_webhook_add(struct twl_store *s, const char *url,
			  const char *secret, const char *author, int64_t now,
			  int64_t *id);
/* twl_store_webhook_delete - delete webhook @id; -ENOENT if absent. */
int twl_store_webhook_delete(struct twl_store *s, int64_t id);
/*
 * twl_store_webhook_list - {"webhooks": [{"id", "url", "created",
 * "author"}]} into *@out, by id; with @secrets each also has "secret"
 * (for the deliverer only: never answer it to a client).
 */
int twl_store_webhook_list(struct twl_store *s, bool secrets, json_t **out);

/* One attempt at delivering an event to a webhook. */
struct twl_delivery_row {
	int64_t webhook_id;
	const char *event_id, *kind;
	unsigned attempt; /* 1 = the first */
	const char *status; /* delivered, retrying, failed, dropped */
	long http_status; /* 0: no answer */
	const char *error; /* NULL or why it failed */
	int64_t at;
};

/*
 * twl_store_delivery_log - append @r to the delivery log, deleting the
 * oldest rows past TWL_STORE_MAX_DELIVERIES in the same transaction.
 */
int twl_store_delivery_log(struct twl_store *s,
			   const struct twl_delivery_row *r);
/*
 * twl_store_deliveries - {"deliveries": [newest first, at most @limit
 * (1..1000) of {"id", "webhook_id", "event_id", "kind", "attempt",
 * "status", "http_status", "error", "at"}]}, of webhook @webhook_id
 * only when it is not 0, into *@out.
 */
int twl_store_deliveries(struct twl_store *s, int64_t webhook_id,
			 unsigned limit, json_t **out);

/* One key of the detector's state (alert_state). */
struct twl_alert_kv {
	const char *key;
	int64_t value; /* to store */
	bool keep_max; /* store max(old, value) instead */
	bool had; /* out: the key was stored */
	int64_t old; /* out: its value then */
};

/*
 * twl_store_alert_swap - for each of @kv[0..@n): read its stored value
 * (had, old) and store its value at @now, all in one transaction. Atomic
 * per key across stores on one database: of two swaps of one key at
 * once, the later reads what the earlier stored, so that only one server
 * takes a fact for news.
 */
int twl_store_alert_swap(struct twl_store *s, struct twl_alert_kv *kv, size_t n,
			 int64_t now);
/* twl_store_alert_prune - forget detector keys last written before @before. */
int twl_store_alert_prune(struct twl_store *s, int64_t before);

/* A page of hosts seen since @since, after a cursor. */
struct twl_alert_page {
	int64_t since;
	int64_t after_seen; /* the last page's last host's last_seen, or 0 */
	const char *after_host; /* and its host id, or "" */
	unsigned max; /* hosts in the page, 1..1000 */
};

/*
 * twl_read_alert_uses - the page @p of hosts seen (a report received)
 * since @p->since, ordered by (last_seen, host_id): {"page": [{"host_id",
 * "last_seen"}], "hosts": [{"feature", "host_id", "last"}] (the features
 * those hosts use by the rollup: configure, listen, a census value or a
 * kernel warning, never reads alone; last evidence), "comms":
 * [{"feature", "comm", "last"}] (their usage rows other than reads, per
 * process name)} into *@out; one snapshot. -EINVAL for a bad @p->max.
 */
int twl_read_alert_uses(struct twl_store *s, const struct twl_alert_page *p,
			json_t **out);

#endif /* TWL_SERVER_STORE_ALERTS_H */
