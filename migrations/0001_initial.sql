-- 0001_initial.sql - the first schema: jobs, idempotency keys, levels and
-- their filter tags, the lattice evaluation cache.
--
-- Applied by server/store_sqlite.c inside one BEGIN IMMEDIATE transaction
-- that also sets PRAGMA user_version = 1 (see migrations/README.md); this
-- file holds schema statements only.
--
-- Times are Unix milliseconds (INTEGER), NULL where the event has not
-- happened yet.
--
-- Paging: jobs and levels are listed newest first with a `seq < before`
-- cursor. `seq` is the table's INTEGER PRIMARY KEY (the rowid itself) with
-- AUTOINCREMENT, so it grows with every insert and is never handed out
-- twice, not even after the newest row is deleted, and VACUUM cannot
-- renumber it; a cursor a client holds stays meaningful. The public `id`
-- is therefore a UNIQUE NOT NULL key rather than the PRIMARY KEY (SQLite
-- only autoincrements an INTEGER PRIMARY KEY); it is just as much a key,
-- and foreign keys refer to it.

-- One generation job. `state` is the job_state name; `seed` is the uint64
-- seed stored bit for bit as a signed 64-bit integer (seeds of 2^63 and up
-- read as negative numbers in SQL, and back as the same uint64 in C).
-- `level_ids` is a JSON array text of the level ids a succeeded job found.
CREATE TABLE jobs (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	kind TEXT NOT NULL,
	params TEXT NOT NULL,
	seed INTEGER NOT NULL,
	state TEXT NOT NULL
		CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	created_ms INTEGER NOT NULL,
	started_ms INTEGER,
	finished_ms INTEGER,
	generation INTEGER NOT NULL DEFAULT 0,
	generations INTEGER NOT NULL DEFAULT 0,
	best REAL,
	error TEXT,
	level_ids TEXT
);

-- Listing by state or by kind, newest first, and the start-up scan of
-- queued and running jobs (oldest first): each index ends in seq, so the
-- scan walks it in either direction without sorting.
CREATE INDEX jobs_state_seq ON jobs (state, seq);
CREATE INDEX jobs_kind_seq ON jobs (kind, seq);

-- Idempotency-Key of POST /v1/jobs: the key, the hex SHA-256 of the request
-- it first came with, and the job that request created.
CREATE TABLE idempotency_keys (
	key TEXT PRIMARY KEY,
	request_hash TEXT NOT NULL,
	job_id TEXT NOT NULL REFERENCES jobs (id),
	created_ms INTEGER NOT NULL
);

-- Levels are immutable: `id` is a content hash of kind + puzzle, and the
-- first document stored under an id is the one served for ever after.
CREATE TABLE levels (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	kind TEXT NOT NULL,
	doc TEXT NOT NULL,
	created_ms INTEGER NOT NULL
);

CREATE INDEX levels_kind_seq ON levels (kind, seq);

-- The values clients filter levels on, one row per (level, name): a text
-- value (`text`, with `num` NULL) or a number (`num`, with `text` NULL).
-- The two indexes serve `name = text` and `name >= min` filters and carry
-- level_id, so a filter is answered from the index alone.
CREATE TABLE level_tags (
	level_id TEXT NOT NULL REFERENCES levels (id),
	name TEXT NOT NULL,
	text TEXT,
	num REAL,
	PRIMARY KEY (level_id, name)
);

CREATE INDEX level_tags_name_text ON level_tags (name, text, level_id);
CREATE INDEX level_tags_name_num ON level_tags (name, num, level_id);

-- The exact evaluation of one sequence on one lattice, as its JSON text.
-- An evaluation is a pure function of its key, so an entry never goes stale.
CREATE TABLE evaluations (
	lattice TEXT NOT NULL,
	sequence TEXT NOT NULL,
	doc TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (lattice, sequence)
);
