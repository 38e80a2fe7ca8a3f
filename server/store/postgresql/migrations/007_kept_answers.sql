-- twilight server schema on PostgreSQL, migration 7: slow answers kept
-- in the database, as SQLite's migration 020 keeps them; here they are
-- also shared by every server on the database (server/api/
-- answer_cache.c): one server computes an answer, the others serve it,
-- and a lease lets one of them, not each, compute it again.
--
-- key: SHA-256 (hex) of the server's version, the answer's kind and its
-- parameters; computed, touched, lease: unix ms (when its computation
-- started, the last admin change it cannot see, until when a server's
-- refresh of it holds); cost: ms; body: its JSON. At most 64 rows
-- (store_pg_kept.c deletes the least recently computed). Not copied by
-- migrate-store.
CREATE TABLE kept_answers (
	key TEXT PRIMARY KEY,
	computed BIGINT NOT NULL,
	cost BIGINT NOT NULL,
	touched BIGINT NOT NULL DEFAULT 0,
	lease BIGINT NOT NULL DEFAULT 0,
	body TEXT NOT NULL
);
