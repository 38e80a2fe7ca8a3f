-- twilight server schema, migration 20: slow answers kept in the
-- database (server/api/answer_cache.c), so that a restarted server serves
-- the answers it had computed (a feature's detail, the export's data,
-- readiness on a large fleet) at once, with their age, instead of
-- computing each again for its first request.
--
-- key: SHA-256 (hex) of the server's version, the answer's kind and its
-- parameters; computed: when its computation started and cost: how long
-- it took (unix ms, ms); touched: the last admin change it cannot see
-- (unix ms; an answer computed before it is computed again first); lease:
-- until when one server computes it again (unix ms; 0: nobody), so that
-- servers sharing one database do not all refresh it; body: its JSON.
-- At most 64 rows: the trigger deletes the least recently computed.
-- Derived data: migrate-store does not copy it, and deleting every row
-- loses nothing but time.
CREATE TABLE kept_answers (
	key TEXT PRIMARY KEY,
	computed INT NOT NULL,
	cost INT NOT NULL,
	touched INT NOT NULL DEFAULT 0,
	lease INT NOT NULL DEFAULT 0,
	body TEXT NOT NULL
);

CREATE TRIGGER kept_answers_cap AFTER INSERT ON kept_answers
BEGIN
	DELETE FROM kept_answers WHERE key NOT IN
		(SELECT key FROM kept_answers ORDER BY computed DESC LIMIT 64);
END;
