-- 0004_evaluation_lru.sql - the evaluation cache gets a bound, least
-- recently used first out (store.h, store_limit_evaluations(); SQLite's
-- migrations/0008_evaluation_lru.sql is the same step): anonymous reads of
-- GET /v1/evaluations/{lattice}/{sequence} used to add a row for every new
-- sequence without end.
--
-- `used` is the tick of the cache's logical clock at which the entry was
-- last put or touched (a database clock, so every node orders alike); the
-- index evaluations_used gives the least recently used first. Entries
-- stored before are ranked by when they were stored. `evaluation_cache` is
-- one row (one = 1): the entries held, the entries evicted so far, and the
-- clock's last tick. Every call that writes the cache updates that row first,
-- so such calls from several nodes take their turns on its lock and never
-- deadlock on the entries' rows.
ALTER TABLE evaluations ADD COLUMN used bigint NOT NULL DEFAULT 0;
UPDATE evaluations AS e SET used = o.n
	FROM (SELECT lattice, sequence,
		     row_number() OVER (ORDER BY created_ms, lattice, sequence) AS n
		FROM evaluations) AS o
	WHERE e.lattice = o.lattice AND e.sequence = o.sequence;
CREATE INDEX evaluations_used ON evaluations (used);
CREATE TABLE evaluation_cache (
	one integer PRIMARY KEY CHECK (one = 1),
	entries bigint NOT NULL,
	evictions bigint NOT NULL,
	clock bigint NOT NULL
);
INSERT INTO evaluation_cache (one, entries, evictions, clock)
	SELECT 1, count(*), 0, coalesce(max(used), 0) FROM evaluations;
