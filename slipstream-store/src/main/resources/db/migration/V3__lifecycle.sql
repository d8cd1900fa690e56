-- Where a run came from (overrides, schedule time, idempotency key) and how long it has run.
ALTER TABLE runs ADD COLUMN overrides TEXT;
ALTER TABLE runs ADD COLUMN schedule_time TIMESTAMP WITH TIME ZONE;
ALTER TABLE runs ADD COLUMN idempotency_key VARCHAR(256);
ALTER TABLE runs ADD COLUMN attempt_started_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE runs ADD COLUMN prior_runtime_millis BIGINT DEFAULT 0 NOT NULL;
-- Runs holding resources when this version is installed count their runtime from now on (their attempt's start is unknown).
UPDATE runs SET attempt_started_at = CURRENT_TIMESTAMP WHERE state IN ('STARTING', 'RUNNING', 'TERMINATING');
-- At most one run per key and workspace; NULLs (no key) are distinct in both H2 and PostgreSQL.
CREATE UNIQUE INDEX runs_by_idempotency_key ON runs (workspace, idempotency_key);
CREATE INDEX runs_by_finished ON runs (active, finished_at);

-- The last due time each scheduled job fired for: moved forward with compare-and-set, in the same transaction as
-- the run it creates, so a due time fires exactly once even across a crash at that moment.
CREATE TABLE schedule_states (
    workspace  VARCHAR(63) NOT NULL,
    job        VARCHAR(63) NOT NULL,
    last_due   TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (workspace, job)
);
