-- twilight server schema, migration 12: the catalog facts of catalog
-- version 2 (schema/catalog.md) in catalog_feature.
--
-- catalog_feature is created by the generated catalog seed, which runs
-- after the migrations at every start; the seed adds these columns to a
-- new table itself. An older database has the table without them, so they
-- are added here. The CREATE below is the table as the version-1 seed made
-- it: on a fresh database it does not exist yet, and creating it here first
-- lets the same ALTERs run on both, so both end with one column order.
--
-- commit_note: why upstream_commit is NULL (a silent feature and where it
-- is documented, or a commit not verified); config_symbol: the Kconfig
-- symbol whose =n removes the feature; stopped_working / stopped_note: the
-- mainline release where the knob stopped doing its job, and what that
-- means; route_id: catalog_route.id, where reports go upstream;
-- in_reply_to: the Message-ID (without <>) of the upstream thread that
-- asked. Rows of features dropped from the catalog keep NULL here.
CREATE TABLE IF NOT EXISTS catalog_feature (
	id TEXT PRIMARY KEY,
	subsystem TEXT NOT NULL,
	title TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('warns', 'no-op', 'removed', 'silent')),
	warns INTEGER NOT NULL CHECK (warns IN (0, 1)),
	kernel_version TEXT,
	upstream_commit TEXT,
	replacement TEXT NOT NULL,
	replacement_note TEXT NOT NULL,
	warn_condition TEXT,
	catalog_version INTEGER NOT NULL
);
ALTER TABLE catalog_feature ADD COLUMN commit_note TEXT;
ALTER TABLE catalog_feature ADD COLUMN config_symbol TEXT;
ALTER TABLE catalog_feature ADD COLUMN stopped_working TEXT;
ALTER TABLE catalog_feature ADD COLUMN stopped_note TEXT;
ALTER TABLE catalog_feature ADD COLUMN route_id TEXT;
ALTER TABLE catalog_feature ADD COLUMN in_reply_to TEXT;
