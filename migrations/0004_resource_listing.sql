-- Listing uploaded resources (GET /v1/<collection>, newest first, paged
-- like jobs and levels): each row gets `seq`, an INTEGER PRIMARY KEY with
-- AUTOINCREMENT (never handed out twice, never renumbered by VACUUM, so a
-- page token stays meaningful; see 0001), and `summary`, the JSON text the
-- kind's validate() gave at upload (what POST answered, without name and
-- format), so that a listing reads no body. Rows stored before this step
-- have no summary; the service computes theirs from the body when listed.
-- The table is rebuilt (SQLite cannot add a primary key), keeping every
-- row, its name within its type unique, and the upload order.
CREATE TABLE new_resources (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	type TEXT NOT NULL,
	name TEXT NOT NULL,
	format TEXT NOT NULL,
	body TEXT NOT NULL,
	summary TEXT,
	created INTEGER NOT NULL,
	UNIQUE (type, name)
);
INSERT INTO new_resources (type, name, format, body, summary, created)
	SELECT type, name, format, body, NULL, created FROM resources ORDER BY created, rowid;
DROP TABLE resources;
ALTER TABLE new_resources RENAME TO resources;
CREATE INDEX resources_type_seq ON resources (type, seq);
