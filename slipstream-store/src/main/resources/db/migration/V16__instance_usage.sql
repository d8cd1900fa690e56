-- What the kernel counted for an instance that ended, where its executor measures it (the local executor, from the
-- instance's cgroup): its memory peak in bytes and its CPU time in nanoseconds. NULL: not measured, as for every
-- instance stored before this version.
ALTER TABLE instances ADD COLUMN memory_peak_bytes BIGINT;
ALTER TABLE instances ADD COLUMN cpu_nanos BIGINT;

-- The CPU time measured of the instances that ended in each hour and day (milliseconds of CPU, as the kernel counted
-- them), beside the core-time the runs held (cpu_ms, millicore-milliseconds): what the usage report shows as used.
ALTER TABLE usage_rollups ADD COLUMN used_cpu_ms BIGINT NOT NULL DEFAULT 0;
