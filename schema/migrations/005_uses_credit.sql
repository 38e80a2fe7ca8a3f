-- twilight server schema, migration 5: a feature's uses may shrink.
--
-- A kernel warning and the BPF counter can see the same use: the write
-- that makes the kernel warn is also counted by the agent's probe. Uses
-- now credit the warnings of a (host, boot, feature) only until BPF counts
-- that feature on that boot; when its first usage row arrives, the writer
-- takes the warnings' credit back (server/store_sqlite.c, ingest_usage),
-- so the rollup's uses can go down. feature_day must follow such a
-- decrease instead of ignoring it. Rows stored before this migration keep
-- the old sum (BPF increments plus one per warning).
DROP TRIGGER feature_host_day;

CREATE TRIGGER feature_host_day AFTER UPDATE OF last_used, uses ON feature_host
WHEN NEW.last_used / 86400 > OLD.last_used / 86400 OR NEW.uses != OLD.uses
BEGIN
	INSERT INTO feature_day(feature_id, day, hosts, uses)
	VALUES (NEW.feature_id, NEW.last_used / 86400,
		NEW.last_used / 86400 > OLD.last_used / 86400,
		NEW.uses - OLD.uses)
	ON CONFLICT(feature_id, day) DO UPDATE SET
		hosts = hosts + excluded.hosts, uses = uses + excluded.uses;
END;
