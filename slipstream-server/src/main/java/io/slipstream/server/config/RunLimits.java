package io.slipstream.server.config;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.JobSpec;
import java.time.Duration;

/**
 * Limits an admin sets for runs.
 *
 * @param gracePeriod    between SIGTERM and SIGKILL when an instance is stopped; a job's default preemption grace
 * @param maxGracePeriod the longest preemption grace period a job may ask for
 * @param maxRuntime     the default and the longest {@code maxRuntime} of a job (at most 30 days)
 * @param retention      how long finished runs and their logs are kept
 */
public record RunLimits(Duration gracePeriod, Duration maxGracePeriod, Duration maxRuntime, Duration retention) {
    public static final RunLimits DEFAULTS = new RunLimits(Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofDays(30), Duration.ofDays(30));

    public RunLimits {
        requireNonNull(gracePeriod, "gracePeriod is null");
        requireNonNull(maxGracePeriod, "maxGracePeriod is null");
        requireNonNull(maxRuntime, "maxRuntime is null");
        requireNonNull(retention, "retention is null");
    }

    /** Adds a problem for every grace period and runtime of the job that is longer than these limits allow. */
    public void check(JobSpec job, String prefix, Problems problems) {
        if (job.preemptionGracePeriod() != null && job.preemptionGracePeriod().compareTo(maxGracePeriod) > 0) {
            problems.add(prefix + "preemptionGracePeriod", "must be at most " + Durations.format(maxGracePeriod) + " (this installation's maximum)");
        }
        if (job.maxRuntime() != null && job.maxRuntime().compareTo(maxRuntime) > 0) {
            problems.add(prefix + "maxRuntime", "must be at most " + Durations.format(maxRuntime) + " (this installation's maximum)");
        }
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            Duration groupLimit = job.nodeGroups().get(i).maxRuntime();
            if (groupLimit != null && groupLimit.compareTo(maxRuntime) > 0) {
                problems.add(prefix + "nodeGroups[" + i + "].maxRuntime", "must be at most " + Durations.format(maxRuntime)
                        + " (this installation's maximum)");
            }
        }
    }

    /** How long a run of the job may run: its own limit, never more than the installation's. */
    public Duration maxRuntimeOf(JobSpec job) {
        return job.maxRuntime() == null || job.maxRuntime().compareTo(maxRuntime) > 0 ? maxRuntime : job.maxRuntime();
    }

    public RunLimits withGracePeriod(Duration newGracePeriod) {
        return new RunLimits(newGracePeriod, maxGracePeriod, maxRuntime, retention);
    }

    public RunLimits withRetention(Duration newRetention) {
        return new RunLimits(gracePeriod, maxGracePeriod, maxRuntime, newRetention);
    }
}
