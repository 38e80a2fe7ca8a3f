-- twilight server schema, migration 2: use-case annotations and the
-- indexes and rollups the read API (server/store_sqlite_read.c) needs.

-- Why the fleet depends on a deprecated feature, recorded by admins;
-- part of every linux-mm export. workload NULL = the whole feature, else
-- a process name or container/cgroup kind the note is about. fits records
-- whether the cgroup v2 replacement fits this use case (NULL = not said).
CREATE TABLE annotations (
	id INTEGER PRIMARY KEY,
	feature_id TEXT NOT NULL,
	workload TEXT,
	text TEXT NOT NULL,
	fits TEXT CHECK (fits IS NULL OR fits IN ('yes', 'no', 'partial')),
	author TEXT NOT NULL,
	created INT NOT NULL
);
CREATE INDEX annotations_feature ON annotations(feature_id, created);

-- Lets the usage_comm_del trigger (below) find remaining rows of a process.
CREATE INDEX usage_feature_comm ON usage(feature_id, comm);
-- Feature detail and export scan a feature's usage rows by time; this
-- index covers those queries (a WITHOUT ROWID index also holds the primary
-- key: host, boot, file, op, cgroup, comm, uid, writer cgroup), so they
-- never look rows up in the table. It replaces usage_feature_seen, its
-- prefix, so ingest maintains as many indexes as before.
DROP INDEX usage_feature_seen;
CREATE INDEX usage_feature_detail ON usage(feature_id, last_seen, count, container);
-- First use per feature without scanning the rollup.
CREATE INDEX feature_host_first ON feature_host(feature_id, first_used);
-- Host filters.
CREATE INDEX hosts_kernel ON hosts(kernel);
CREATE INDEX hosts_hostname ON hosts(hostname);

-- Buckets kept by triggers, so that the fleet summary sums a few hundred
-- small rows instead of counting 100k-host index ranges.
--
-- feature_day (the timeline): hosts = hosts whose last use moved into
-- that day (each host counts once per day), uses = growth of
-- feature_host.uses recorded on that day.
CREATE TABLE feature_day (
	feature_id TEXT NOT NULL,
	day INT NOT NULL, -- Unix seconds / 86400
	hosts INT NOT NULL DEFAULT 0,
	uses INT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, day)
) WITHOUT ROWID;

-- feature_hour: hosts whose *current* last use falls in that hour (a host
-- moves between buckets when its last_used moves), so "hosts using X
-- since T" = sum over the hours after T's hour + an exact count of T's
-- own hour from feature_host_last.
CREATE TABLE feature_hour (
	feature_id TEXT NOT NULL,
	hour INT NOT NULL, -- Unix seconds / 3600
	hosts INT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, hour)
) WITHOUT ROWID;

-- host_hour: the same for hosts.last_seen, per cgroup mode.
CREATE TABLE host_hour (
	cgroup_mode TEXT NOT NULL,
	hour INT NOT NULL,
	hosts INT NOT NULL DEFAULT 0,
	PRIMARY KEY (cgroup_mode, hour)
) WITHOUT ROWID;

-- Distinct process names per feature (the summary's "workloads").
CREATE TABLE feature_comm (
	feature_id TEXT NOT NULL,
	comm TEXT NOT NULL,
	PRIMARY KEY (feature_id, comm)
) WITHOUT ROWID;

-- Rows that exist before this migration.
INSERT INTO feature_day(feature_id, day, hosts, uses)
	SELECT feature_id, last_used / 86400, count(*), sum(uses)
	FROM feature_host GROUP BY 1, 2;
INSERT INTO feature_hour(feature_id, hour, hosts)
	SELECT feature_id, last_used / 3600, count(*) FROM feature_host GROUP BY 1, 2;
INSERT INTO host_hour(cgroup_mode, hour, hosts)
	SELECT cgroup_mode, last_seen / 3600, count(*) FROM hosts GROUP BY 1, 2;
INSERT INTO feature_comm(feature_id, comm)
	SELECT DISTINCT feature_id, comm FROM usage;

CREATE TRIGGER feature_host_ins AFTER INSERT ON feature_host
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses)
	VALUES (NEW.feature_id, NEW.last_used / 86400, 1, max(NEW.uses, 0))
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + 1, uses = uses + excluded.uses;
	INSERT INTO feature_hour(feature_id, hour, hosts)
	VALUES (NEW.feature_id, NEW.last_used / 3600, 1)
	ON CONFLICT(feature_id, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER feature_host_day AFTER UPDATE OF last_used, uses ON feature_host
WHEN NEW.last_used / 86400 > OLD.last_used / 86400 OR NEW.uses > OLD.uses
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses)
	VALUES (NEW.feature_id, NEW.last_used / 86400,
		NEW.last_used / 86400 > OLD.last_used / 86400,
		max(NEW.uses - OLD.uses, 0))
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + excluded.hosts, uses = uses + excluded.uses;
END;

CREATE TRIGGER feature_host_hour AFTER UPDATE OF last_used ON feature_host
WHEN NEW.last_used / 3600 != OLD.last_used / 3600
BEGIN
	UPDATE feature_hour SET hosts = hosts - 1
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_used / 3600;
	INSERT INTO feature_hour(feature_id, hour, hosts)
	VALUES (NEW.feature_id, NEW.last_used / 3600, 1)
	ON CONFLICT(feature_id, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER feature_host_del AFTER DELETE ON feature_host
BEGIN
	UPDATE feature_hour SET hosts = hosts - 1
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_used / 3600;
END;

CREATE TRIGGER host_hour_ins AFTER INSERT ON hosts
BEGIN
	INSERT INTO host_hour(cgroup_mode, hour, hosts)
	VALUES (NEW.cgroup_mode, NEW.last_seen / 3600, 1)
	ON CONFLICT(cgroup_mode, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER host_hour_upd AFTER UPDATE OF last_seen, cgroup_mode ON hosts
WHEN NEW.last_seen / 3600 != OLD.last_seen / 3600
  OR NEW.cgroup_mode != OLD.cgroup_mode
BEGIN
	UPDATE host_hour SET hosts = hosts - 1
	WHERE cgroup_mode = OLD.cgroup_mode AND hour = OLD.last_seen / 3600;
	INSERT INTO host_hour(cgroup_mode, hour, hosts)
	VALUES (NEW.cgroup_mode, NEW.last_seen / 3600, 1)
	ON CONFLICT(cgroup_mode, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER host_hour_del AFTER DELETE ON hosts
BEGIN
	UPDATE host_hour SET hosts = hosts - 1
	WHERE cgroup_mode = OLD.cgroup_mode AND hour = OLD.last_seen / 3600;
END;

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
