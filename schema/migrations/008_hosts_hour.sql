-- twilight server schema, migration 8: the hosts' "last seen" indexes by
-- hour, as feature_host's in 006.
--
-- Why: every report updates its host's last_seen, and every update moved
-- the host's entries in hosts_last_seen(last_seen) and
-- hosts_cgroup_mode(cgroup_mode, last_seen) and checked the host_hour
-- trigger: 44 k of the writer's instructions per report (callgrind), the
-- writer thread being the server's bottleneck.
--
-- Now those indexes hold last_hour = last_seen / 3600, a column of its
-- own (the CHECK keeps them together) that the writer sets only when a
-- host's last report moves to a later hour (W_HOST_TOUCH in
-- server/store_sqlite.c names neither it nor cgroup_mode otherwise, so it
-- moves no index entry and fires no trigger). Readers narrow by hour
-- through the index and filter last_seen exactly in the row
-- (server/store_sqlite_read.c): the same rows as before.
CREATE TABLE hosts_v8 (
	host_id TEXT PRIMARY KEY,
	hostname TEXT NOT NULL DEFAULT '',
	kernel TEXT NOT NULL DEFAULT '',
	cgroup_mode TEXT NOT NULL DEFAULT '',
	agent_version TEXT NOT NULL DEFAULT '',
	catalog_version INT NOT NULL DEFAULT 0,
	boot_id TEXT NOT NULL DEFAULT '',
	first_seen INT NOT NULL,
	last_seen INT NOT NULL,
	last_seq INT NOT NULL DEFAULT 0,
	health_json TEXT,
	records_lost INT NOT NULL DEFAULT 0,
	key_rejected INT NOT NULL DEFAULT 0,
	probe_missing TEXT,
	census_json TEXT,
	last_hour INT NOT NULL,
	CHECK (last_hour = last_seen / 3600)
) WITHOUT ROWID;

INSERT INTO hosts_v8(host_id, hostname, kernel, cgroup_mode, agent_version,
		     catalog_version, boot_id, first_seen, last_seen, last_seq,
		     health_json, records_lost, key_rejected, probe_missing,
		     census_json, last_hour)
	SELECT host_id, hostname, kernel, cgroup_mode, agent_version,
	       catalog_version, boot_id, first_seen, last_seen, last_seq,
	       health_json, records_lost, key_rejected, probe_missing,
	       census_json, last_seen / 3600
	FROM hosts;

-- Drops hosts' indexes and triggers with it, firing none of them.
DROP TABLE hosts;
ALTER TABLE hosts_v8 RENAME TO hosts;

CREATE INDEX hosts_last_hour ON hosts(last_hour);
CREATE INDEX hosts_cgroup_mode ON hosts(cgroup_mode, last_hour);
CREATE INDEX hosts_kernel ON hosts(kernel);
CREATE INDEX hosts_hostname ON hosts(hostname);

-- The triggers of 002, following last_hour.
CREATE TRIGGER host_hour_ins AFTER INSERT ON hosts
BEGIN
	INSERT INTO host_hour(cgroup_mode, hour, hosts)
	VALUES (NEW.cgroup_mode, NEW.last_hour, 1)
	ON CONFLICT(cgroup_mode, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER host_hour_upd AFTER UPDATE OF last_hour, cgroup_mode ON hosts
WHEN NEW.last_hour != OLD.last_hour OR NEW.cgroup_mode != OLD.cgroup_mode
BEGIN
	UPDATE host_hour SET hosts = hosts - 1
	WHERE cgroup_mode = OLD.cgroup_mode AND hour = OLD.last_hour;
	INSERT INTO host_hour(cgroup_mode, hour, hosts)
	VALUES (NEW.cgroup_mode, NEW.last_hour, 1)
	ON CONFLICT(cgroup_mode, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER host_hour_del AFTER DELETE ON hosts
BEGIN
	UPDATE host_hour SET hosts = hosts - 1
	WHERE cgroup_mode = OLD.cgroup_mode AND hour = OLD.last_hour;
END;
