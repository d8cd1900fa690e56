package io.slipstream.server.control;

import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.Executor;
import java.util.Map;

/**
 * What the server's executor refuses of a job ({@link Executor#refusals}: by field below {@code spec}) and of a run's
 * labels ({@link Executor#labelRefusals}: by label key), asked when a job is applied and when a run is created.
 */
public interface ExecutorRefusals {
    Map<String, String> ofJob(JobSpec job);

    /** @param maxRuntime the longest the run may run (its job's, else the installation's) */
    Map<String, String> ofLabels(Map<String, String> labels, java.time.Duration maxRuntime);

    /** Refuses nothing. */
    ExecutorRefusals NONE = new ExecutorRefusals() {
        @Override
        public Map<String, String> ofJob(JobSpec job) {
            return Map.of();
        }

        @Override
        public Map<String, String> ofLabels(Map<String, String> labels, java.time.Duration maxRuntime) {
            return Map.of();
        }
    };

    static ExecutorRefusals of(Executor executor) {
        return new ExecutorRefusals() {
            @Override
            public Map<String, String> ofJob(JobSpec job) {
                return executor.refusals(job);
            }

            @Override
            public Map<String, String> ofLabels(Map<String, String> labels, java.time.Duration maxRuntime) {
                return executor.labelRefusals(labels, maxRuntime);
            }
        };
    }
}
