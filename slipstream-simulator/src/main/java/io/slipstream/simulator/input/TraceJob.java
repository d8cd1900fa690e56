package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.IdleMode;

/**
 * One job of a trace: submitted at {@code submitMillis} (virtual time from the trace's start), runs for
 * {@code durationMillis} when nothing interrupts it, as {@code instances} instances of {@code gpus} GPUs each.
 * {@code idleMode} {@code null}: the policy decides. {@code placement}: where its trace row asks its instances to be
 * ({@code null}: nowhere in particular); used by policies whose placement rule takes it ({@link PlacementRule#fromTrace}).
 * {@code minInstances}: the fewest instances its row says it runs with (0: the row says nothing); used by policies
 * whose elastic rule takes it ({@link ElasticRule#fromTrace}).
 */
public record TraceJob(int index, long submitMillis, long durationMillis, String tenant, int gpus, int instances, int priority, IdleMode idleMode,
                       JobPlacement placement, int minInstances) {
    public TraceJob {
        requireNonNull(tenant, "tenant is null");
        if (submitMillis < 0 || durationMillis < 0 || gpus < 0 || instances < 1 || minInstances < 0 || minInstances > instances) {
            throw new IllegalArgumentException("job " + index + " has a negative time, size, no instances or a minimum above them");
        }
    }

    /** A job whose row says nothing of a minimum. */
    public TraceJob(int index, long submitMillis, long durationMillis, String tenant, int gpus, int instances, int priority, IdleMode idleMode,
                    JobPlacement placement) {
        this(index, submitMillis, durationMillis, tenant, gpus, instances, priority, idleMode, placement, 0);
    }

    /** A job that asks for no placement. */
    public TraceJob(int index, long submitMillis, long durationMillis, String tenant, int gpus, int instances, int priority, IdleMode idleMode) {
        this(index, submitMillis, durationMillis, tenant, gpus, instances, priority, idleMode, null);
    }

    public int totalGpus() {
        return gpus * instances;
    }

    public double gpuHours() {
        return (double) totalGpus() * durationMillis / 3_600_000.0; // in double: the long product can overflow
    }
}
