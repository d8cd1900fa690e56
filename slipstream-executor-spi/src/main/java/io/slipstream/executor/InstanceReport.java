package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceUsage;
import java.time.Instant;
import java.util.Map;

/** What an executor tells the control plane about an instance. */
public sealed interface InstanceReport permits InstanceReport.Running, InstanceReport.Exited, InstanceReport.Lost,
        InstanceReport.Ready, InstanceReport.ProbeFailed {
    InstanceId id();

    Instant at();

    /** The instance is running; {@code handle} finds it again after a restart. */
    record Running(InstanceId id, Map<String, String> handle, Instant at) implements InstanceReport {
        public Running {
            requireNonNull(id, "id is null");
            handle = Map.copyOf(handle);
        }
    }

    /**
     * The instance's main process ended with {@code exitCode} (128 + n when killed by signal n) and every
     * process of it is confirmed gone. {@code terminated}: it ended after {@link Executor#terminate} was called.
     * {@code cause}: why it ended, where the executor knows ({@link EndCause#OOMKilled}: its memory limit), or
     * {@code null}; restart rules match it ({@code retryOn.reasons}). {@code reason}: what the executor can say beyond
     * the code and the cause (an image that cannot be pulled, the kernel's own words on a cause), or {@code null}.
     * {@code usage}: what the kernel counted for it (memory peak, CPU time) where the executor measures it, or
     * {@code null}.
     */
    record Exited(InstanceId id, int exitCode, boolean terminated, EndCause cause, String reason, InstanceUsage usage, Instant at)
            implements InstanceReport {
        public Exited {
            requireNonNull(id, "id is null");
        }

        /** An end whose usage was not measured. */
        public Exited(InstanceId id, int exitCode, boolean terminated, EndCause cause, String reason, Instant at) {
            this(id, exitCode, terminated, cause, reason, null, at);
        }

        /** An end without a known cause: {@code reason} is the executor's text, or {@code null}. */
        public Exited(InstanceId id, int exitCode, boolean terminated, String reason, Instant at) {
            this(id, exitCode, terminated, null, reason, null, at);
        }

        public Exited(InstanceId id, int exitCode, boolean terminated, Instant at) {
            this(id, exitCode, terminated, null, null, null, at);
        }
    }

    /**
     * The instance is gone and its exit code cannot be known (its node restarted, its supervisor was killed).
     * {@code nodeLost}: because its node is lost (the executor watches its nodes' health).
     */
    record Lost(InstanceId id, String reason, boolean nodeLost, Instant at) implements InstanceReport {
        public Lost {
            requireNonNull(id, "id is null");
            requireNonNull(reason, "reason is null");
        }

        public Lost(InstanceId id, String reason, Instant at) {
            this(id, reason, false, at);
        }
    }

    /** The instance's startup probe passed (or it has none and runs): the next node group may start. */
    record Ready(InstanceId id, Instant at) implements InstanceReport {
        public Ready {
            requireNonNull(id, "id is null");
        }
    }

    /** The startup probe failed {@code failureThreshold} times in a row; the instance keeps running until stopped. */
    record ProbeFailed(InstanceId id, String reason, Instant at) implements InstanceReport {
        public ProbeFailed {
            requireNonNull(id, "id is null");
            requireNonNull(reason, "reason is null");
        }
    }
}
