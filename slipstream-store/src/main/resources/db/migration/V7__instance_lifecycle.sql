-- What the run lifecycle needs to know of an instance across cycles and restarts, as data rather than text:
-- when it was told to stop (sent once, again after a restart), why its startup probe failed, why it could not launch.
ALTER TABLE instances ADD COLUMN stop_requested_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE instances ADD COLUMN probe_failure VARCHAR(1024);
ALTER TABLE instances ADD COLUMN launch_failure VARCHAR(32);

-- Instances stored before: their reason said it.
UPDATE instances SET probe_failure = SUBSTRING(reason, 21) WHERE reason LIKE 'StartupProbeFailed: %';
UPDATE instances SET launch_failure = 'SECRETS_UNAVAILABLE' WHERE state = 'FAILED' AND reason LIKE 'SecretUnavailable:%';
UPDATE instances SET launch_failure = 'EXECUTOR_FAILED' WHERE state = 'FAILED' AND reason LIKE 'LaunchFailed:%';

-- A queued run whose preempted victims are gone is placed first (the capacity they gave back is its), until it is
-- admitted: kept with the run, so that neither a restart of the server nor the victims' own fate takes that away.
ALTER TABLE runs ADD COLUMN capacity_reclaimed BOOLEAN DEFAULT FALSE NOT NULL;
