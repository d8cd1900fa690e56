-- Where a run's resources come from, which run a preempted run makes room for, and how often it was preempted.
ALTER TABLE runs ADD COLUMN real_time_resources VARCHAR(16);
ALTER TABLE runs ADD COLUMN reclaim_for VARCHAR(80);
ALTER TABLE runs ADD COLUMN preemptions INTEGER DEFAULT 0 NOT NULL;

-- RESOURCE_PREEMPTED is longer than the states there were.
ALTER TABLE instances ALTER COLUMN state SET DATA TYPE VARCHAR(32);
ALTER TABLE run_events ALTER COLUMN state SET DATA TYPE VARCHAR(32);
