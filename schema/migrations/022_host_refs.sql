-- twilight server schema, migration 22: usage_count names its host by a
-- number.
--
-- Why: usage_count (021) is the table every report updates, about 20 rows
-- each. Half of its row was the 64-character host id, there only so that
-- the common update (U_BUMP) can check that the row at a key's hash id is
-- the reporting host's (009) without reading usage_key. A small integer
-- does the same: host_refs gives each host id one, and usage_count keeps
-- that number instead of the text. Its rows shrink from about 129 to about
-- 66 bytes, so the pages a group commit rewrites, and the WAL frames it
-- writes, shrink with them (bench/README.md, twenty-eighth session).
--
-- host_refs holds a row for every host known when this migration ran
-- and for every host that has reported since: the writer adds one at a
-- host's first report (server/store/sqlite/store_sqlite_ingest_host.c),
-- in that report's savepoint; batch_ids names hosts by it too (023). No
-- store path deletes hosts, so it grows as hosts does, and a number is
-- never reused. Readers never see the number: the view usage still takes
-- host_id from usage_key, with the same columns as before.
CREATE TABLE host_refs (
	ref INTEGER PRIMARY KEY,
	host_id TEXT NOT NULL UNIQUE
);

INSERT INTO host_refs(host_id)
	SELECT host_id FROM hosts
	UNION SELECT host_id FROM usage_count
	ORDER BY 1;

-- The rows are copied out and back rather than changed in place: an
-- update that adds a column splits pages, and dropping the other leaves
-- them half empty, so the table would keep its size (seen on a database
-- of 1,000,000 rows). Nor can the copy be renamed into place: SQLite
-- checks every view and trigger that names a table it renames, and
-- rewrites them to its new name. Dropping usage_count and creating it
-- again leaves the view usage and the trigger usage_key_del as they are
-- (they name the table, resolved when used, and not its host column).
-- The insert through the view names usage_count.host_id and is made again
-- below.
CREATE TABLE usage_count_v22 AS
	SELECT c.id AS id, r.ref AS host_ref, c.key_check AS key_check,
	       c.container AS container, c.last_pid AS last_pid,
	       c.count AS count, c.failed AS failed,
	       c.condition_met AS condition_met, c.first_seen AS first_seen,
	       c.last_seen AS last_seen, c.value_last AS value_last,
	       c.value_min AS value_min, c.value_max AS value_max,
	       c.value_unlimited AS value_unlimited
	FROM usage_count c JOIN host_refs r ON r.host_id = c.host_id;

DROP TRIGGER usage_view_ins;
DROP TABLE usage_count;

CREATE TABLE usage_count (
	id INTEGER PRIMARY KEY,
	host_ref INT NOT NULL,
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

INSERT INTO usage_count SELECT * FROM usage_count_v22 ORDER BY id;
DROP TABLE usage_count_v22;

-- 021's INSERT through the view, the host's number taken from host_refs
-- (added when the host has none yet). host_refs' insert comes first: an
-- INSERT OR IGNORE that inserts changes last_insert_rowid(), which the
-- count row takes from usage_key's insert.
CREATE TRIGGER usage_view_ins INSTEAD OF INSERT ON usage
BEGIN
	INSERT OR IGNORE INTO host_refs(host_id) VALUES (NEW.host_id);
	INSERT INTO usage_key(id, host_id, boot_id, feature_id, file, op,
			      cgroup, comm, uid, writer_cgroup, target_kind,
			      image, value_unit, value_source)
	VALUES (NEW.id, NEW.host_id, NEW.boot_id, NEW.feature_id, NEW.file,
		NEW.op, NEW.cgroup, NEW.comm, NEW.uid, NEW.writer_cgroup,
		NEW.target_kind, NEW.image, NEW.value_unit, NEW.value_source);
	INSERT INTO usage_count(id, host_ref, key_check, container, last_pid,
				count, failed, condition_met, first_seen,
				last_seen, value_last, value_min, value_max,
				value_unlimited)
	VALUES (last_insert_rowid(),
		(SELECT ref FROM host_refs WHERE host_id = NEW.host_id),
		NEW.key_check, coalesce(NEW.container, ''),
		coalesce(NEW.last_pid, 0), NEW.count, coalesce(NEW.failed, 0),
		coalesce(NEW.condition_met, 0), NEW.first_seen, NEW.last_seen,
		NEW.value_last, NEW.value_min, NEW.value_max,
		NEW.value_unlimited);
END;
