-- twilight server schema, migration 16: batches replayed change nothing.
--
-- Batch ids were kept globally: a host that sent a batch id another host
-- had used was answered "duplicate" and its batch dropped. They are now
-- keyed by (host_id, batch_id), with the SHA-256 of the batch's decoded
-- body: a resend of the same body is a duplicate (stored once, answered
-- 200 "duplicate"); other content under an id the host used before is
-- refused with 409 batch_conflict and not stored. Rows copied from before
-- this migration have no hash (NULL): a resend of one of those is a
-- duplicate whatever its content, as before.
CREATE TABLE batches_by_host (
	host_id TEXT NOT NULL,
	batch_id TEXT NOT NULL,
	seq INT NOT NULL,
	received INT NOT NULL,
	body_sha256 BLOB,
	PRIMARY KEY (host_id, batch_id)
) WITHOUT ROWID;
INSERT INTO batches_by_host(host_id, batch_id, seq, received)
	SELECT host_id, batch_id, seq, received FROM batches;
DROP TABLE batches;
ALTER TABLE batches_by_host RENAME TO batches;
CREATE INDEX batches_received ON batches(received);

-- unknown[] counts are a batch's occurrences of a text, so they were
-- added up; a batch stored again (its id pruned, a database restored from
-- a backup) counted twice. Each batch's count of a text is now kept under
-- the kmsg_seq of its first occurrence in that batch, which no other
-- batch of that boot shares: a (host, boot, text, kmsg_seq) met again is
-- max-merged, only growth reaches unknown_deprecations.count. Kept as long
-- as batch ids (batch-days): no agent resends a batch older than that
-- (TWL_WIRE_RESEND_DAYS). Counts stored before this migration stay.
CREATE TABLE unknown_counts (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	text TEXT NOT NULL,
	kmsg_seq INT NOT NULL,
	count INT NOT NULL,
	received INT NOT NULL,
	PRIMARY KEY (host_id, boot_id, text, kmsg_seq)
) WITHOUT ROWID;
CREATE INDEX unknown_counts_received ON unknown_counts(received);

-- Times from the future: the HTTP path clamps every time of a report's
-- rows to its receive time + 5 minutes (server/store/ingest.h,
-- TWL_INGEST_SKEW_S). The host row counts the times clamped and keeps the
-- latest as sent, so a wrong clock shows instead of being hidden.
ALTER TABLE hosts ADD COLUMN times_clamped INT NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN time_sent_max INT NOT NULL DEFAULT 0;
