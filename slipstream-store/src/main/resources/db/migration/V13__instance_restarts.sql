-- How often an instance was restarted in place within its attempt (faultTolerance.runType: Async): the same rank, on
-- the same node, started again while its peers ran on. 0 for every instance before this version (only Sync existed).
ALTER TABLE instances ADD COLUMN restarts INT NOT NULL DEFAULT 0;
