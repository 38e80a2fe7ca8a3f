-- twilight server schema on PostgreSQL, migration 5: room on each page
-- for the ingest's updates of usage and feature_host rows.
--
-- Every report updates its usage rows (counts, times, values) and its
-- feature_host rows (uses, last use), and none of those columns is in
-- an index. PostgreSQL writes a new version of a row per update; when
-- the new version fits on the row's page, the update is "HOT": no
-- index gets a new entry. With the default fill factor (100) pages are
-- full from the start, so each such update also inserted into all of
-- the table's indexes (usage: three, feature_host: three) and left dead
-- entries that later scans step over. Applies to pages written from now
-- on (VACUUM FULL rewrites older ones).
ALTER TABLE usage SET (fillfactor = 70);
ALTER TABLE feature_host SET (fillfactor = 50);
