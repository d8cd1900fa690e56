package io.slipstream.server.control;

import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.Executor;
import java.time.Duration;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What the server's executor refuses of a job ({@link Executor#refusals}: by field below {@code spec}) and of a run's
 * labels ({@link Executor#labelRefusals}: by label key), asked when a job is applied and when a run is created.
 */
public record ExecutorRefusals(Function<JobSpec, Map<String, String>> jobRefusals,
                               BiFunction<Map<String, String>, Duration, Map<String, String>> labelRefusals) {
    /** Refuses nothing. */
    public static final ExecutorRefusals NONE = new ExecutorRefusals(job -> Map.of(), (labels, maxRuntime) -> Map.of());

    public static ExecutorRefusals of(Executor executor) {
        return new ExecutorRefusals(executor::refusals, executor::labelRefusals);
    }

    public Map<String, String> ofJob(JobSpec job) {
        return jobRefusals.apply(job);
    }

    /** @param maxRuntime the longest the run may run (its job's, else the installation's) */
    public Map<String, String> ofLabels(Map<String, String> labels, Duration maxRuntime) {
        return labelRefusals.apply(labels, maxRuntime);
    }
}
