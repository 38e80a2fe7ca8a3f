-- twilight server schema, migration 13: what wire format version 2 added,
-- and reports naming feature ids the server's catalog does not hold
-- (schema/wire-format.md, "Catalog skew"). Version 1 reports keep their
-- meaning: absent members are stored as the wire format defines them.
--
-- Only ALTER TABLE ADD COLUMN on the large tables (usage, warnings): no
-- rewrite of their rows. Rows stored before this migration read NULL in
-- the new columns, which readers take as "not known" (usage.target_kind:
-- derived from cgroup when read, as for a version 1 report).
--
-- usage[].use is not a column: it is a function of op (the validator
-- rejects a report where they disagree; version 1 derives it), so readers
-- derive it from op. usage[].target_kind is stored as sent, or classified
-- from cgroup by the server (twl_cgroup_classify()) when absent.
-- usage[].value is a summary per key, merged by the writer as the wire
-- format says (min of mins, max of maxes, OR of unlimited, last of the
-- entry with the greater count, ties by the later last_seen): NULL
-- columns when no entry of the key carried one.
ALTER TABLE usage ADD COLUMN target_kind TEXT;
ALTER TABLE usage ADD COLUMN image TEXT;
ALTER TABLE usage ADD COLUMN value_last INT;
ALTER TABLE usage ADD COLUMN value_min INT;
ALTER TABLE usage ADD COLUMN value_max INT;
ALTER TABLE usage ADD COLUMN value_unlimited INT;
ALTER TABLE usage ADD COLUMN value_unit TEXT;
ALTER TABLE usage ADD COLUMN value_source TEXT;

-- A kernel record's boot (boot_id, already a column) and that boot's
-- kernel release and input format. A record of another boot than the
-- report's host.boot_id (backfilled from the journal) never changes the
-- host's current boot or kernel: those come from host only.
ALTER TABLE warnings ADD COLUMN kernel TEXT;
ALTER TABLE warnings ADD COLUMN source TEXT;

-- Unknown texts: unknown[] entries, and warnings whose feature id the
-- server's catalog does not hold (feature_id: that id, the text with its
-- digits replaced by '#' as unknown[] texts are). matched_feature_id is
-- set when the server's catalog matches the text or learns feature_id
-- (at start after a catalog change: twl_store_catalog_rematch()).
ALTER TABLE unknown_deprecations ADD COLUMN feature_id TEXT;
ALTER TABLE unknown_deprecations ADD COLUMN kernel TEXT;
ALTER TABLE unknown_deprecations ADD COLUMN origin TEXT;
ALTER TABLE unknown_deprecations ADD COLUMN source TEXT;
-- The texts waiting for the catalog to learn their feature id.
CREATE INDEX unknown_feature_pending ON unknown_deprecations(feature_id)
	WHERE feature_id IS NOT NULL AND matched_feature_id IS NULL;

-- census.knobs[].target_kind, or the kind classified from cgroup.
ALTER TABLE census_knobs ADD COLUMN target_kind TEXT;

-- host.labels: replaced by every report that carries labels (an empty
-- object removes them all); a report without them leaves them as they are.
CREATE TABLE host_labels (
	host_id TEXT NOT NULL,
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (host_id, key)
) WITHOUT ROWID;
CREATE INDEX host_labels_value ON host_labels(key, value);

-- census.runtimes: replaced with every census, as census_knobs are.
CREATE TABLE host_runtimes (
	host_id TEXT NOT NULL,
	name TEXT NOT NULL,
	version TEXT NOT NULL DEFAULT '',
	cgroup_driver TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (host_id, name, version)
) WITHOUT ROWID;
CREATE INDEX host_runtimes_name ON host_runtimes(name);
