-- Why an instance ended, where its executor knew more than the exit code (an EndCause name, e.g. OOMKilled), as data
-- beside the reason's text, so that restart rules (faultTolerance.retryOn.reasons) match it. NULL: no cause known, as
-- for every instance stored before this version.
ALTER TABLE instances ADD COLUMN end_cause VARCHAR(32);
