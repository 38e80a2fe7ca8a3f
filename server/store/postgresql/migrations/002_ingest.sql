-- twilight server schema on PostgreSQL, migration 2: what ingest writes
-- and the read path reads.
--
-- The tables, indexes and the recount view as SQLite's migrations
-- (schema/migrations/001..019) leave them, with the same table and column
-- names, so that one set of queries fits both stores where the dialects
-- agree. SQLite's INT is 64 bits: BIGINT here. SQLite's WITHOUT ROWID
-- tables are plain tables with the same primary key.
--
-- Rollups: PL/pgSQL triggers, the same ones as SQLite's (feature_host ->
-- feature_day and feature_hour, hosts -> host_hour, usage ->
-- feature_comm, host_coverage -> coverage_count), rather than statements
-- in the ingest code. Why: every writer of the raw rows (ingest,
-- retention, the catalog rematch, a copy from SQLite) then keeps the
-- rollups exact without knowing them, as on SQLite, and the rollups stay
-- defined once per store. Each trigger only adds a delta to a shared
-- rollup row (hosts = hosts + 1, ON CONFLICT DO UPDATE): atomic under
-- READ COMMITTED, so two servers' transactions never lose an update of
-- these rows. What reads a host's rows then writes from them (the
-- max-merge of a usage counter, the growth of a feature_host row) is
-- serialised by the ingest lock (server/store/postgresql/README.md).
-- As on SQLite (its migration 007), feature_host_day fires only on
-- an UPDATE that names first_used, last_hour or kinds: the writer's
-- common update of a host's row names none of them and adds to
-- feature_day itself, the same sums.

-- Kernel warnings, one row per (host, boot, feature, kmsg record, text).
CREATE TABLE warnings (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	kmsg_seq BIGINT NOT NULL,
	mono_us BIGINT NOT NULL,
	time BIGINT NOT NULL,
	level BIGINT NOT NULL,
	text TEXT NOT NULL,
	fields_json TEXT,
	origin TEXT NOT NULL,
	received BIGINT NOT NULL,
	kernel TEXT,
	source TEXT,
	PRIMARY KEY (host_id, boot_id, feature_id, kmsg_seq, text)
);
CREATE INDEX warnings_feature_time ON warnings(feature_id, time);
CREATE INDEX warnings_received ON warnings(received);

-- Deprecation texts the agent's catalog did not know, and warnings of
-- features the server's catalog lacks (feature_id set, SQLite 013);
-- matched_feature_id once the catalog matches them.
CREATE TABLE unknown_deprecations (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	text TEXT NOT NULL,
	first_kmsg_seq BIGINT NOT NULL,
	first_time BIGINT NOT NULL,
	count BIGINT NOT NULL,
	matched_feature_id TEXT,
	received BIGINT NOT NULL,
	feature_id TEXT,
	kernel TEXT,
	origin TEXT,
	source TEXT,
	PRIMARY KEY (host_id, boot_id, text)
);
CREATE INDEX unknown_matched ON unknown_deprecations(matched_feature_id);
CREATE INDEX unknown_feature_pending ON unknown_deprecations(feature_id)
	WHERE feature_id IS NOT NULL AND matched_feature_id IS NULL;
CREATE INDEX unknown_text ON unknown_deprecations(text);

-- A batch's count of an unknown text under the kmsg_seq of its first
-- occurrence in the batch (SQLite 016): max-merged, so a batch stored
-- again adds nothing to unknown_deprecations.count.
CREATE TABLE unknown_counts (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	text TEXT NOT NULL,
	kmsg_seq BIGINT NOT NULL,
	count BIGINT NOT NULL,
	received BIGINT NOT NULL,
	PRIMARY KEY (host_id, boot_id, text, kmsg_seq)
);
CREATE INDEX unknown_counts_received ON unknown_counts(received);

-- The census's non-default knob values, replaced with every census.
CREATE TABLE census_knobs (
	host_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	file TEXT NOT NULL,
	cgroup TEXT NOT NULL,
	value TEXT NOT NULL,
	time BIGINT NOT NULL,
	target_kind TEXT,
	PRIMARY KEY (host_id, file, cgroup)
);
CREATE INDEX census_knobs_feature ON census_knobs(feature_id);

-- host.labels and census.runtimes of each host's last report with them.
CREATE TABLE host_labels (
	host_id TEXT NOT NULL,
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (host_id, key)
);
CREATE INDEX host_labels_value ON host_labels(key, value);

CREATE TABLE host_runtimes (
	host_id TEXT NOT NULL,
	name TEXT NOT NULL,
	version TEXT NOT NULL DEFAULT '',
	cgroup_driver TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (host_id, name, version)
);
CREATE INDEX host_runtimes_name ON host_runtimes(name);

-- The catalog the server runs with (filled by the read side's seed).
CREATE TABLE catalog_feature (
	id TEXT PRIMARY KEY,
	subsystem TEXT NOT NULL,
	title TEXT NOT NULL,
	status TEXT NOT NULL
		CHECK (status IN ('warns', 'no-op', 'removed', 'silent')),
	warns BIGINT NOT NULL CHECK (warns IN (0, 1)),
	kernel_version TEXT,
	upstream_commit TEXT,
	replacement TEXT NOT NULL,
	replacement_note TEXT NOT NULL,
	warn_condition TEXT,
	catalog_version BIGINT NOT NULL,
	commit_note TEXT,
	config_symbol TEXT,
	stopped_working TEXT,
	stopped_note TEXT,
	route_id TEXT,
	in_reply_to TEXT
);

-- SQLite 008 indexes hosts by last_hour, not last_seen.
DROP INDEX hosts_last_seen;
DROP INDEX hosts_cgroup_mode;
CREATE INDEX hosts_last_hour ON hosts(last_hour);
CREATE INDEX hosts_cgroup_mode ON hosts(cgroup_mode, last_hour);

-- Rollup tables: SQLite 002, 006, 008, 014, 015.
CREATE TABLE feature_host (
	feature_id TEXT NOT NULL,
	host_id TEXT NOT NULL,
	first_used BIGINT NOT NULL,
	last_used BIGINT NOT NULL,
	uses BIGINT NOT NULL DEFAULT 0,
	last_hour BIGINT NOT NULL,
	reads BIGINT NOT NULL DEFAULT 0,
	warnings BIGINT NOT NULL DEFAULT 0,
	kinds BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (host_id, feature_id),
	CHECK (last_hour = last_used / 3600)
);
CREATE INDEX feature_host_last_hour ON feature_host(feature_id, last_hour);
CREATE INDEX feature_host_first ON feature_host(feature_id, first_used);

CREATE TABLE feature_day (
	feature_id TEXT NOT NULL,
	day BIGINT NOT NULL, -- Unix seconds / 86400
	hosts BIGINT NOT NULL DEFAULT 0,
	uses BIGINT NOT NULL DEFAULT 0,
	last_used BIGINT,
	reads BIGINT NOT NULL DEFAULT 0,
	warnings BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, day)
);

CREATE TABLE feature_hour (
	feature_id TEXT NOT NULL,
	hour BIGINT NOT NULL, -- Unix seconds / 3600
	hosts BIGINT NOT NULL DEFAULT 0,
	configuring BIGINT NOT NULL DEFAULT 0,
	listening BIGINT NOT NULL DEFAULT 0,
	reading_only BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, hour)
);

CREATE TABLE host_hour (
	cgroup_mode TEXT NOT NULL,
	hour BIGINT NOT NULL,
	hosts BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (cgroup_mode, hour)
);

CREATE TABLE feature_comm (
	feature_id TEXT NOT NULL,
	comm TEXT NOT NULL,
	configures BIGINT NOT NULL DEFAULT 0,
	listens BIGINT NOT NULL DEFAULT 0,
	reads BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, comm)
);

-- Coverage facts per host (SQLite 014); coverage_count: per bit, the
-- hosts that have it.
CREATE TABLE host_coverage (
	host_id TEXT PRIMARY KEY,
	catalog_version BIGINT NOT NULL DEFAULT 0,
	facts BIGINT NOT NULL DEFAULT 0,
	records_lost BIGINT NOT NULL DEFAULT 0,
	journal_missed BIGINT NOT NULL DEFAULT 0,
	journal_errors BIGINT NOT NULL DEFAULT 0,
	entries_dropped BIGINT NOT NULL DEFAULT 0,
	probes_not_built BIGINT NOT NULL DEFAULT 0,
	boots BIGINT NOT NULL DEFAULT 0,
	boots_uncovered BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX host_coverage_catalog ON host_coverage(catalog_version);

CREATE TABLE coverage_count (
	bit BIGINT PRIMARY KEY,
	hosts BIGINT NOT NULL DEFAULT 0
);
INSERT INTO coverage_count(bit) SELECT generate_series(0, 31);

-- What feature_host must hold, recounted from the raw rows (SQLite 015):
-- retention writes from it, tests compare the rollups with it.
CREATE VIEW feature_host_recount AS
SELECT feature_id, host_id, min(t0) AS first_used, max(t1) AS last_used,
       sum(u)::bigint AS uses, sum(r)::bigint AS reads,
       sum(w)::bigint AS warnings,
       max(k & 1) | max(k & 2) | max(k & 4) | max(k & 8) | max(k & 16)
	       AS kinds
FROM (
	SELECT feature_id, host_id, first_seen AS t0, last_seen AS t1,
	       CASE WHEN op = 'read' THEN 0 ELSE count END AS u,
	       CASE WHEN op = 'read' THEN count ELSE 0 END AS r, 0::bigint AS w,
	       CASE op WHEN 'write' THEN 1 WHEN 'register_event' THEN 2
		       ELSE 4 END::bigint AS k
	FROM usage
	UNION ALL
	SELECT feature_id, host_id, time, time, 0, 0, 1, 8 FROM warnings
	UNION ALL
	SELECT matched_feature_id, host_id, first_time, first_time, 0, 0,
	       count, 8
	FROM unknown_deprecations WHERE matched_feature_id IS NOT NULL
	UNION ALL
	SELECT feature_id, host_id, time, time, 0, 0, 0, 16 FROM census_knobs
) AS evidence
GROUP BY feature_id, host_id;

-- hosts -> host_hour: hosts per cgroup mode by the hour of their last
-- report (SQLite 008).
CREATE FUNCTION host_hour_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		UPDATE host_hour SET hosts = hosts - 1
		WHERE cgroup_mode = OLD.cgroup_mode AND hour = OLD.last_hour;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		INSERT INTO host_hour(cgroup_mode, hour, hosts)
		VALUES (NEW.cgroup_mode, NEW.last_hour, 1)
		ON CONFLICT(cgroup_mode, hour) DO UPDATE
		SET hosts = host_hour.hosts + 1;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER host_hour_ins AFTER INSERT ON hosts
FOR EACH ROW EXECUTE FUNCTION host_hour_keep();
CREATE TRIGGER host_hour_upd AFTER UPDATE OF last_hour, cgroup_mode ON hosts
FOR EACH ROW
WHEN (NEW.last_hour != OLD.last_hour OR NEW.cgroup_mode != OLD.cgroup_mode)
EXECUTE FUNCTION host_hour_keep();
CREATE TRIGGER host_hour_del AFTER DELETE ON hosts
FOR EACH ROW EXECUTE FUNCTION host_hour_keep();

-- host_coverage -> coverage_count (SQLite 014; # is XOR).
CREATE FUNCTION coverage_count_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	old_facts BIGINT := 0;
	new_facts BIGINT := 0;
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		old_facts := OLD.facts;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		new_facts := NEW.facts;
	END IF;
	UPDATE coverage_count
	SET hosts = hosts + ((new_facts >> bit::int) & 1)
		- ((old_facts >> bit::int) & 1)
	WHERE ((new_facts # old_facts) >> bit::int) & 1 = 1;
	RETURN NULL;
END $$;
CREATE TRIGGER host_coverage_ins AFTER INSERT ON host_coverage
FOR EACH ROW WHEN (NEW.facts != 0) EXECUTE FUNCTION coverage_count_keep();
CREATE TRIGGER host_coverage_upd AFTER UPDATE OF facts ON host_coverage
FOR EACH ROW WHEN (NEW.facts != OLD.facts)
EXECUTE FUNCTION coverage_count_keep();
CREATE TRIGGER host_coverage_del AFTER DELETE ON host_coverage
FOR EACH ROW WHEN (OLD.facts != 0) EXECUTE FUNCTION coverage_count_keep();

-- usage -> feature_comm: per process name, its usage rows of each kind
-- (SQLite 015).
CREATE FUNCTION feature_comm_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO feature_comm(feature_id, comm, configures, listens,
					 reads)
		VALUES (NEW.feature_id, NEW.comm, (NEW.op = 'write')::int,
			(NEW.op = 'register_event')::int,
			(NEW.op NOT IN ('write', 'register_event'))::int)
		ON CONFLICT(feature_id, comm) DO UPDATE SET
			configures = feature_comm.configures
				     + excluded.configures,
			listens = feature_comm.listens + excluded.listens,
			reads = feature_comm.reads + excluded.reads;
		RETURN NULL;
	END IF;
	UPDATE feature_comm
	SET configures = configures - (OLD.op = 'write')::int,
	    listens = listens - (OLD.op = 'register_event')::int,
	    reads = reads - (OLD.op NOT IN ('write', 'register_event'))::int
	WHERE feature_id = OLD.feature_id AND comm = OLD.comm;
	DELETE FROM feature_comm WHERE feature_id = OLD.feature_id
		AND comm = OLD.comm AND configures + listens + reads <= 0;
	RETURN NULL;
END $$;
CREATE TRIGGER usage_comm_ins AFTER INSERT ON usage
FOR EACH ROW EXECUTE FUNCTION feature_comm_keep();
CREATE TRIGGER usage_comm_del AFTER DELETE ON usage
FOR EACH ROW EXECUTE FUNCTION feature_comm_keep();

-- feature_host -> feature_day: what a host's row grew by, on the day of
-- its last use (SQLite 015's feature_host_ins and feature_host_day; kinds
-- & 27: the host uses the feature, anything but reads only).
CREATE FUNCTION feature_day_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	using_now BOOLEAN := (NEW.kinds & 27) != 0;
	o feature_host;
BEGIN
	IF TG_OP = 'INSERT' THEN
		o := ROW(NEW.feature_id, NEW.host_id, NEW.first_used, 0, 0,
			 0, 0, 0, 0);
	ELSE
		o := OLD;
	END IF;
	INSERT INTO feature_day(feature_id, day, hosts, uses, last_used, reads,
				warnings)
	VALUES (NEW.feature_id, NEW.last_used / 86400,
		(using_now AND (TG_OP = 'INSERT' OR
		 NEW.last_used / 86400 > o.last_used / 86400 OR
		 (o.kinds & 27) = 0))::int,
		greatest(NEW.uses - o.uses, 0),
		CASE WHEN using_now THEN NEW.last_used END,
		greatest(NEW.reads - o.reads, 0),
		greatest(NEW.warnings - o.warnings, 0))
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = feature_day.hosts + excluded.hosts,
		uses = feature_day.uses + excluded.uses,
		reads = feature_day.reads + excluded.reads,
		warnings = feature_day.warnings + excluded.warnings,
		last_used = greatest(feature_day.last_used,
				     excluded.last_used);
	RETURN NULL;
END $$;
CREATE TRIGGER feature_host_ins_day AFTER INSERT ON feature_host
FOR EACH ROW EXECUTE FUNCTION feature_day_keep();
CREATE TRIGGER feature_host_day AFTER UPDATE OF first_used, last_hour, kinds
ON feature_host
FOR EACH ROW
WHEN (NEW.last_used > OLD.last_used OR NEW.uses > OLD.uses
      OR NEW.reads > OLD.reads OR NEW.warnings > OLD.warnings
      OR ((OLD.kinds & 27) = 0 AND (NEW.kinds & 27) != 0))
EXECUTE FUNCTION feature_day_keep();

-- feature_host -> feature_hour: hosts using the feature by the hour of
-- their last use, and per kind (SQLite 015's feature_host_ins,
-- feature_host_hour, feature_host_del).
CREATE FUNCTION feature_hour_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		UPDATE feature_hour
		SET hosts = hosts - ((OLD.kinds & 27) != 0)::int,
		    configuring = configuring - ((OLD.kinds & 17) != 0)::int,
		    listening = listening - ((OLD.kinds & 2) != 0)::int,
		    reading_only = reading_only - (OLD.kinds = 4)::int
		WHERE feature_id = OLD.feature_id AND hour = OLD.last_hour;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		INSERT INTO feature_hour(feature_id, hour, hosts, configuring,
					 listening, reading_only)
		VALUES (NEW.feature_id, NEW.last_hour,
			((NEW.kinds & 27) != 0)::int,
			((NEW.kinds & 17) != 0)::int,
			((NEW.kinds & 2) != 0)::int, (NEW.kinds = 4)::int)
		ON CONFLICT(feature_id, hour) DO UPDATE SET
			hosts = feature_hour.hosts + excluded.hosts,
			configuring = feature_hour.configuring
				      + excluded.configuring,
			listening = feature_hour.listening + excluded.listening,
			reading_only = feature_hour.reading_only
				       + excluded.reading_only;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER feature_host_ins AFTER INSERT ON feature_host
FOR EACH ROW EXECUTE FUNCTION feature_hour_keep();
CREATE TRIGGER feature_host_hour AFTER UPDATE OF last_hour, kinds
ON feature_host
FOR EACH ROW
WHEN (NEW.last_hour != OLD.last_hour OR NEW.kinds != OLD.kinds)
EXECUTE FUNCTION feature_hour_keep();
CREATE TRIGGER feature_host_del AFTER DELETE ON feature_host
FOR EACH ROW EXECUTE FUNCTION feature_hour_keep();
