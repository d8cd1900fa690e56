-- Restarts by cause, the error streak, backoff, the last reported progress and checkpoint, and the work lost by
-- stops (JSON, see FaultState): read and written with the run, under its version.
ALTER TABLE runs ADD COLUMN faults TEXT;

-- Nodes an administrator declared down: nothing is placed on them, and what ran there is lost (NODE_LOST).
CREATE TABLE nodes_down (
    node   VARCHAR(253)             NOT NULL PRIMARY KEY,
    reason VARCHAR(1024)            NOT NULL,
    since  TIMESTAMP WITH TIME ZONE NOT NULL
);
