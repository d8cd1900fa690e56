-- Runs' labels (their job's at submit, with those given at submit on top). The JSON on the run is read back with it;
-- one row per label lets a label selector be applied inside the runs query (EXISTS / NOT EXISTS), so that a page of a
-- selected list holds its limit of runs and the cursor stays right. Runs stored before have none (NULL: no labels).
ALTER TABLE runs ADD COLUMN labels TEXT;

CREATE TABLE run_labels (
    run_id      VARCHAR(80)  NOT NULL,
    label_key   VARCHAR(317) NOT NULL,
    label_value VARCHAR(63)  NOT NULL,
    PRIMARY KEY (run_id, label_key)
);
-- The primary key answers "has this run that label?" per run; this index finds the runs of a rare label (and counts
-- them). It leaves run_id out on purpose: with it, H2 took this index for the per-run probe and scanned every run's
-- label of that key for each run.
CREATE INDEX run_labels_by_label ON run_labels (label_key, label_value);
