-- twilight server schema, migration 16: batch ids are a host's own.
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
