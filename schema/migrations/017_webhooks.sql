-- twilight server schema, migration 17: alerts by webhook.
--
-- webhooks: the receivers an admin configured (POST /api/v1/webhooks).
-- The secret signs every delivery (HMAC-SHA256, docs/api.md "Webhooks")
-- and is never read back by the API. At most 64 (server/alerts/).
CREATE TABLE webhooks (
	id INTEGER PRIMARY KEY,
	url TEXT NOT NULL,
	secret TEXT NOT NULL,
	created INT NOT NULL,
	author TEXT NOT NULL
);

-- One row per delivery attempt of an event to a webhook, newest kept:
-- past 10,000 rows the oldest are deleted as new ones are added.
-- status: "delivered" (2xx), "retrying" (failed, another attempt is
-- planned), "failed" (the last attempt failed), "dropped" (the
-- webhook was deleted or the server stopped with it pending).
CREATE TABLE webhook_deliveries (
	id INTEGER PRIMARY KEY,
	webhook_id INT NOT NULL,
	event_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	attempt INT NOT NULL,
	status TEXT NOT NULL,
	http_status INT NOT NULL,
	error TEXT,
	at INT NOT NULL
);

-- What the alert detector saw at its last scans (server/alerts/detect.c):
-- per key a value and when it was last written. Keys: "use|FEATURE|host|
-- HOST" and "use|FEATURE|comm|COMM" (value: the last use seen, so a use
-- after N quiet days is news), "silent|HOST|LAST_SEEN", "lost|HOST|N",
-- "probe|HOST|LIST" (a fact already announced), "scan" (the last scan's
-- time; absent before the first, which records without announcing).
-- Rows older than the new-use window are pruned at each scan.
CREATE TABLE alert_state (
	key TEXT PRIMARY KEY,
	value INT NOT NULL,
	at INT NOT NULL
) WITHOUT ROWID;
CREATE INDEX alert_state_at ON alert_state(at);
