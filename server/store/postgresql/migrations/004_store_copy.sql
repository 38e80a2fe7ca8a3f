-- twilight server schema on PostgreSQL, migration 4: the progress of
-- "twilight-server migrate-store", which copies an SQLite store into this
-- database (store/migrate_store.c, store/postgresql/README.md).
--
-- One row per copied table, written in the same transaction as the rows
-- of each chunk, so a copy that stops (killed, connection lost) resumes
-- after the last chunk that committed and never copies a row twice.
-- source: the SQLite file the copy reads (a run from another file is
-- refused); cursor: the primary key of the last row copied, as a JSON
-- array (NULL: none yet); done: the table's last chunk committed.
-- Empty on a database no copy wrote to; the server never reads it.
CREATE TABLE store_copy (
	tbl TEXT PRIMARY KEY,
	source TEXT NOT NULL,
	cursor TEXT,
	rows BIGINT NOT NULL DEFAULT 0,
	done BOOLEAN NOT NULL DEFAULT false
);
