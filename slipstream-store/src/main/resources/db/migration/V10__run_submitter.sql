-- Who submitted each run (the user of the token), for accounting by user. Runs stored before keep NULL, as do runs a
-- schedule started.
ALTER TABLE runs ADD COLUMN submitted_by VARCHAR(256);
