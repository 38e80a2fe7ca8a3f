-- twilight server schema, migration 1: the core tables.
-- Applied by server/migrate.c inside one transaction; PRAGMA user_version
-- records the last applied migration. Times are Unix seconds unless named
-- *_us. Catalog tables (catalog_feature, ...) come from the generated seed
-- SQL, reloaded at every start so the DB's catalog matches the binary's.

-- One row per host (keyed by the agent's stable host id). health_json and
-- census_json keep the latest agent health / census documents as sent.
CREATE TABLE hosts (
	host_id TEXT PRIMARY KEY,
	hostname TEXT NOT NULL DEFAULT '',
	kernel TEXT NOT NULL DEFAULT '',
	cgroup_mode TEXT NOT NULL DEFAULT '',
	agent_version TEXT NOT NULL DEFAULT '',
	catalog_version INT NOT NULL DEFAULT 0,
	boot_id TEXT NOT NULL DEFAULT '',
	first_seen INT NOT NULL,
	last_seen INT NOT NULL,
	last_seq INT NOT NULL DEFAULT 0,
	health_json TEXT,
	records_lost INT NOT NULL DEFAULT 0,
	key_rejected INT NOT NULL DEFAULT 0,
	probe_missing TEXT,
	census_json TEXT
) WITHOUT ROWID;
CREATE INDEX hosts_last_seen ON hosts(last_seen);
CREATE INDEX hosts_cgroup_mode ON hosts(cgroup_mode, last_seen);

-- Per-host keys handed out by POST /api/v1/enroll; only SHA-256 hex stored.
CREATE TABLE host_keys (
	key_hash TEXT PRIMARY KEY,
	host_id TEXT NOT NULL,
	created INT NOT NULL,
	revoked INT
) WITHOUT ROWID;
CREATE INDEX host_keys_host ON host_keys(host_id);

-- API tokens (admin, viewer, agent = enrolment token); only SHA-256 hex stored.
CREATE TABLE tokens (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	role TEXT NOT NULL CHECK (role IN ('admin', 'viewer', 'agent')),
	token_hash TEXT NOT NULL UNIQUE,
	created INT NOT NULL,
	revoked INT
);

-- Batch ids seen, for idempotent delivery (kept >= 35 days).
CREATE TABLE batches (
	batch_id TEXT PRIMARY KEY,
	host_id TEXT NOT NULL,
	seq INT NOT NULL,
	received INT NOT NULL
) WITHOUT ROWID;
CREATE INDEX batches_received ON batches(received);

-- kmsg warnings that matched the catalog.
CREATE TABLE warnings (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	kmsg_seq INT NOT NULL,
	mono_us INT NOT NULL,
	time INT NOT NULL,
	level INT NOT NULL,
	text TEXT NOT NULL,
	fields_json TEXT,
	origin TEXT NOT NULL,
	received INT NOT NULL,
	PRIMARY KEY (host_id, boot_id, feature_id, kmsg_seq, text)
) WITHOUT ROWID;
CREATE INDEX warnings_feature_time ON warnings(feature_id, time);
CREATE INDEX warnings_received ON warnings(received);

-- Deprecation messages the agent's catalog did not know; matched_feature_id
-- is set when the server's (newer) catalog matches the text.
CREATE TABLE unknown_deprecations (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	text TEXT NOT NULL,
	first_kmsg_seq INT NOT NULL,
	first_time INT NOT NULL,
	count INT NOT NULL,
	matched_feature_id TEXT,
	received INT NOT NULL,
	PRIMARY KEY (host_id, boot_id, text)
) WITHOUT ROWID;
CREATE INDEX unknown_matched ON unknown_deprecations(matched_feature_id);

-- BPF usage counters, cumulative per (host, boot, key); ingest keeps MAX.
CREATE TABLE usage (
	host_id TEXT NOT NULL,
	boot_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	file TEXT NOT NULL,
	op TEXT NOT NULL,
	cgroup TEXT NOT NULL,
	comm TEXT NOT NULL,
	uid INT NOT NULL,
	writer_cgroup TEXT NOT NULL,
	container TEXT NOT NULL DEFAULT '',
	last_pid INT NOT NULL DEFAULT 0,
	count INT NOT NULL,
	failed INT NOT NULL DEFAULT 0,
	condition_met INT NOT NULL DEFAULT 0,
	first_seen INT NOT NULL,
	last_seen INT NOT NULL,
	PRIMARY KEY (host_id, boot_id, feature_id, file, op, cgroup, comm, uid,
		     writer_cgroup)
) WITHOUT ROWID;
CREATE INDEX usage_feature_seen ON usage(feature_id, last_seen);

-- Latest census: non-default v1 memory knobs per host.
CREATE TABLE census_knobs (
	host_id TEXT NOT NULL,
	feature_id TEXT NOT NULL,
	file TEXT NOT NULL,
	cgroup TEXT NOT NULL,
	value TEXT NOT NULL,
	time INT NOT NULL,
	PRIMARY KEY (host_id, file, cgroup)
) WITHOUT ROWID;
CREATE INDEX census_knobs_feature ON census_knobs(feature_id);

-- Rollup maintained at ingest (warnings, usage, census knobs): one row per
-- (feature, host) so "hosts using X in the last N days" is an index range
-- count on feature_host_last.
CREATE TABLE feature_host (
	feature_id TEXT NOT NULL,
	host_id TEXT NOT NULL,
	first_used INT NOT NULL,
	last_used INT NOT NULL,
	uses INT NOT NULL DEFAULT 0,
	PRIMARY KEY (feature_id, host_id)
) WITHOUT ROWID;
CREATE INDEX feature_host_last ON feature_host(feature_id, last_used);

-- Server-side key/value state (catalog seed hash, ...).
CREATE TABLE server_meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
