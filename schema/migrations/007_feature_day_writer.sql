-- twilight server schema, migration 7: the common rollup update's
-- feature_day upkeep moves from a trigger to the writer.
--
-- Why: feature_host_day fired on every report's update of each feature's
-- feature_host row (uses grow with every report), one feature_day upsert
-- each: 48 k of the writer's instructions per 4-feature report
-- (callgrind). The writer now sums what those upserts would have added,
-- per (feature, day), over all the batches of one group commit, and
-- writes each sum once before COMMIT (server/store_sqlite.c, struct
-- twl_day_delta): a few rows per commit instead of four per report.
--
-- Which update is whose: the writer's common update (W_ROLLUP_UPD) sets
-- only last_used and uses, and only when the row's last use stays in its
-- hour, so the day does not change (hosts + 0) and the writer knows the
-- day and the uses added. Every other update of feature_host names
-- first_used and last_hour too (the full upsert, W_ROLLUP), and still
-- fires this trigger. An UPDATE added later that sets last_used or uses
-- without naming first_used or last_hour must keep feature_day itself.
DROP TRIGGER feature_host_day;

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
