-- 0008_evaluation_lru.sql - the evaluation cache gets a bound, least
-- recently used first out (store.h, store_limit_evaluations(); docs/RELIABILITY.md,
-- issue 18): anonymous reads of GET /v1/evaluations/{lattice}/{sequence}
-- used to add a row for every new sequence without end.
--
-- Applied by server/store/store_sqlite_open.c inside one BEGIN IMMEDIATE
-- transaction that also sets PRAGMA user_version = 8 (see
-- migrations/README.md); this file holds schema statements only.
--
-- `used` is the tick of the cache's logical clock at which the entry was
-- last put or touched; the index evaluations_used gives the least recently
-- used first. Entries stored before keep their order of first storage (their
-- rowid). `evaluation_cache` is one row (one = 1): the entries the cache
-- holds (so a put never counts the table), the entries evicted so far, and
-- the clock's last tick. Every row of version 7 is kept.
ALTER TABLE evaluations ADD COLUMN used INTEGER NOT NULL DEFAULT 0;
UPDATE evaluations SET used = rowid;
CREATE INDEX evaluations_used ON evaluations (used);
CREATE TABLE evaluation_cache (
	one INTEGER PRIMARY KEY CHECK (one = 1),
	entries INTEGER NOT NULL,
	evictions INTEGER NOT NULL,
	clock INTEGER NOT NULL
);
INSERT INTO evaluation_cache (one, entries, evictions, clock)
	SELECT 1, count(*), 0, coalesce(max(used), 0) FROM evaluations;
