-- 0003_job_events_bigint.sql - job_events.id becomes bigint: an event's id
-- (store.h, store_event.id, the Last-Event-ID of GET /v1/jobs/{id}/events) is
-- a 64-bit integer in the store's interface and in SQLite's table
-- (migrations/0007_job_events.sql), and 0001 made it `integer`, which would
-- refuse an id past 2^31 - 1 on PostgreSQL alone. The primary key
-- (job_id, id) follows the column. The table is rewritten under an ACCESS
-- EXCLUSIVE lock, which costs nothing here: the store had no call that wrote
-- to it before this step, so it is empty.
ALTER TABLE job_events ALTER COLUMN id TYPE bigint;
