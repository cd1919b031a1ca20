-- The PostgreSQL schema of the store (server/store/store_pg.c): the SQLite
-- schema of migrations/0001..0005 as it stands after 0005, written once in
-- PostgreSQL's idiom, plus what several nodes on one database need (job
-- leases, shared job events, the nodes table). See migrations/postgres/README.md
-- for how the steps are applied. The version table, schema_migrations, is
-- the store's own (it exists before the first step runs), not a step's.
--
-- Tables are created unqualified: they land in the connection's current
-- schema (search_path), so one database can hold several stores (the tests
-- give each test file a schema of its own).
--
-- Times are Unix milliseconds (bigint), as the store's interface reports
-- them, taken from the DATABASE's clock, never a node's: every default and
-- every statement of the store uses
-- floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint.
--
-- Documents and params are `text`, never jsonb: jsonb would reorder keys and
-- drop whitespace, and the service's strong ETags need the stored bytes back
-- unchanged.
--
-- Paging: jobs, levels and resources are listed newest first with a
-- `seq < before` cursor; `seq` is an identity column, so values are handed
-- out in insertion order and never reused, not even after a delete.

-- One generation job. `state` is the job_state name; `seed` is the uint64
-- seed stored bit for bit as a signed 64-bit integer. `level_ids` is a JSON
-- array text of the level ids a succeeded job found.
--
-- For the multi-node scheduler: `attempt` counts the claims of the job (the
-- fencing token a node's writes are checked against), `lease_owner` and
-- `lease_until` (Unix ms) name the node running it and until when its lease
-- holds, `cancel_requested` asks that node to stop it.
CREATE TABLE jobs (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id text NOT NULL UNIQUE,
	kind text NOT NULL,
	params text NOT NULL,
	seed bigint NOT NULL,
	state text NOT NULL
		CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	created_ms bigint NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
	started_ms bigint,
	finished_ms bigint,
	generation integer NOT NULL DEFAULT 0,
	generations integer NOT NULL DEFAULT 0,
	best double precision,
	error text,
	level_ids text,
	attempt integer NOT NULL DEFAULT 0,
	lease_owner text,
	lease_until bigint,
	cancel_requested boolean NOT NULL DEFAULT false
);

-- Listing by state or by kind, newest first, and the start-up scan of
-- queued and running jobs (oldest first): each index ends in seq. The two
-- partial indexes serve the scheduler: the oldest queued job to claim, the
-- running jobs whose lease has expired.
CREATE INDEX jobs_state_seq ON jobs (state, seq);
CREATE INDEX jobs_kind_seq ON jobs (kind, seq);
CREATE INDEX jobs_queued ON jobs (seq) WHERE state = 'queued';
CREATE INDEX jobs_lease ON jobs (lease_until) WHERE state = 'running';

-- Idempotency-Key of POST /v1/jobs: the key, the hex SHA-256 of the request
-- it first came with, and the job that request created.
CREATE TABLE idempotency_keys (
	key text PRIMARY KEY,
	request_hash text NOT NULL,
	job_id text NOT NULL REFERENCES jobs (id),
	created_ms bigint NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
);

-- Levels are immutable: `id` is a content hash of kind + puzzle, and the
-- first document stored under an id is the one served for ever after.
CREATE TABLE levels (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id text NOT NULL UNIQUE,
	kind text NOT NULL,
	doc text NOT NULL,
	created_ms bigint NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
);

CREATE INDEX levels_kind_seq ON levels (kind, seq);

-- The values clients filter levels on, one row per (level, name): a text
-- value, a number, or both (a number written as text, so that a text filter
-- and a min filter each find it). The two indexes serve `name = text` and
-- `name >= min` filters and carry level_id, so a filter is answered from the
-- index alone.
CREATE TABLE level_tags (
	level_id text NOT NULL REFERENCES levels (id),
	name text NOT NULL,
	text text,
	num double precision,
	PRIMARY KEY (level_id, name)
);

CREATE INDEX level_tags_name_text ON level_tags (name, text, level_id);
CREATE INDEX level_tags_name_num ON level_tags (name, num, level_id);

-- The exact evaluation of one sequence on one lattice, as its JSON text.
-- An evaluation is a pure function of its key, so an entry never goes stale.
CREATE TABLE evaluations (
	lattice text NOT NULL,
	sequence text NOT NULL,
	doc text NOT NULL,
	created_ms bigint NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
	PRIMARY KEY (lattice, sequence)
);

-- Uploaded resources of every type, keyed by (type, name) (racetrack's
-- experience models are type 'px_model'). The body is kept exactly as sent
-- and a name is taken for good within its type. `summary` is the kind's
-- JSON summary of the upload, so a listing reads no body.
CREATE TABLE resources (
	seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	type text NOT NULL,
	name text NOT NULL,
	format text NOT NULL,
	body text NOT NULL,
	summary text,
	created_ms bigint NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
	UNIQUE (type, name)
);

CREATE INDEX resources_type_seq ON resources (type, seq);

-- The progress events of a job (the SSE stream of GET /v1/jobs/{id}/events),
-- so that a node serves the history of a job another node runs. `id` is the
-- event's id within its job (Last-Event-ID).
CREATE TABLE job_events (
	job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	id integer NOT NULL,
	data text NOT NULL,
	PRIMARY KEY (job_id, id)
);

-- The nodes that use this database, for observability only: each writes its
-- row at start and refreshes seen_at (Unix ms) while it runs.
CREATE TABLE nodes (
	name text PRIMARY KEY,
	started_at bigint NOT NULL,
	seen_at bigint NOT NULL,
	version text NOT NULL
);
