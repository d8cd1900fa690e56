package io.slipstream.server.control;

import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.Executor;
import java.time.Duration;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What the server's executor refuses of a job ({@link Executor#refusals}: by field below {@code spec}), with what the
 * server itself cannot give ({@link #and}), and of a run's labels ({@link Executor#labelRefusals}: by label key), asked
 * when a job is applied and when a run is created.
 */
public record ExecutorRefusals(Function<JobSpec, Map<String, String>> jobRefusals,
                               BiFunction<Map<String, String>, Duration, Map<String, String>> labelRefusals) {
    /** Refuses nothing. */
    public static final ExecutorRefusals NONE = new ExecutorRefusals(job -> Map.of(), (labels, maxRuntime) -> Map.of());

    public static ExecutorRefusals of(Executor executor) {
        return new ExecutorRefusals(executor::refusals, executor::labelRefusals);
    }

    /** These refusals, and {@code more} of a job (the server's own: identity tokens it cannot sign). */
    public ExecutorRefusals and(Function<JobSpec, Map<String, String>> more) {
        return new ExecutorRefusals(job -> {
            Map<String, String> all = new java.util.LinkedHashMap<>(jobRefusals.apply(job));
            more.apply(job).forEach(all::putIfAbsent);
            return all;
        }, labelRefusals);
    }

    public Map<String, String> ofJob(JobSpec job) {
        return jobRefusals.apply(job);
    }

    /** @param maxRuntime the longest the run may run (its job's, else the installation's) */
    public Map<String, String> ofLabels(Map<String, String> labels, Duration maxRuntime) {
        return labelRefusals.apply(labels, maxRuntime);
    }
}
