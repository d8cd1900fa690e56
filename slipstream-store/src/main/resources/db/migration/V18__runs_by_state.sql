-- The runs that hold resources (STARTING, RUNNING, TERMINATING) are found by this index, without reading the rows of
-- the queued ones: the control loop reads their instances each cycle, and a cluster may have 100,000 runs queued.
CREATE INDEX runs_by_state ON runs (state);
