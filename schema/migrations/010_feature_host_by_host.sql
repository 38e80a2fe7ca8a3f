-- twilight server schema, migration 10: feature_host's rows in host order.
--
-- Why: each report updates the feature_host rows of its host's features.
-- Keyed (feature_id, host_id), those rows sit on as many B-tree pages as
-- the report has features, and every page a group commit changes is
-- written to the WAL, copied into the batch's savepoint journal and later
-- checkpointed. Under full load the commits are large and share those
-- pages, but at 5,000 reports/s offered they hold a few reports each, and
-- the rows of one host's four features cost four pages where one would do
-- (bench/README.md: 6.4-7.6 -> 5.5-6.4 WAL frames per report, server CPU
-- per report -3%). Keyed (host_id, feature_id), a host's rows are
-- neighbours.
--
-- Readers by feature go through feature_host_last_hour and
-- feature_host_first (both by feature_id first, unchanged); a host's
-- features (the host page) become a search of the key instead of a scan.
CREATE TABLE feature_host_v10 (
	feature_id TEXT NOT NULL,
	host_id TEXT NOT NULL,
	first_used INT NOT NULL,
	last_used INT NOT NULL,
	uses INT NOT NULL DEFAULT 0,
	last_hour INT NOT NULL,
	PRIMARY KEY (host_id, feature_id),
	CHECK (last_hour = last_used / 3600)
) WITHOUT ROWID;

INSERT INTO feature_host_v10(feature_id, host_id, first_used, last_used, uses,
			     last_hour)
	SELECT feature_id, host_id, first_used, last_used, uses, last_hour
	FROM feature_host;

-- Drops feature_host's indexes and triggers with it, firing none of them.
DROP TABLE feature_host;
ALTER TABLE feature_host_v10 RENAME TO feature_host;

CREATE INDEX feature_host_last_hour ON feature_host(feature_id, last_hour);
CREATE INDEX feature_host_first ON feature_host(feature_id, first_used);

-- The triggers as 006 and 007 left them.
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

CREATE TRIGGER feature_host_day AFTER UPDATE OF first_used, last_hour ON feature_host
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
