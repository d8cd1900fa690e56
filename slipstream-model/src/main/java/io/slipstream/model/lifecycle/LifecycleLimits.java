package io.slipstream.model.lifecycle;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.JobSpec;
import java.time.Duration;

/**
 * What the installation sets for every run's life.
 *
 * @param gracePeriod between the stop signal and the kill, unless a job's preemption grace period says otherwise
 * @param maxRuntime  the default and the longest {@code maxRuntime} of a job
 */
public record LifecycleLimits(Duration gracePeriod, Duration maxRuntime) {
    public LifecycleLimits {
        requireNonNull(gracePeriod, "gracePeriod is null");
        requireNonNull(maxRuntime, "maxRuntime is null");
    }

    /** How long a run of the job may run: its own limit, never more than the installation's. */
    public Duration maxRuntimeOf(JobSpec job) {
        return job.maxRuntime() == null || job.maxRuntime().compareTo(maxRuntime) > 0 ? maxRuntime : job.maxRuntime();
    }
}
