-- 0007_job_events.sql - the progress events of a job (store.h,
-- store_append_job_events(), store_job_events()), the table PostgreSQL has
-- had since its 0001: the node running a job appends them and a watcher of
-- GET /v1/jobs/{id}/events reads them back after its Last-Event-ID.
--
-- Applied by server/store/store_sqlite_open.c inside one BEGIN IMMEDIATE
-- transaction that also sets PRAGMA user_version = 7 (see
-- migrations/README.md); this file holds schema statements only. It creates
-- a table and touches no row: a database of version 6 keeps everything.
--
-- `id` is the event's id within its job (the generation number, Last-Event-ID)
-- and `data` the event's JSON text, kept byte for byte; an id stored before
-- keeps its first data. The primary key (job_id, id) is the order a read
-- walks. WITHOUT ROWID: the rows are small (a progress event is about 150
-- bytes) and always reached by that key, so the table is that one b-tree.
CREATE TABLE job_events (
	job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	id INTEGER NOT NULL,
	data TEXT NOT NULL,
	PRIMARY KEY (job_id, id)
) WITHOUT ROWID;
