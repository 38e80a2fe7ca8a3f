-- twilight server schema, migration 21: a usage row's counters apart from
-- its key.
--
-- Why: agents report cumulative counters, so every report updates its 20
-- or so usage rows, and SQLite writes each page an update touches to the
-- WAL (and the checkpointer copies it again into the database). A whole
-- usage row averaged 285 bytes (nine key columns, mostly paths), so one
-- report's rows filled 2-3 pages and those pages were 35-46% of the WAL
-- (bench/README.md, twenty-fifth session). The columns an update changes
-- now live in usage_count, a narrow table with the same ids: a report's
-- rows there fill about one page. The key and the columns set once stay
-- in usage_key, which the common update no longer writes.
--
-- usage, the view below, joins the two into the row readers knew, with
-- the same column names and order: every reader (the API, the export,
-- the rollup rebuild, migrate-store's copy) reads it unchanged. Only the
-- writer (server/store/sqlite/store_sqlite_ingest.c) and retention
-- (store_sqlite_maint.c) write the two tables, always both in one
-- transaction: each usage_key row has exactly one usage_count row of the
-- same id. The PostgreSQL store keeps its one table (its own migrations).
--
-- usage_count.host_id repeats the key's host: the writer's common update
-- (U_BUMP) matches a row by id, key_check and host_id without
-- reading usage_key, so no host can reach another host's rows (009).
-- value_last .. value_unlimited change with the counts (wire v2's value
-- summary, merged per report); value_unit, value_source and image are set
-- once and stay in usage_key, written only when they change.
CREATE TABLE usage_count (
	id INTEGER PRIMARY KEY,
	host_id TEXT NOT NULL,
	key_check INT,
	container TEXT NOT NULL DEFAULT '',
	last_pid INT NOT NULL DEFAULT 0,
	count INT NOT NULL,
	failed INT NOT NULL DEFAULT 0,
	condition_met INT NOT NULL DEFAULT 0,
	first_seen INT NOT NULL,
	last_seen INT NOT NULL,
	value_last INT,
	value_min INT,
	value_max INT,
	value_unlimited INT
);

INSERT INTO usage_count(id, host_id, key_check, container, last_pid, count,
			failed, condition_met, first_seen, last_seen,
			value_last, value_min, value_max, value_unlimited)
	SELECT id, host_id, key_check, container, last_pid, count, failed,
	       condition_met, first_seen, last_seen, value_last, value_min,
	       value_max, value_unlimited
	FROM usage;

CREATE TABLE usage_key (
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
	target_kind TEXT,
	image TEXT,
	value_unit TEXT,
	value_source TEXT,
	UNIQUE (host_id, boot_id, feature_id, file, op, cgroup, comm, uid,
		writer_cgroup)
);

INSERT INTO usage_key(id, host_id, boot_id, feature_id, file, op, cgroup,
		      comm, uid, writer_cgroup, target_kind, image,
		      value_unit, value_source)
	SELECT id, host_id, boot_id, feature_id, file, op, cgroup, comm, uid,
	       writer_cgroup, target_kind, image, value_unit, value_source
	FROM usage;

-- Drops usage's index and triggers with it; DROP TABLE fires no trigger,
-- so feature_comm keeps its counts, which the rows above still make.
DROP TABLE usage;

CREATE INDEX usage_feature_comm ON usage_key(feature_id, comm);

-- The triggers of migration 015, now on usage_key (the same bodies).
CREATE TRIGGER usage_comm_ins AFTER INSERT ON usage_key
BEGIN
	INSERT INTO feature_comm(feature_id, comm, configures, listens, reads)
	VALUES (NEW.feature_id, NEW.comm, NEW.op = 'write',
		NEW.op = 'register_event',
		NEW.op NOT IN ('write', 'register_event'))
	ON CONFLICT(feature_id, comm) DO UPDATE SET
		configures = configures + excluded.configures,
		listens = listens + excluded.listens,
		reads = reads + excluded.reads;
END;

CREATE TRIGGER usage_comm_del AFTER DELETE ON usage_key
BEGIN
	UPDATE feature_comm SET configures = configures - (OLD.op = 'write'),
		listens = listens - (OLD.op = 'register_event'),
		reads = reads - (OLD.op NOT IN ('write', 'register_event'))
	WHERE feature_id = OLD.feature_id AND comm = OLD.comm;
	DELETE FROM feature_comm WHERE feature_id = OLD.feature_id
		AND comm = OLD.comm AND configures + listens + reads <= 0;
END;

-- A key's counters go with it (retention deletes keys by their counts).
CREATE TRIGGER usage_key_del AFTER DELETE ON usage_key
BEGIN
	DELETE FROM usage_count WHERE id = OLD.id;
END;

CREATE VIEW usage AS
	SELECT k.id AS id, k.host_id AS host_id, k.boot_id AS boot_id,
	       k.feature_id AS feature_id, k.file AS file, k.op AS op,
	       k.cgroup AS cgroup, k.comm AS comm, k.uid AS uid,
	       k.writer_cgroup AS writer_cgroup, c.container AS container,
	       c.last_pid AS last_pid, c.count AS count, c.failed AS failed,
	       c.condition_met AS condition_met, c.first_seen AS first_seen,
	       c.last_seen AS last_seen, c.key_check AS key_check,
	       k.target_kind AS target_kind, k.image AS image,
	       c.value_last AS value_last, c.value_min AS value_min,
	       c.value_max AS value_max, c.value_unlimited AS value_unlimited,
	       k.value_unit AS value_unit, k.value_source AS value_source
	FROM usage_key k JOIN usage_count c ON c.id = k.id;

-- The view takes INSERT and DELETE as the table did (seeding tools, tests,
-- an operator's repair): a row inserted without an id gets one SQLite
-- picks, and the columns the table defaulted default the same. Updates
-- go to the two tables.
CREATE TRIGGER usage_view_ins INSTEAD OF INSERT ON usage
BEGIN
	INSERT INTO usage_key(id, host_id, boot_id, feature_id, file, op,
			      cgroup, comm, uid, writer_cgroup, target_kind,
			      image, value_unit, value_source)
	VALUES (NEW.id, NEW.host_id, NEW.boot_id, NEW.feature_id, NEW.file,
		NEW.op, NEW.cgroup, NEW.comm, NEW.uid, NEW.writer_cgroup,
		NEW.target_kind, NEW.image, NEW.value_unit, NEW.value_source);
	INSERT INTO usage_count(id, host_id, key_check, container, last_pid,
				count, failed, condition_met, first_seen,
				last_seen, value_last, value_min, value_max,
				value_unlimited)
	VALUES (last_insert_rowid(), NEW.host_id, NEW.key_check,
		coalesce(NEW.container, ''), coalesce(NEW.last_pid, 0),
		NEW.count, coalesce(NEW.failed, 0),
		coalesce(NEW.condition_met, 0), NEW.first_seen, NEW.last_seen,
		NEW.value_last, NEW.value_min, NEW.value_max,
		NEW.value_unlimited);
END;

CREATE TRIGGER usage_view_del INSTEAD OF DELETE ON usage
BEGIN
	DELETE FROM usage_key WHERE id = OLD.id;
END;
