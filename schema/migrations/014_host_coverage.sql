-- twilight server schema, migration 14: each host's coverage facts, and
-- fleet-wide counts of them that cost a few rows to read.
--
-- Why: the latest health document of a host is stored whole
-- (hosts.health_json), which answers one host but not "how many hosts
-- have BPF attached to the memory controller" without reading every
-- host's document. The facts the health page and later questions need
-- (BPF per controller, whether the current boot's start is covered,
-- records lost on the way, the agent's catalog version) are kept here,
-- one narrow row per host, written only when one of them changed: the
-- writer's upsert names a WHERE that is false for an unchanged row, so
-- the common report reads the row and writes nothing (the writer thread
-- is the server's bottleneck, bench/server-load).
--
-- facts is a bit set the server computes from the report
-- (server/store/ingest.h, TWL_FACT_*):
--   bits 0-4    BPF attached to controller memory, cpuset, freezer,
--               blkio, cgroup (health.controllers[].state, version 2)
--   bits 5-9    the same controllers "unavailable"
--   bits 10-14  the same controllers "not_built"
--   bit 15      health.controllers reported
--   bit 16      health.boots reported
--   bit 17      the current boot's start is covered (start_covered of
--               the boot whose boot_id is host.boot_id)
--   bit 18      the current boot's start is not covered
--   bit 19      some reported boot's start is not covered
--   bit 20      records_lost > 0
--   bit 21      journal_missed > 0
--   bit 22      journal_errors > 0
--   bit 23      entries_dropped > 0
--   bit 24      a probe is not_built
--   bit 25      key_rejected
--   bit 26      probe_missing is not empty
-- coverage_count holds, per bit, the number of hosts that have it, kept
-- by the triggers below; readers sum nothing.
CREATE TABLE host_coverage (
	host_id TEXT PRIMARY KEY,
	catalog_version INT NOT NULL DEFAULT 0,
	facts INT NOT NULL DEFAULT 0,
	records_lost INT NOT NULL DEFAULT 0,
	journal_missed INT NOT NULL DEFAULT 0,
	journal_errors INT NOT NULL DEFAULT 0,
	entries_dropped INT NOT NULL DEFAULT 0,
	probes_not_built INT NOT NULL DEFAULT 0,
	boots INT NOT NULL DEFAULT 0,
	boots_uncovered INT NOT NULL DEFAULT 0
) WITHOUT ROWID;
-- agents whose catalog is older or newer than the server's: index ranges
CREATE INDEX host_coverage_catalog ON host_coverage(catalog_version);

CREATE TABLE coverage_count (
	bit INTEGER PRIMARY KEY,
	hosts INT NOT NULL DEFAULT 0
);
INSERT INTO coverage_count(bit)
	VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11),
	       (12), (13), (14), (15), (16), (17), (18), (19), (20), (21),
	       (22), (23), (24), (25), (26), (27), (28), (29), (30), (31);

CREATE TRIGGER host_coverage_ins AFTER INSERT ON host_coverage
WHEN NEW.facts != 0
BEGIN
	UPDATE coverage_count SET hosts = hosts + 1
	WHERE (NEW.facts >> bit) & 1;
END;

-- (a | b) - (a & b): the bits that changed (SQLite has no XOR)
CREATE TRIGGER host_coverage_upd AFTER UPDATE OF facts ON host_coverage
WHEN NEW.facts != OLD.facts
BEGIN
	UPDATE coverage_count
	SET hosts = hosts + ((NEW.facts >> bit) & 1) - ((OLD.facts >> bit) & 1)
	WHERE (((NEW.facts | OLD.facts) - (NEW.facts & OLD.facts)) >> bit) & 1;
END;

CREATE TRIGGER host_coverage_del AFTER DELETE ON host_coverage
WHEN OLD.facts != 0
BEGIN
	UPDATE coverage_count SET hosts = hosts - 1
	WHERE (OLD.facts >> bit) & 1;
END;

-- Hosts that reported before this migration: what their row holds.
INSERT INTO host_coverage(host_id, catalog_version, facts, records_lost)
	SELECT host_id, catalog_version,
	       ((records_lost > 0) << 20) | ((key_rejected != 0) << 25) |
	       ((probe_missing IS NOT NULL AND probe_missing NOT IN ('', '[]'))
		<< 26),
	       records_lost
	FROM hosts;
