-- twilight server schema, migration 6: feature_host's "last used" index
-- by hour, and each feature's last use kept in feature_day.
--
-- Why: the ingest writer is one thread and the server's bottleneck
-- (bench/server-load: it runs or waits to run ~97% of the time at 5,000
-- reports/s offered). Every report updates its features' feature_host
-- rows, and every update moved the row's entry in the index
-- feature_host_last(feature_id, last_used): 84 k of the writer's 668 k
-- instructions per report (callgrind, 20-entry reports of 4 features).
--
-- Now the index holds last_hour = last_used / 3600, a column of its own
-- that the writer sets only when a row's last use moves to a later hour
-- (server/store_sqlite.c, W_ROLLUP_UPD), so within an hour an update
-- touches no index. The CHECK keeps the two columns in step whoever
-- writes the row. Readers narrow a time range by last_hour through the
-- index and filter last_used exactly in the row (server/
-- store_sqlite_read.c): the same rows, as exact as before.
--
-- A feature's last use over all hosts, which the index answered at its
-- end, now comes from feature_day.last_used (the latest use seen on that
-- day), kept by the same triggers as the day's hosts and uses. Like those
-- totals it outlives retention pruning of feature_host rows.
CREATE TABLE feature_host_v6 (
	feature_id TEXT NOT NULL,
	host_id TEXT NOT NULL,
	first_used INT NOT NULL,
	last_used INT NOT NULL,
	uses INT NOT NULL DEFAULT 0,
	last_hour INT NOT NULL,
	PRIMARY KEY (feature_id, host_id),
	CHECK (last_hour = last_used / 3600)
) WITHOUT ROWID;

INSERT INTO feature_host_v6(feature_id, host_id, first_used, last_used, uses,
			    last_hour)
	SELECT feature_id, host_id, first_used, last_used, uses, last_used / 3600
	FROM feature_host;

-- Drops feature_host's indexes and triggers with it, firing none of them.
DROP TABLE feature_host;
ALTER TABLE feature_host_v6 RENAME TO feature_host;

CREATE INDEX feature_host_last_hour ON feature_host(feature_id, last_hour);
CREATE INDEX feature_host_first ON feature_host(feature_id, first_used);

ALTER TABLE feature_day ADD COLUMN last_used INT;

-- Each feature's last use, on the day it falls in (the only day whose
-- last_used a reader needs: it takes the maximum over a feature's days).
INSERT INTO feature_day(feature_id, day, hosts, uses, last_used)
	SELECT feature_id, max(last_used) / 86400, 0, 0, max(last_used)
	FROM feature_host WHERE true GROUP BY feature_id
	ON CONFLICT(feature_id, day) DO UPDATE SET last_used = excluded.last_used;

-- The triggers of 002 and 005, on the new table, with feature_day's
-- last_used kept too and the hour buckets following last_hour.
CREATE TRIGGER feature_host_ins AFTER INSERT ON feature_host
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses, last_used)
	VALUES (NEW.feature_id, NEW.last_used / 86400, 1, max(NEW.uses, 0),
		NEW.last_used)
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + 1, uses = uses + excluded.uses,
		last_used = max(coalesce(last_used, excluded.last_used),
				excluded.last_used);
	INSERT INTO feature_hour(feature_id, hour, hosts)
	VALUES (NEW.feature_id, NEW.last_hour, 1)
	ON CONFLICT(feature_id, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER feature_host_day AFTER UPDATE OF last_used, uses ON feature_host
WHEN NEW.last_used > OLD.last_used OR NEW.uses != OLD.uses
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses, last_used)
	VALUES (NEW.feature_id, NEW.last_used / 86400,
		NEW.last_used / 86400 > OLD.last_used / 86400,
		NEW.uses - OLD.uses, NEW.last_used)
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + excluded.hosts, uses = uses + excluded.uses,
		last_used = max(coalesce(last_used, excluded.last_used),
				excluded.last_used);
END;

CREATE TRIGGER feature_host_hour AFTER UPDATE OF last_hour ON feature_host
WHEN NEW.last_hour != OLD.last_hour
BEGIN
	UPDATE feature_hour SET hosts = hosts - 1
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_hour;
	INSERT INTO feature_hour(feature_id, hour, hosts)
	VALUES (NEW.feature_id, NEW.last_hour, 1)
	ON CONFLICT(feature_id, hour) DO UPDATE SET hosts = hosts + 1;
END;

CREATE TRIGGER feature_host_del AFTER DELETE ON feature_host
BEGIN
	UPDATE feature_hour SET hosts = hosts - 1
	WHERE feature_id = OLD.feature_id AND hour = OLD.last_hour;
END;
