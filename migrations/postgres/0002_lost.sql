-- 0002_lost.sql - how often a job lost its node (store.h,
-- store_rescue_expired()): each rescue of an expired lease counts one, and a
-- job that reaches the scheduler's limit fails instead of being queued again.
-- 0001 already holds the other lease columns (attempt, lease_owner,
-- lease_until, cancel_requested) and the two partial indexes the claim
-- (jobs_queued: seq WHERE state = 'queued') and the rescue (jobs_lease:
-- lease_until WHERE state = 'running') walk. Adding a column with a constant
-- default rewrites no row (PostgreSQL 11 and later).
ALTER TABLE jobs ADD COLUMN lost integer NOT NULL DEFAULT 0;
