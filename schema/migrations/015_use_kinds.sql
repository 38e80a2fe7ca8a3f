-- twilight server schema, migration 15: three kinds of use kept apart, and
-- kernel warnings counted apart from BPF uses.
--
-- A usage row's kind follows its op (schema/wire-format.md, usage[].use):
-- write = configures, register_event = listens, read = reads. A process
-- reading memory.soft_limit_in_bytes to monitor it does not use soft
-- limits, so reads never count as uses, and a host whose only evidence is
-- reads ("read only") is never among the hosts using a feature.
--
-- feature_host.uses: BPF counts of writes and registrations only (before:
-- every op, plus one per kernel warning where BPF counted nothing, taken
-- back when BPF counted: migration 005's credit, now gone). reads: BPF
-- counts of reads. warnings: kernel warnings (and unknown texts matched to
-- the feature), evidence shown apart, never added to uses. kinds: a bit
-- set of the evidence (server/store/sqlite/store_sqlite_internal.h,
-- TWL_KIND_*): 1 configures (BPF write), 2 listens (BPF registration),
-- 4 reads (BPF read), 8 a kernel warning, 16 the census saw a non-default
-- value. A host "uses" a feature when kinds has a bit other than 4;
-- it is "read only" when kinds = 4; census values count as configuring.
ALTER TABLE feature_host ADD COLUMN reads INT NOT NULL DEFAULT 0;
ALTER TABLE feature_host ADD COLUMN warnings INT NOT NULL DEFAULT 0;
ALTER TABLE feature_host ADD COLUMN kinds INT NOT NULL DEFAULT 0;

-- feature_hour.hosts: hosts using the feature (read-only hosts excluded)
-- whose last evidence is in that hour; the per-kind counts beside it.
ALTER TABLE feature_hour ADD COLUMN configuring INT NOT NULL DEFAULT 0;
ALTER TABLE feature_hour ADD COLUMN listening INT NOT NULL DEFAULT 0;
ALTER TABLE feature_hour ADD COLUMN reading_only INT NOT NULL DEFAULT 0;

-- feature_day: a history that retention never lowers; uses, reads and
-- warnings are the growth of feature_host's recorded on that day, hosts
-- the hosts using the feature whose last evidence moved into that day,
-- last_used the latest evidence of hosts using it (a read-only host's
-- reads move no feature's last use).
ALTER TABLE feature_day ADD COLUMN reads INT NOT NULL DEFAULT 0;
ALTER TABLE feature_day ADD COLUMN warnings INT NOT NULL DEFAULT 0;

-- feature_comm: per process name, its usage rows of each kind (kept by
-- the usage triggers below); a process that configures or listens is
-- never a read-only workload.
ALTER TABLE feature_comm ADD COLUMN configures INT NOT NULL DEFAULT 0;
ALTER TABLE feature_comm ADD COLUMN listens INT NOT NULL DEFAULT 0;
ALTER TABLE feature_comm ADD COLUMN reads INT NOT NULL DEFAULT 0;

-- GET /api/v1/unknown groups the unknown texts of all hosts by text.
CREATE INDEX unknown_text ON unknown_deprecations(text);

-- What feature_host must hold, recounted from the raw rows: the rebuild
-- below and retention (store_sqlite_maint.c) write from it. A usage row's
-- times are its first and last seen, a warning's and a matched unknown
-- text's their time, a census value's the census's.
CREATE VIEW feature_host_recount AS
SELECT feature_id, host_id, min(t0) AS first_used, max(t1) AS last_used,
       sum(u) AS uses, sum(r) AS reads, sum(w) AS warnings,
       max(k & 1) | max(k & 2) | max(k & 4) | max(k & 8) | max(k & 16)
	       AS kinds
FROM (
	SELECT feature_id, host_id, first_seen AS t0, last_seen AS t1,
	       CASE WHEN op = 'read' THEN 0 ELSE count END AS u,
	       CASE WHEN op = 'read' THEN count ELSE 0 END AS r, 0 AS w,
	       CASE op WHEN 'write' THEN 1 WHEN 'register_event' THEN 2
		       ELSE 4 END AS k
	FROM usage
	UNION ALL
	SELECT feature_id, host_id, time, time, 0, 0, 1, 8 FROM warnings
	UNION ALL
	SELECT matched_feature_id, host_id, first_time, first_time, 0, 0,
	       count, 8
	FROM unknown_deprecations WHERE matched_feature_id IS NOT NULL
	UNION ALL
	SELECT feature_id, host_id, time, time, 0, 0, 0, 16 FROM census_knobs
)
GROUP BY feature_id, host_id;

-- The triggers go while the rollups are rebuilt, then come back counting
-- per kind.
DROP TRIGGER feature_host_ins;
DROP TRIGGER feature_host_day;
DROP TRIGGER feature_host_hour;
DROP TRIGGER feature_host_del;
DROP TRIGGER usage_comm_ins;
DROP TRIGGER usage_comm_del;

DELETE FROM feature_host;
INSERT INTO feature_host(feature_id, host_id, first_used, last_used, uses,
			 last_hour, reads, warnings, kinds)
	SELECT feature_id, host_id, first_used, last_used, uses,
	       last_used / 3600, reads, warnings, kinds
	FROM feature_host_recount;

DELETE FROM feature_hour;
INSERT INTO feature_hour(feature_id, hour, hosts, configuring, listening,
			 reading_only)
	SELECT feature_id, last_hour, sum((kinds & 27) != 0),
	       sum((kinds & 17) != 0), sum((kinds & 2) != 0), sum(kinds = 4)
	FROM feature_host GROUP BY 1, 2;

-- The old days summed credited warnings and reads into uses: the history
-- restarts from the rebuilt rows, on each row's last day.
DELETE FROM feature_day;
INSERT INTO feature_day(feature_id, day, hosts, uses, last_used, reads,
			warnings)
	SELECT feature_id, last_used / 86400, sum((kinds & 27) != 0),
	       sum(uses), max(last_used) FILTER (WHERE kinds & 27), sum(reads),
	       sum(warnings)
	FROM feature_host GROUP BY 1, 2;

DELETE FROM feature_comm;
INSERT INTO feature_comm(feature_id, comm, configures, listens, reads)
	SELECT feature_id, comm, sum(op = 'write'), sum(op = 'register_event'),
	       sum(op NOT IN ('write', 'register_event'))
	FROM usage GROUP BY 1, 2;

CREATE TRIGGER feature_host_ins AFTER INSERT ON feature_host
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses, last_used, reads,
				warnings)
	VALUES (NEW.feature_id, NEW.last_used / 86400, (NEW.kinds & 27) != 0,
		max(NEW.uses, 0), iif(NEW.kinds & 27, NEW.last_used, NULL),
		max(NEW.reads, 0),
		max(NEW.warnings, 0))
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + excluded.hosts, uses = uses + excluded.uses,
		reads = reads + excluded.reads,
		warnings = warnings + excluded.warnings,
		last_used = max(coalesce(last_used, excluded.last_used),
				coalesce(excluded.last_used, last_used));
	INSERT INTO feature_hour(feature_id, hour, hosts, configuring,
				 listening, reading_only)
	VALUES (NEW.feature_id, NEW.last_hour, (NEW.kinds & 27) != 0,
		(NEW.kinds & 17) != 0, (NEW.kinds & 2) != 0, NEW.kinds = 4)
	ON CONFLICT(feature_id, hour) DO UPDATE SET
		hosts = hosts + excluded.hosts,
		configuring = configuring + excluded.configuring,
		listening = listening + excluded.listening,
		reading_only = reading_only + excluded.reading_only;
END;

-- Growth only: retention recounting a row lower (store_sqlite_maint.c)
-- leaves the history as it was. A host counts on a day when its last
-- evidence moved into that day, or it became a host using the feature.
CREATE TRIGGER feature_host_day AFTER UPDATE OF first_used, last_hour, kinds
ON feature_host
WHEN NEW.last_used > OLD.last_used OR NEW.uses > OLD.uses
  OR NEW.reads > OLD.reads OR NEW.warnings > OLD.warnings
  OR ((OLD.kinds & 27) = 0 AND (NEW.kinds & 27) != 0)
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses, last_used, reads,
				warnings)
	VALUES (NEW.feature_id, NEW.last_used / 86400,
		(NEW.kinds & 27) != 0 AND
		(NEW.last_used / 86400 > OLD.last_used / 86400 OR
		 (OLD.kinds & 27) = 0),
		max(NEW.uses - OLD.uses, 0),
		iif(NEW.kinds & 27, NEW.last_used, NULL),
		max(NEW.reads - OLD.reads, 0),
		max(NEW.warnings - OLD.warnings, 0))
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + excluded.hosts, uses = uses + excluded.uses,
		reads = reads + excluded.reads,
		warnings = warnings + excluded.warnings,
		last_used = max(coalesce(last_used, excluded.last_used),
				coalesce(excluded.last_used, last_used));
END;

CREATE TRIGGER feature_host_hour AFTER UPDATE OF last_hour, kinds
ON feature_host
WHEN NEW.last_hour != OLD.last_hour OR NEW.kinds != OLD.kinds
BEGIN
	UPDATE feature_hour SET hosts = hosts - ((OLD.kinds & 27) != 0),
		configuring = configuring - ((OLD.kinds & 17) != 0),
		listening = listening - ((OLD.kinds & 2) != 0),
		reading_only = reading_only - (OLD.kinds = 4)
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_hour;
	INSERT INTO feature_hour(feature_id, hour, hosts, configuring,
				 listening, reading_only)
	VALUES (NEW.feature_id, NEW.last_hour, (NEW.kinds & 27) != 0,
		(NEW.kinds & 17) != 0, (NEW.kinds & 2) != 0, NEW.kinds = 4)
	ON CONFLICT(feature_id, hour) DO UPDATE SET
		hosts = hosts + excluded.hosts,
		configuring = configuring + excluded.configuring,
		listening = listening + excluded.listening,
		reading_only = reading_only + excluded.reading_only;
END;

CREATE TRIGGER feature_host_del AFTER DELETE ON feature_host
BEGIN
	UPDATE feature_hour SET hosts = hosts - ((OLD.kinds & 27) != 0),
		configuring = configuring - ((OLD.kinds & 17) != 0),
		listening = listening - ((OLD.kinds & 2) != 0),
		reading_only = reading_only - (OLD.kinds = 4)
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_hour;
END;

CREATE TRIGGER usage_comm_ins AFTER INSERT ON usage
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

CREATE TRIGGER usage_comm_del AFTER DELETE ON usage
BEGIN
	UPDATE feature_comm SET configures = configures - (OLD.op = 'write'),
		listens = listens - (OLD.op = 'register_event'),
		reads = reads - (OLD.op NOT IN ('write', 'register_event'))
	WHERE feature_id = OLD.feature_id AND comm = OLD.comm;
	DELETE FROM feature_comm WHERE feature_id = OLD.feature_id
		AND comm = OLD.comm AND configures + listens + reads <= 0;
END;
