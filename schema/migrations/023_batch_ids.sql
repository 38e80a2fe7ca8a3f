-- twilight server schema, migration 23: batch ids name their host by its
-- number.
--
-- Why: batches keeps a row per batch received for batch-days (at least
-- 35), so that a resend is stored once (016). It is the table that grows
-- most: a host whose agent sends every 30 s (its batch-interval) leaves
-- about 100,000 rows in 35 days, and each row held the 64-character host
-- id, about 40% of it. Each report also inserts a row at its host's place
-- in the key (host, batch id), a page of its own in every group commit:
-- smaller rows fill those pages later, so they split less often. The
-- rows now live in batch_ids under the host's number from host_refs
-- (022); the writer looks the number up before it notes the batch.
--
-- batches, a view, gives the rows with their host ids in the columns and
-- order the table had: tests, tools and migrate-store read it unchanged.
-- Ordered by (host_id, batch_id), it reads host_refs by its unique index
-- on host_id and each host's rows in batch_id order, so migrate-store's
-- pages by that key need no sort.
INSERT OR IGNORE INTO host_refs(host_id)
	SELECT DISTINCT host_id FROM batches ORDER BY 1;

CREATE TABLE batch_ids (
	host_ref INT NOT NULL,
	batch_id TEXT NOT NULL,
	seq INT NOT NULL,
	received INT NOT NULL,
	body_sha256 BLOB,
	PRIMARY KEY (host_ref, batch_id)
) WITHOUT ROWID;

INSERT INTO batch_ids(host_ref, batch_id, seq, received, body_sha256)
	SELECT r.ref, b.batch_id, b.seq, b.received, b.body_sha256
	FROM batches b JOIN host_refs r ON r.host_id = b.host_id
	ORDER BY 1, 2;

-- Drops its index batches_received with it.
DROP TABLE batches;

-- Retention deletes by the time received (store_sqlite_maint.c).
CREATE INDEX batch_ids_received ON batch_ids(received);

CREATE VIEW batches AS
	SELECT r.host_id AS host_id, b.batch_id AS batch_id, b.seq AS seq,
	       b.received AS received, b.body_sha256 AS body_sha256
	FROM host_refs r JOIN batch_ids b ON b.host_ref = r.ref;
