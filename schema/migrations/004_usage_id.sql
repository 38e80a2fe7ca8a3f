-- twilight server schema, migration 4: usage rows get an integer id.
--
-- Why: the ingest writer is one thread and the server's bottleneck
-- (bench/server-load). Agents report cumulative counters, so nearly every
-- usage entry of a report updates an existing row. With the nine-column
-- text primary key of 001 (WITHOUT ROWID), each entry cost two descents
-- of that key and a delete + insert of the whole row in its B-tree.
--
-- Now the writer addresses a row by id = a 64-bit hash of its key
-- (twl_usage_key_hash(), server/ingest.h): one integer lookup, the key
-- columns compared in C, then an UPDATE by id that rewrites the row in
-- place. The key stays UNIQUE, so a hash collision (or a row stored under
-- another id, such as every row copied below) is found through that index
-- instead, and a row whose hash slot is taken gets an id SQLite picks.
-- The id is an address, never an identity: nothing else refers to it.
CREATE TABLE usage_v4 (
	id INTEGER PRIMARY KEY,
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	file TEXT NOT NULL,
	op TEXT NOT NULL,
	cgroup TEXT NOT NULL,
	comm TEXT NOT NULL,
	uid INT NOT NULL,
	writer_cgroup TEXT NOT NULL,
	container TEXT NOT NULL DEFAULT '',
	last_pid INT NOT NULL DEFAULT 0,
	count INT NOT NULL,
	failed INT NOT NULL DEFAULT 0,
	condition_met INT NOT NULL DEFAULT 0,
	first_seen INT NOT NULL,
	last_seen INT NOT NULL,
	UNIQUE (host_id, boot_id, feature_id, file, op, cgroup, comm, uid,
		writer_cgroup)
);

-- Rows that exist before this migration keep SQLite-assigned ids; the
-- writer finds them through the unique key (one lookup more than a row
-- at its hash).
INSERT INTO usage_v4(host_id, boot_id, feature_id, file, op, cgroup, comm,
		     uid, writer_cgroup, container, last_pid, count, failed,
		     condition_met, first_seen, last_seen)
	SELECT host_id, boot_id, feature_id, file, op, cgroup, comm, uid,
	       writer_cgroup, container, last_pid, count, failed,
	       condition_met, first_seen, last_seen
	FROM usage;

-- Drops usage's indexes and triggers with it (feature_comm keeps its rows).
DROP TABLE usage;
ALTER TABLE usage_v4 RENAME TO usage;

CREATE INDEX usage_feature_comm ON usage(feature_id, comm);

CREATE TRIGGER usage_comm_ins AFTER INSERT ON usage
BEGIN
	INSERT OR IGNORE INTO feature_comm(feature_id, comm)
	VALUES (NEW.feature_id, NEW.comm);
END;

CREATE TRIGGER usage_comm_del AFTER DELETE ON usage
WHEN NOT EXISTS (SELECT 1 FROM usage
		 WHERE feature_id = OLD.feature_id AND comm = OLD.comm)
BEGIN
	DELETE FROM feature_comm WHERE feature_id = OLD.feature_id AND comm = OLD.comm;
END;
