-- twilight server schema, migration 18: structured use cases and migration
-- status.
--
-- An annotation keeps its free text and fits (migration 2) and may say,
-- each NULL when not said: whether the use is intentional or accidental
-- (an orchestrator's default nobody chose), the component that sets the
-- knob ("docker --memory-reservation"), whether the cgroup v2 replacement
-- was tried (no, works, falls_short) and what fell short, and the team
-- that owns it. server/api/annotations.c checks the same rules first and
-- answers 400; these CHECKs keep any other writer honest.
ALTER TABLE annotations ADD COLUMN intent TEXT
	CHECK (intent IS NULL OR intent IN ('intentional', 'accidental'));
ALTER TABLE annotations ADD COLUMN set_by TEXT
	CHECK (set_by IS NULL OR length(set_by) BETWEEN 1 AND 128);
ALTER TABLE annotations ADD COLUMN v2_tried TEXT
	CHECK (v2_tried IS NULL OR v2_tried IN ('no', 'works', 'falls_short'));
ALTER TABLE annotations ADD COLUMN shortfall TEXT
	CHECK (shortfall IS NULL OR (v2_tried = 'falls_short'
				     AND length(shortfall) BETWEEN 1 AND 1000));
ALTER TABLE annotations ADD COLUMN team TEXT
	CHECK (team IS NULL OR length(team) BETWEEN 1 AND 64);

-- Where a feature's use stands, per feature and workload (a process name;
-- '' = the feature as a whole), set by an SRE: one row each, replaced on
-- every set. date (Unix seconds, a UTC day) is when the status took effect:
-- a workload marked migrated and seen configuring or listening after it is
-- using the feature again (twl_read_migration_reuse()). reason is required
-- for blocked and refused otherwise.
CREATE TABLE migration_status (
	feature_id TEXT NOT NULL,
	workload TEXT NOT NULL DEFAULT '' CHECK (length(workload) <= 128),
	status TEXT NOT NULL CHECK (status IN ('migrating', 'migrated',
					       'accepted_risk', 'blocked')),
	reason TEXT CHECK ((status = 'blocked') = (reason IS NOT NULL)
			   AND (reason IS NULL OR length(reason) BETWEEN 1 AND 1000)),
	owner TEXT NOT NULL CHECK (length(owner) BETWEEN 1 AND 64),
	date INT NOT NULL,
	author TEXT NOT NULL,
	updated INT NOT NULL,
	PRIMARY KEY (feature_id, workload)
) WITHOUT ROWID;
