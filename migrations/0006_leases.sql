-- 0006_leases.sql - job leases, claims and fencing (store.h, store_claim_job()),
-- the same columns as PostgreSQL's jobs table (migrations/postgres/), so that
-- both back ends keep one contract.
--
-- Applied by server/store/store_sqlite_open.c inside one BEGIN IMMEDIATE
-- transaction that also sets PRAGMA user_version = 6 (see
-- migrations/README.md); this file holds schema statements only. ADD COLUMN
-- with a constant default rewrites nothing: the jobs already stored read
-- attempt 0, lost 0, no lease and no cancel pending.
--
-- `attempt` counts the claims of a job (the fencing token a node's writes are
-- checked against), `lost` how often its lease expired and it was rescued,
-- `lease_owner` and `lease_until` (Unix ms) name the node running it and until
-- when its lease holds (NULL when none is held), `cancel_requested` (0 or 1)
-- asks that node to stop it.
ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE jobs ADD COLUMN lease_until INTEGER;
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;

-- The two partial indexes a scheduler uses: the oldest queued job to claim
-- (seq order), the running jobs whose lease has expired (lease_until order).
CREATE INDEX jobs_queued ON jobs (seq) WHERE state = 'queued';
CREATE INDEX jobs_lease ON jobs (lease_until) WHERE state = 'running';
